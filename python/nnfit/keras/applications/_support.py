"""What Keras 3's application modules import from Keras, on nnfit.keras: the names the
ported sources use (``backend``, ``file_utils``, ``operation_utils``, ``Functional``,
``keras_export``), so each architecture reads as Keras's own file does.

Weights: nnfit never downloads. ``weights="imagenet"`` uses Keras's own cache when the file
Keras would fetch is there (``~/.keras/models/<file>``, or ``$KERAS_HOME/models``), and
otherwise raises naming the file, its address, and the two ways to give it to nnfit.
"""
import os

from nnfit.keras import _graph
from nnfit.keras import backend as _nnfit_backend
from nnfit.keras.models import Model as Functional  # noqa: F401  (Keras's Functional is keras.Model(inputs, outputs))


def keras_export(_path):
    """Keras's API-export decorator: the names are exported by applications/__init__.py."""
    return lambda f: f


def keras_cache_dir():
    """Keras's cache folder (keras.utils.get_file's default): $KERAS_HOME or ~/.keras."""
    home = os.environ.get("KERAS_HOME") or os.path.join(os.path.expanduser("~"), ".keras")
    return home


class backend:  # noqa: N801  (Keras's module name)
    @staticmethod
    def image_data_format():
        return "channels_last"

    @staticmethod
    def is_keras_tensor(x):
        return isinstance(x, _graph.KerasTensor)

    floatx = staticmethod(_nnfit_backend.floatx)


class file_utils:  # noqa: N801
    @staticmethod
    def exists(path):
        return isinstance(path, (str, os.PathLike)) and os.path.exists(path)

    @staticmethod
    def get_file(fname, origin, cache_subdir="models", file_hash=None, **kwargs):
        """The cached copy of a file Keras would download, or an error saying how to get it."""
        path = os.path.join(keras_cache_dir(), cache_subdir, fname)
        if os.path.exists(path):
            return path
        raise FileNotFoundError(
            f"{fname} is not on this machine and nnfit does not download (it has no network access): "
            f"download {origin} yourself and pass its path (weights=\"/path/to/{fname}\"), or put it in "
            f"{os.path.join(keras_cache_dir(), cache_subdir)}/, Keras's cache, where weights=\"imagenet\" finds it")


class operation_utils:  # noqa: N801
    @staticmethod
    def get_source_inputs(tensor):
        """The keras.Input tensors `tensor` is computed from (Keras's get_source_inputs)."""
        found, seen = [], set()

        def visit(t):
            layer, index, _ = t._history
            node = layer._nodes[index]
            if node.id in seen:
                return
            seen.add(node.id)
            if node.inputs is None:  # an InputLayer
                found.append(t)
            for i in node.input_tensors():
                visit(i)

        visit(tensor)
        return found
