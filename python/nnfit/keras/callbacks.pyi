"""Type stubs written by python/tools/gen_stubs.py from Keras 3.15.1's signatures: do not edit."""
from typing import Any, Callable, Optional

from nnfit.keras._object import KerasObject


class Callback:
    model: Any
    params: dict
    def set_model(self, model: Any) -> None: ...
    def set_params(self, params: dict) -> None: ...
    def on_train_begin(self, logs: Optional[dict] = None) -> None: ...
    def on_train_end(self, logs: Optional[dict] = None) -> None: ...
    def on_epoch_begin(self, epoch: int, logs: Optional[dict] = None) -> None: ...
    def on_epoch_end(self, epoch: int, logs: Optional[dict] = None) -> None: ...
    def on_train_batch_begin(self, batch: int, logs: Optional[dict] = None) -> None: ...
    def on_train_batch_end(self, batch: int, logs: Optional[dict] = None) -> None: ...
    def on_batch_begin(self, batch: int, logs: Optional[dict] = None) -> None: ...
    def on_batch_end(self, batch: int, logs: Optional[dict] = None) -> None: ...


class History(Callback):
    history: dict
    epoch: list
    nnfit: list
    notes: list


class LambdaCallback(Callback):
    def __init__(self, on_epoch_begin: Optional[Callable] = None, on_epoch_end: Optional[Callable] = None,
                 on_train_begin: Optional[Callable] = None, on_train_end: Optional[Callable] = None,
                 on_train_batch_begin: Optional[Callable] = None,
                 on_train_batch_end: Optional[Callable] = None) -> None: ...


class LearningRateScheduler(Callback):
    def __init__(self, schedule: Callable[[int, float], float], verbose: int = 0) -> None: ...


class TensorBoard(Callback):
    def __init__(self, log_dir: str = "logs", histogram_freq: int = 0, write_graph: bool = True,
                 write_images: bool = False, write_steps_per_second: bool = False, update_freq: Any = "epoch",
                 profile_batch: Any = 0, embeddings_freq: int = 0, embeddings_metadata: Any = None) -> None: ...


class _Builtin(KerasObject): ...


class ModelCheckpoint(_Builtin):
    """Keras's ModelCheckpoint on nnfit's engine. Callback to save the Keras model or model weights at some frequency."""
    def __init__(self, filepath: Any, monitor: Any = 'val_loss', verbose: Any = 0, save_best_only: Any = False, save_weights_only: Any = False, mode: Any = 'auto', save_freq: Any = 'epoch', initial_value_threshold: Any = None) -> None: ...


class EarlyStopping(_Builtin):
    """Keras's EarlyStopping on nnfit's engine. Stop training when a monitored metric has stopped improving."""
    def __init__(self, monitor: Any = 'val_loss', min_delta: Any = 0, patience: Any = 0, verbose: Any = 0, mode: Any = 'auto', baseline: Any = None, restore_best_weights: Any = False, start_from_epoch: Any = 0) -> None: ...


class BackupAndRestore(_Builtin):
    """Keras's BackupAndRestore on nnfit's engine. Callback to back up and restore the training state."""
    def __init__(self, backup_dir: Any, save_freq: Any = 'epoch', double_checkpoint: Any = False, delete_checkpoint: Any = True) -> None: ...


class ReduceLROnPlateau(_Builtin):
    """Keras's ReduceLROnPlateau on nnfit's engine. Reduce learning rate when a metric has stopped improving."""
    def __init__(self, monitor: Any = 'val_loss', factor: Any = 0.1, patience: Any = 10, verbose: Any = 0, mode: Any = 'auto', min_delta: Any = 0.0001, cooldown: Any = 0, min_lr: Any = 0.0, **kwargs: Any) -> None: ...


class CSVLogger(_Builtin):
    """Keras's CSVLogger on nnfit's engine. Callback that streams epoch results to a CSV file."""
    def __init__(self, filename: Any, separator: Any = ',', append: Any = False) -> None: ...


class TerminateOnNaN(_Builtin):
    """Keras's TerminateOnNaN on nnfit's engine. Callback that terminates training when a NaN loss is encountered."""
    def __init__(self, raise_error: Any = False) -> None: ...
