"""Keras 3.15 layer classes added for issue 36 whose Python side is more than the generated
class: GroupQueryAttention (Keras's call forms and class name), Pipeline (a list of layers
as its argument and config), and the stand-ins of the classes nnfit does not implement yet
(ReversibleEmbedding, SpectralNormalization, ConvLSTM1D/2D/3D, the spectrograms, AugMix,
RandAugment, RandomElasticTransform, RandomPerspective, CLAHE), which raise
NotImplementedError saying what the engine lacks. keras.layers imports them at its end, over the generated classes.
"""
from nnfit.keras import layers as _layers


class GroupQueryAttention(_layers.GroupQueryAttention):
    __doc__ = _layers.GroupQueryAttention.__doc__

    def __call__(self, query, value=None, key=None, **kwargs):
        """Keras's call: gqa(query, value) or gqa(query, value, key)."""
        if value is None:  # nnfit's list form, gqa([query, value(, key)])
            return super().__call__(query, **kwargs)
        outputs = super().__call__([query, value] + ([] if key is None else [key]), **kwargs)
        self._nodes[-1].positional = True
        return outputs


# Keras exports the class GroupedQueryAttention as keras.layers.GroupQueryAttention.
GroupQueryAttention.__name__ = GroupQueryAttention.__qualname__ = "GroupedQueryAttention"


class Pipeline(_layers.Pipeline):
    """Keras's keras.layers.Pipeline(layers, name=None): its layers applied one after the other,
    in the model's mode (the engine's PipelineLayer). In nnfit it is called on symbolic tensors
    in a model, not on arrays (build a model and predict)."""

    def __init__(self, layers, name=None, **kwargs):
        layers = [_layers.deserialize(l) if isinstance(l, dict) else l for l in layers]
        for l in layers:
            if not isinstance(l, _layers.Layer) or l._custom:
                raise NotImplementedError(f"Pipeline: {l!r} is not one of nnfit's engine layers; nnfit's Pipeline "
                                          "runs keras.layers classes inside the model")
        super().__init__(layers, name=name, **kwargs)

    @property
    def layers(self):
        return list(self._args["layers"])

    def get_config(self):  # Keras's: the layers and the name only
        return {"layers": [l.serialize() for l in self._args["layers"]], "name": self.name}

    @classmethod
    def from_config(cls, config):
        if not isinstance(config.get("layers"), (list, tuple)):
            raise ValueError("`Pipeline` config must contain a `layers` key mapping to a list of serialized layers. "
                             f"Received config with layers={config.get('layers')}.")
        return cls(list(config["layers"]), name=config.get("name"))


def _not_supported(name, reason):
    """A stand-in for a Keras 3.15 layer class nnfit does not implement yet: constructing it
    raises NotImplementedError naming it and saying what is missing."""
    def __init__(self, *args, **kwargs):
        raise NotImplementedError(f"keras.layers.{name} is not supported by nnfit yet: {reason}")
    return type(name, (), {"__init__": __init__, "__doc__": f"Keras's {name}: not supported by nnfit yet ({reason})."})


ReversibleEmbedding = _not_supported(
    "ReversibleEmbedding", "its two calls in one model, embedding(ids) and embedding(hidden, reverse=True), need call "
    "arguments per call of a shared layer, and nnfit's engine fixes them per layer; for untied weights "
    "(tie_weights=False) use an Embedding and a Dense(input_dim, use_bias=False)")
SpectralNormalization = _not_supported(
    "SpectralNormalization", "in training Keras assigns the normalized kernel to the wrapped layer's variable before "
    "the step's update (kernel <- kernel / sigma - lr * gradient), and nnfit's training step does not assign a "
    "trainable weight before its optimizer update yet")
_WRITE_IT = ("write it as a Layer subclass with keras.ops (traced into the engine's graph) or leave it out of the "
             "model")
ConvLSTM1D, ConvLSTM2D, ConvLSTM3D = (_not_supported(
    f"ConvLSTM{n}D", f"the engine's recurrent layers (LSTM, GRU, SimpleRNN) have matrix-product gates, not the "
    f"convolution gates ConvLSTM{n}D needs; for now use TimeDistributed(Conv{n}D) followed by an LSTM on the "
    "flattened features") for n in (1, 2, 3))
STFTSpectrogram = _not_supported(
    "STFTSpectrogram", "the engine has no STFT operation (keras.ops.stft runs on arrays only); compute the "
    "spectrogram in the input pipeline (keras.ops.stft on NumPy batches) and feed it to the model")
MelSpectrogram = _not_supported(
    "MelSpectrogram", "the engine has no STFT operation (keras.ops.stft runs on arrays only); compute the "
    "spectrogram in the input pipeline and feed it to the model")
AugMix = _not_supported("AugMix", "its chains of randomly chosen augmentations per sample are not built yet; "
                        + _WRITE_IT)
RandAugment = _not_supported("RandAugment", "its random choice of augmentations per sample is not built yet; "
                             + _WRITE_IT)
RandomElasticTransform = _not_supported(
    "RandomElasticTransform", "its displacement fields gather at data-dependent positions, which the engine does not "
    "differentiate yet (keras.ops.image.elastic_transform runs on arrays only); " + _WRITE_IT)
RandomPerspective = _not_supported("RandomPerspective", "its random projective transform per sample is not built "
                                   "yet (the engine's affine_transform op takes affine matrices); " + _WRITE_IT)
ContrastLimitedAdaptiveHistogramEqualization = _not_supported(
    "ContrastLimitedAdaptiveHistogramEqualization", "its per-tile histograms are not built yet (Equalization is); "
    "apply it in the input pipeline")
