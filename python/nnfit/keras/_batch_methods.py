"""Keras's per-batch methods and a model's eager call, for keras.Model: train_on_batch
(one step of the optimizer on the batch, through fit), test_on_batch and predict_on_batch
(evaluate and predict over the batch as one batch), and model(x) on arrays (the inference
program, as predict_on_batch). A model called on symbolic tensors (a nested model) is not
supported yet and says so."""
import numpy as np

from nnfit.keras import _graph


def _rows(x):
    first = _graph.flatten(list(x.values()) if isinstance(x, dict) else x)[0]
    return int(np.shape(first)[0])


def _values(logs, return_dict):
    if return_dict:
        return logs
    values = [logs["loss"]] + [v for k, v in logs.items() if k != "loss"]
    return values[0] if len(values) == 1 else values


# Keras's image augmentation layers nnfit has (BaseImagePreprocessingLayer: call(training=True)).
_RANDOM = ("RandomFlip", "RandomRotation", "RandomZoom", "RandomTranslation", "RandomContrast")


def _random_layers(model):
    """The names of the random augmentation layers in `model` and the models nested in it."""
    out = []
    for layer in getattr(model, "_layers", ()):
        if getattr(layer, "_class_name", None) in _RANDOM:
            out.append(f"{layer._class_name} {layer.name!r}")
        elif hasattr(layer, "_layers"):
            out.extend(_random_layers(layer))
    return out


class BatchMethods:
    """Mixed into keras.Model."""

    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None, return_dict=False):
        """Keras's train_on_batch: one optimizer step on (x, y) as a single batch; the
        loss and metrics of that step (computed before the update), as Keras returns them."""
        history = self.fit(x, y, batch_size=_rows(x), epochs=1, verbose=0, shuffle=False,
                           sample_weight=sample_weight, class_weight=class_weight)
        return _values({k: v[-1] for k, v in history.history.items()}, return_dict)

    def test_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        """Keras's test_on_batch: the loss and metrics of (x, y) as a single batch."""
        logs = self.evaluate(x, y, batch_size=_rows(x), verbose=0, sample_weight=sample_weight, return_dict=True)
        return _values(logs, return_dict)

    def predict_on_batch(self, x):
        """Keras's predict_on_batch: the model's outputs for x as a single batch."""
        return self.predict(x, batch_size=_rows(x), verbose=0)

    def reset_metrics(self):
        """Keras's reset_metrics. nnfit's metrics hold nothing between calls: fit, evaluate
        and each *_on_batch start them from zero, as Keras resets them there."""

    def _call_on_arrays(self, inputs, training=None, mask=None):
        """model(x) on arrays (a call on symbolic tensors nests the model: _nesting.py)."""
        if mask is not None:
            raise NotImplementedError(f"model {self.name!r}: mask= is not supported by nnfit")
        if training:
            raise NotImplementedError(f"model {self.name!r}: model(x, training=True) on arrays is not supported by "
                                      "nnfit (use train_on_batch to train on a batch)")
        random = _random_layers(self)
        if training is None and random:
            # Keras's image augmentation layers default to training=True in their call, so an
            # eager call without training= augments; nnfit's runs the inference program.
            raise NotImplementedError(
                f"model {self.name!r}: called on arrays without training=, Keras runs its random augmentation "
                f"layers ({', '.join(random)}) in training mode, which nnfit does not do on arrays; pass "
                "training=False for the inputs unchanged by them (as predict gives)")
        return self.predict_on_batch(inputs)
