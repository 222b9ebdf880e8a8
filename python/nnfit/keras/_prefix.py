"""A model's preprocessing prefix: the string and category layers at its start
(TextVectorization, StringLookup, ...: nnfit.keras._preprocessing.CLASSES) run in Python
on each batch, and the rest of the model in the engine, which gets their outputs as inputs.

Note [Preprocessing prefix]
~~~~~~~~~~~~~~~~~~~~~~~~~~~
Keras runs these layers as TensorFlow string and hash-table ops inside its graph. nnfit's
engine has no string tensors, and a vocabulary is a hash table, not an array op; so a model
is split where the preprocessing ends. The engine builds, plans and trains the model's
Keras config with each preprocessing output replaced by an InputLayer of the same name,
shape and dtype (the "stand-in": int64 token ids after TextVectorization, float32 vectors
after a multi-hot encoding); the Python model keeps the whole graph, and fit, evaluate and
predict run the prefix on NumPy before the engine reads the arrays: on all the rows at once
for arrays, on each batch for a keras.utils.PyDataset or another iterable of batches (Note
[Batches from Python]). The step itself is unchanged: no Python runs inside it.

Why all seven layers run here, even the numeric ones (CategoryEncoding, Discretization,
IntegerLookup) an engine op could do: one implementation whose outputs are Keras's to the
bit, kept with the vocabulary it reads; the cost is a NumPy pass over a batch's ids, small
next to a training step; and an engine layer would need an op, a CUDA kernel and their
tests for no gain in speed. The cost is the CLI: it runs the engine alone, so a file whose
model starts with one of these layers is refused by `nnfit train` naming the layer, with the
way round (train on the layer's outputs; src/model/keras/keras_config.cpp).

Files are Keras's: config.json holds the whole graph (the engine's config with the
stand-ins put back as the layers they stand for), a lookup's vocabulary goes to
assets/layers/<name>/vocabulary.txt (and, for TextVectorization, also under
<name>/_lookup_layer/, as Keras's tracked sublayer writes it), and the engine's weights file
is read and written by the engine (a stand-in's group is empty, as the layer's is in Keras).
A preprocessing layer must come before every engine layer: one fed by an engine layer's
output is refused when the model is built, naming both.
"""
import copy
import json
import os
import zipfile

import numpy as np

from nnfit.keras._preprocessing import CLASSES

_SEQUENTIAL = "Sequential"


def is_preprocessing(entry):
    return entry.get("class_name") in CLASSES and str(entry.get("module", "")).startswith("keras")


def has_prefix(config):
    """Whether a model's Keras config (the whole JSON object) starts with preprocessing layers."""
    inner = config.get("config")
    entries = inner.get("layers") if isinstance(inner, dict) else None
    return isinstance(entries, list) and any(isinstance(e, dict) and is_preprocessing(e) for e in entries)


def _refs(value):
    return [value] if value and isinstance(value[0], str) else list(value)


def _walk_tensors(value, fn):
    """value with each __keras_tensor__ reference replaced by fn(reference)."""
    if isinstance(value, dict):
        if value.get("class_name") == "__keras_tensor__":
            return fn(value)
        return {k: _walk_tensors(v, fn) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk_tensors(v, fn) for v in value]
    return value


def _input_entry(name, shape, dtype):
    return {"module": "keras.layers", "class_name": "InputLayer", "name": name, "inbound_nodes": [],
            "config": {"batch_shape": list(shape), "dtype": dtype, "sparse": False, "ragged": False, "name": name,
                       "optional": False}, "registered_name": None}


