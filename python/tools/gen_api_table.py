"""Writes python/nnfit/keras/_api_table.py: Keras 3's own signatures (argument names,
order and defaults) and config keys for every Keras class nnfit implements, read from the
real Keras with `inspect`, so `nnfit.keras` takes exactly Keras's arguments.

Run it in the Keras venv (scripts/keras_venv.sh prints its interpreter) after nnfit gains
a class or Keras changes a signature:

    KERAS_BACKEND=tensorflow $(scripts/keras_venv.sh) python/tools/gen_api_table.py

The class lists below are nnfit's: the Keras classes its JSON readers accept
(src/model/keras/codecs, keras_training_config.cpp, keras_callbacks_config.cpp), and the
preprocessing layers of strings and categories that run in Python before the engine's graph
(python/nnfit/keras/_prefix.py).
"""
import inspect
import json
import os
import pprint
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import keras  # noqa: E402
from keras.src.utils.naming import to_snake_case  # noqa: E402

LAYERS = """Activation ActivityRegularization Add Identity AdditiveAttention AlphaDropout Attention Average
AveragePooling1D AveragePooling2D AveragePooling3D BatchNormalization Bidirectional CenterCrop Concatenate
Conv1D Conv1DTranspose Conv2D Conv2DTranspose Conv3D Conv3DTranspose DepthwiseConv1D DepthwiseConv2D Cropping1D Cropping2D Cropping3D Dense Dot Dropout ELU EinsumDense Embedding Flatten
GRU GaussianDropout GaussianNoise GlobalAveragePooling1D GlobalAveragePooling2D GlobalAveragePooling3D
GlobalMaxPooling1D GlobalMaxPooling2D GlobalMaxPooling3D GroupNormalization LSTM LayerNormalization
LeakyReLU Masking MaxPooling1D MaxPooling2D MaxPooling3D Maximum Minimum MultiHeadAttention Multiply
Normalization PReLU Permute RMSNormalization RNN SimpleRNNCell LSTMCell GRUCell StackedRNNCells RandomContrast RandomFlip RandomRotation RandomTranslation
RandomHue RandomSaturation RandomColorJitter RandomGaussianBlur
RandomBrightness RandomGrayscale RandomInvert Solarization RandomPosterization AutoContrast RandomErasing
RandomColorDegeneration RandomSharpness MaxNumBoundingBoxes RandomShear MixUp CutMix RandomCrop Equalization
RandomZoom ReLU RepeatVector Rescaling Reshape Resizing SeparableConv1D SeparableConv2D SimpleRNN Softmax SpatialDropout1D SpatialDropout2D
SpatialDropout3D Subtract TimeDistributed UnitNormalization UpSampling1D UpSampling2D UpSampling3D
ZeroPadding1D ZeroPadding2D ZeroPadding3D
TextVectorization StringLookup IntegerLookup CategoryEncoding Hashing Discretization HashedCrossing
AdaptiveAveragePooling1D AdaptiveAveragePooling2D AdaptiveAveragePooling3D AdaptiveMaxPooling1D
AdaptiveMaxPooling2D AdaptiveMaxPooling3D GroupQueryAttention Pipeline""".split()
OPTIMIZERS = "SGD Adam AdamW RMSprop Adagrad Adamax Adadelta Nadam Ftrl Lion Lamb Adafactor ScheduleFreeAdamW".split()
SCHEDULES = """ExponentialDecay PiecewiseConstantDecay PolynomialDecay InverseTimeDecay CosineDecay
CosineDecayRestarts""".split()
LOSSES = """SparseCategoricalCrossentropy CategoricalCrossentropy BinaryCrossentropy MeanSquaredError
MeanAbsoluteError MeanAbsolutePercentageError MeanSquaredLogarithmicError Huber LogCosh Poisson
KLDivergence Hinge SquaredHinge CategoricalHinge CosineSimilarity BinaryFocalCrossentropy
CategoricalFocalCrossentropy""".split()
METRICS = """Accuracy SparseCategoricalAccuracy CategoricalAccuracy BinaryAccuracy MeanAbsoluteError
MeanSquaredError RootMeanSquaredError MeanAbsolutePercentageError Precision Recall AUC TopKCategoricalAccuracy
SparseTopKCategoricalAccuracy F1Score FBetaScore""".split()
CALLBACKS = "ModelCheckpoint EarlyStopping BackupAndRestore ReduceLROnPlateau CSVLogger TerminateOnNaN".split()
REGULARIZERS = "L1 L2 L1L2 OrthogonalRegularizer".split()
CONSTRAINTS = "MaxNorm MinMaxNorm NonNeg UnitNorm".split()
INITIALIZERS = """Zeros Ones Constant RandomNormal RandomUniform TruncatedNormal GlorotNormal GlorotUniform
HeNormal HeUniform LecunNormal LecunUniform Orthogonal Identity VarianceScaling""".split()

