"""keras.utils.image_dataset_from_directory, text_dataset_from_directory and
audio_dataset_from_directory: a folder of class folders as a BatchDataset of (samples, labels).

Ported from Keras 3.15 (keras/src/utils/dataset_utils.py, image_dataset_utils.py,
text_dataset_utils.py, audio_dataset_utils.py; Apache License 2.0, Copyright The Keras
Authors): the same argument checks and messages, the same index of files (class folders in
sorted order or `class_names`' order, files sorted per folder, then shuffled by NumPy's
RandomState(seed), which Keras draws, with seed=None drawn as Keras draws it), the same
validation split (the last int(validation_split * n) files) and so the same `file_paths` and
labels on each side, labels as Keras's (int32; binary: float32 (n, 1); categorical: float32
one-hot), the "Found N files belonging to M classes." lines. Samples are read per batch: images
decoded and resized as TensorFlow does (Note [TensorFlow's image ops in NumPy]), texts as
bytes (truncated to max_length bytes), WAV audio as float32 in [-1, 1) zero-padded per batch.
A shuffled dataset's pass goes through a shuffle buffer as Keras's does, in another order
(Note [Shuffling a BatchDataset]); validation sides are not shuffled, as in Keras.
"""
import os
import wave

import numpy as np

from nnfit.keras import _image_io
from nnfit.keras._batch_dataset import BatchDataset, stack
from nnfit.keras._progbar import print_msg

IMAGE_FORMATS = (".bmp", ".gif", ".jpeg", ".jpg", ".png")
AUDIO_FORMATS = (".wav",)


def _check_labels(labels, class_names, label_mode, what):
    if labels not in ("inferred", None):
        if not isinstance(labels, (list, tuple)):
            raise ValueError("`labels` argument should be a list/tuple of integer labels, of the same size as the "
                             f"number of {what} files in the target directory. If you wish to infer the labels from "
                             'the subdirectory names in the target directory, pass `labels="inferred"`. If you wish '
                             f"to get a dataset that only contains {what}s (no labels), pass `labels=None`. "
                             f"Received: labels={labels}")
        if class_names:
            raise ValueError(f'You can only pass `class_names` if `labels="inferred"`. Received: labels={labels}, '
                             f"and class_names={class_names}")
    if label_mode not in {"int", "categorical", "binary", None}:
        raise ValueError('`label_mode` argument must be one of "int", "categorical", "binary", or None. '
                         f"Received: label_mode={label_mode}")


def check_validation_split_arg(validation_split, subset, shuffle, seed):
    if validation_split and not 0 < validation_split < 1:
        raise ValueError(f"`validation_split` must be between 0 and 1, received: {validation_split}")
    if (validation_split or subset) and not (validation_split and subset):
        raise ValueError("If `subset` is set, `validation_split` must be set, and inversely.")
    if subset not in ("training", "validation", "both", None):
        raise ValueError(f'`subset` must be either "training", "validation" or "both", received: {subset}')
    if validation_split and shuffle and seed is None:
        raise ValueError("If using `validation_split` and shuffling the data, you must provide a `seed` argument, to "
                         "make sure that there is no overlap between the training and validation subset.")


def _valid_files(directory, follow_links, formats):
    walk = os.walk(directory, followlinks=follow_links)
    for root, _, files in sorted(walk, key=lambda x: x[0]):
        for fname in sorted(files):
            if fname.lower().endswith(formats):
                yield root, fname


