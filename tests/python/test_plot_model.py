"""keras.utils.model_to_dot and plot_model (issue 36): Keras's boxes, labels and edges from
the engine's layer graph, drawn by Graphviz's `dot` (scripts/setup.sh installs graphviz)."""
import re
import shutil

import numpy as np
import pytest

from nnfit import keras
from nnfit.keras import layers

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed (scripts/setup.sh)")


def two_inputs():
    a = keras.Input(shape=(4,), name="a")
    b = keras.Input(shape=(3,), name="b")
    x = layers.Dense(5, activation="relu", name="d1")(a)
    y = layers.Concatenate(name="cat")([x, b])
    head = keras.Sequential([keras.Input(shape=(8,)), layers.Dense(2, name="d_in")], name="head")
    return keras.Model([a, b], [head(y), layers.Dense(1, name="d2")(y)], name="m")


def boxes(text):
    return re.findall(r'^"([^"]+)" \[label=<.*?<b>([^<]+)</b> \(([A-Za-z]+)\)', text, re.M)


def edges(text):
    return re.findall(r'^"([^"]+)" -> "([^"]+)" \[penwidth=2\];$', text, re.M)


def test_functional_model_dot_has_its_layers_and_edges():
    text = keras.utils.model_to_dot(two_inputs()).to_string()
    assert text.startswith("digraph G {\nrankdir=\"TB\";\nconcentrate=true;\ndpi=200;\nsplines=\"ortho\";")
    assert [(name, cls) for _, name, cls in boxes(text)] == [
        ("a", "InputLayer"), ("b", "InputLayer"), ("d1", "Dense"), ("cat", "Concatenate"), ("head", "Sequential"),
        ("d2", "Dense")]
    assert sorted(edges(text)) == sorted([("m/a", "m/d1"), ("m/d1", "m/cat"), ("m/b", "m/cat"), ("m/cat", "m/head"),
                                          ("m/cat", "m/d2")])


def test_labels_as_keras_writes_them():
    text = keras.utils.model_to_dot(two_inputs(), show_shapes=True, show_dtype=True, show_layer_activations=True,
                                    show_trainable=True, show_layer_names=False).to_string()
    dense = next(line for line in text.splitlines() if line.startswith('"m/d1"'))
    assert ('<tr><td colspan="4" bgcolor="black"><font point-size="16" color="white"><b>Dense</b></font></td></tr>'
            '<tr><td bgcolor="white" colspan="4"><font point-size="14">Activation: <b>relu</b></font></td></tr>'
            '<tr><td bgcolor="white"><font point-size="14">Input shape: <b>(None, 4)</b></font></td>'
            '<td bgcolor="white"><font point-size="14">Output shape: <b>(None, 5)</b></font></td>'
            '<td bgcolor="white"><font point-size="14">Output dtype: <b>float32</b></font></td>'
            '<td bgcolor="forestgreen"><font point-size="14" color="white"><b>Trainable</b></font></td></tr>') in dense
    cat = next(line for line in text.splitlines() if line.startswith('"m/cat"'))
    assert "Input shape: <b>[(None, 5), (None, 3)]</b>" in cat and "Trainable" not in cat  # no weights


def test_expand_nested_draws_a_cluster_and_edges_into_it():
    text = keras.utils.model_to_dot(two_inputs(), expand_nested=True).to_string()
    assert 'subgraph "cluster_m/head" {\nlabel="head";\nlabeljust=l;\nstyle=dashed;\n' in text
    assert ("m/cat", "m/head/d_in") in edges(text) and ("m/cat", "m/head") not in edges(text)


def test_sequential_chains_its_layers_and_loaded_models_draw(tmp_path):
    model = keras.Sequential([keras.Input(shape=(6,)), layers.Dense(4, activation="relu"), layers.Dropout(0.2),
                              layers.Dense(2)], name="s")
    model.predict(np.zeros((1, 6), "float32"), verbose=0)
    model.save(tmp_path / "s.keras")
    loaded = keras.models.load_model(tmp_path / "s.keras")
    for m in (model, loaded):
        text = keras.utils.model_to_dot(m).to_string()
        assert [cls for _, _, cls in boxes(text)] == ["Dense", "Dropout", "Dense"]  # no Input box, as Keras
        assert edges(text) == [("s/dense", "s/dropout"), ("s/dropout", "s/dense_1")]
    with pytest.raises(ValueError, match="not yet been built"):
        keras.utils.model_to_dot(keras.Sequential([layers.Dense(2)]))
    with pytest.raises(ValueError, match="layer_range"):
        keras.utils.model_to_dot(model, layer_range=["a", "b"])


@needs_dot
@pytest.mark.parametrize("suffix,magic", [("png", b"\x89PNG\r\n\x1a\n"), ("svg", b"<?xml"), ("pdf", b"%PDF")])
def test_plot_model_writes_the_extensions_format(tmp_path, suffix, magic):
    to_file = tmp_path / f"model.{suffix}"
    keras.utils.plot_model(two_inputs(), to_file=to_file, show_shapes=True, expand_nested=True, dpi=60)
    assert to_file.read_bytes().startswith(magic)


@needs_dot
def test_a_png_has_the_size_dot_gives_it(tmp_path):
    to_file = tmp_path / "m.png"
    keras.utils.plot_model(two_inputs(), to_file=str(to_file), dpi=50)
    data = to_file.read_bytes()
    width, height = np.frombuffer(data[16:24], dtype=">u4")
    assert 50 < width < 4000 and 100 < height < 4000  # five boxes stacked top to bottom


def test_without_graphviz_plot_model_raises_as_keras(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no dot on it
    with pytest.raises(ImportError, match=r"You must install graphviz .* for `plot_model` to work"):
        keras.utils.plot_model(two_inputs(), to_file=tmp_path / "m.png")
    assert not (tmp_path / "m.png").exists()