class Prefix:
    """The split of one model's Keras config: `engine_config` for the engine, and how to
    turn the model's inputs into the engine's (`run`) and the engine's config back into the
    model's (`join`). `layers`: the model's preprocessing layer objects by name."""

    def __init__(self, config, layers):
        self.config = config
        self.layers = layers
        body = config["config"]
        if config["class_name"] == _SEQUENTIAL:
            self._split_sequential(body)
        else:
            self._split_functional(body)

    # Sequential: the layers after the input, up to the first engine layer.
    def _split_sequential(self, body):
        entries = body["layers"]
        start = 1 if entries and entries[0]["class_name"] == "InputLayer" else 0
        n = start
        while n < len(entries) and is_preprocessing(entries[n]):
            n += 1
        later = [e for e in entries[n:] if is_preprocessing(e)]
        if later:
            raise NotImplementedError(_after_engine(later[0], entries[n - 1] if n else None))
        if not start:
            raise ValueError(f"Sequential {body.get('name')!r}: a model starting with preprocessing layers needs its "
                             "input first: keras.Input(shape=(1,), dtype=\"string\")")
        first = entries[0]["config"]
        shape, dtype = tuple(first["batch_shape"]), first.get("dtype", "float32")
        self.nodes = []
        for e in entries[start:n]:
            layer = self.layers[e["config"]["name"]]
            self.nodes.append((layer, [first["name"]] if not self.nodes else [self.nodes[-1][0].name]))
            shape, dtype = layer.compute_output_spec_of((shape, dtype))
            shape = (None,) + tuple(shape)[1:]
        self.user_inputs = [first["name"]]
        self.engine_inputs = [first["name"]]
        self._last = self.nodes[-1][0].name if self.nodes else None
        engine = copy.deepcopy(self.config)
        standin = _input_entry(first["name"], shape, dtype)
        del standin["name"], standin["inbound_nodes"]  # a Sequential's entries have neither
        engine["config"]["layers"] = [standin] + copy.deepcopy(entries[n:])
        engine["config"]["build_input_shape"] = list(shape)
        self.engine_config = engine
        self._count = n - start

    # Functional: every preprocessing node, each fed by inputs or other preprocessing nodes.
    def _split_functional(self, body):
        entries = body["layers"]
        kinds = {e["name"]: ("input" if e["class_name"] == "InputLayer" else
                             "prefix" if is_preprocessing(e) else "engine") for e in entries}
        self.user_inputs = [r[0] for r in _refs(body["input_layers"])]
        self.nodes, standins = [], {}  # (layer, [(name, node, tensor) read]); (name, node) -> stand-in
        consumed_inputs = set()
        engine_entries = []
        for e in entries:
            if kinds[e["name"]] != "prefix":
                continue
            for index, node in enumerate(e.get("inbound_nodes", [])):
                reads = []

                def note(ref):
                    name, node_index, tensor_index = ref["config"]["keras_history"]
                    if kinds.get(name) == "engine":
                        raise NotImplementedError(_after_engine(e, {"name": name}))
                    reads.append((name, node_index, tensor_index))
                    return ref
                _walk_tensors(node, note)
                self.nodes.append((self.layers[e["name"]], reads, node, index))
        for e in entries:
            if kinds[e["name"]] == "prefix":
                continue
            if kinds[e["name"]] == "input":
                continue

            def rewrite(ref):
                name, node_index, tensor_index = ref["config"]["keras_history"]
                if kinds.get(name) == "input":
                    consumed_inputs.add(name)
                if kinds.get(name) != "prefix":
                    return ref
                key = (name, node_index)
                if key not in standins:
                    standins[key] = (name if node_index == 0 else f"{name}__call_{node_index}",
                                     tuple(ref["config"]["shape"]), ref["config"]["dtype"])
                out = copy.deepcopy(ref)
                out["config"]["keras_history"] = [standins[key][0], 0, 0]
                return out
            engine_entries.append(_walk_tensors(e, rewrite))
        outputs = _refs(body["output_layers"])
        bad = [r[0] for r in outputs if kinds.get(r[0]) == "prefix"]
        if bad:
            raise NotImplementedError(f"model {body.get('name')!r}: its output comes from the preprocessing layer "
                                      f"{bad[0]!r}, which nnfit runs before the engine's graph; call the layer on "
                                      "arrays for its outputs, and give the model engine layers after it")
        for r in outputs:
            if kinds.get(r[0]) == "input":
                consumed_inputs.add(r[0])
        kept = [e for e in entries if kinds[e["name"]] == "input" and e["name"] in consumed_inputs]
        self._standins = standins
        stand_entries = [_input_entry(n, s, d) for n, s, d in standins.values()]
        self.engine_inputs = [e["name"] for e in kept] + [n for n, _, _ in standins.values()]
        engine = copy.deepcopy(self.config)
        engine["config"]["layers"] = copy.deepcopy(kept) + stand_entries + engine_entries
        engine["config"]["input_layers"] = [[n, 0, 0] for n in self.engine_inputs]
        self.engine_config = engine
        self._kept = [e["name"] for e in kept]

    # Running it.
    def user_arrays(self, x, what):
        """The model's inputs in Keras's forms (one array or list of strings, a list/tuple
        in input order, a dict by name) as a list in input order."""
        names = self.user_inputs
        if isinstance(x, dict):
            missing = [n for n in names if n not in x]
            if missing:
                raise ValueError(f"{what}: the dict's keys {sorted(x)} do not match the model's inputs {names}")
            return [x[n] for n in names]
        if len(names) > 1:
            if not isinstance(x, (list, tuple)) or len(x) != len(names):
                raise ValueError(f"{what}: the model takes {len(names)} inputs {names}; pass a list or dict of them")
            return list(x)
        return [x]

    def run(self, arrays):
        """The engine's inputs (in engine_inputs order) for the model's inputs (in input order)."""
        values = {(n, 0, 0): _batched(a) for n, a in zip(self.user_inputs, arrays)}
        if self.config["class_name"] == _SEQUENTIAL:
            x = values[(self.user_inputs[0], 0, 0)]
            for layer, _ in self.nodes:
                x = layer.call(x)
            return [x]
        for layer, reads, node, index in self.nodes:
            args = _walk_tensors(node.get("args", []), lambda ref: _Value(values[tuple(ref["config"]["keras_history"])]))
            args = _unwrap(args)
            out = layer.call(*args)
            values[(layer.name, index, 0)] = out
        engine = [values[(n, 0, 0)] for n in self._kept]
        engine += [values[(name, node_index, 0)] for (name, node_index) in self._standins]
        return engine

    def join(self, engine_json):
        """The model's Keras config from the engine's (its layers' current configs, the
        compile config): the stand-ins put back as the preprocessing layers."""
        full = copy.deepcopy(engine_json)
        body, mine = full["config"], self.config["config"]
        entries = {e.get("name") or e["config"]["name"]: e for e in mine["layers"]}
        if self.config["class_name"] == _SEQUENTIAL:
            first = [entries[self.user_inputs[0]]] + [self._fresh_entry(entries[l.name]) for l, _ in self.nodes]
            body["layers"] = first + body["layers"][1:]
            if "build_input_shape" in mine:
                body["build_input_shape"] = mine["build_input_shape"]
            return full
        standins = {n for n, _, _ in self._standins.values()}
        engine_layers = [e for e in body["layers"] if (e.get("name") or e["config"]["name"]) not in standins
                         and e["class_name"] != "InputLayer"]
        restored = {}
        for e in engine_layers:
            original = entries[e.get("name") or e["config"]["name"]]
            e["inbound_nodes"] = original.get("inbound_nodes", e.get("inbound_nodes"))
            restored[e["name"]] = e
        body["layers"] = [restored.get(name, self._fresh_entry(original) if is_preprocessing(original) else original)
                          for name, original in entries.items()]
        body["input_layers"] = mine["input_layers"]
        body["output_layers"] = mine["output_layers"]
        return full

    def _fresh_entry(self, entry):
        """A preprocessing layer's entry with its config as it is now (after adapt)."""
        entry = dict(entry)
        entry["config"] = self.layers[entry["config"]["name"]].get_config()
        return entry

    def prefix_layers(self):
        seen = []
        for node in self.nodes:
            if node[0] not in seen:
                seen.append(node[0])
        return seen


