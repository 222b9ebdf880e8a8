"""The layer classes added for issue 36 in nnfit.keras alone (their side-by-side checks with
Keras are keras_layers_more_parity.py): Pipeline in a model, its config and refusals; the
names nnfit does not implement yet raising NotImplementedError that says what is missing."""
import numpy as np
import pytest

from nnfit import keras
from nnfit.keras import layers


@pytest.mark.parametrize("name, args, missing", [
    ("ReversibleEmbedding", (10, 4), "call arguments per call of a shared layer"),
    ("SpectralNormalization", (None,), "assigns the normalized kernel"),
    ("ConvLSTM2D", (8, 3), "convolution gates"),
    ("ConvLSTM1D", (8, 3), "convolution gates"),
    ("ConvLSTM3D", (8, 3), "convolution gates"),
    ("STFTSpectrogram", (), "no STFT operation"),
    ("MelSpectrogram", (), "no STFT operation"),
    ("AugMix", (), "not built yet"),
    ("RandAugment", ((0, 255),), "not built yet"),
    ("RandomElasticTransform", (), "data-dependent positions"),
    ("RandomPerspective", (), "projective transform"),
    ("ContrastLimitedAdaptiveHistogramEqualization", ((0, 255),), "per-tile histograms"),
])
def test_keras_layers_not_implemented_yet_say_so(name, args, missing):
    # Keras 3.15's names nnfit does not implement yet raise NotImplementedError naming
    # themselves and what is missing, not AttributeError.
    with pytest.raises(NotImplementedError, match=f"keras.layers.{name} is not supported by nnfit yet: .*{missing}"):
        getattr(layers, name)(*args)


def test_pipeline_applies_its_layers_in_the_model():
    # Rescaling then CenterCrop: the crop of the rescaled image, weightless, Keras's config.
    inp = keras.Input((4, 5, 2))
    pipe = layers.Pipeline([layers.Rescaling(2.0, -1.0), layers.CenterCrop(2, 3)])
    model = keras.Model(inp, pipe(inp))
    x = np.arange(80, dtype="float32").reshape(2, 4, 5, 2)
    np.testing.assert_allclose(model.predict(x, verbose=0), x[:, 1:3, 1:4] * 2.0 - 1.0, rtol=1e-6)
    assert model.count_params() == 0
    assert sorted(pipe.get_config()) == ["layers", "name"]
    assert [l["class_name"] for l in pipe.get_config()["layers"]] == ["Rescaling", "CenterCrop"]
    with pytest.raises(ValueError, match="`layers` key"):
        layers.Pipeline.from_config({"name": "p"})


def test_pipeline_refuses_what_it_cannot_run():
    with pytest.raises(NotImplementedError, match="not one of nnfit's engine layers"):
        layers.Pipeline([layers.Rescaling(2.0), "relu"])


def test_group_query_attention_is_keras_s_class_and_refuses_uneven_heads():
    assert layers.GroupQueryAttention.__name__ == "GroupedQueryAttention"
    q = keras.Input((5, 8))
    gqa = layers.GroupQueryAttention(head_dim=4, num_query_heads=3, num_key_value_heads=2)
    with pytest.raises(Exception, match="divisible"):
        keras.Model(q, gqa(q, q))


def test_wrapper_base_has_no_call_of_its_own():
    x = keras.Input((3,))
    with pytest.raises(NotImplementedError, match="subclass it and write call"):
        layers.Wrapper(layers.Dense(2))(x)
    with pytest.raises(ValueError, match="isn't a supported layer type"):
        layers.Wrapper("dense")
