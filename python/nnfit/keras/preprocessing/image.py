"""keras.preprocessing.image: keras.utils' image helpers under Keras's older names, and
smart_resize (the crop to the target's aspect ratio, then the resize, that
image_dataset_from_directory(crop_to_aspect_ratio=True) applies)."""
import numpy as np

from nnfit.keras.utils import array_to_img, img_to_array, load_img, save_img  # noqa: F401


def smart_resize(x, size, interpolation="bilinear", data_format="channels_last", **kwargs):
    """Keras's: an image (height, width, channels) or a batch of them, centre-cropped to the
    aspect ratio of `size` and resized to it, as float32."""
    from nnfit.keras import _image_io
    from nnfit.keras._directory_datasets import _crop_to_aspect
    if kwargs:
        raise TypeError(f"smart_resize: unexpected arguments {sorted(kwargs)}")
    img = np.asarray(x, dtype="float32")
    if img.ndim not in (3, 4):
        raise ValueError(f"Expected an image array with shape `(height, width, channels)`, or "
                         f"`(batch_size, height, width, channels)`, but got input with incorrect rank, of shape "
                         f"{img.shape}.")
    first = data_format == "channels_first"
    batch = img if img.ndim == 4 else img[None]
    if first:
        batch = batch.transpose(0, 2, 3, 1)
    out = np.stack([_image_io.resize(_crop_to_aspect(im, tuple(size)), tuple(size), interpolation) for im in batch])
    if first:
        out = out.transpose(0, 3, 1, 2)
    return out.astype("float32") if img.ndim == 4 else out[0].astype("float32")