class _Value:
    def __init__(self, value):
        self.value = value


def _unwrap(value):
    if isinstance(value, _Value):
        return value.value
    if isinstance(value, list):
        return [_unwrap(v) for v in value]
    return value


def _batched(a):
    """A model input as the prefix reads it: strings as an array of str, numbers as they are."""
    if isinstance(a, (list, tuple)):
        a = np.asarray(a, dtype=object) if any(isinstance(v, (str, bytes)) for v in a) else np.asarray(a)
    a = np.asarray(a.numpy() if hasattr(a, "numpy") and not isinstance(a, np.ndarray) else a)
    if a.dtype.kind in "OS":
        from nnfit.keras._preprocessing import as_strings
        a = as_strings(a)
    return a


def _after_engine(entry, source):
    name = entry.get("name") or entry["config"]["name"]
    where = f" (it reads {source['name']!r})" if source else ""
    return (f"{entry['class_name']} {name!r}: nnfit runs preprocessing layers before the model's engine graph, so "
            f"they must come first, fed by the model's inputs or other preprocessing layers{where}; apply it to "
            "the data instead (dataset batches or arrays), or move it to the start of the model")


# Files.
def save(path, prefix, write_engine):
    """Writes a .keras file: the engine's (write_engine(path)), then its config.json made
    whole and the prefix's assets added, as Keras's file holds them."""
    if not str(path).endswith(".keras"):
        raise NotImplementedError(f"save: {path}: a model starting with preprocessing layers is saved in Keras 3's "
                                  ".keras format only (Keras's .h5 has no place for a vocabulary)")
    for layer in prefix.prefix_layers():
        if layer._own_variables():
            raise NotImplementedError(f"save: {layer._class_name} {layer.name!r} with output_mode='tf_idf' keeps its "
                                      "IDF weights in the weights file, which nnfit does not write for preprocessing "
                                      "layers yet; save the model without it, or keep its idf_weights and vocabulary")
    tmp = f"{path}.nnfit-{os.getpid()}.keras"
    try:
        write_engine(tmp)
        with zipfile.ZipFile(tmp) as z:
            files = {name: z.read(name) for name in z.namelist()}
        config = prefix.join(json.loads(files["config.json"]))
        files["config.json"] = json.dumps(config).encode()
        paths = saveable_paths(config)
        for layer in prefix.prefix_layers():
            for sub, target in [("", layer)] + [(f"/{k}", v) for k, v in getattr(layer, "_sublayers", dict)().items()]:
                for name, text in target._assets().items():
                    files[f"assets/{paths[layer.name]}{sub}/{name}"] = text.encode("utf-8")
        part = f"{path}.nnfit-{os.getpid()}.part"
        with zipfile.ZipFile(part, "w", zipfile.ZIP_STORED) as z:
            for name in ("metadata.json", "config.json", "model.weights.h5"):
                if name in files:
                    z.writestr(name, files.pop(name))
            for name, data in files.items():
                z.writestr(name, data)
        os.replace(part, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def saveable_paths(config):
    """{layer name: its path in a .keras file's weights and assets}: Keras names a layer of a
    model's container by its class (snake case) and a count within the container
    ("layers/text_vectorization", "layers/dense_1"), not by its name (saving_lib's
    _save_container_state); a Functional container lists its InputLayers, a Sequential one
    does not, and operations are not layers."""
    sequential = config["class_name"] == _SEQUENTIAL
    used, out = {}, {}
    for e in config["config"]["layers"]:
        if str(e.get("module", "")).startswith("keras.src.ops") or (sequential and e["class_name"] == "InputLayer"):
            continue
        from nnfit.keras._api_table import TABLE
        base = TABLE["layers"].get(e["class_name"], {}).get("snake") or _snake_case(e["class_name"])
        if base in used:
            used[base] += 1
            base = f"{base}_{used[base]}"
        else:
            used[base] = 0
        out[e.get("name") or e["config"]["name"]] = f"layers/{base}"
    return out


def _snake_case(name):
    import re
    name = re.sub(r"\W+", "", name)
    name = re.sub("(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub("([a-z])([A-Z])", r"\1_\2", name).lower()


def load_assets(path, layers, config):
    """Each preprocessing layer's assets from a .keras file (assets/<its path>/...)."""
    from nnfit.keras import _keras_zip
    paths = saveable_paths(config)
    with zipfile.ZipFile(str(path)) as z:
        names = z.namelist()
        for layer in layers:
            base = f"assets/{paths[layer.name]}/"
            files = {}
            for n in names:
                if n.startswith(base) and "/" not in n[len(base):]:
                    data = _keras_zip.read_member(z, n, _keras_zip.MAX_CONFIG_BYTES)
                    if data is None:
                        raise ValueError(f"load_model: {path}: the asset {n!r} is damaged or larger than "
                                         f"{_keras_zip.MAX_CONFIG_BYTES >> 20} MiB (or expands past deflate's "
                                         "ratio); save the model again")
                    files[n[len(base):]] = data.decode("utf-8")
            layer._load_assets(files)


def file_config(path):
    """A .keras file's config.json, or None for another file (or one the engine refuses)."""
    from nnfit.keras import _keras_zip
    return _keras_zip.file_config(path)


def summary(text, prefix):
    """The engine's summary table shown as Keras shows the model: each stand-in's row named
    after the layer it stands for, and (Functional) the model's own input rows first."""
    lines = text.split("\n")
    rows = [i for i, l in enumerate(lines) if l.startswith("│")]
    if not rows:
        return text
    widths = [len(c) for c in lines[rows[0]].split("│")[1:-1]]
    if prefix.config["class_name"] == _SEQUENTIAL:
        names = {prefix.engine_inputs[0]: prefix.nodes[-1][0]} if prefix.nodes else {}
    else:
        names = {standin: prefix.layers[name] for (name, _), (standin, _, _) in prefix._standins.items()}
    for i in rows:
        cells = lines[i].split("│")
        for standin, layer in names.items():
            if cells[1].strip() == f"{standin} (InputLayer)":
                cells[1] = _cell(f"{standin} ({layer._class_name})", widths[0])
                lines[i] = "│".join(cells)
    if prefix.config["class_name"] != _SEQUENTIAL:
        body = {e["name"]: e for e in prefix.config["config"]["layers"]}
        added = []
        for name in prefix.user_inputs:
            if name in prefix.engine_inputs:
                continue
            shape = tuple(body[name]["config"]["batch_shape"])
            cells = [_cell(f"{name} (InputLayer)", widths[0]), _cell(str(shape).replace(",)", ")"), widths[1]),
                     _cell("0", widths[2], right=True)]
            added.append("│" + "│".join(cells) + "│")
        if added:
            sep = next((l for l in lines if l.startswith("├")), None)
            insert = []
            for row in added:
                insert += [row, sep] if sep else [row]
            lines[rows[0]:rows[0]] = insert
    return "\n".join(lines)


def _cell(text, width, right=False):
    text = f" {text} "
    return text.rjust(width) if right else text.ljust(width)
