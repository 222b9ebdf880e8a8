"""Type stubs written by python/tools/gen_stubs.py from Keras 3.15.1's signatures: do not edit."""
from typing import Any, Optional, Sequence

from nnfit.keras._graph import KerasTensor
from nnfit.keras._object import KerasObject


class Layer(KerasObject):
    name: str
    trainable: bool
    @property
    def dtype(self) -> str: ...
    @property
    def compute_dtype(self) -> str: ...
    @property
    def built(self) -> bool: ...
    @property
    def weights(self) -> list: ...
    @property
    def trainable_weights(self) -> list: ...
    @property
    def non_trainable_weights(self) -> list: ...
    def get_weights(self) -> list: ...
    def set_weights(self, weights: Sequence[Any]) -> None: ...
    def count_params(self) -> int: ...
    def build(self, input_shape: Any = None) -> None: ...
    def __call__(self, inputs: Any) -> Any: ...


class InputLayer(Layer):
    def __init__(self, shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None,
                 dtype: Optional[str] = None, sparse: Optional[bool] = None,
                 batch_shape: Optional[Sequence[Optional[int]]] = None, input_tensor: Any = None,
                 optional: bool = False, name: Optional[str] = None) -> None: ...


class Wrapper(Layer):
    layer: Layer
    def __init__(self, layer: Layer, **kwargs: Any) -> None: ...


def Input(shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None,
          dtype: Optional[str] = None, sparse: Optional[bool] = None,
          batch_shape: Optional[Sequence[Optional[int]]] = None, name: Optional[str] = None, tensor: Any = None,
          optional: bool = False) -> KerasTensor: ...
def serialize(layer: Layer) -> dict: ...
def deserialize(config: dict) -> Layer: ...
def add(inputs: Sequence[KerasTensor], **kwargs: Any) -> KerasTensor: ...
def concatenate(inputs: Sequence[KerasTensor], axis: int = -1, **kwargs: Any) -> KerasTensor: ...
def multiply(inputs: Sequence[KerasTensor], **kwargs: Any) -> KerasTensor: ...
def average(inputs: Sequence[KerasTensor], **kwargs: Any) -> KerasTensor: ...
def maximum(inputs: Sequence[KerasTensor], **kwargs: Any) -> KerasTensor: ...
def minimum(inputs: Sequence[KerasTensor], **kwargs: Any) -> KerasTensor: ...
def subtract(inputs: Sequence[KerasTensor], **kwargs: Any) -> KerasTensor: ...
def dot(inputs: Sequence[KerasTensor], axes: Any = -1, **kwargs: Any) -> KerasTensor: ...


