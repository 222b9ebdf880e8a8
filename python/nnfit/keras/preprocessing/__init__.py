"""keras.preprocessing: Keras 3's older names for keras.utils' dataset makers and image and
sequence helpers (the same functions)."""
from nnfit.keras.preprocessing import image, sequence  # noqa: F401
from nnfit.keras.utils import (image_dataset_from_directory, text_dataset_from_directory,  # noqa: F401
                               timeseries_dataset_from_array)
