"""Keras's weight attributes of layers and models on nnfit's engine: ``trainable`` (taking
effect at the next compile, as in Keras), ``weights``, ``trainable_weights``,
``non_trainable_weights``, ``get_weights``/``set_weights``, ``count_params`` and a layer's
``build(input_shape)``.

The engine holds a built model's weights. A layer outside any built model keeps its own
("carried": made by ``layer.build``, set by ``set_weights``, or taken from the model it was
built in when it joins another), and the next model built with it starts from them. Keras
shares one variable between the models a layer belongs to; nnfit copies it when the new
model is built (later training of one model does not reach the other).
"""
import json

import numpy as np

from nnfit.keras import _state


class Variable(np.ndarray):
    """A weight as Keras's ``layer.weights`` lists it: its value (a copy, an array) with
    Keras's ``numpy()``, ``value``, ``name`` ("kernel"), ``path`` ("dense/kernel"),
    ``trainable``, and ``assign``/``assign_add``/``assign_sub``, which write the new value to
    the layer (wherever its weights are held) and to this copy."""

    def __new__(cls, value, path, trainable, owner=None, index=None):
        obj = np.array(value).view(cls)
        obj.path, obj.name, obj.trainable = path, path.rsplit("/", 1)[-1], bool(trainable)
        obj._owner, obj._index = owner, index
        return obj

    def __array_finalize__(self, obj):
        self.path = getattr(obj, "path", None)
        self.name = getattr(obj, "name", None)
        self.trainable = getattr(obj, "trainable", None)
        self._owner, self._index = None, None  # a view or result of arithmetic is a plain value

    def numpy(self):
        return np.array(self)

    @property
    def value(self):
        return np.array(self)

    def assign(self, value):
        """Keras's Variable.assign: the layer's weight becomes `value` (same shape)."""
        if self._owner is None:
            raise ValueError(f"Variable {self.path!r}: this value is not a layer's weight (a copy or a result of "
                             "arithmetic); assign to the weight from layer.weights")
        new = np.asarray(value, dtype=self.dtype)
        if new.shape != self.shape:
            raise ValueError(f"Variable {self.path!r} has shape {self.shape}; cannot assign a value of shape "
                             f"{new.shape}")
        values = self._owner.get_weights()
        values[self._index] = new
        self._owner.set_weights(values)
        np.copyto(self.view(np.ndarray), new)
        return self

    def assign_add(self, delta):
        return self.assign(np.array(self) + np.asarray(delta))

    def assign_sub(self, delta):
        return self.assign(np.array(self) - np.asarray(delta))

    def __repr__(self):
        return f"<Variable path={self.path}, shape={self.shape}, dtype={self.dtype}>"


