"""keras.applications.resnet50: Keras's module of ResNet50 alone (the resnet family's)."""
from nnfit.keras.applications.resnet import ResNet50, decode_predictions, preprocess_input  # noqa: F401
