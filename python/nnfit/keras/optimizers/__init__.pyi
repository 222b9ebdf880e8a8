"""Type stubs written by python/tools/gen_stubs.py from Keras 3.15.1's signatures: do not edit."""
from typing import Any

from nnfit.keras._object import KerasObject
from nnfit.keras.optimizers import schedules as schedules


class Optimizer(KerasObject):
    learning_rate: Any
    @property
    def iterations(self) -> int: ...


def get(identifier: Any) -> Optimizer: ...
def serialize(optimizer: Optimizer) -> dict: ...
def deserialize(config: dict) -> Optimizer: ...


class SGD(Optimizer):
    """Keras's SGD on nnfit's engine. Gradient descent (with momentum) optimizer."""
    def __init__(self, learning_rate: Any = 0.01, momentum: Any = 0.0, nesterov: Any = False, weight_decay: Any = None, clipnorm: Any = None, clipvalue: Any = None, global_clipnorm: Any = None, use_ema: Any = False, ema_momentum: Any = 0.99, ema_overwrite_frequency: Any = None, loss_scale_factor: Any = None, gradient_accumulation_steps: Any = None, name: Any = None, **kwargs: Any) -> None: ...


class Adam(Optimizer):
    """Keras's Adam on nnfit's engine. Optimizer that implements the Adam algorithm."""
    def __init__(self, learning_rate: Any = 0.001, beta_1: Any = 0.9, beta_2: Any = 0.999, epsilon: Any = 1e-07, amsgrad: Any = False, weight_decay: Any = None, clipnorm: Any = None, clipvalue: Any = None, global_clipnorm: Any = None, use_ema: Any = False, ema_momentum: Any = 0.99, ema_overwrite_frequency: Any = None, loss_scale_factor: Any = None, gradient_accumulation_steps: Any = None, name: Any = None, **kwargs: Any) -> None: ...


class AdamW(Optimizer):
    """Keras's AdamW on nnfit's engine. Optimizer that implements the AdamW algorithm."""
    def __init__(self, learning_rate: Any = 0.001, weight_decay: Any = 0.004, beta_1: Any = 0.9, beta_2: Any = 0.999, epsilon: Any = 1e-07, amsgrad: Any = False, clipnorm: Any = None, clipvalue: Any = None, global_clipnorm: Any = None, use_ema: Any = False, ema_momentum: Any = 0.99, ema_overwrite_frequency: Any = None, loss_scale_factor: Any = None, gradient_accumulation_steps: Any = None, name: Any = None, **kwargs: Any) -> None: ...


class RMSprop(Optimizer):
    """Keras's RMSprop on nnfit's engine. Optimizer that implements the RMSprop algorithm."""
    def __init__(self, learning_rate: Any = 0.001, rho: Any = 0.9, momentum: Any = 0.0, epsilon: Any = 1e-07, centered: Any = False, weight_decay: Any = None, clipnorm: Any = None, clipvalue: Any = None, global_clipnorm: Any = None, use_ema: Any = False, ema_momentum: Any = 0.99, ema_overwrite_frequency: Any = None, loss_scale_factor: Any = None, gradient_accumulation_steps: Any = None, name: Any = None, **kwargs: Any) -> None: ...


class Adagrad(Optimizer):
    """Keras's Adagrad on nnfit's engine. Optimizer that implements the Adagrad algorithm."""
    def __init__(self, learning_rate: Any = 0.001, initial_accumulator_value: Any = 0.1, epsilon: Any = 1e-07, weight_decay: Any = None, clipnorm: Any = None, clipvalue: Any = None, global_clipnorm: Any = None, use_ema: Any = False, ema_momentum: Any = 0.99, ema_overwrite_frequency: Any = None, loss_scale_factor: Any = None, gradient_accumulation_steps: Any = None, name: Any = None, **kwargs: Any) -> None: ...


class Adamax(Optimizer):
    """Keras's Adamax on nnfit's engine. Optimizer that implements the Adamax algorithm."""
    def __init__(self, learning_rate: Any = 0.001, beta_1: Any = 0.9, beta_2: Any = 0.999, epsilon: Any = 1e-07, weight_decay: Any = None, clipnorm: Any = None, clipvalue: Any = None, global_clipnorm: Any = None, use_ema: Any = False, ema_momentum: Any = 0.99, ema_overwrite_frequency: Any = None, loss_scale_factor: Any = None, gradient_accumulation_steps: Any = None, name: Any = None, **kwargs: Any) -> None: ...


