"""keras.utils.model_to_dot and keras.utils.plot_model with Keras 3.15's signatures: the DOT
text comes from the engine's layer graph (include/nnfit/model/model_dot.h: Keras's labels,
attributes and edges), and Graphviz's `dot` program draws it in the format the file's
extension names. pydot is not needed; Graphviz is (Debian: graphviz, which
scripts/setup.sh installs)."""
import os
import shutil
import subprocess
import sys

_GRAPHVIZ_MESSAGE = ("You must install graphviz (see instructions at https://graphviz.gitlab.io/download/) for "
                     "`plot_model` to work.")


class Dot:
    """What model_to_dot returns: the graph as DOT text, with the pydot.Dot methods Keras's
    callers use (to_string, create, write)."""

    def __init__(self, text, name):
        self._text = text
        self.name = name

    def to_string(self):
        return self._text

    __str__ = to_string

    def create(self, prog="dot", format="png"):
        """The graph drawn by Graphviz's `prog` in `format` (png, svg, pdf, ...), as bytes."""
        exe = shutil.which(prog)
        if exe is None:
            raise ImportError(_GRAPHVIZ_MESSAGE)
        out = subprocess.run([exe, f"-T{format}"], input=self._text.encode(), capture_output=True)
        if out.returncode != 0:
            raise RuntimeError(f"Graphviz's {prog} failed drawing model {self.name!r} as {format}: "
                               f"{out.stderr.decode(errors='replace').strip()}")
        return out.stdout

    def write(self, path, prog="dot", format="raw"):
        """Writes the DOT text (format "raw"/"dot"), or the drawing in another format."""
        data = self._text.encode() if format in ("raw", "dot", "gv") else self.create(prog, format)
        with open(path, "wb") as f:
            f.write(data)
        return True


_NOT_BUILT = ("This model has not yet been built. Build the model first by calling `build()` or by calling the model "
              "on a batch of data.")


def _handle(model):
    """The engine's model with its weights (Keras's built model)."""
    if not model._input_known():
        raise ValueError(_NOT_BUILT)  # a subclassed model never called, a Sequential without its input shape
    return model._with_weights()


def model_to_dot(model, show_shapes=False, show_dtype=False, show_layer_names=True, rankdir="TB", expand_nested=False,
                 dpi=200, subgraph=False, show_layer_activations=False, show_trainable=False, splines="ortho",
                 **kwargs):
    """The model as a Graphviz graph (a Dot: its DOT text and pydot's create/write), with
    Keras's boxes and edges; a subclassed model is one box, as in Keras."""
    from nnfit.keras import _subclassed
    if kwargs.pop("layer_range", None) is not None:
        raise ValueError("Argument `layer_range` is no longer supported.")
    if kwargs:
        raise ValueError(f"Unrecognized keyword arguments: {kwargs}")
    single = _subclassed.is_subclassed(type(model))
    text = _handle(model).to_dot(bool(show_shapes), bool(show_dtype), bool(show_layer_names), str(rankdir),
                                 bool(expand_nested), int(dpi), bool(subgraph), bool(show_layer_activations),
                                 bool(show_trainable), str(splines), single)
    return Dot(text, model.name)


def plot_model(model, to_file="model.png", show_shapes=False, show_dtype=False, show_layer_names=False, rankdir="TB",
               expand_nested=False, dpi=200, show_layer_activations=False, show_trainable=False, splines="ortho",
               **kwargs):
    """Draws the model into `to_file` (png unless its extension names another Graphviz
    format: svg, pdf, ...), as Keras's plot_model; returns an IPython Image where IPython is
    installed. ImportError, with Keras's message, where Graphviz is not."""
    if shutil.which("dot") is None:
        if "IPython.core.magics.namespace" in sys.modules:  # Keras prints instead of raising in notebooks
            print(_GRAPHVIZ_MESSAGE)
            return None
        raise ImportError(_GRAPHVIZ_MESSAGE)
    if kwargs.pop("layer_range", None) is not None:
        raise ValueError("Argument `layer_range` is no longer supported.")
    if kwargs:
        raise ValueError(f"Unrecognized keyword arguments: {kwargs}")
    dot = model_to_dot(model, show_shapes=show_shapes, show_dtype=show_dtype, show_layer_names=show_layer_names,
                       rankdir=rankdir, expand_nested=expand_nested, dpi=dpi,
                       show_layer_activations=show_layer_activations, show_trainable=show_trainable, splines=splines)
    to_file = str(to_file)
    extension = os.path.splitext(to_file)[1][1:] or "png"
    dot.write(to_file, format=extension)
    if extension != "pdf":
        try:
            from IPython import display
            return display.Image(filename=to_file)
        except ImportError:
            pass
    return None
