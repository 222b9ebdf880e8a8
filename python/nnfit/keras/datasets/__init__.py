"""keras.datasets on nnfit: Keras 3's load_data functions, reading the files Keras's
get_file keeps in its cache (``$KERAS_HOME/datasets`` or ``~/.keras/datasets``) with the
same results. nnfit never downloads; a missing file's error names the path and the URL."""
from nnfit.keras.datasets import (boston_housing, california_housing, cifar10, cifar100,  # noqa: F401
                                  fashion_mnist, imdb, mnist, reuters)

__all__ = ["boston_housing", "california_housing", "cifar10", "cifar100", "fashion_mnist", "imdb", "mnist",
           "reuters"]
