"""Keras 3's layers that wrap another framework's code: JaxLayer and FlaxLayer (JAX
functions and Flax modules), TorchModuleWrapper (a torch.nn.Module) and TFSMLayer (a
TensorFlow SavedModel's graph). Each runs only under its own Keras backend, whose framework
executes the wrapped code; nnfit's engine runs its own ops and cannot call into JAX, PyTorch
or TensorFlow, so these names exist (a script that names them gets this explanation, not an
AttributeError) and refuse to be made, saying what works instead."""

__all__ = ["JaxLayer", "FlaxLayer", "TorchModuleWrapper", "TFSMLayer"]


def _refusing(name, wraps, instead):
    def __init__(self, *args, **kwargs):
        raise NotImplementedError(f"keras.layers.{name} wraps {wraps}, which only its own framework can run (Keras's "
                                  f"{name} works under that backend alone); nnfit's engine cannot call it. {instead}")

    return type(name, (), {"__init__": __init__, "__module__": "nnfit.keras.layers",
                           "__doc__": f"keras.layers.{name}: not supported by nnfit ({wraps})."})


_REWRITE = ("Write the computation as a keras.layers.Layer subclass with keras.ops (docs/python.md, subclassed "
            "layers); nnfit traces it into its engine.")
JaxLayer = _refusing("JaxLayer", "a JAX function", _REWRITE)
FlaxLayer = _refusing("FlaxLayer", "a Flax module", _REWRITE)
TorchModuleWrapper = _refusing("TorchModuleWrapper", "a torch.nn.Module", _REWRITE)
TFSMLayer = _refusing("TFSMLayer", "a TensorFlow SavedModel's graph",
                      "Load the model's .keras or .h5 file with keras.models.load_model instead, or its ONNX export.")