def index_directory(directory, labels, formats, class_names=None, shuffle=True, seed=None, follow_links=False,
                    verbose=True):
    """(file_paths, labels, class_names) as Keras's index_directory gives them."""
    if labels == "inferred":
        subdirs = [d for d in sorted(os.listdir(directory))
                   if os.path.isdir(os.path.join(directory, d)) and not d.startswith(".")]
        if class_names is not None:
            if not set(class_names).issubset(set(subdirs)):
                raise ValueError("The `class_names` passed did not match the names of the subdirectories of the "
                                 f"target directory. Expected: {subdirs} (or a subset of it), but received: "
                                 f"class_names={class_names}")
            subdirs = class_names
    else:
        subdirs = [""]
        if class_names is not None:
            if labels is None:
                raise ValueError("When `labels=None` (no labels), argument `class_names` cannot be specified.")
            raise ValueError("When argument `labels` is specified, argument `class_names` cannot be specified (the "
                             "`class_names` will be the sorted list of labels).")
    class_names = subdirs
    filenames, found_labels = [], []
    for index, subdir in enumerate(subdirs):
        folder = os.path.join(directory, subdir)
        dirname = os.path.basename(folder)
        for root, fname in _valid_files(folder, follow_links, formats):
            filenames.append(os.path.join(dirname, os.path.relpath(os.path.join(root, fname), folder)))
            found_labels.append(index)
    if labels == "inferred":
        labels = np.array(found_labels, dtype="int32")
    elif labels is None:
        class_names = None
    else:
        if len(labels) != len(filenames):
            raise ValueError("Expected the lengths of `labels` to match the number of files in the target directory. "
                             f"len(labels) is {len(labels)} while we found {len(filenames)} files in directory "
                             f"{directory}.")
        class_names = [str(label) for label in sorted(set(labels))]
    if verbose:
        if labels is None:
            print_msg(f"Found {len(filenames)} files.")
        else:
            print_msg(f"Found {len(filenames)} files belonging to {len(class_names)} classes.")
    file_paths = [os.path.join(directory, f) for f in filenames]
    if shuffle:
        if seed is None:
            seed = np.random.randint(1e6)
        np.random.RandomState(seed).shuffle(file_paths)
        if labels is not None:
            np.random.RandomState(seed).shuffle(labels)
    return file_paths, labels, class_names


def training_or_validation_split(samples, labels, validation_split, subset):
    if not validation_split:
        return samples, labels
    num_val_samples = int(validation_split * len(samples))
    if subset == "training":
        print_msg(f"Using {len(samples) - num_val_samples} files for training.")
        return samples[:-num_val_samples], None if labels is None else labels[:-num_val_samples]
    if subset == "validation":
        print_msg(f"Using {num_val_samples} files for validation.")
        return samples[-num_val_samples:], None if labels is None else labels[-num_val_samples:]
    raise ValueError(f'`subset` must be either "training" or "validation", received: {subset}')


def _encoded_labels(labels, label_mode, num_classes):
    labels = np.asarray(labels)
    if label_mode == "binary":
        return labels.astype("float32")[:, None]
    if label_mode == "categorical":
        return np.eye(num_classes, dtype="float32")[labels]
    return labels.astype("int32")


def _dataset(paths, labels, label_mode, num_classes, load, batch_size, shuffle, seed, collate=stack):
    """A BatchDataset of load(path) (with the label), shuffled through a buffer of
    batch_size * 8 (1024 unbatched) as Keras's."""
    encoded = None if label_mode is None else _encoded_labels(labels, label_mode, num_classes)

    def sample(i):
        x = load(paths[i])
        return x if encoded is None else (x, encoded[i])
    buffer = (batch_size * 8 if batch_size is not None else 1024) if shuffle else None
    return BatchDataset(len(paths), sample, batch_size, shuffle_buffer=buffer, seed=seed, collate=collate)


def _from_directory(directory, labels, label_mode, class_names, batch_size, shuffle, seed, validation_split, subset,
                    follow_links, verbose, formats, missing, load, collate=stack, with_paths=False):
    """The index, split and datasets every *_dataset_from_directory shares; missing(side):
    the message for no files on a side."""
    if labels is None or label_mode is None:
        labels, label_mode = None, None
    check_validation_split_arg(validation_split, subset, shuffle, seed)
    if seed is None:
        seed = np.random.randint(1e6)
    paths, labels, class_names = index_directory(directory, labels, formats=formats, class_names=class_names,
                                                 shuffle=shuffle, seed=seed, follow_links=follow_links,
                                                 verbose=verbose)
    if label_mode == "binary" and len(class_names) != 2:
        raise ValueError(f'When passing `label_mode="binary"`, there must be exactly 2 class_names. Received: '
                         f"class_names={class_names}")
    num_classes = len(class_names) if class_names else 0
    subsets = ["training", "validation"] if subset == "both" else [subset]
    datasets = []
    for side in subsets:
        side_paths, side_labels = training_or_validation_split(paths, labels, validation_split, side)
        if not side_paths:
            raise ValueError(missing(side if subset == "both" else None))
        ds = _dataset(side_paths, side_labels, label_mode, num_classes, load, batch_size,
                      shuffle and side != "validation" if subset == "both" else shuffle, seed, collate)
        ds.class_names = class_names
        if with_paths:
            ds.file_paths = side_paths
        datasets.append(ds)
    return datasets if subset == "both" else datasets[0]


