"""Keras's per-batch methods and a model's eager call, for keras.Model: train_on_batch
(one step of the optimizer on the batch, through fit), test_on_batch and predict_on_batch
(evaluate and predict over the batch as one batch), and model(x) on arrays (the inference
program, as predict_on_batch, or with training=True the layers in training mode)."""
import numpy as np

from nnfit.keras import _graph


def _rows(x):
    first = _graph.flatten(list(x.values()) if isinstance(x, dict) else x)[0]
    if np.ndim(first) == 0:  # a string or a number: Keras names it too
        raise ValueError(f"expected arrays with a batch axis as the model's inputs, got {type(first).__name__} "
                         f"{str(first)[:40]!r}")
    return int(np.shape(first)[0])


def _values(logs, return_dict):
    if return_dict:
        return logs
    values = [logs["loss"]] + [v for k, v in logs.items() if k != "loss"]
    return values[0] if len(values) == 1 else values


# Keras's image augmentation layers nnfit has (BaseImagePreprocessingLayer: call(training=True)).
_RANDOM = ("RandomFlip", "RandomRotation", "RandomZoom", "RandomTranslation", "RandomContrast", "RandomBrightness",
           "RandomGrayscale", "RandomInvert", "Solarization", "RandomPosterization", "RandomErasing",
           "RandomColorDegeneration", "RandomSharpness", "RandomShear",
           "MixUp", "CutMix", "RandomCrop", "Equalization",
           "RandomHue", "RandomSaturation", "RandomColorJitter", "RandomGaussianBlur")


def _random_layers(model):
    """The names of the random augmentation layers in `model` and the models nested in it."""
    out = []
    for layer in getattr(model, "_layers", ()):
        if getattr(layer, "_class_name", None) in _RANDOM:
            out.append(f"{layer._class_name} {layer.name!r}")
        elif hasattr(layer, "_layers"):
            out.extend(_random_layers(layer))
    return out


# Keras's layers that compute differently in training mode, beside the augmentation layers.
_MODE_DEPENDENT = ("Dropout", "SpatialDropout1D", "SpatialDropout2D", "SpatialDropout3D", "GaussianNoise",
                   "GaussianDropout", "AlphaDropout", "BatchNormalization")


def _mode_dependent_layers(model):
    """The layers of `model` (and of the models nested in it) other than the augmentation
    layers whose output depends on training mode: Dropout, BatchNormalization, the noise
    layers, and subclassed layers (their call may take `training`)."""
    out = []
    for layer in getattr(model, "_layers", ()):
        if getattr(layer, "_class_name", None) in _MODE_DEPENDENT or getattr(layer, "_custom", False):
            out.append(f"{getattr(layer, '_class_name', type(layer).__name__)} {layer.name!r}")
        elif hasattr(layer, "_layers"):
            out.extend(_mode_dependent_layers(layer))
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
        """model(x) on arrays (a call on symbolic tensors nests the model: _nesting.py):
        training=True runs the layers in training mode (the engine's forward pass, no
        update); unspecified, as Keras: the inference program, or the training-mode one when
        the model's random augmentation layers (whose call defaults to training=True) are the
        only layers that differ between the modes."""
        if mask is not None:
            raise NotImplementedError(f"model {self.name!r}: mask= is not supported by nnfit")
        if training:
            return self._predict_in_training_mode(inputs)
        random = _random_layers(self)
        if training is None and random:
            others = _mode_dependent_layers(self)
            if others:
                # Keras would run the augmentation layers in training mode and these in
                # inference mode: one call of the engine runs every layer in one mode.
                raise NotImplementedError(
                    f"model {self.name!r}: called on arrays without training=, Keras runs its random augmentation "
                    f"layers ({', '.join(random)}) in training mode and its other layers ({', '.join(others)}) in "
                    "inference mode, which nnfit does not do in one call; call the augmentation model on its own, or "
                    "pass training=True or training=False")
            return self._predict_in_training_mode(inputs)
        return self.predict_on_batch(inputs)

    def _predict_in_training_mode(self, inputs):
        xs = self._as_inputs(inputs)
        self._prepare_inference(xs)
        out = self._handle.predict(xs, _rows(inputs), 0, None, True)
        return self._structured(out, getattr(self, "_output_keys", None))