class LayerWeights:
    """The weight attributes of keras.layers.Layer (mixed into it)."""

    _carried = None  # (values, [(path, trains by nature)]) held outside any built model
    _model = None

    @property
    def trainable(self):
        return self._trainable

    @trainable.setter
    def trainable(self, value):
        self._trainable = bool(value)

    def _handle(self):
        """The engine model that holds this layer's weights (built on demand), or None."""
        m = self._model
        if m is None or (m._handle is None and not m._input_known()):
            return None
        return m._with_weights()

    def _held(self):
        """(values, info) of the layer's weights, wherever they are; None when unbuilt."""
        h = self._handle()
        if h is not None:
            return h.layer_weights(self.name), h.layer_weight_info(self.name)
        if self._carried is None and self._in_traced() is not None:
            parent, keep = self._in_traced()
            return [parent[0][i] for i in keep], [parent[1][i] for i in keep]
        return self._carried

    def _in_traced(self):
        """A sublayer of a subclassed layer: (the traced layer's held weights, the indices of
        this sublayer's among them: those under its name or its layers' names), or None."""
        parent = getattr(self, "_traced_in", None)
        held = parent._held() if parent is not None else None
        if held is None:
            return None
        names = set()

        def own(layer):
            names.add(layer.name)
            for inner in list(getattr(layer, "layers", None) or []) + list(getattr(layer, "_traced_children", [])):
                own(inner)
        own(self)
        keep = [i for i, (path, _) in enumerate(held[1]) if path.split("/", 1)[0] in names]
        return held, keep

    @property
    def built(self):
        """Keras's: whether the layer has weights (or would on first use, in a model whose
        input is known); never builds anything itself."""
        m = self._model
        return self._carried is not None or (m is not None and (m._handle is not None or m._input_known()))

    @property
    def weights(self):
        held = self._held()
        if held is None:
            return []
        return [Variable(v, path, trains and self.trainable, self, i) for i, (v, (path, trains)) in enumerate(zip(*held))]

    @property
    def trainable_weights(self):
        return [w for w in self.weights if w.trainable] if self.trainable else []

    @property
    def non_trainable_weights(self):
        return self.weights if not self.trainable else [w for w in self.weights if not w.trainable]

    @property
    def variables(self):
        return self.weights

    trainable_variables = property(lambda self: self.trainable_weights)
    non_trainable_variables = property(lambda self: self.non_trainable_weights)

    def get_weights(self):
        held = self._held()
        return [] if held is None else [np.array(v) for v in held[0]]

    def set_weights(self, weights):
        """Keras's layer.set_weights: one array per weight, in get_weights() order."""
        weights = list(weights)
        h = self._handle()
        if h is not None:
            h.set_layer_weights(self.name, weights)
            return
        if self._carried is None and self._in_traced() is not None:  # a subclassed layer's sublayer
            (values, info), keep = self._in_traced()
            if len(weights) != len(keep):
                raise ValueError(f"You called `set_weights(weights)` on layer '{self.name}' with a weight list of "
                                 f"length {len(weights)}, but the layer was expecting {len(keep)} weights.")
            values = [np.array(v) for v in values]
            for i, new in zip(keep, weights):
                if tuple(np.shape(new)) != tuple(values[i].shape):
                    raise ValueError(f"Layer {self.name} weight {info[i][0]} has shape {tuple(values[i].shape)}, "
                                     f"got {tuple(np.shape(new))}")
                values[i] = np.array(new, dtype=values[i].dtype)
            self._traced_in.set_weights(values)
            return
        values, info = self._carried or ([], [])
        if len(weights) != len(values):
            raise ValueError(f"You called `set_weights(weights)` on layer '{self.name}' with a weight list of length "
                             f"{len(weights)}, but the layer was expecting {len(values)} weights.")
        for (path, _), old, new in zip(info, values, weights):
            if tuple(np.shape(new)) != tuple(old.shape):
                raise ValueError(f"Layer {self.name} weight {path} has shape {tuple(old.shape)}, "
                                 f"got {tuple(np.shape(new))}")
        self._carried = ([np.array(w, dtype=old.dtype) for old, w in zip(values, weights)], info)

    def count_params(self):
        h = self._handle()
        if h is not None:
            return h.layer_count_params(self.name)
        if self._carried is None:
            raise ValueError(f"You tried to call `count_params` on layer '{self.name}', but the layer isn't built. "
                             "You can build it manually via: `layer.build(input_shape)`.")
        return int(sum(v.size for v in self._carried[0]))

    def build(self, input_shape=None):
        """Keras's build: makes the layer's weights for inputs of `input_shape` (with the
        batch axis; a list of shapes for a layer of several inputs) outside any model."""
        if self.built:
            return
        if input_shape is None:
            raise ValueError(f"Layer {self.name!r}: build() needs the input shape (with the batch axis)")
        shapes = list(input_shape) if input_shape and isinstance(input_shape[0], (list, tuple)) else [input_shape]
        from nnfit import _engine  # the extension loads only when a model is built
        handle = _engine.get().Model.from_json(json.dumps(_one_layer_config(self, shapes)), f"layer {self.name!r}",
                                               _state.next_seed(), device="cpu")
        handle.build()
        self._carried = (handle.layer_weights(self.name), handle.layer_weight_info(self.name))

    def _elsewhere(self, model):
        """The weights this layer holds outside `model` (carried, or in another built model)."""
        if self._carried is not None:
            return self._carried
        other = self._model
        if other is not None and other is not model and other._handle is not None and other._handle.built:
            return other._handle.layer_weights(self.name), other._handle.layer_weight_info(self.name)
        return None


