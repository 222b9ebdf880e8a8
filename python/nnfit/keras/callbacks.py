"""keras.callbacks on nnfit's engine.

``Callback`` is Keras's base class: subclass it and fit calls your ``on_epoch_end(epoch,
logs)`` and the other hooks, with ``self.model`` the model being trained (set
``self.model.stop_training = True`` to stop). The built-in callbacks nnfit implements
(ModelCheckpoint, EarlyStopping, BackupAndRestore, ReduceLROnPlateau, CSVLogger,
TerminateOnNaN) take Keras 3's arguments and run inside the engine; LambdaCallback,
LearningRateScheduler, History, CallbackList, ProgbarLogger, RemoteMonitor and SwapEMAWeights
are Python, as in Keras.
"""
from nnfit.keras._object import KerasObject, make_classes
from nnfit.keras._progbar import print_msg


class Callback:
    """Keras's Callback: override the hooks you need. Epochs and batches count from 0."""

    def __init__(self):
        self.model = None
        self.params = {}

    def set_model(self, model):
        self.model = model

    def set_params(self, params):
        self.params = params

    def on_train_begin(self, logs=None):
        pass

    def on_train_end(self, logs=None):
        pass

    def on_epoch_begin(self, epoch, logs=None):
        pass

    def on_epoch_end(self, epoch, logs=None):
        pass

    def on_train_batch_begin(self, batch, logs=None):
        pass

    def on_train_batch_end(self, batch, logs=None):
        pass

    def on_batch_begin(self, batch, logs=None):
        pass

    def on_batch_end(self, batch, logs=None):
        pass

    def on_test_begin(self, logs=None):
        pass

    def on_test_end(self, logs=None):
        pass

    def on_test_batch_begin(self, batch, logs=None):
        pass

    def on_test_batch_end(self, batch, logs=None):
        pass

    def on_predict_begin(self, logs=None):
        pass

    def on_predict_end(self, logs=None):
        pass

    def on_predict_batch_begin(self, batch, logs=None):
        pass

    def on_predict_batch_end(self, batch, logs=None):
        pass


def _is_hook(name):
    return name.startswith("on_") and callable(getattr(Callback, name, None))


def _overrides(callback, hook):
    """Whether `callback`'s class defines `hook` beyond the base class's no-op."""
    return getattr(type(callback), hook, None) is not getattr(Callback, hook)


class _Builtin(KerasObject):
    """A Keras built-in callback the engine runs (serialized as Keras writes it)."""

    _group = "callbacks"


__all__ = ["Callback", "History", "LambdaCallback", "LearningRateScheduler", "TensorBoard"] + make_classes(
    "callbacks", _Builtin, globals())


class History(Callback):
    """What fit returns: ``history`` maps each log key ("loss", "accuracy", "val_loss",
    ...) to its per-epoch values; ``epoch`` lists the epochs run."""

    def __init__(self):
        super().__init__()
        self.history = {}
        self.epoch = []

    def on_train_begin(self, logs=None):
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for k, v in (logs or {}).items():
            self.history.setdefault(k, []).append(v)


class LambdaCallback(Callback):
    """Keras's LambdaCallback: hooks as functions."""

    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_train_begin=None, on_train_end=None,
                 on_train_batch_begin=None, on_train_batch_end=None, **kwargs):
        super().__init__()
        # Keras sets any other hook given by keyword (on_test_begin, on_predict_batch_end, ...).
        unsupported = [k for k in kwargs if kwargs[k] is not None and not _is_hook(k)]
        if unsupported:
            raise NotImplementedError(f"LambdaCallback: {', '.join(sorted(unsupported))} is not supported by nnfit")
        for name, fn in (("on_epoch_begin", on_epoch_begin), ("on_epoch_end", on_epoch_end),
                         ("on_train_begin", on_train_begin), ("on_train_end", on_train_end),
                         ("on_train_batch_begin", on_train_batch_begin), ("on_train_batch_end", on_train_batch_end),
                         *kwargs.items()):
            if fn is not None:
                setattr(self, name, fn)

    def _hooks(self):
        return {k for k in vars(self) if k.startswith("on_")}


