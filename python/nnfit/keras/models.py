"""keras.Model (Functional and subclassed) on nnfit's engine (keras.Sequential:
_sequential.py; keras.models.load_model: _loading.py).

A model is its Keras config until it is built: nnfit's engine builds it from that JSON
(the reader that reads Keras's files), so what trains is exactly what ``to_json()`` says.
"""
import json

import numpy as np

from nnfit.keras import (_cloning, _compute_loss, _export, _graph, _nesting, _prefix, _py_batches, _state,
                         _subclassed, _summary, _training, _weights)
from nnfit.keras._batch_methods import BatchMethods
from nnfit.keras._cloning import clone_model  # noqa: F401  (keras.models.clone_model)
from nnfit.keras import layers as layers_module
from nnfit.keras import optimizers as optimizers_module
from nnfit.keras._object import resolve
from nnfit.keras.callbacks import History


def _engine():
    from nnfit import _engine
    return _engine.get()


class Model(_nesting.NestedCalls, _subclassed.SubclassedModel, BatchMethods, _weights.ModelWeights,
            _training.CompileConfig):
    """keras.Model: ``Model(inputs, outputs, name=None)`` over symbolic tensors from
    keras.Input and layer calls (the Functional API), or a subclass with its own
    ``__init__`` making layers and ``call(inputs)``, traced at the first known input shape
    (nnfit.keras._subclassed)."""

    _is_sequential = False
    _prefix = None  # the preprocessing layers run before the engine (Note [Preprocessing prefix])

    def __new__(cls, *args, **kwargs):
        # Keras's: keras.Model(inputs, outputs) makes a Functional (type(model).__name__,
        # as model.layers and summaries show a nested one); a subclass stays itself.
        if cls is Model and (args or "inputs" in kwargs or "outputs" in kwargs):
            cls = Functional
        return super().__new__(cls)

    def __init__(self, inputs=None, outputs=None, name=None, trainable=True, **kwargs):
        if kwargs:
            raise TypeError(f"Model: unexpected arguments {sorted(kwargs)}")
        subclassed = _subclassed.is_subclassed(type(self))
        if not self._is_sequential and not subclassed and (inputs is None or outputs is None):
            raise ValueError("Model: give inputs and outputs (the Functional API: Model(inputs, outputs)), or "
                             "subclass keras.Model with a call() method")
        self._handle = None
        self._device = _state.device()  # where it is placed when built (keras.device's scope)
        self._seed = _state.next_seed()  # drawn now, as Keras's layers draw theirs when made
        self._compile_args = None
        self.optimizer = None
        self.loss = None
        self.trainable = trainable
        if self._is_sequential:
            return
        if subclassed:  # traced at the first known input shape (nnfit.keras._subclassed)
            _subclassed.init(self, name)
            return
        self._single_input = not isinstance(inputs, (list, tuple, dict))
        self._single_output = not isinstance(outputs, (list, tuple, dict))
        # Keras's dict structures (also compute_loss's x, y and y_pred): the tensors by sorted key.
        self.inputs, self._input_keys = _graph.sorted_structure(inputs, "inputs")
        self.outputs, self._output_keys = _graph.sorted_structure(outputs, "outputs")
        self.name = name or _state.unique_name("functional")
        self._config = _graph.functional_config(self.name, self.inputs, self.outputs, trainable, self._input_keys,
                                                self._output_keys)
        self._layers = _graph_layers(self.outputs)
        self._build()

    @property
    def device(self):
        """Where the model trains (nnfit's): "cpu" or "cuda:N", chosen when it was built from
        keras.device's scope (or NNFIT_DEVICE; default "auto": the first usable GPU, else the
        CPU); ``device_reason`` says why."""
        return self._handle_or_build().device

    @property
    def device_reason(self):
        return self._handle_or_build().device_reason

    # Structure.
    @property
    def layers(self):
        if _subclassed.is_subclassed(type(self)):  # Keras lists a subclassed model's layers, not inputs
            return [l for l in self._layers if l._class_name != "InputLayer"]
        return list(self._layers)

    _input_keys = None   # a dict's keys, sorted (Keras's dict inputs or outputs), else None
    _output_keys = None
    input = property(lambda self: self._structured(self.inputs, self._input_keys))
    output = property(lambda self: self._structured(self.outputs, self._output_keys))

    @staticmethod
    def _structured(values, keys):
        """Values in the model's input or output structure: a dict by key, one value, or a list."""
        if keys is not None:
            return dict(zip(keys, values))
        return values[0] if len(values) == 1 else list(values)

    # Keras's attributes of a compiled model that nnfit fixes (it always plans the whole step).
    compiled = property(lambda self: self._compile_args is not None)
    run_eagerly = property(lambda self: False)
    jit_compile = property(lambda self: True)
    steps_per_execution = property(lambda self: 1)
    variable_dtype = property(lambda self: self.dtype_policy.variable_dtype)
    dtype = property(lambda self: self.dtype_policy.variable_dtype)
    compute_dtype = property(lambda self: self.dtype_policy.compute_dtype)

    @property
    def dtype_policy(self):
        from nnfit.keras.mixed_precision import DTypePolicy, global_policy
        return DTypePolicy(self.__dict__.get("_policy") or global_policy().name)

    def get_layer(self, name=None, index=None):
        if index is not None:
            return self.layers[index]
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise ValueError(f"No such layer: {name}. Existing layers are: {[l.name for l in self.layers]}.")

    @property
    def input_shape(self):
        shapes = self._handle_or_build().input_shapes
        return shapes[0] if len(shapes) == 1 else shapes

    @property
    def output_shape(self):
        shapes = self._handle_or_build().output_shapes
        return shapes[0] if len(shapes) == 1 else shapes

    def _input_names(self):
        return list(self._input_keys) if self._input_keys is not None else [t.name for t in self.inputs]

    def _output_names(self):
        return list(self._handle_or_build().output_names)

    def get_config(self):
        return json.loads(self.to_json())["config"]

    from_config = classmethod(_cloning.from_config)

    def to_json(self, **kwargs):
        if self._handle is not None:
            if self._prefix is not None:
                return json.dumps(self._prefix.join(json.loads(self._handle.to_json())), **kwargs)
            return self._handle.to_json()
        return json.dumps(self._model_json(), **kwargs)

    def _model_json(self):
        if self._untraced:
            raise _subclassed.not_built(self)
        return self._config

    # The engine.
    def _build(self):
        if self._handle is None:
            self._handle = _engine().Model.from_json(json.dumps(self._engine_json()), f"model {self.name!r}",
                                                     self._seed, device=self._device)
            self._adopt_layers(self._handle)
            _subclassed.apply_inference_layers(self, self._handle)
        return self._handle

    def _handle_or_build(self):
        return self._handle if self._handle is not None else self._build()

    def _engine_json(self):
        """The config the engine builds: the model's, without its preprocessing prefix."""
        config = self._model_json()
        self._prefix = None
        if _prefix.has_prefix(config):
            layers = {l.name: l for l in self._layers if getattr(l, "_no_engine", False)}
            self._prefix = _prefix.Prefix(config, layers)
            return self._prefix.engine_config
        return config

    def _as_inputs(self, x, what="x"):
        """x (Keras's forms) as the engine's input arrays; the preprocessing prefix runs on it."""
        if self._untraced or not self._input_known():
            return _training.as_arrays(x, self._input_names_for(x), what)
        self._handle_or_build()
        if self._prefix is None:
            return _training.as_arrays(x, self._input_names_for(x), what)
        arrays = self._prefix.run(self._prefix.user_arrays(x, what))
        return [_training._array(a, f"{what} after {self.name!r}'s preprocessing", False) for a in arrays]

    def _no_prefix_dataset(self, x, what):
        from nnfit.data import Dataset
        if isinstance(x, Dataset) and self._prefix is not None:
            raise NotImplementedError(
                f"{what}: model {self.name!r} starts with preprocessing layers "
                f"({', '.join(l.name for l in self._prefix.prefix_layers())}), which run in Python on each batch; an "
                "nnfit.data.Dataset's batches never reach Python. Pass arrays, a keras.utils.PyDataset or an iterable "
                "of batches, or preprocess the data and train the model after the preprocessing layers")
    def build(self, input_shape=None):
        if self._untraced:
            if input_shape is None:
                raise ValueError(f"Model {self.name!r}: build() needs the input shape (with the batch axis)")
            _subclassed.trace_shapes(self, input_shape)
        self._handle_or_build().build()

    @property
    def built(self):
        return self._handle is not None

    def summary(self, line_length=None, positions=None, print_fn=None, expand_nested=False, show_trainable=False,
                layer_range=None):
        """Prints Keras's summary table (or passes each line to print_fn), with Keras's
        line_length, positions, expand_nested, show_trainable and layer_range."""
        _summary.summary(self, line_length, positions, print_fn, expand_nested, show_trainable, layer_range)

    def _with_weights(self):
        """The engine's model with its weights made (Keras's build). A model nested in a
        built outer model (base_model(x) in another model) reads the outer model's current
        values first: Keras shares the variables, so training the outer model shows in the
        nested model's weights and predictions (nnfit.keras._nesting)."""
        handle = self._handle_or_build()
        if not handle.built:
            handle.build()
        outer = self._outer()
        if outer is not None:
            current = outer._with_weights().layer_weights(self.name)
            mine = handle.get_weights()
            if len(current) == len(mine) and all(np.shape(a) == np.shape(b) for a, b in zip(current, mine)):
                handle.set_weights(current)
        return handle

    def _outer(self):
        """The built model this one is nested in, or None."""
        outer = self._model
        if outer is None or outer is self or getattr(outer, "_handle", None) is None:
            return None
        return outer

    def count_params(self):
        return self._with_weights().count_params()

    def get_weights(self):
        return self._with_weights().get_weights()

    def set_weights(self, weights):
        weights = list(weights)
        self._with_weights().set_weights(weights)
        outer = self._outer()
        if outer is not None:  # shared: the outer model's copy too
            outer._with_weights().set_layer_weights(self.name, weights)

    # Training.
    def compile(self, optimizer="rmsprop", loss=None, loss_weights=None, metrics=None, weighted_metrics=None,
                run_eagerly=False, steps_per_execution=1, jit_compile="auto", auto_scale_loss=True):
        """Keras's compile. jit_compile is accepted and changes nothing: nnfit always plans
        and fuses the whole step before it runs."""
        if run_eagerly:
            raise NotImplementedError("compile: run_eagerly=True is not supported by nnfit (it runs planned steps)")
        if steps_per_execution != 1:
            raise NotImplementedError("compile: steps_per_execution other than 1 is not supported by nnfit")
        if loss is None and not _compute_loss.overrides_compute_loss(self):
            raise ValueError("compile: nnfit needs a loss (or a compute_loss override); losses added with add_loss "
                             "are added to it")
        if isinstance(optimizer, str):
            optimizer = optimizers_module.get(optimizer)
        elif isinstance(optimizer, dict):
            optimizer = optimizers_module.deserialize(optimizer)
        if not isinstance(optimizer, optimizers_module.Optimizer):
            raise TypeError(f"compile: optimizer must be a name or a keras.optimizers object, got {optimizer!r}")
        self.optimizer = optimizer
        self.loss = loss
        self._compile_args = (optimizer, loss, loss_weights, metrics, auto_scale_loss, weighted_metrics)
        if self._input_known():
            self._compile_engine()

    def _input_known(self):
        return not self._untraced

    def _compile_engine(self):
        optimizer, loss, loss_weights, metrics, auto_scale_loss, weighted_metrics = self._compile_args
        handle = self._handle_or_build()
        self._apply_trainable(handle)  # Keras's trainable flags take effect at compile
        outputs = self._output_names()
        opt_json = optimizer.serialize()
        if auto_scale_loss and _uses_float16(self) and not isinstance(optimizer, optimizers_module.LossScaleOptimizer):
            opt_json = {"module": "keras.optimizers", "class_name": "LossScaleOptimizer",
                        "config": {"name": "loss_scale_optimizer", "inner_optimizer": opt_json,
                                   "initial_scale": 32768.0, "dynamic_growth_steps": 2000}, "registered_name": None}
        pred_shapes = [tuple(s)[1:] for s in handle.output_shapes]  # without the batch axis
        reads = None
        if _compute_loss.overrides_compute_loss(self):  # Note [compute_loss in the step]
            losses_json, targets, reads = _compute_loss.engine_loss(self, loss, handle, pred_shapes)
            weights = []
        else:
            losses = _training.per_output(loss, outputs, "loss")
            weights = _training.per_output(loss_weights, outputs, "loss_weights") if loss_weights is not None else []
            losses_json = [_training.loss_json(l, pred_shapes[i if len(losses) > 1 else 0]) for i, l in enumerate(losses)]
            targets = [_training.target_shape(losses_json[i if len(losses_json) > 1 else 0], p)
                       for i, p in enumerate(pred_shapes)]
        shapes = list(zip(targets, pred_shapes))
        shared, per_output = _training.metrics_json(metrics, outputs, "metrics", shapes)
        weighted_shared, weighted_per_output = _training.metrics_json(weighted_metrics, outputs, "weighted_metrics",
                                                                      shapes)
        # The engine's CompileOptions::takes_targets: none for a compute_loss reading no y
        # when no metric reads them either.
        self._compute_loss_reads = reads
        self._takes_targets = reads is None or reads["y"] or bool(shared or per_output or weighted_shared or
                                                                   weighted_per_output)
        handle.compile(json.dumps(opt_json), losses_json,
                       [float(w) for w in weights], shared, weighted_shared, per_output, weighted_per_output)
        optimizer._model = self

    def _ensure_compiled(self):
        if self._compile_args is None:
            raise RuntimeError("You must call `compile()` before using the model.")
        if self._handle is None or not self._handle.compiled:
            self._compile_engine()

    @property
    def stop_training(self):
        return self._handle.stop_training if self._handle is not None else False

    @stop_training.setter
    def stop_training(self, value):
        self._handle_or_build().stop_training = bool(value)

    @property
    def metrics_names(self):
        has_metrics = self._compile_args and (self._compile_args[3] or self._compile_args[5])
        return ["loss", "compile_metrics"] if has_metrics else ["loss"]

    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None, validation_split=0.0,
            validation_data=None, shuffle=True, class_weight=None, sample_weight=None, initial_epoch=0,
            steps_per_epoch=None, validation_steps=None, validation_batch_size=None, validation_freq=1):
        """Keras's fit over NumPy arrays or an nnfit.data.Dataset; returns a History."""
        _subclassed.check_step(self, "train_step")
        verbose = 1 if verbose == "auto" else int(verbose)
        spe = _training.count_or_none("fit: steps_per_epoch", steps_per_epoch)
        schedule = (_training.count_or_none("fit: validation_steps", validation_steps),
                    _training.validation_freq(validation_freq))
        x = self._batches(x, "fit")
        validation_data = self._batches(validation_data, "fit: validation_data")
        if _is_dataset(x):
            # Keras ignores validation_batch_size with a dataset too: its batches are its own.
            return self._fit_dataset(x, y, batch_size, epochs, verbose, callbacks, validation_split, validation_data,
                                     class_weight, sample_weight, initial_epoch, spe, schedule)
        xs = self._as_inputs(x)
        self._prepare(xs)
        ys = self._targets(y, "fit")
        self._before_fit()
        sw = None if sample_weight is None else _training._array(sample_weight, "sample_weight", False)
        batch = _training.batch_size_of("fit", batch_size)
        validation_batch = _training.count_or_none("fit: validation_batch_size", validation_batch_size)
        validation = None
        if _is_dataset(validation_data):  # its own batches (Keras ignores validation_batch_size then)
            validation, validation_batch = validation_data._build(_state.next_seed()), 0
        elif validation_data is not None:
            sizes = (2, 3) if self._takes_targets else (1, 2, 3)
            if not isinstance(validation_data, (tuple, list)) or len(validation_data) not in sizes:
                raise ValueError("fit: validation_data must be (x, y) or (x, y, sample_weight) with arrays")
            vx = self._as_inputs(validation_data[0], "validation x")
            vy = self._targets(validation_data[1] if len(validation_data) > 1 else None, "fit: validation_data",
                               "validation y")
            vsw = validation_data[2] if len(validation_data) == 3 else None
            validation = (vx, vy, None if vsw is None else _training._array(vsw, "validation sample_weight", False))
        elif validation_split:
            (xs, ys, sw), validation = _training.split_validation(xs, ys, sw, validation_split)
        if isinstance(validation, tuple):
            vx, vy, vsw = validation
            _compute_loss.no_weights_without_targets(self, vy, vsw)
            if len(vx) == 1 and len(vy) == 1:
                validation = (vx[0], vy[0], vsw)
            else:  # several inputs or outputs: the engine validates on a dataset of their rows
                from nnfit.data import Dataset
                parts = tuple(vx) + tuple(vy) + (() if vsw is None else (vsw,))
                validation = Dataset.from_tensor_slices(parts).batch(validation_batch or batch)._build(0)
                validation_batch = 0
        python_callbacks, builtin, tensorboard = _training.split_callbacks(callbacks)
        history = History()
        n = xs[0].shape[0]
        steps = spe or -(-n // batch)
        bridge = _training.Bridge(self, python_callbacks, history, verbose, epochs, steps)
        result = self._handle.fit(xs, ys, batch, _training.epochs_of(epochs), bool(shuffle), _state.next_seed(), validation, bridge,
                                  builtin, tensorboard,
                                  {int(k): float(v) for k, v in (class_weight or {}).items()}, sw, int(initial_epoch),
                                  spe, validation_batch, *schedule)
        return _finish(history, bridge, result)

    def _fit_dataset(self, ds, y, batch_size, epochs, verbose, callbacks, validation_split, validation_data,
                     class_weight, sample_weight, initial_epoch, steps_per_epoch, schedule):
        """fit over an nnfit.data.Dataset of (x, y) batches (Keras's fit over a tf.data.Dataset)."""
        for name, value in (("y", y), ("batch_size", batch_size), ("sample_weight", sample_weight)):
            if value is not None:
                raise ValueError(f"fit: {name} must not be given with a dataset (its elements are (x, y) batches)")
        if validation_split:
            raise ValueError("fit: validation_split is not supported with a dataset; pass validation_data")
        if self._handle is None and not self._input_known():
            raise ValueError(f"Sequential {self.name!r} has no input shape yet: start it with keras.Input(shape=...)")
        self._ensure_compiled()
        self._no_prefix_dataset(ds, "fit")
        self._no_prefix_dataset(validation_data, "fit: validation_data")
        self._before_fit()
        seed = _state.next_seed()
        train = ds._build(seed)
        validation = None
        if validation_data is not None:
            if not _is_dataset(validation_data):
                raise NotImplementedError("fit: with a dataset, validation_data must be a dataset too")
            validation = validation_data._build(seed)
        python_callbacks, builtin, tensorboard = _training.split_callbacks(callbacks)
        history = History()
        bridge = _training.Bridge(self, python_callbacks, history, verbose, epochs, steps_per_epoch)
        result = self._handle.fit_dataset(train, _training.epochs_of(epochs), seed, validation, bridge, builtin,
                                          tensorboard,
                                          {int(k): float(v) for k, v in (class_weight or {}).items()},
                                          int(initial_epoch), steps_per_epoch, *schedule)
        return _finish(history, bridge, result)

    def _targets(self, y, what, name="y"):
        return _compute_loss.targets(self, y, what, name)

    _takes_targets = True  # until compiled (_compile_engine)
    _compute_loss_reads = None

    def _batches(self, x, what):
        """x as the engine reads it: a keras.utils.PyDataset or another iterable of batches
        (Note [Batches from Python]) wrapped, anything else as it is."""
        if not _py_batches.is_batches(x):
            return x
        if self._handle is None and not self._input_known():
            raise ValueError(f"model {self.name!r} has no input shape yet: start it with keras.Input(shape=...)")
        self._handle_or_build()
        transform = None
        if self._prefix is not None:
            prefix = self._prefix
            transform = lambda part: prefix.run(prefix.user_arrays(part, what))  # noqa: E731
        return _py_batches.Batches(x, len(self._input_names()), len(self._output_names()), what, transform=transform)

    def _input_names_for(self, x):
        if self._untraced:
            return _subclassed.input_names(self, x)
        return self._input_names()

    def _prepare(self, xs):
        if self._untraced and xs:
            _subclassed.trace_arrays(self, xs)
        self._ensure_compiled()

    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", sample_weight=None, steps=None,
                 callbacks=None, return_dict=False):
        """Keras's evaluate: the loss, or [loss, metrics...], or a dict with return_dict."""
        _subclassed.check_step(self, "test_step")
        steps = _training.count_or_none("evaluate: steps", steps)
        python_callbacks, tensorboard = _training.inference_callbacks(callbacks)
        verbose = 1 if verbose == "auto" else int(verbose)
        x = self._batches(x, "evaluate")
        if _is_dataset(x):
            if y is not None or batch_size is not None or sample_weight is not None:
                raise ValueError("evaluate: y, batch_size and sample_weight must not be given with a dataset "
                                 "(its elements are (x, y) or (x, y, sample_weight) batches)")
            self._ensure_compiled()
            self._no_prefix_dataset(x, "evaluate")
            built = x._build(_state.next_seed())
            bridge = self._inference_bridge(python_callbacks, verbose, _training.dataset_steps(built, steps), "test")
            pairs = self._handle.evaluate_dataset(built, steps, bridge, tensorboard)
        else:
            xs = self._as_inputs(x)
            self._prepare(xs)
            ys = self._targets(y, "evaluate")
            sw = None if sample_weight is None else _training._array(sample_weight, "sample_weight", False)
            batch = _training.batch_size_of("evaluate", batch_size)
            bridge = self._inference_bridge(python_callbacks, verbose, _training.array_steps(xs, batch, steps), "test")
            pairs = self._handle.evaluate(xs, ys, batch, sw, steps, bridge, tensorboard)
        logs, _ = _training._keras_logs(pairs)
        if return_dict:
            return logs
        values = [logs["loss"]] + [v for k, v in logs.items() if k != "loss"]
        return values[0] if len(values) == 1 else values

    def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None):
        """Keras's predict: one array, or a list for several outputs."""
        _subclassed.check_step(self, "predict_step")
        steps = _training.count_or_none("predict: steps", steps)
        python_callbacks, _ = _training.inference_callbacks(callbacks)  # TensorBoard: no predict hooks
        verbose = 1 if verbose == "auto" else int(verbose)
        x = self._batches(x, "predict")
        if _is_dataset(x):
            # The dataset's batches (x, or x and targets, which are ignored as Keras does),
            # made by the engine, predicted batch by batch; Keras's steps: the first ones.
            self._prepare_inference([])
            self._no_prefix_dataset(x, "predict")
            n_in = len(self._handle.input_shapes)
            batches = (x.take(steps) if steps else x)._build(0).collect()
            bridge = self._inference_bridge(python_callbacks, verbose, len(batches), "predict")
            if bridge:
                bridge.on_predict_begin()
            outs = []
            for i, batch in enumerate(batches):
                if bridge:
                    bridge.on_predict_batch_begin(i)
                outs.append(self._handle.predict(list(batch[:n_in]), int(batch[0].shape[0])))
                if bridge:
                    bridge.on_predict_batch_end(i, outs[-1])
            if bridge:
                bridge.on_predict_end()
            if not outs:
                raise ValueError("predict: the dataset is empty")
            joined = [np.concatenate([o[i] for o in outs]) for i in range(len(outs[0]))]
            return self._structured(joined, self._output_keys)
        xs = self._as_inputs(x)
        self._prepare_inference(xs)
        batch = _training.batch_size_of("predict", batch_size)
        bridge = self._inference_bridge(python_callbacks, verbose, _training.array_steps(xs, batch, steps), "predict")
        out = self._handle.predict(xs, batch, steps, bridge)
        return self._structured(out, self._output_keys)

    def _inference_bridge(self, callbacks, verbose, steps, kind):
        """The engine's callback for evaluate or predict: None when nothing listens."""
        if not callbacks and not verbose:
            return None
        return _training.InferenceBridge(self, callbacks, verbose, steps, kind)

    def _prepare_inference(self, xs):
        if self._untraced and xs:
            _subclassed.trace_arrays(self, xs)
        self._with_weights()

    # Files.
    def save(self, filepath, overwrite=True, zipped=None, **kwargs):
        """Keras's save: .keras (Keras 3's zip) or .h5 (legacy HDF5), readable by Keras."""
        if kwargs or zipped is False:
            raise NotImplementedError("save: only filepath and overwrite are supported by nnfit")
        filepath = str(filepath)
        if not overwrite and _exists(filepath):
            raise FileExistsError(filepath)
        handle = self._with_weights()  # Keras saves a model it has only defined: its initial weights
        if self._prefix is not None:  # Keras's file of the whole model (Note [Preprocessing prefix])
            _prefix.save(filepath, self._prefix, handle.save)
            return
        handle.save(filepath)

    def export(self, filepath, format="tf_saved_model", verbose=None, input_signature=None, **kwargs):
        """Keras's export: the model's inference graph as an ONNX file (nnfit.keras._export;
        format="tf_saved_model", Keras's default, writes ONNX too and warns where)."""
        _export.export(self, filepath, format, verbose, input_signature, **kwargs)

    def save_weights(self, filepath, overwrite=True):
        filepath = str(filepath)
        if not overwrite and _exists(filepath):
            raise FileExistsError(filepath)
        self._with_weights().save_weights(filepath)  # Keras saves an uncompiled model's weights too

    def load_weights(self, filepath, skip_mismatch=False):
        if skip_mismatch:
            raise NotImplementedError("load_weights: skip_mismatch is not supported by nnfit")
        self._handle_or_build().load_weights(str(filepath))