class Adadelta(Optimizer):
    """Keras's Adadelta on nnfit's engine. Optimizer that implements the Adadelta algorithm."""
    def __init__(self, learning_rate: Any = 0.001, rho: Any = 0.95, epsilon: Any = 1e-07, weight_decay: Any = None, clipnorm: Any = None, clipvalue: Any = None, global_clipnorm: Any = None, use_ema: Any = False, ema_momentum: Any = 0.99, ema_overwrite_frequency: Any = None, loss_scale_factor: Any = None, gradient_accumulation_steps: Any = None, name: Any = None, **kwargs: Any) -> None: ...


class Nadam(Optimizer):
    """Keras's Nadam on nnfit's engine. Optimizer that implements the Nadam algorithm."""
    def __init__(self, learning_rate: Any = 0.001, beta_1: Any = 0.9, beta_2: Any = 0.999, epsilon: Any = 1e-07, weight_decay: Any = None, clipnorm: Any = None, clipvalue: Any = None, global_clipnorm: Any = None, use_ema: Any = False, ema_momentum: Any = 0.99, ema_overwrite_frequency: Any = None, loss_scale_factor: Any = None, gradient_accumulation_steps: Any = None, name: Any = None, **kwargs: Any) -> None: ...


class Ftrl(Optimizer):
    """Keras's Ftrl on nnfit's engine. Optimizer that implements the FTRL algorithm."""
    def __init__(self, learning_rate: Any = 0.001, learning_rate_power: Any = -0.5, initial_accumulator_value: Any = 0.1, l1_regularization_strength: Any = 0.0, l2_regularization_strength: Any = 0.0, l2_shrinkage_regularization_strength: Any = 0.0, beta: Any = 0.0, weight_decay: Any = None, clipnorm: Any = None, clipvalue: Any = None, global_clipnorm: Any = None, use_ema: Any = False, ema_momentum: Any = 0.99, ema_overwrite_frequency: Any = None, loss_scale_factor: Any = None, gradient_accumulation_steps: Any = None, name: Any = None, **kwargs: Any) -> None: ...


class Lion(Optimizer):
    """Keras's Lion on nnfit's engine. Optimizer that implements the Lion algorithm."""
    def __init__(self, learning_rate: Any = 0.001, beta_1: Any = 0.9, beta_2: Any = 0.99, weight_decay: Any = None, clipnorm: Any = None, clipvalue: Any = None, global_clipnorm: Any = None, use_ema: Any = False, ema_momentum: Any = 0.99, ema_overwrite_frequency: Any = None, loss_scale_factor: Any = None, gradient_accumulation_steps: Any = None, name: Any = None, **kwargs: Any) -> None: ...


class Lamb(Optimizer):
    """Keras's Lamb on nnfit's engine. Optimizer that implements the Lamb algorithm."""
    def __init__(self, learning_rate: Any = 0.001, beta_1: Any = 0.9, beta_2: Any = 0.999, epsilon: Any = 1e-07, weight_decay: Any = None, clipnorm: Any = None, clipvalue: Any = None, global_clipnorm: Any = None, use_ema: Any = False, ema_momentum: Any = 0.99, ema_overwrite_frequency: Any = None, loss_scale_factor: Any = None, gradient_accumulation_steps: Any = None, name: Any = None, **kwargs: Any) -> None: ...


class Adafactor(Optimizer):
    """Keras's Adafactor on nnfit's engine. Optimizer that implements the Adafactor algorithm."""
    def __init__(self, learning_rate: Any = 0.001, beta_2_decay: Any = -0.8, epsilon_1: Any = 1e-30, epsilon_2: Any = 0.001, clip_threshold: Any = 1.0, relative_step: Any = True, weight_decay: Any = None, clipnorm: Any = None, clipvalue: Any = None, global_clipnorm: Any = None, use_ema: Any = False, ema_momentum: Any = 0.99, ema_overwrite_frequency: Any = None, loss_scale_factor: Any = None, gradient_accumulation_steps: Any = None, name: Any = None, **kwargs: Any) -> None: ...


class ScheduleFreeAdamW(Optimizer):
    """Keras's ScheduleFreeAdamW on nnfit's engine. Optimizer that implements the Schedule-Free AdamW algorithm."""
    def __init__(self, learning_rate: Any = 0.0025, beta_1: Any = 0.9, beta_2: Any = 0.999, epsilon: Any = 1e-08, warmup_steps: Any = 0, weight_decay: Any = None, clipnorm: Any = None, clipvalue: Any = None, global_clipnorm: Any = None, use_ema: Any = False, ema_momentum: Any = 0.99, ema_overwrite_frequency: Any = None, loss_scale_factor: Any = None, gradient_accumulation_steps: Any = None, name: Any = None, **kwargs: Any) -> None: ...