class Activation(Layer):
    """Keras's Activation on nnfit's engine. Applies an activation function to an output."""
    def __init__(self, activation: Any, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class ActivityRegularization(Layer):
    """Keras's ActivityRegularization on nnfit's engine. Layer that applies an update to the cost function based input activity."""
    def __init__(self, l1: Any = 0.0, l2: Any = 0.0, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class Add(Layer):
    """Keras's Add on nnfit's engine. Performs elementwise addition operation."""
    def __init__(self, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class Identity(Layer):
    """Keras's Identity on nnfit's engine. Identity layer."""
    def __init__(self, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class AdditiveAttention(Layer):
    """Keras's AdditiveAttention on nnfit's engine. Additive attention layer, a.k.a. Bahdanau-style attention."""
    def __init__(self, use_scale: Any = True, dropout: Any = 0.0, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class AlphaDropout(Layer):
    """Keras's AlphaDropout on nnfit's engine. Applies Alpha Dropout to the input."""
    def __init__(self, rate: Any, noise_shape: Any = None, seed: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class Attention(Layer):
    """Keras's Attention on nnfit's engine. Dot-product attention layer, a.k.a. Luong-style attention."""
    def __init__(self, use_scale: Any = False, score_mode: Any = 'dot', dropout: Any = 0.0, seed: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class Average(Layer):
    """Keras's Average on nnfit's engine. Averages a list of inputs element-wise.."""
    def __init__(self, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class AveragePooling1D(Layer):
    """Keras's AveragePooling1D on nnfit's engine. Average pooling for temporal data."""
    def __init__(self, pool_size: Any, strides: Any = None, padding: Any = 'valid', data_format: Any = None, name: Any = None, *, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class AveragePooling2D(Layer):
    """Keras's AveragePooling2D on nnfit's engine. Average pooling operation for 2D spatial data."""
    def __init__(self, pool_size: Any, strides: Any = None, padding: Any = 'valid', data_format: Any = None, name: Any = None, *, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class AveragePooling3D(Layer):
    """Keras's AveragePooling3D on nnfit's engine. Average pooling operation for 3D data (spatial or spatio-temporal)."""
    def __init__(self, pool_size: Any, strides: Any = None, padding: Any = 'valid', data_format: Any = None, name: Any = None, *, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class BatchNormalization(Layer):
    """Keras's BatchNormalization on nnfit's engine. Layer that normalizes its inputs."""
    def __init__(self, axis: Any = -1, momentum: Any = 0.99, epsilon: Any = 0.001, center: Any = True, scale: Any = True, beta_initializer: Any = 'zeros', gamma_initializer: Any = 'ones', moving_mean_initializer: Any = 'zeros', moving_variance_initializer: Any = 'ones', beta_regularizer: Any = None, gamma_regularizer: Any = None, beta_constraint: Any = None, gamma_constraint: Any = None, renorm: Any = False, renorm_clipping: Any = None, renorm_momentum: Any = 0.99, synchronized: Any = False, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class Bidirectional(Layer):
    """Keras's Bidirectional on nnfit's engine. Bidirectional wrapper for RNNs."""
    def __init__(self, layer: Any, merge_mode: Any = 'concat', weights: Any = None, backward_layer: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class CenterCrop(Layer):
    """Keras's CenterCrop on nnfit's engine. A preprocessing layer which crops images."""
    def __init__(self, height: Any, width: Any, data_format: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class Concatenate(Layer):
    """Keras's Concatenate on nnfit's engine. Concatenates a list of inputs."""
    def __init__(self, axis: Any = -1, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class Conv1D(Layer):
    """Keras's Conv1D on nnfit's engine. 1D convolution layer (e.g. temporal convolution)."""
    def __init__(self, filters: Any, kernel_size: Any, strides: Any = 1, padding: Any = 'valid', data_format: Any = None, dilation_rate: Any = 1, groups: Any = 1, activation: Any = None, use_bias: Any = True, kernel_initializer: Any = 'glorot_uniform', bias_initializer: Any = 'zeros', kernel_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None, kernel_constraint: Any = None, bias_constraint: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True) -> None: ...


class Conv1DTranspose(Layer):
    """Keras's Conv1DTranspose on nnfit's engine. 1D transposed convolution layer."""
    def __init__(self, filters: Any, kernel_size: Any, strides: Any = 1, padding: Any = 'valid', output_padding: Any = None, data_format: Any = None, dilation_rate: Any = 1, activation: Any = None, use_bias: Any = True, kernel_initializer: Any = 'glorot_uniform', bias_initializer: Any = 'zeros', kernel_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None, kernel_constraint: Any = None, bias_constraint: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True) -> None: ...


class Conv2D(Layer):
    """Keras's Conv2D on nnfit's engine. 2D convolution layer."""
    def __init__(self, filters: Any, kernel_size: Any, strides: Any = (1, 1), padding: Any = 'valid', data_format: Any = None, dilation_rate: Any = (1, 1), groups: Any = 1, activation: Any = None, use_bias: Any = True, kernel_initializer: Any = 'glorot_uniform', bias_initializer: Any = 'zeros', kernel_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None, kernel_constraint: Any = None, bias_constraint: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True) -> None: ...


class Conv2DTranspose(Layer):
    """Keras's Conv2DTranspose on nnfit's engine. 2D transposed convolution layer."""
    def __init__(self, filters: Any, kernel_size: Any, strides: Any = (1, 1), padding: Any = 'valid', output_padding: Any = None, data_format: Any = None, dilation_rate: Any = (1, 1), activation: Any = None, use_bias: Any = True, kernel_initializer: Any = 'glorot_uniform', bias_initializer: Any = 'zeros', kernel_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None, kernel_constraint: Any = None, bias_constraint: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True) -> None: ...


class Conv3D(Layer):
    """Keras's Conv3D on nnfit's engine. 3D convolution layer."""
    def __init__(self, filters: Any, kernel_size: Any, strides: Any = (1, 1, 1), padding: Any = 'valid', data_format: Any = None, dilation_rate: Any = (1, 1, 1), groups: Any = 1, activation: Any = None, use_bias: Any = True, kernel_initializer: Any = 'glorot_uniform', bias_initializer: Any = 'zeros', kernel_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None, kernel_constraint: Any = None, bias_constraint: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True) -> None: ...


class Conv3DTranspose(Layer):
    """Keras's Conv3DTranspose on nnfit's engine. 3D transposed convolution layer."""
    def __init__(self, filters: Any, kernel_size: Any, strides: Any = (1, 1, 1), padding: Any = 'valid', data_format: Any = None, output_padding: Any = None, dilation_rate: Any = (1, 1, 1), activation: Any = None, use_bias: Any = True, kernel_initializer: Any = 'glorot_uniform', bias_initializer: Any = 'zeros', kernel_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None, kernel_constraint: Any = None, bias_constraint: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True) -> None: ...


class DepthwiseConv1D(Layer):
    """Keras's DepthwiseConv1D on nnfit's engine. 1D depthwise convolution layer."""
    def __init__(self, kernel_size: Any, strides: Any = 1, padding: Any = 'valid', depth_multiplier: Any = 1, data_format: Any = None, dilation_rate: Any = 1, activation: Any = None, use_bias: Any = True, depthwise_initializer: Any = 'glorot_uniform', bias_initializer: Any = 'zeros', depthwise_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None, depthwise_constraint: Any = None, bias_constraint: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True) -> None: ...


class DepthwiseConv2D(Layer):
    """Keras's DepthwiseConv2D on nnfit's engine. 2D depthwise convolution layer."""
    def __init__(self, kernel_size: Any, strides: Any = (1, 1), padding: Any = 'valid', depth_multiplier: Any = 1, data_format: Any = None, dilation_rate: Any = (1, 1), activation: Any = None, use_bias: Any = True, depthwise_initializer: Any = 'glorot_uniform', bias_initializer: Any = 'zeros', depthwise_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None, depthwise_constraint: Any = None, bias_constraint: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True) -> None: ...


class Cropping1D(Layer):
    """Keras's Cropping1D on nnfit's engine. Cropping layer for 1D input (e.g. temporal sequence)."""
    def __init__(self, cropping: Any = (1, 1), *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class Cropping2D(Layer):
    """Keras's Cropping2D on nnfit's engine. Cropping layer for 2D input (e.g. picture)."""
    def __init__(self, cropping: Any = ..., data_format: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class Cropping3D(Layer):
    """Keras's Cropping3D on nnfit's engine. Cropping layer for 3D data (e.g. spatial or spatio-temporal)."""
    def __init__(self, cropping: Any = ..., data_format: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class Dense(Layer):
    """Keras's Dense on nnfit's engine. Just your regular densely-connected NN layer."""
    def __init__(self, units: Any, activation: Any = None, use_bias: Any = True, kernel_initializer: Any = 'glorot_uniform', bias_initializer: Any = 'zeros', kernel_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None, kernel_constraint: Any = None, bias_constraint: Any = None, lora_rank: Any = None, lora_alpha: Any = None, quantization_config: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True) -> None: ...


class Dot(Layer):
    """Keras's Dot on nnfit's engine. Computes element-wise dot product of two tensors."""
    def __init__(self, axes: Any, normalize: Any = False, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class Dropout(Layer):
    """Keras's Dropout on nnfit's engine. Applies dropout to the input."""
    def __init__(self, rate: Any, noise_shape: Any = None, seed: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class ELU(Layer):
    """Keras's ELU on nnfit's engine. Applies an Exponential Linear Unit function to an output."""
    def __init__(self, alpha: Any = 1.0, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class EinsumDense(Layer):
    """Keras's EinsumDense on nnfit's engine. A layer that uses `einsum` as the backing computation."""
    def __init__(self, equation: Any, output_shape: Any, activation: Any = None, bias_axes: Any = None, kernel_initializer: Any = 'glorot_uniform', bias_initializer: Any = 'zeros', kernel_regularizer: Any = None, bias_regularizer: Any = None, kernel_constraint: Any = None, bias_constraint: Any = None, lora_rank: Any = None, lora_alpha: Any = None, gptq_unpacked_column_size: Any = None, quantization_config: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class Embedding(Layer):
    """Keras's Embedding on nnfit's engine. Turns nonnegative integers (indexes) into dense vectors of fixed size."""
    def __init__(self, input_dim: Any, output_dim: Any, embeddings_initializer: Any = 'uniform', embeddings_regularizer: Any = None, embeddings_constraint: Any = None, mask_zero: Any = False, weights: Any = None, lora_rank: Any = None, lora_alpha: Any = None, quantization_config: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class Flatten(Layer):
    """Keras's Flatten on nnfit's engine. Flattens the input. Does not affect the batch size."""
    def __init__(self, data_format: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class GRU(Layer):
    """Keras's GRU on nnfit's engine. Gated Recurrent Unit - Cho et al. 2014."""
    def __init__(self, units: Any, activation: Any = 'tanh', recurrent_activation: Any = 'sigmoid', use_bias: Any = True, kernel_initializer: Any = 'glorot_uniform', recurrent_initializer: Any = 'orthogonal', bias_initializer: Any = 'zeros', kernel_regularizer: Any = None, recurrent_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None, kernel_constraint: Any = None, recurrent_constraint: Any = None, bias_constraint: Any = None, dropout: Any = 0.0, recurrent_dropout: Any = 0.0, seed: Any = None, return_sequences: Any = False, return_state: Any = False, go_backwards: Any = False, stateful: Any = False, unroll: Any = False, reset_after: Any = True, use_cudnn: Any = 'auto', *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True) -> None: ...


class GaussianDropout(Layer):
    """Keras's GaussianDropout on nnfit's engine. Apply multiplicative 1-centered Gaussian noise."""
    def __init__(self, rate: Any, seed: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class GaussianNoise(Layer):
    """Keras's GaussianNoise on nnfit's engine. Apply additive zero-centered Gaussian noise."""
    def __init__(self, stddev: Any, seed: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class GlobalAveragePooling1D(Layer):
    """Keras's GlobalAveragePooling1D on nnfit's engine. Global average pooling operation for temporal data."""
    def __init__(self, data_format: Any = None, keepdims: Any = False, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class GlobalAveragePooling2D(Layer):
    """Keras's GlobalAveragePooling2D on nnfit's engine. Global average pooling operation for 2D data."""
    def __init__(self, data_format: Any = None, keepdims: Any = False, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class GlobalAveragePooling3D(Layer):
    """Keras's GlobalAveragePooling3D on nnfit's engine. Global average pooling operation for 3D data."""
    def __init__(self, data_format: Any = None, keepdims: Any = False, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class GlobalMaxPooling1D(Layer):
    """Keras's GlobalMaxPooling1D on nnfit's engine. Global max pooling operation for temporal data."""
    def __init__(self, data_format: Any = None, keepdims: Any = False, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class GlobalMaxPooling2D(Layer):
    """Keras's GlobalMaxPooling2D on nnfit's engine. Global max pooling operation for 2D data."""
    def __init__(self, data_format: Any = None, keepdims: Any = False, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class GlobalMaxPooling3D(Layer):
    """Keras's GlobalMaxPooling3D on nnfit's engine. Global max pooling operation for 3D data."""
    def __init__(self, data_format: Any = None, keepdims: Any = False, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class GroupNormalization(Layer):
    """Keras's GroupNormalization on nnfit's engine. Group normalization layer."""
    def __init__(self, groups: Any = 32, axis: Any = -1, epsilon: Any = 0.001, center: Any = True, scale: Any = True, beta_initializer: Any = 'zeros', gamma_initializer: Any = 'ones', beta_regularizer: Any = None, gamma_regularizer: Any = None, beta_constraint: Any = None, gamma_constraint: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class LSTM(Layer):
    """Keras's LSTM on nnfit's engine. Long Short-Term Memory layer - Hochreiter 1997."""
    def __init__(self, units: Any, activation: Any = 'tanh', recurrent_activation: Any = 'sigmoid', use_bias: Any = True, kernel_initializer: Any = 'glorot_uniform', recurrent_initializer: Any = 'orthogonal', bias_initializer: Any = 'zeros', unit_forget_bias: Any = True, kernel_regularizer: Any = None, recurrent_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None, kernel_constraint: Any = None, recurrent_constraint: Any = None, bias_constraint: Any = None, dropout: Any = 0.0, recurrent_dropout: Any = 0.0, seed: Any = None, return_sequences: Any = False, return_state: Any = False, go_backwards: Any = False, stateful: Any = False, unroll: Any = False, use_cudnn: Any = 'auto', *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True) -> None: ...


class LayerNormalization(Layer):
    """Keras's LayerNormalization on nnfit's engine. Layer normalization layer (Ba et al., 2016)."""
    def __init__(self, axis: Any = -1, epsilon: Any = 0.001, center: Any = True, scale: Any = True, beta_initializer: Any = 'zeros', gamma_initializer: Any = 'ones', beta_regularizer: Any = None, gamma_regularizer: Any = None, beta_constraint: Any = None, gamma_constraint: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class LeakyReLU(Layer):
    """Keras's LeakyReLU on nnfit's engine. Leaky version of a Rectified Linear Unit activation layer."""
    def __init__(self, negative_slope: Any = 0.3, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class Masking(Layer):
    """Keras's Masking on nnfit's engine. Masks a sequence by using a mask value to skip timesteps."""
    def __init__(self, mask_value: Any = 0.0, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class MaxPooling1D(Layer):
    """Keras's MaxPooling1D on nnfit's engine. Max pooling operation for 1D temporal data."""
    def __init__(self, pool_size: Any = 2, strides: Any = None, padding: Any = 'valid', data_format: Any = None, name: Any = None, *, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class MaxPooling2D(Layer):
    """Keras's MaxPooling2D on nnfit's engine. Max pooling operation for 2D spatial data."""
    def __init__(self, pool_size: Any = (2, 2), strides: Any = None, padding: Any = 'valid', data_format: Any = None, name: Any = None, *, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class MaxPooling3D(Layer):
    """Keras's MaxPooling3D on nnfit's engine. Max pooling operation for 3D data (spatial or spatio-temporal)."""
    def __init__(self, pool_size: Any = (2, 2, 2), strides: Any = None, padding: Any = 'valid', data_format: Any = None, name: Any = None, *, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class Maximum(Layer):
    """Keras's Maximum on nnfit's engine. Computes element-wise maximum on a list of inputs."""
    def __init__(self, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class Minimum(Layer):
    """Keras's Minimum on nnfit's engine. Computes elementwise minimum on a list of inputs."""
    def __init__(self, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class MultiHeadAttention(Layer):
    """Keras's MultiHeadAttention on nnfit's engine. MultiHeadAttention layer."""
    def __init__(self, num_heads: Any, key_dim: Any, value_dim: Any = None, dropout: Any = 0.0, use_bias: Any = True, output_shape: Any = None, attention_axes: Any = None, sliding_window: Any = None, flash_attention: Any = None, kernel_initializer: Any = 'glorot_uniform', bias_initializer: Any = 'zeros', kernel_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None, kernel_constraint: Any = None, bias_constraint: Any = None, use_gate: Any = False, seed: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True) -> None: ...


class Multiply(Layer):
    """Keras's Multiply on nnfit's engine. Performs elementwise multiplication."""
    def __init__(self, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class Normalization(Layer):
    """Keras's Normalization on nnfit's engine. A preprocessing layer that normalizes continuous features."""
    def __init__(self, axis: Any = -1, mean: Any = None, variance: Any = None, invert: Any = False, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...
    def adapt(self, data: Any) -> None: ...


class PReLU(Layer):
    """Keras's PReLU on nnfit's engine. Parametric Rectified Linear Unit activation layer."""
    def __init__(self, alpha_initializer: Any = 'Zeros', alpha_regularizer: Any = None, alpha_constraint: Any = None, shared_axes: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class Permute(Layer):
    """Keras's Permute on nnfit's engine. Permutes the dimensions of the input according to a given pattern."""
    def __init__(self, dims: Any, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class RMSNormalization(Layer):
    """Keras's RMSNormalization on nnfit's engine. Root Mean Square (RMS) Normalization layer."""
    def __init__(self, axis: Any = -1, epsilon: Any = 1e-06, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class RNN(Layer):
    """Keras's RNN on nnfit's engine. Base class for recurrent layers."""
    def __init__(self, cell: Any, return_sequences: Any = False, return_state: Any = False, go_backwards: Any = False, stateful: Any = False, unroll: Any = False, zero_output_for_mask: Any = False, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class SimpleRNNCell(Layer):
    """Keras's SimpleRNNCell on nnfit's engine. Cell class for SimpleRNN."""
    def __init__(self, units: Any, activation: Any = 'tanh', use_bias: Any = True, kernel_initializer: Any = 'glorot_uniform', recurrent_initializer: Any = 'orthogonal', bias_initializer: Any = 'zeros', kernel_regularizer: Any = None, recurrent_regularizer: Any = None, bias_regularizer: Any = None, kernel_constraint: Any = None, recurrent_constraint: Any = None, bias_constraint: Any = None, dropout: Any = 0.0, recurrent_dropout: Any = 0.0, seed: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class LSTMCell(Layer):
    """Keras's LSTMCell on nnfit's engine. Cell class for the LSTM layer."""
    def __init__(self, units: Any, activation: Any = 'tanh', recurrent_activation: Any = 'sigmoid', use_bias: Any = True, kernel_initializer: Any = 'glorot_uniform', recurrent_initializer: Any = 'orthogonal', bias_initializer: Any = 'zeros', unit_forget_bias: Any = True, kernel_regularizer: Any = None, recurrent_regularizer: Any = None, bias_regularizer: Any = None, kernel_constraint: Any = None, recurrent_constraint: Any = None, bias_constraint: Any = None, dropout: Any = 0.0, recurrent_dropout: Any = 0.0, seed: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class GRUCell(Layer):
    """Keras's GRUCell on nnfit's engine. Cell class for the GRU layer."""
    def __init__(self, units: Any, activation: Any = 'tanh', recurrent_activation: Any = 'sigmoid', use_bias: Any = True, kernel_initializer: Any = 'glorot_uniform', recurrent_initializer: Any = 'orthogonal', bias_initializer: Any = 'zeros', kernel_regularizer: Any = None, recurrent_regularizer: Any = None, bias_regularizer: Any = None, kernel_constraint: Any = None, recurrent_constraint: Any = None, bias_constraint: Any = None, dropout: Any = 0.0, recurrent_dropout: Any = 0.0, reset_after: Any = True, seed: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class StackedRNNCells(Layer):
    """Keras's StackedRNNCells on nnfit's engine. Wrapper allowing a stack of RNN cells to behave as a single cell."""
    def __init__(self, cells: Any, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class RandomContrast(Layer):
    """Keras's RandomContrast on nnfit's engine. A preprocessing layer which randomly adjusts contrast during training."""
    def __init__(self, factor: Any, value_range: Any = (0, 255), seed: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class RandomFlip(Layer):
    """Keras's RandomFlip on nnfit's engine. A preprocessing layer which randomly flips images during training."""
    def __init__(self, mode: Any = 'horizontal_and_vertical', seed: Any = None, data_format: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class RandomRotation(Layer):
    """Keras's RandomRotation on nnfit's engine. A preprocessing layer which randomly rotates images during training."""
    def __init__(self, factor: Any, fill_mode: Any = 'reflect', interpolation: Any = 'bilinear', seed: Any = None, fill_value: Any = 0.0, data_format: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class RandomTranslation(Layer):
    """Keras's RandomTranslation on nnfit's engine. A preprocessing layer which randomly translates images during training."""
    def __init__(self, height_factor: Any, width_factor: Any, fill_mode: Any = 'reflect', interpolation: Any = 'bilinear', seed: Any = None, fill_value: Any = 0.0, data_format: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class RandomHue(Layer):
    """Keras's RandomHue on nnfit's engine. Randomly adjusts the hue on given images."""
    def __init__(self, factor: Any, value_range: Any = (0, 255), data_format: Any = None, seed: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class RandomSaturation(Layer):
    """Keras's RandomSaturation on nnfit's engine. Randomly adjusts the saturation on given images."""
    def __init__(self, factor: Any, value_range: Any = (0, 255), data_format: Any = None, seed: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class RandomColorJitter(Layer):
    """Keras's RandomColorJitter on nnfit's engine. RandomColorJitter class randomly apply brightness, contrast, saturation     and hue image processing operation sequentially and randomly on the     input."""
    def __init__(self, value_range: Any = (0, 255), brightness_factor: Any = None, contrast_factor: Any = None, saturation_factor: Any = None, hue_factor: Any = None, seed: Any = None, data_format: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class RandomGaussianBlur(Layer):
    """Keras's RandomGaussianBlur on nnfit's engine. Applies random Gaussian blur to images for data augmentation."""
    def __init__(self, factor: Any = 1.0, kernel_size: Any = 3, sigma: Any = 1.0, value_range: Any = (0, 255), data_format: Any = None, seed: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class RandomBrightness(Layer):
    """Keras's RandomBrightness on nnfit's engine. A preprocessing layer which randomly adjusts brightness during training."""
    def __init__(self, factor: Any, value_range: Any = (0, 255), seed: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class RandomGrayscale(Layer):
    """Keras's RandomGrayscale on nnfit's engine. Preprocessing layer for random conversion of RGB images to grayscale."""
    def __init__(self, factor: Any = 0.5, data_format: Any = None, seed: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class RandomInvert(Layer):
    """Keras's RandomInvert on nnfit's engine. Preprocessing layer for random inversion of image colors."""
    def __init__(self, factor: Any = 1.0, value_range: Any = (0, 255), seed: Any = None, data_format: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class Solarization(Layer):
    """Keras's Solarization on nnfit's engine. Applies `(max_value - pixel + min_value)` for each pixel in the image."""
    def __init__(self, addition_factor: Any = 0.0, threshold_factor: Any = 0.0, value_range: Any = (0, 255), seed: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class RandomPosterization(Layer):
    """Keras's RandomPosterization on nnfit's engine. Reduces the number of bits for each color channel."""
    def __init__(self, factor: Any, value_range: Any = (0, 255), data_format: Any = None, seed: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class AutoContrast(Layer):
    """Keras's AutoContrast on nnfit's engine. Performs the auto-contrast operation on an image."""
    def __init__(self, value_range: Any = (0, 255), *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class RandomErasing(Layer):
    """Keras's RandomErasing on nnfit's engine. Random Erasing data augmentation technique."""
    def __init__(self, factor: Any = 1.0, scale: Any = (0.02, 0.33), fill_value: Any = None, value_range: Any = (0, 255), seed: Any = None, data_format: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class RandomColorDegeneration(Layer):
    """Keras's RandomColorDegeneration on nnfit's engine. Randomly performs the color degeneration operation on given images."""
    def __init__(self, factor: Any, value_range: Any = (0, 255), data_format: Any = None, seed: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class RandomSharpness(Layer):
    """Keras's RandomSharpness on nnfit's engine. Randomly performs the sharpness operation on given images."""
    def __init__(self, factor: Any, value_range: Any = (0, 255), data_format: Any = None, seed: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class MaxNumBoundingBoxes(Layer):
    """Keras's MaxNumBoundingBoxes on nnfit's engine. Ensure the maximum number of bounding boxes."""
    def __init__(self, max_number: Any, fill_value: Any = -1, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class RandomShear(Layer):
    """Keras's RandomShear on nnfit's engine. A preprocessing layer that randomly applies shear transformations to     images."""
    def __init__(self, x_factor: Any = 0.0, y_factor: Any = 0.0, interpolation: Any = 'bilinear', fill_mode: Any = 'reflect', fill_value: Any = 0.0, data_format: Any = None, seed: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class MixUp(Layer):
    """Keras's MixUp on nnfit's engine. MixUp implements the MixUp data augmentation technique."""
    def __init__(self, alpha: Any = 0.2, data_format: Any = None, seed: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class CutMix(Layer):
    """Keras's CutMix on nnfit's engine. CutMix data augmentation technique."""
    def __init__(self, factor: Any = 1.0, seed: Any = None, data_format: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class RandomCrop(Layer):
    """Keras's RandomCrop on nnfit's engine. A preprocessing layer which randomly crops images during training."""
    def __init__(self, height: Any, width: Any, seed: Any = None, data_format: Any = None, name: Any = None, *, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class Equalization(Layer):
    """Keras's Equalization on nnfit's engine. Preprocessing layer for histogram equalization on image channels."""
    def __init__(self, value_range: Any = (0, 255), bins: Any = 256, data_format: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class RandomZoom(Layer):
    """Keras's RandomZoom on nnfit's engine. A preprocessing layer which randomly zooms images during training."""
    def __init__(self, height_factor: Any, width_factor: Any = None, fill_mode: Any = 'reflect', interpolation: Any = 'bilinear', seed: Any = None, fill_value: Any = 0.0, data_format: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class ReLU(Layer):
    """Keras's ReLU on nnfit's engine. Rectified Linear Unit activation function layer."""
    def __init__(self, max_value: Any = None, negative_slope: Any = 0.0, threshold: Any = 0.0, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class RepeatVector(Layer):
    """Keras's RepeatVector on nnfit's engine. Repeats the input n times."""
    def __init__(self, n: Any, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class Rescaling(Layer):
    """Keras's Rescaling on nnfit's engine. A preprocessing layer which rescales input values to a new range."""
    def __init__(self, scale: Any, offset: Any = 0.0, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class Reshape(Layer):
    """Keras's Reshape on nnfit's engine. Layer that reshapes inputs into the given shape."""
    def __init__(self, target_shape: Any, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class Resizing(Layer):
    """Keras's Resizing on nnfit's engine. A preprocessing layer which resizes images."""
    def __init__(self, height: Any, width: Any, interpolation: Any = 'bilinear', crop_to_aspect_ratio: Any = False, pad_to_aspect_ratio: Any = False, fill_mode: Any = 'constant', fill_value: Any = 0.0, antialias: Any = False, data_format: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class SeparableConv1D(Layer):
    """Keras's SeparableConv1D on nnfit's engine. 1D separable convolution layer."""
    def __init__(self, filters: Any, kernel_size: Any, strides: Any = 1, padding: Any = 'valid', data_format: Any = None, dilation_rate: Any = 1, depth_multiplier: Any = 1, activation: Any = None, use_bias: Any = True, depthwise_initializer: Any = 'glorot_uniform', pointwise_initializer: Any = 'glorot_uniform', bias_initializer: Any = 'zeros', depthwise_regularizer: Any = None, pointwise_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None, depthwise_constraint: Any = None, pointwise_constraint: Any = None, bias_constraint: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True) -> None: ...


class SeparableConv2D(Layer):
    """Keras's SeparableConv2D on nnfit's engine. 2D separable convolution layer."""
    def __init__(self, filters: Any, kernel_size: Any, strides: Any = (1, 1), padding: Any = 'valid', data_format: Any = None, dilation_rate: Any = (1, 1), depth_multiplier: Any = 1, activation: Any = None, use_bias: Any = True, depthwise_initializer: Any = 'glorot_uniform', pointwise_initializer: Any = 'glorot_uniform', bias_initializer: Any = 'zeros', depthwise_regularizer: Any = None, pointwise_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None, depthwise_constraint: Any = None, pointwise_constraint: Any = None, bias_constraint: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True) -> None: ...


class SimpleRNN(Layer):
    """Keras's SimpleRNN on nnfit's engine. Fully-connected RNN where the output is to be fed back as the new input."""
    def __init__(self, units: Any, activation: Any = 'tanh', use_bias: Any = True, kernel_initializer: Any = 'glorot_uniform', recurrent_initializer: Any = 'orthogonal', bias_initializer: Any = 'zeros', kernel_regularizer: Any = None, recurrent_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None, kernel_constraint: Any = None, recurrent_constraint: Any = None, bias_constraint: Any = None, dropout: Any = 0.0, recurrent_dropout: Any = 0.0, return_sequences: Any = False, return_state: Any = False, go_backwards: Any = False, stateful: Any = False, unroll: Any = False, seed: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True) -> None: ...


class Softmax(Layer):
    """Keras's Softmax on nnfit's engine. Softmax activation layer."""
    def __init__(self, axis: Any = -1, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class SpatialDropout1D(Layer):
    """Keras's SpatialDropout1D on nnfit's engine. Spatial 1D version of Dropout."""
    def __init__(self, rate: Any, seed: Any = None, name: Any = None, dtype: Any = None, *, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class SpatialDropout2D(Layer):
    """Keras's SpatialDropout2D on nnfit's engine. Spatial 2D version of Dropout."""
    def __init__(self, rate: Any, data_format: Any = None, seed: Any = None, name: Any = None, dtype: Any = None, *, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class SpatialDropout3D(Layer):
    """Keras's SpatialDropout3D on nnfit's engine. Spatial 3D version of Dropout."""
    def __init__(self, rate: Any, data_format: Any = None, seed: Any = None, name: Any = None, dtype: Any = None, *, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class Subtract(Layer):
    """Keras's Subtract on nnfit's engine. Performs elementwise subtraction."""
    def __init__(self, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class TimeDistributed(Layer):
    """Keras's TimeDistributed on nnfit's engine. This wrapper allows to apply a layer to every temporal slice of an input."""
    def __init__(self, layer: Any, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class UnitNormalization(Layer):
    """Keras's UnitNormalization on nnfit's engine. Unit normalization layer."""
    def __init__(self, axis: Any = -1, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class UpSampling1D(Layer):
    """Keras's UpSampling1D on nnfit's engine. Upsampling layer for 1D inputs."""
    def __init__(self, size: Any = 2, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class UpSampling2D(Layer):
    """Keras's UpSampling2D on nnfit's engine. Upsampling layer for 2D inputs."""
    def __init__(self, size: Any = (2, 2), data_format: Any = None, interpolation: Any = 'nearest', *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class UpSampling3D(Layer):
    """Keras's UpSampling3D on nnfit's engine. Upsampling layer for 3D inputs."""
    def __init__(self, size: Any = (2, 2, 2), data_format: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class ZeroPadding1D(Layer):
    """Keras's ZeroPadding1D on nnfit's engine. Zero-padding layer for 1D input (e.g. temporal sequence)."""
    def __init__(self, padding: Any = 1, data_format: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class ZeroPadding2D(Layer):
    """Keras's ZeroPadding2D on nnfit's engine. Zero-padding layer for 2D input (e.g. picture)."""
    def __init__(self, padding: Any = (1, 1), data_format: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class ZeroPadding3D(Layer):
    """Keras's ZeroPadding3D on nnfit's engine. Zero-padding layer for 3D data (spatial or spatio-temporal)."""
    def __init__(self, padding: Any = ..., data_format: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class TextVectorization(Layer):
    """Keras's TextVectorization on nnfit's engine. A preprocessing layer which maps text features to integer sequences."""
    def __init__(self, max_tokens: Any = None, standardize: Any = 'lower_and_strip_punctuation', split: Any = 'whitespace', ngrams: Any = None, output_mode: Any = 'int', output_sequence_length: Any = None, pad_to_max_tokens: Any = False, vocabulary: Any = None, idf_weights: Any = None, sparse: Any = False, ragged: Any = False, encoding: Any = 'utf-8', name: Any = None, *, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class StringLookup(Layer):
    """Keras's StringLookup on nnfit's engine. A preprocessing layer that maps strings to (possibly encoded) indices."""
    def __init__(self, max_tokens: Any = None, num_oov_indices: Any = 1, mask_token: Any = None, oov_token: Any = '[UNK]', vocabulary: Any = None, idf_weights: Any = None, invert: Any = False, output_mode: Any = 'int', pad_to_max_tokens: Any = False, sparse: Any = False, encoding: Any = 'utf-8', name: Any = None, salt: Any = None, *, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class IntegerLookup(Layer):
    """Keras's IntegerLookup on nnfit's engine. A preprocessing layer that maps integers to (possibly encoded) indices."""
    def __init__(self, max_tokens: Any = None, num_oov_indices: Any = 1, mask_token: Any = None, oov_token: Any = -1, vocabulary: Any = None, vocabulary_dtype: Any = 'int64', idf_weights: Any = None, invert: Any = False, output_mode: Any = 'int', sparse: Any = False, pad_to_max_tokens: Any = False, oov_method: Any = 'floormod', salt: Any = None, name: Any = None, *, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class CategoryEncoding(Layer):
    """Keras's CategoryEncoding on nnfit's engine. A preprocessing layer which encodes integer features."""
    def __init__(self, num_tokens: Any = None, output_mode: Any = 'multi_hot', sparse: Any = False, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class Hashing(Layer):
    """Keras's Hashing on nnfit's engine. A preprocessing layer which hashes and bins categorical features."""
    def __init__(self, num_bins: Any, mask_value: Any = None, salt: Any = None, output_mode: Any = 'int', sparse: Any = False, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class Discretization(Layer):
    """Keras's Discretization on nnfit's engine. A preprocessing layer which buckets continuous features by ranges."""
    def __init__(self, bin_boundaries: Any = None, num_bins: Any = None, epsilon: Any = 0.01, output_mode: Any = 'int', sparse: Any = False, dtype: Any = None, name: Any = None, *, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class HashedCrossing(Layer):
    """Keras's HashedCrossing on nnfit's engine. A preprocessing layer which crosses features using the "hashing trick"."""
    def __init__(self, num_bins: Any, output_mode: Any = 'int', sparse: Any = False, name: Any = None, dtype: Any = None, *, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class AdaptiveAveragePooling1D(Layer):
    """Keras's AdaptiveAveragePooling1D on nnfit's engine. Adaptive average pooling operation for 1D temporal or spatial data."""
    def __init__(self, output_size: Any, data_format: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class AdaptiveAveragePooling2D(Layer):
    """Keras's AdaptiveAveragePooling2D on nnfit's engine. Adaptive average pooling operation for 2D spatial data."""
    def __init__(self, output_size: Any, data_format: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class AdaptiveAveragePooling3D(Layer):
    """Keras's AdaptiveAveragePooling3D on nnfit's engine. Adaptive average pooling operation for 3D volumetric data."""
    def __init__(self, output_size: Any, data_format: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class AdaptiveMaxPooling1D(Layer):
    """Keras's AdaptiveMaxPooling1D on nnfit's engine. Adaptive max pooling operation for 1D temporal or spatial data."""
    def __init__(self, output_size: Any, data_format: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class AdaptiveMaxPooling2D(Layer):
    """Keras's AdaptiveMaxPooling2D on nnfit's engine. Adaptive max pooling operation for 2D spatial data."""
    def __init__(self, output_size: Any, data_format: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class AdaptiveMaxPooling3D(Layer):
    """Keras's AdaptiveMaxPooling3D on nnfit's engine. Adaptive max pooling operation for 3D volumetric data."""
    def __init__(self, output_size: Any, data_format: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


class GroupQueryAttention(Layer):
    """Keras's GroupQueryAttention on nnfit's engine. Grouped Query Attention layer."""
    def __init__(self, head_dim: Any, num_query_heads: Any, num_key_value_heads: Any, dropout: Any = 0.0, use_bias: Any = True, sliding_window: Any = None, flash_attention: Any = None, kernel_initializer: Any = 'glorot_uniform', bias_initializer: Any = 'zeros', kernel_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None, kernel_constraint: Any = None, bias_constraint: Any = None, use_gate: Any = False, seed: Any = None, *, name: Optional[str] = None, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True) -> None: ...


class Pipeline(Layer):
    """Keras's Pipeline on nnfit's engine. Applies a series of layers to an input."""
    def __init__(self, layers: Any, name: Any = None, *, dtype: Any = None, trainable: bool = True, input_shape: Optional[Sequence[Optional[int]]] = None, input_dim: Optional[int] = None, batch_input_shape: Optional[Sequence[Optional[int]]] = None, batch_size: Optional[int] = None, autocast: bool = True, activity_regularizer: Any = None) -> None: ...


AvgPool1D = AveragePooling1D
AvgPool2D = AveragePooling2D
AvgPool3D = AveragePooling3D
Convolution1D = Conv1D
Convolution1DTranspose = Conv1DTranspose
Convolution2D = Conv2D
Convolution2DTranspose = Conv2DTranspose
Convolution3D = Conv3D
Convolution3DTranspose = Conv3DTranspose
GlobalAvgPool1D = GlobalAveragePooling1D
GlobalAvgPool2D = GlobalAveragePooling2D
GlobalAvgPool3D = GlobalAveragePooling3D
GlobalMaxPool1D = GlobalMaxPooling1D
GlobalMaxPool2D = GlobalMaxPooling2D
GlobalMaxPool3D = GlobalMaxPooling3D
MaxPool1D = MaxPooling1D
MaxPool2D = MaxPooling2D
MaxPool3D = MaxPooling3D
SeparableConvolution1D = SeparableConv1D
SeparableConvolution2D = SeparableConv2D