# Values for required arguments, to instantiate a class and read its get_config() keys.
SAMPLE = {"units": 2, "filters": 2, "kernel_size": 1, "rate": 0.5, "target_shape": [2], "dims": [1],
          "n": 2, "size": 2, "axes": 1, "num_heads": 1, "key_dim": 2, "height": 2, "width": 2,
          "scale": 1.0, "factor": 0.1, "height_factor": 0.1, "width_factor": 0.1, "stddev": 0.1,
          "input_dim": 3, "output_dim": 2, "layer": None, "equation": "ab,bc->ac", "output_shape": 2,
          "groups": 1, "filepath": "/tmp/x.keras", "backup_dir": "/tmp/bk", "filename": "/tmp/x.csv",
          "initial_learning_rate": 0.1, "decay_steps": 10, "decay_rate": 0.9, "boundaries": [1],
          "values": [0.1, 0.01], "depth_multiplier": 1, "first_decay_steps": 10, "value": 0.0, "activation": "relu",
          "num_classes": 2, "thresholds": None, "end_learning_rate": 0.0, "output_size": 2}
# Arguments with a default of None that a class still needs, to read its config keys.
NEEDED = {"CategoryEncoding": {"num_tokens": 2}, "Discretization": {"num_bins": 2}, "Pipeline": {"layers": []},
          "RandomPosterization": {"factor": 4}}


def jsonable(v):
    if v is inspect.Parameter.empty:
        return {"__required__": True}
    if isinstance(v, tuple):
        return [jsonable(x) for x in v]
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, list):
        return [jsonable(x) for x in v]
    raise TypeError(f"default {v!r} is not JSON")


def entry(module, name, snake=False):
    cls = getattr(module, name)
    sig = inspect.signature(cls.__init__)
    params, var_kw = [], False
    for p in list(sig.parameters.values())[1:]:
        if p.kind is p.VAR_KEYWORD:
            var_kw = True
            continue
        if p.kind is p.VAR_POSITIONAL:
            continue
        params.append([p.name, jsonable(p.default), p.kind is p.KEYWORD_ONLY])
    out = {"params": params, "var_kw": var_kw}
    if snake:  # Keras's automatic names come from the class (GroupQueryAttention is GroupedQueryAttention)
        out["snake"] = to_snake_case(cls.__name__)
    doc = inspect.getdoc(cls) or ""
    out["summary"] = doc.split("\n\n")[0].replace("\n", " ") if doc else ""
    return out, cls


def config_keys(cls, params):
    kwargs = {}
    for name, default, _ in params:
        if isinstance(default, dict) and default.get("__required__"):
            kwargs[name] = SAMPLE.get(name, 2)
    if cls.__name__ in ("Bidirectional", "TimeDistributed"):
        kwargs["layer"] = keras.layers.LSTM(2) if cls.__name__ == "Bidirectional" else keras.layers.Dense(2)
    if cls.__name__ == "RNN":
        kwargs["cell"] = keras.layers.LSTMCell(2)
    if cls.__name__ == "StackedRNNCells":
        kwargs["cells"] = [keras.layers.LSTMCell(2)]
    if cls.__name__ == "Normalization":
        kwargs = {}
    kwargs.update(NEEDED.get(cls.__name__, {}))
    try:
        return sorted(cls(**kwargs).get_config().keys())
    except Exception as e:  # noqa: BLE001
        sys.exit(f"gen_api_table: {cls.__name__}({kwargs}) failed: {e}; add a SAMPLE value")


def main(out_path):
    table = {"keras_version": keras.__version__}
    layers = {}
    for name in LAYERS:
        e, cls = entry(keras.layers, name, snake=True)
        e["config_keys"] = config_keys(cls, e["params"])
        layers[name] = e
    layers["InputLayer"], _ = entry(keras.layers, "InputLayer", snake=True)
    table["layers"] = layers
    # Keras's other names for these classes (MaxPool2D for MaxPooling2D, ...): the same class.
    table["layer_aliases"] = {n: getattr(keras.layers, n).__name__ for n in sorted(dir(keras.layers))
                              if isinstance(getattr(keras.layers, n), type) and n not in layers
                              and getattr(keras.layers, n).__name__ in layers}
    table["optimizers"] = {n: entry(keras.optimizers, n)[0] for n in OPTIMIZERS}
    table["schedules"] = {n: entry(keras.optimizers.schedules, n)[0] for n in SCHEDULES}
    table["losses"] = {n: entry(keras.losses, n)[0] for n in LOSSES}
    table["metrics"] = {n: entry(keras.metrics, n)[0] for n in METRICS}
    table["callbacks"] = {n: entry(keras.callbacks, n)[0] for n in CALLBACKS}
    table["regularizers"] = {n: entry(keras.regularizers, n)[0] for n in REGULARIZERS}
    table["initializers"] = {n: entry(keras.initializers, n)[0] for n in INITIALIZERS}
    table["constraints"] = {n: entry(keras.constraints, n)[0] for n in CONSTRAINTS}
    for group in ("losses", "metrics", "optimizers"):
        for name, e in table[group].items():
            e["config_keys"] = config_keys(getattr(getattr(keras, group), name), e["params"])
    with open(out_path, "w") as f:
        f.write('"""Generated by python/tools/gen_api_table.py from Keras %s: do not edit.\n\n'
                "Per Keras class nnfit implements: its constructor's arguments [name, default,\n"
                "keyword-only] in Keras's order ({'__required__': True}: no default), whether it takes\n"
                "**kwargs, the keys of its get_config() and its docstring's first paragraph.\n"
                '"""\n' % keras.__version__)
        f.write("TABLE = ")
        f.write(pprint.pformat(json.loads(json.dumps(table)), width=110, sort_dicts=False))
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "nnfit", "keras",
                                                          "_api_table.py"))
