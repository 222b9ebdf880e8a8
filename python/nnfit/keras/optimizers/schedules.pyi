"""Type stubs written by python/tools/gen_stubs.py from Keras 3.15.1's signatures: do not edit."""
from typing import Any

from nnfit.keras._object import KerasObject


class LearningRateSchedule(KerasObject): ...


class ExponentialDecay(LearningRateSchedule):
    """Keras's ExponentialDecay on nnfit's engine. A `LearningRateSchedule` that uses an exponential decay schedule."""
    def __init__(self, initial_learning_rate: Any, decay_steps: Any, decay_rate: Any, staircase: Any = False, name: Any = 'ExponentialDecay') -> None: ...


class PiecewiseConstantDecay(LearningRateSchedule):
    """Keras's PiecewiseConstantDecay on nnfit's engine. A `LearningRateSchedule` that uses a piecewise constant decay schedule."""
    def __init__(self, boundaries: Any, values: Any, name: Any = 'PiecewiseConstant') -> None: ...


class PolynomialDecay(LearningRateSchedule):
    """Keras's PolynomialDecay on nnfit's engine. A `LearningRateSchedule` that uses a polynomial decay schedule."""
    def __init__(self, initial_learning_rate: Any, decay_steps: Any, end_learning_rate: Any = 0.0001, power: Any = 1.0, cycle: Any = False, name: Any = 'PolynomialDecay') -> None: ...


class InverseTimeDecay(LearningRateSchedule):
    """Keras's InverseTimeDecay on nnfit's engine. A `LearningRateSchedule` that uses an inverse time decay schedule."""
    def __init__(self, initial_learning_rate: Any, decay_steps: Any, decay_rate: Any, staircase: Any = False, name: Any = 'InverseTimeDecay') -> None: ...


class CosineDecay(LearningRateSchedule):
    """Keras's CosineDecay on nnfit's engine. A `LearningRateSchedule` that uses a cosine decay with optional warmup."""
    def __init__(self, initial_learning_rate: Any, decay_steps: Any, alpha: Any = 0.0, name: Any = 'CosineDecay', warmup_target: Any = None, warmup_steps: Any = 0) -> None: ...


class CosineDecayRestarts(LearningRateSchedule):
    """Keras's CosineDecayRestarts on nnfit's engine. A `LearningRateSchedule` that uses a cosine decay schedule with restarts."""
    def __init__(self, initial_learning_rate: Any, first_decay_steps: Any, t_mul: Any = 2.0, m_mul: Any = 1.0, alpha: Any = 0.0, name: Any = 'SGDRDecay') -> None: ...