class Functional(Model):
    """What keras.Model(inputs, outputs) makes, as Keras's keras.src.models.Functional."""


def _is_dataset(x):
    from nnfit.data import Dataset
    return isinstance(x, (Dataset, _py_batches.Batches))


def _finish(history, bridge, result):
    history.nnfit = bridge.nnfit_logs
    history.notes = list(result["notes"])
    history.autotune = result["autotune"]
    if result["interrupted"] == 2:  # SIGINT: Keras raises KeyboardInterrupt; the model stays usable
        raise KeyboardInterrupt
    return history


def _graph_layers(outputs):
    """The model's layers in Keras's order (_graph._keras_layer_order; Keras's
    Functional.layers: operations are nodes of the graph, not layers)."""
    from nnfit.keras.ops._operation import Operation
    reached = {node.layer for node in _graph._collect(outputs)}
    return [layer for layer in _graph._keras_layer_order([], outputs)
            if layer in reached and not isinstance(layer, Operation)]


def _exists(path):
    import os
    return os.path.exists(path)


def _uses_float16(model):
    return any(getattr(l, "_policy", "") in ("mixed_float16", "float16") for l in model.layers)


# keras.Sequential and keras.models.load_model live in their own files (each under 600 lines).
from nnfit.keras._sequential import Sequential  # noqa: E402
from nnfit.keras._loading import load_model, model_from_json  # noqa: E402,F401
from nnfit.keras.saving import save_model  # noqa: E402,F401  (keras.models.save_model, Keras's same function)

