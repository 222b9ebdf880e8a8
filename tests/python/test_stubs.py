"""The type stubs (.pyi) name every class nnfit.keras makes, with its runtime arguments."""
import ast
import inspect
import os

import pytest

import nnfit.keras as keras

MODULES = {"layers": keras.layers, "optimizers/__init__": keras.optimizers,
           "optimizers/schedules": keras.optimizers.schedules, "losses": keras.losses, "metrics": keras.metrics,
           "regularizers": keras.regularizers, "initializers": keras.initializers, "callbacks": keras.callbacks}


def stub_classes(path):
    tree = ast.parse(open(path).read())
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            init = [f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"]
            if init:
                a = init[0].args
                out[node.name] = [x.arg for x in a.args[1:] + a.kwonlyargs]
            else:
                out[node.name] = None
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in out:
            out[node.targets[0].id] = out[node.value.id]  # an alias: MaxPool2D = MaxPooling2D
    return out


@pytest.mark.parametrize("name", sorted(MODULES))
def test_stubs_match_runtime(name):
    module = MODULES[name]
    path = os.path.join(os.path.dirname(keras.__file__), name + ".pyi")
    stubs = stub_classes(path)
    generated = [n for n, obj in vars(module).items()
                 if inspect.isclass(obj) and getattr(obj, "__signature__", None) is not None
                 and obj.__module__ == module.__name__]
    assert generated, name
    for cls_name in generated:
        assert cls_name in stubs, f"{name}.pyi lacks {cls_name}"
        runtime = [p for p in inspect.signature(getattr(module, cls_name)).parameters
                   if p not in ("kwargs",)]
        assert stubs[cls_name][:len(runtime)] == runtime or set(runtime) <= set(stubs[cls_name]), cls_name
