"""keras.preprocessing.sequence: keras.utils.pad_sequences under Keras's older name."""
from nnfit.keras.utils import pad_sequences  # noqa: F401
