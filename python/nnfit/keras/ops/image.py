"""keras.ops.image on nnfit's engine: Keras's names of the submodule (_image.py), each
recording Keras's own operation node on symbolic tensors and running on arrays."""
from nnfit.keras.ops import _image, _keras_names

for _name in _keras_names.IMAGE:
    globals()[_name] = getattr(_image, _name)

__all__ = list(_keras_names.IMAGE)
