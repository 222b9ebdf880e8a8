"""keras.applications on nnfit: Keras 3's image classification architectures, built as
Functional models of nnfit.keras layers with Keras's layer names, so Keras's weight files
(``.weights.h5``, ``.keras``, and the published ImageNet ``.h5`` files) load into them.

Each family is Keras's own module ported (``mobilenet``, ``mobilenet_v2``, ``resnet``,
``resnet_v2``, ``efficientnet``, ``vgg16``, ``vgg19``, ``densenet``, ``inception_v3``,
``xception``), with its ``preprocess_input`` and
``decode_predictions``. The architectures not ported yet raise ``NotImplementedError``
naming themselves. nnfit does not download: see _support.py for ``weights="imagenet"``.
"""
from nnfit.keras.applications import (densenet, efficientnet, imagenet_utils, inception_v3, mobilenet,  # noqa: F401
                                      mobilenet_v2, resnet, resnet50, resnet_v2, vgg16, vgg19, xception)
from nnfit.keras.applications.densenet import DenseNet121, DenseNet169, DenseNet201  # noqa: F401
from nnfit.keras.applications.efficientnet import (EfficientNetB0, EfficientNetB1, EfficientNetB2,  # noqa: F401
                                                   EfficientNetB3, EfficientNetB4, EfficientNetB5, EfficientNetB6,
                                                   EfficientNetB7)
from nnfit.keras.applications.inception_v3 import InceptionV3  # noqa: F401
from nnfit.keras.applications.mobilenet import MobileNet  # noqa: F401
from nnfit.keras.applications.mobilenet_v2 import MobileNetV2  # noqa: F401
from nnfit.keras.applications.resnet import ResNet50, ResNet101, ResNet152  # noqa: F401
from nnfit.keras.applications.resnet_v2 import ResNet50V2, ResNet101V2, ResNet152V2  # noqa: F401
from nnfit.keras.applications.vgg16 import VGG16  # noqa: F401
from nnfit.keras.applications.vgg19 import VGG19  # noqa: F401
from nnfit.keras.applications.xception import Xception  # noqa: F401

# Keras 3.15.1's other applications: not ported to nnfit yet.
_NOT_PORTED = ("ConvNeXtBase", "ConvNeXtLarge", "ConvNeXtSmall", "ConvNeXtTiny", "ConvNeXtXLarge",
               "EfficientNetV2B0", "EfficientNetV2B1", "EfficientNetV2B2", "EfficientNetV2B3", "EfficientNetV2L",
               "EfficientNetV2M", "EfficientNetV2S", "InceptionResNetV2", "MobileNetV3Large",
               "MobileNetV3Small", "NASNetLarge", "NASNetMobile")


def _not_ported(name):
    def application(*args, **kwargs):
        raise NotImplementedError(
            f"keras.applications.{name} is not ported to nnfit yet; nnfit has MobileNet, MobileNetV2, "
            "ResNet50/101/152 and their V2, EfficientNetB0-B7, VGG16, VGG19, DenseNet121/169/201, InceptionV3 and "
            "Xception")
    application.__name__ = application.__qualname__ = name
    return application


for _name in _NOT_PORTED:
    globals()[_name] = _not_ported(_name)

__all__ = ["DenseNet121", "DenseNet169", "DenseNet201", "EfficientNetB0", "EfficientNetB1", "EfficientNetB2",
           "EfficientNetB3", "EfficientNetB4", "EfficientNetB5", "EfficientNetB6", "EfficientNetB7", "InceptionV3",
           "MobileNet", "MobileNetV2", "ResNet50", "ResNet101", "ResNet152", "ResNet50V2", "ResNet101V2",
           "ResNet152V2", "VGG16", "VGG19", "Xception"] + list(_NOT_PORTED)