def image_dataset_from_directory(directory, labels="inferred", label_mode="int", class_names=None, color_mode="rgb",
                                 batch_size=32, image_size=(256, 256), shuffle=True, seed=None, validation_split=None,
                                 subset=None, interpolation="bilinear", follow_links=False,
                                 crop_to_aspect_ratio=False, pad_to_aspect_ratio=False, data_format=None,
                                 format="tf", verbose=True):
    """Keras's: batches of images (float32 (batch, height, width, channels); uint8 with
    interpolation="nearest", as TensorFlow's resize gives) and labels, from class folders."""
    _check_labels(labels, class_names, label_mode, "image")
    channels = {"rgb": 3, "rgba": 4, "grayscale": 1}.get(color_mode)
    if channels is None:
        raise ValueError('`color_mode` must be one of {"rgb", "rgba", "grayscale"}. '
                         f"Received: color_mode={color_mode}")
    if isinstance(image_size, int):
        image_size = (image_size, image_size)
    elif not isinstance(image_size, (list, tuple)) or not len(image_size) == 2:
        raise ValueError(f"Invalid `image_size` value. Expected a tuple of 2 integers. Received: "
                         f"image_size={image_size}")
    interpolation = interpolation.lower()
    supported = ("bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic")
    if interpolation not in supported:
        raise ValueError(f"Argument `interpolation` should be one of {supported}. Received: "
                         f"interpolation={interpolation}")
    if format not in ("tf", "grain"):
        raise ValueError(f'`format` should be either "tf" or "grain". Received: format={format}')
    if interpolation not in ("bilinear", "nearest", "bicubic"):
        _image_io.resize(np.zeros((1, 1, 1), np.uint8), (1, 1), interpolation)  # its NotImplementedError
    if pad_to_aspect_ratio and crop_to_aspect_ratio:
        raise ValueError("Only one of `pad_to_aspect_ratio`, `crop_to_aspect_ratio` can be set to `True`.")
    if pad_to_aspect_ratio:
        raise NotImplementedError("image_dataset_from_directory: pad_to_aspect_ratio (tf.image.resize_with_pad) is not "
                                  "supported by nnfit; use crop_to_aspect_ratio=True or resize without either")
    data_format = _image_io._standardize_data_format(data_format)

    def load(path):
        img = _image_io.decode_image(path, channels)
        if crop_to_aspect_ratio:
            img = _crop_to_aspect(img, image_size)
        img = _image_io.resize(img, image_size, interpolation)
        return img.transpose(2, 0, 1) if data_format == "channels_first" else img

    return _from_directory(directory, labels, label_mode, class_names, batch_size, shuffle, seed, validation_split,
                           subset, follow_links, verbose, IMAGE_FORMATS,
                           lambda side: f"No {side + ' ' if side else ''}images found in directory {directory}. "
                                        f"Allowed formats: {IMAGE_FORMATS}", load, with_paths=True)


def _crop_to_aspect(img, size):
    """Keras's smart_resize crop (as TensorFlow's graph computes it: float32, then int32)."""
    height, width = img.shape[:2]
    target_height, target_width = size
    crop_height = max(min(height, int(np.float32(width * target_height) / np.float32(target_width))), 1)
    crop_width = max(min(width, int(np.float32(height * target_width) / np.float32(target_height))), 1)
    top = int(np.float32(height - crop_height) / np.float32(2))
    left = int(np.float32(width - crop_width) / np.float32(2))
    return img[top:top + crop_height, left:left + crop_width]