def _one_layer_config(layer, shapes):
    """A Functional config of `layer` called once on inputs of `shapes` (batch axis first)."""
    inputs = [{"module": "keras.layers", "class_name": "InputLayer", "name": f"build_input_{i}",
               "config": {"batch_shape": list(s), "dtype": "float32", "name": f"build_input_{i}"},
               "inbound_nodes": []} for i, s in enumerate(shapes)]
    refs = [{"class_name": "__keras_tensor__",
             "config": {"shape": list(s), "dtype": "float32", "keras_history": [f"build_input_{i}", 0, 0]}}
            for i, s in enumerate(shapes)]
    entry = layer._entry()
    entry["name"] = layer.name
    entry["inbound_nodes"] = [{"args": refs if len(refs) > 1 else [refs[0]], "kwargs": {}}]
    return {"module": "keras.src.models.functional", "class_name": "Functional",
            "config": {"name": "build", "trainable": True, "layers": inputs + [entry],
                       "input_layers": [[f"build_input_{i}", 0, 0] for i in range(len(shapes))],
                       "output_layers": [[layer.name, 0, 0]]},
            "registered_name": "Functional"}


class ModelWeights:
    """The weight attributes of keras.Model (mixed into it): a model's are its layers'."""

    _layers = ()

    @property
    def trainable(self):
        return self._trainable

    @trainable.setter
    def trainable(self, value):
        # Keras's: the model's flag and every layer's (model.trainable = True unfreezes all).
        self._trainable = bool(value)
        for layer in self._weight_layers():
            layer.trainable = value

    def _weight_layers(self):
        return [l for l in self._layers if l._class_name != "InputLayer"]

    def _engine_layers(self):
        """The layers the engine holds: not the preprocessing prefix (Note [Preprocessing prefix])."""
        return [l for l in self._weight_layers() if not getattr(l, "_no_engine", False)]

    @property
    def weights(self):
        return [w for l in self._weight_layers() for w in l.weights]

    @property
    def trainable_weights(self):
        if not self.trainable:
            return []
        return [w for l in self._weight_layers() for w in l.trainable_weights]

    @property
    def non_trainable_weights(self):
        if not self.trainable:
            return self.weights
        return [w for l in self._weight_layers() for w in l.non_trainable_weights]

    @property
    def variables(self):
        return self.weights

    trainable_variables = property(lambda self: self.trainable_weights)
    non_trainable_variables = property(lambda self: self.non_trainable_weights)

    def _adopt_layers(self, handle):
        """Makes this model (just built into `handle`) the owner of its layers: a layer
        holding weights elsewhere brings them, the rest start from the engine's."""
        brought = []
        for layer in self._layers:
            held = layer._elsewhere(self) if layer._class_name != "InputLayer" else None
            if held is not None:
                brought.append((layer.name, held[0]))
            layer._model = self
            layer._carried = None
        if brought:
            handle.build()
            for name, values in brought:
                handle.set_layer_weights(name, list(values))

    def _release_layers(self):
        """Forgets the engine's model (the layers change), each layer carrying its weights."""
        if self._handle is not None and self._handle.built:
            for layer in self._engine_layers():
                if hasattr(layer, "_outer"):  # a nested model takes this model's values before it goes
                    layer._with_weights()
                layer._carried = (self._handle.layer_weights(layer.name), self._handle.layer_weight_info(layer.name))
        self._handle = None

    def _trainable_flags(self):
        return [bool(layer.trainable and self.trainable) for layer in self._engine_layers()]

    def _apply_trainable(self, handle):
        """Keras's trainable flags, as they are now, into the engine (before a compile)."""
        self._applied_flags, self._stepped = self._trainable_flags(), False
        for layer, trains in zip(self._engine_layers(), self._applied_flags):
            handle.set_layer_trainable(layer.name, trains)

    def _before_fit(self):
        """Keras makes its training step at the first fit after compile, with the flags of
        that moment (later changes wait for the next compile): a change since compile is
        compiled in before the first fit only."""
        if not getattr(self, "_stepped", True) and self._trainable_flags() != self._applied_flags:
            self._compile_engine()
        self._stepped = True
