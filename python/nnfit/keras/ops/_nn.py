"""keras.ops.nn's layer-sized operations on nnfit's engine: convolutions and poolings (the
engine's conv2d/conv3d and pooling ops, as Conv2D and MaxPooling2D emit them), attention,
normalizations, moments, the crossentropies as functions, multi_hot, depth_to_space,
space_to_depth, the adaptive poolings, psnr, and the activations Keras 3 added (celu ...
threshold, composed of engine ops: src/nn/composed_activations.cpp). Each has Keras 3.15.1's signature and
records Keras's own operation node (module keras.src.ops.nn, its class and config) on
symbolic tensors; on arrays it runs that node once on the engine
(src/nn/layers/operation_nn_emitters.cpp, operation_nn_math_emitters.cpp).
"""
from nnfit.keras.ops._operation import call

__all__ = [
    "conv", "depthwise_conv", "separable_conv", "conv_transpose", "max_pool", "average_pool",
    "adaptive_average_pool", "adaptive_max_pool", "dot_product_attention", "batch_normalization",
    "layer_normalization", "rms_normalization", "moments", "binary_crossentropy", "categorical_crossentropy",
    "sparse_categorical_crossentropy", "multi_hot", "depth_to_space", "space_to_depth", "psnr",
    "celu", "glu", "hard_shrink", "hard_tanh", "log_sigmoid", "soft_shrink", "sparse_plus", "sparse_sigmoid",
    "sparsemax", "squareplus", "tanh_shrink", "threshold",
]


def _data_format(data_format):
    """Keras's standardize_data_format (nnfit's image_data_format is channels_last)."""
    if data_format is None:
        return "channels_last"
    data_format = str(data_format).lower()
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError("The `data_format` argument must be one of {'channels_first', 'channels_last'}. "
                         f"Received: data_format={data_format}")
    return data_format


def _plain(v):
    """A config value as Keras's JSON holds it: tuples as lists."""
    return [int(i) for i in v] if isinstance(v, (tuple, list)) else v


def _window_config(strides, padding, data_format, dilation_rate):
    return {"strides": _plain(strides), "padding": padding.lower(), "data_format": _data_format(data_format),
            "dilation_rate": _plain(dilation_rate)}