def text_dataset_from_directory(directory, labels="inferred", label_mode="int", class_names=None, batch_size=32,
                                max_length=None, shuffle=True, seed=None, validation_split=None, subset=None,
                                follow_links=False, format="tf", verbose=True):
    """Keras's: batches of texts (an object array of bytes, as TensorFlow's strings read
    with .numpy()) and labels, from class folders of .txt files."""
    _check_labels(labels, class_names, label_mode, "text")
    if format not in ("tf", "grain"):
        raise ValueError(f'`format` should be either "tf" or "grain". Received: format={format}')

    def load(path):
        with open(path, "rb") as f:
            text = f.read()
        return text if max_length is None else text[:max_length]

    def collate(samples):
        if isinstance(samples[0], tuple):
            texts = np.empty(len(samples), dtype=object)
            texts[:] = [s[0] for s in samples]
            return texts, np.stack([s[1] for s in samples])
        texts = np.empty(len(samples), dtype=object)
        texts[:] = samples
        return texts

    return _from_directory(directory, labels, label_mode, class_names, batch_size, shuffle, seed, validation_split,
                           subset, follow_links, verbose, (".txt",),
                           lambda side: f"No {side + ' ' if side else ''}text files found in directory {directory}. "
                                        "Allowed format: .txt", load, collate)


def read_wav(path, output_sequence_length=None):
    """tf.audio.decode_wav of a 16-bit PCM WAV file: float32 (samples, channels) in [-1, 1),
    cut or zero-padded to output_sequence_length."""
    with wave.open(path, "rb") as w:
        if w.getsampwidth() != 2:
            raise ValueError(f"{path}: a {8 * w.getsampwidth()}-bit WAV file; TensorFlow's decode_wav (and nnfit) "
                             "read 16-bit PCM")
        channels = w.getnchannels()
        data = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").reshape(-1, channels)
    audio = data.astype(np.float32) / np.float32(32768)
    if output_sequence_length is not None and output_sequence_length >= 0:
        if len(audio) >= output_sequence_length:
            audio = audio[:output_sequence_length]
        else:
            audio = np.concatenate([audio, np.zeros((output_sequence_length - len(audio), channels), np.float32)])
    return audio


def _padded(samples):
    """tf.data's padded_batch of (audio, label) samples: zeros up to the batch's longest."""
    audio = [s[0] if isinstance(s, tuple) else s for s in samples]
    longest = max(len(a) for a in audio)
    batch = np.stack([np.pad(a, ((0, longest - len(a)), (0, 0))) for a in audio])
    return (batch, np.stack([s[1] for s in samples])) if isinstance(samples[0], tuple) else batch


def audio_dataset_from_directory(directory, labels="inferred", label_mode="int", class_names=None, batch_size=32,
                                 sampling_rate=None, output_sequence_length=None, ragged=False, shuffle=True,
                                 seed=None, validation_split=None, subset=None, follow_links=False, verbose=True):
    """Keras's: batches of float32 audio (batch, samples, channels), padded per batch to its
    longest file (or cut/padded to output_sequence_length), and labels, from class folders
    of 16-bit PCM .wav files."""
    _check_labels(labels, class_names, label_mode, "audio")
    if ragged and output_sequence_length is not None:
        raise ValueError("Cannot set both `ragged` and `output_sequence_length`")
    if sampling_rate is not None:
        if not isinstance(sampling_rate, int):
            raise ValueError(f"`sampling_rate` should have an integer value. Received: sampling_rate={sampling_rate}")
        if sampling_rate <= 0:
            raise ValueError(f"`sampling_rate` should be higher than 0. Received: sampling_rate={sampling_rate}")
        raise NotImplementedError("audio_dataset_from_directory: sampling_rate (resampling, which Keras does with "
                                  "tensorflow_io) is not supported by nnfit; resample the files beforehand")
    if ragged:
        raise NotImplementedError("audio_dataset_from_directory: ragged=True (tf.RaggedTensor batches) is not "
                                  "supported by nnfit; use output_sequence_length or the per-batch padding")
    return _from_directory(directory, labels, label_mode, class_names, batch_size, shuffle, seed, validation_split,
                           subset, follow_links, verbose, AUDIO_FORMATS,
                           lambda side: f"No {side + ' ' if side else ''}audio files found in directory {directory}. "
                                        f"Allowed format(s): {AUDIO_FORMATS}",
                           lambda p: read_wav(p, output_sequence_length),
                           collate=stack if output_sequence_length is not None else _padded)