class LearningRateScheduler(Callback):
    """Keras's LearningRateScheduler: schedule(epoch, lr) -> the epoch's learning rate."""

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule = schedule
        self.verbose = verbose

    def on_epoch_begin(self, epoch, logs=None):
        lr = float(self.model.optimizer.learning_rate)
        lr = float(self.schedule(epoch, lr))
        self.model.optimizer.learning_rate = lr
        if self.verbose > 0:
            print_msg(f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate to {lr}.")

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["learning_rate"] = float(self.model.optimizer.learning_rate)


class TensorBoard(Callback):
    """Keras's TensorBoard callback, run by the engine: epoch scalars (and the learning
    rate) to LOG_DIR/train and LOG_DIR/validation, and nnfit's per-step breakdown
    (steps.jsonl, ops.json) beside them, as `nnfit train --logdir` writes them;
    ``profile_batch`` (N or "N,M") traces those steps into a Chrome trace under
    LOG_DIR/train/plugins/profile. Each evaluation (fit's validation, or evaluate given the
    callback) adds evaluation_<name>_vs_iterations to LOG_DIR/validation, as Keras 3 writes
    it. With histogram_freq, a histogram of each layer's weights every that many epochs, as
    Keras 3 writes them (train/, "<weight path>/histogram"). The model graph is not written
    (write_graph is accepted for Keras's default); images, embeddings and per-batch scalars
    are not supported (NotImplementedError when asked for)."""

    def __init__(self, log_dir="logs", histogram_freq=0, write_graph=True, write_images=False,
                 write_steps_per_second=False, update_freq="epoch", profile_batch=0, embeddings_freq=0,
                 embeddings_metadata=None):
        super().__init__()
        unsupported = {"write_images": (write_images, False),
                       "write_steps_per_second": (write_steps_per_second, False),
                       "update_freq": (update_freq, "epoch"), "embeddings_freq": (embeddings_freq, 0),
                       "embeddings_metadata": (embeddings_metadata, None)}
        for name, (value, default) in unsupported.items():
            if value != default:
                raise NotImplementedError(f"TensorBoard: {name}={value!r} is not supported by nnfit")
        if isinstance(histogram_freq, bool) or not isinstance(histogram_freq, int) or histogram_freq < 0:
            raise ValueError(f"TensorBoard: histogram_freq must be an integer >= 0, got {histogram_freq!r}")
        self.histogram_freq = histogram_freq
        self.log_dir = str(log_dir)
        if isinstance(profile_batch, (tuple, list)):
            profile_batch = f"{profile_batch[0]}-{profile_batch[1]}"
        elif isinstance(profile_batch, str):
            profile_batch = profile_batch.replace(",", "-")
        self.profile_batch = "" if profile_batch in (0, "0", None) else str(profile_batch)

    def _engine_settings(self):
        return {"log_dir": self.log_dir, "profile_steps": self.profile_batch, "histogram_freq": self.histogram_freq}


class SwapEMAWeights(Callback):
    """Keras's SwapEMAWeights(swap_on_epoch=False), for an optimizer with ``use_ema=True``:
    evaluation (fit's validation, evaluate) and predict run on the weights' moving averages,
    the weights swapped in place before and back after; with ``swap_on_epoch`` the model
    also holds the averages between on_epoch_end and the next on_epoch_begin (for callbacks
    placed after it, such as ModelCheckpoint). The engine exchanges the weights with the
    optimizer's averages. As Keras 3.15's, on_predict_end does not swap back (its test
    reads ``not self._ema_weights_in_model``), so after predict the model holds the averages."""

    def __init__(self, swap_on_epoch=False):
        super().__init__()
        self.swap_on_epoch = swap_on_epoch
        self._ema_weights_in_model = False

    def _swap_variables(self):
        self.model._handle.swap_ema_weights()

    def _finalize_ema_values(self):
        self.model._handle.finalize_ema_weights()

    def on_epoch_begin(self, epoch, logs=None):
        if self.swap_on_epoch and self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = False

    def on_epoch_end(self, epoch, logs=None):
        if self.swap_on_epoch and not self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = True
            # fit ends by giving the weights their averages (Keras's finalize_variable_values):
            # the averages take the swapped-in values first, so the model ends on them.
            if epoch == self.params["epochs"] - 1:
                self._finalize_ema_values()

    def on_test_begin(self, logs=None):
        if not self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = True

    def on_test_end(self, logs=None):
        if self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = False

    def on_predict_begin(self, logs=None):
        if not self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = True

    def on_predict_end(self, logs=None):
        if not self._ema_weights_in_model:  # Keras 3.15's test, kept: never true here
            self._swap_variables()
            self._ema_weights_in_model = False


__all__.append("SwapEMAWeights")


# Keras's CallbackList, ProgbarLogger and RemoteMonitor, in Python (their own file).
from nnfit.keras._callback_list import CallbackList, ProgbarLogger, RemoteMonitor  # noqa: E402

__all__ += ["CallbackList", "ProgbarLogger", "RemoteMonitor"]


class OrbaxCheckpoint(Callback):
    """Keras 3.15's OrbaxCheckpoint (checkpoints through JAX's Orbax library): not supported
    by nnfit, which saves with ModelCheckpoint and resumes with BackupAndRestore."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("keras.callbacks.OrbaxCheckpoint is not supported by nnfit (Orbax is JAX's); use "
                                  "ModelCheckpoint to save and BackupAndRestore to resume")


__all__.append("OrbaxCheckpoint")