def conv(inputs, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
    return call("nn", "Conv", "conv", [inputs, kernel], _window_config(strides, padding, data_format, dilation_rate))


def depthwise_conv(inputs, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
    return call("nn", "DepthwiseConv", "depthwise_conv", [inputs, kernel],
                _window_config(strides, padding, data_format, dilation_rate))


def separable_conv(inputs, depthwise_kernel, pointwise_kernel, strides=1, padding="valid", data_format=None,
                   dilation_rate=1):
    return call("nn", "SeparableConv", "separable_conv", [inputs, depthwise_kernel, pointwise_kernel],
                _window_config(strides, padding, data_format, dilation_rate))


def conv_transpose(inputs, kernel, strides=1, padding="valid", output_padding=None, data_format=None,
                   dilation_rate=1):
    config = {"strides": _plain(strides), "padding": padding.lower(), "output_padding": _plain(output_padding),
              "data_format": _data_format(data_format), "dilation_rate": _plain(dilation_rate)}
    return call("nn", "ConvTranspose", "conv_transpose", [inputs, kernel], config)


def _pool(cls, snake, inputs, pool_size, strides, padding, data_format):
    config = {"pool_size": _plain(pool_size), "strides": _plain(strides), "padding": padding.lower(),
              "data_format": _data_format(data_format)}
    return call("nn", cls, snake, [inputs], config)


def max_pool(inputs, pool_size, strides=None, padding="valid", data_format=None):
    return _pool("MaxPool", "max_pool", inputs, pool_size, strides, padding, data_format)


def average_pool(inputs, pool_size, strides=None, padding="valid", data_format=None):
    return _pool("AveragePool", "average_pool", inputs, pool_size, strides, padding, data_format)


def adaptive_average_pool(inputs, output_size, data_format=None):
    return call("nn", "AdaptiveAveragePool", "adaptive_average_pool", [inputs],
                {"output_size": _plain(output_size), "data_format": _data_format(data_format)})


def adaptive_max_pool(inputs, output_size, data_format=None):
    return call("nn", "AdaptiveMaxPool", "adaptive_max_pool", [inputs],
                {"output_size": _plain(output_size), "data_format": _data_format(data_format)})


def dot_product_attention(query, key, value, bias=None, mask=None, scale=None, is_causal=False,
                          flash_attention=None, attn_logits_soft_cap=None):
    if attn_logits_soft_cap is not None:
        raise ValueError("attn_logits_soft_cap is only supported for JAX on TPU. "
                         "Set attn_logits_soft_cap=None when not using JAX on TPU.")
    if flash_attention:
        raise ValueError("Flash attention is not supported by nnfit (nor by Keras's TensorFlow backend).")
    if scale is not None and not isinstance(scale, (int, float)):
        raise NotImplementedError("keras.ops.dot_product_attention: nnfit takes `scale` as a Python number")
    config = {"is_causal": bool(is_causal), "flash_attention": flash_attention,
              "attn_logits_soft_cap": attn_logits_soft_cap}
    # bias and mask are positional in the node (Keras's call takes them so); scale a keyword.
    return call("nn", "DotProductAttention", "dot_product_attention", [query, key, value, bias, mask], config,
                kwargs={} if scale is None else {"scale": float(scale)})


def batch_normalization(x, mean, variance, axis, offset=None, scale=None, epsilon=1e-3):
    return call("nn", "BatchNorm", "batch_norm", [x, mean, variance, offset, scale],
                {"axis": axis, "epsilon": epsilon})


def layer_normalization(x, gamma=None, beta=None, axis=-1, epsilon=None, **kwargs):
    rms_scaling = kwargs.pop("rms_scaling", False)
    if kwargs:
        raise TypeError(f"layer_normalization() got unexpected keyword arguments {sorted(kwargs)}")
    return call("nn", "LayerNorm", "layer_norm", [x, gamma, beta],
                {"axis": _plain(axis), "epsilon": epsilon, "rms_scaling": rms_scaling})


def rms_normalization(x, scale=None, axis=-1, epsilon=None):
    return call("nn", "RMSNorm", "rms_norm", [x, scale], {"axis": _plain(axis), "epsilon": epsilon})


def moments(x, axes, keepdims=False, synchronized=False):
    return tuple(call("nn", "Moments", "moments", [x], {"axes": _plain(axes), "keepdims": keepdims,
                                                       "synchronized": synchronized}, outputs=2))


def binary_crossentropy(target, output, from_logits=False):
    return call("nn", "BinaryCrossentropy", "binary_crossentropy", [target, output], {"from_logits": from_logits})


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    return call("nn", "CategoricalCrossentropy", "categorical_crossentropy", [target, output],
                {"from_logits": from_logits, "axis": axis})


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    return call("nn", "SparseCategoricalCrossentropy", "sparse_categorical_crossentropy", [target, output],
                {"from_logits": from_logits, "axis": axis}, out_dtype="float32")


def multi_hot(inputs, num_classes=None, axis=-1, dtype=None, sparse=False, **kwargs):
    if num_classes is None and "num_tokens" in kwargs:
        num_classes = kwargs.pop("num_tokens")
    if num_classes is None:
        raise ValueError("Argument `num_classes` must be specified.")
    dtype = getattr(dtype, "name", dtype) or "float32"
    return call("nn", "MultiHot", "multi_hot", [inputs],
                {"num_classes": int(num_classes), "axis": axis, "dtype": str(dtype), "sparse": sparse},
                out_dtype=str(dtype))


def depth_to_space(x, block_size, data_format="channels_last"):
    return call("nn", "DepthToSpace", "depth_to_space", [x],
                {"block_size": int(block_size), "data_format": _data_format(data_format)})


def space_to_depth(x, block_size, data_format="channels_last"):
    return call("nn", "SpaceToDepth", "space_to_depth", [x],
                {"block_size": int(block_size), "data_format": _data_format(data_format)})


def psnr(x1, x2, max_val):
    return call("nn", "PSNR", "psnr", [x1, x2], {"max_val": max_val})


# The activations Keras 3 added: Keras's classes and configs.
def celu(x, alpha=1.0):
    return call("nn", "Celu", "celu", [x], {"alpha": alpha})


def glu(x, axis=-1):
    return call("nn", "Glu", "glu", [x], {"axis": axis})


def hard_shrink(x, threshold=0.5):
    return call("nn", "HardShrink", "hard_shrink", [x], {"threshold": threshold})


def hard_tanh(x):
    return call("nn", "HardTanh", "hard_tanh", [x])


def log_sigmoid(x):
    return call("nn", "LogSigmoid", "log_sigmoid", [x])


def soft_shrink(x, threshold=0.5):
    return call("nn", "SoftShrink", "soft_shrink", [x], {"threshold": threshold})


def sparse_plus(x):
    return call("nn", "SparsePlus", "sparse_plus", [x])


def sparse_sigmoid(x):
    return call("nn", "SparseSigmoid", "sparse_sigmoid", [x])


def sparsemax(x, axis=-1):
    return call("nn", "Sparsemax", "sparsemax", [x], {"axis": axis})


def squareplus(x, b=4):
    return call("nn", "Squareplus", "squareplus", [x], {"b": b})


def tanh_shrink(x):
    return call("nn", "TanhShrink", "tanh_shrink", [x])


def threshold(x, threshold, default_value):
    return call("nn", "Threshold", "threshold", [x], {"threshold": threshold, "default_value": default_value})
