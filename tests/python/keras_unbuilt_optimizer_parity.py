"""Issue 36: `fit` on every model file of the Keras interop suite loaded without its
optimizer built. Keras 3.15 saves each architecture of tests/interop/keras_interop.py (the
2-D and 3-D CNNs, the hard_sigmoid MLP, the recurrent stack, the Functional towers and
merges of tests/model/fixtures/make_functional_json.py) right after compile, before any
training: its optimizer unbuilt, so the file holds only Adam's iteration count and learning
rate, none of its slots (what a user shares after `model.compile(...); model.save(...)`).
Both frameworks then load each .keras file and fit it two epochs on the same arrays without
shuffling (Keras 3.15 cannot fit such a legacy .h5 file itself: "Unknown variable ... This
optimizer can only be called for the variables it was originally built with"; nnfit's
tests/python/test_user_day.py fits both): the losses per epoch, the optimizer's iterations after fit
and the predictions after it must agree within 1e-4 relative (for a model with Dropout, whose
masks are each framework's own, the iterations and finite losses).

usage: keras_unbuilt_optimizer_parity.py KERAS_PYTHON [NNFIT_PYTHON]
"""
import os
import sys
import textwrap

import parity_runs

HERE = os.path.dirname(os.path.abspath(__file__))

SCRIPT = textwrap.dedent("""
    import json, os, sys, tempfile
    import numpy as np
    IMPORT_LINE
    shared = os.path.join(tempfile.gettempdir(), f"nnfit_unbuilt_optimizer_{os.getuid()}")
    is_keras = not keras.__name__.startswith("nnfit")
    if is_keras:
        os.makedirs(shared, exist_ok=True)
        sys.path.insert(0, INTEROP)
        sys.path.insert(0, FIXTURES)
        from keras_interop import hard_sigmoid_mlp, recurrent_stack, sequential_cnn, volume_cnn
        from make_functional_json import build as build_functional
        keras.utils.set_random_seed(4)
        rng = np.random.default_rng(5)
        names = []
        for m in [sequential_cnn(keras), volume_cnn(keras), hard_sigmoid_mlp(keras), recurrent_stack(keras)] + \\
                list(build_functional(keras)):
            xs = [rng.standard_normal((12,) + tuple(t.shape[1:])).astype(np.float32) for t in m.inputs]
            ys = [rng.standard_normal((12,) + tuple(o.shape[1:])).astype(np.float32) for o in m.outputs]
            m.compile(optimizer=keras.optimizers.Adam(1e-3), loss=keras.losses.MeanSquaredError())
            m.save(os.path.join(shared, m.name + ".keras"))
            np.savez(os.path.join(shared, m.name + ".npz"), *(xs + ys), n_in=len(xs))
            names.append(m.name)
        with open(os.path.join(shared, "names.json"), "w") as f:
            json.dump(names, f)
        keras.backend.clear_session()
    out = {}
    for name in json.load(open(os.path.join(shared, "names.json"))):
        data = np.load(os.path.join(shared, name + ".npz"))
        arrays = [data[f"arr_{i}"] for i in range(len(data.files) - 1)]
        n_in = int(data["n_in"])
        xs, ys = arrays[:n_in], arrays[n_in:]
        for ext in (".keras",):
            m = keras.models.load_model(os.path.join(shared, name + ext))
            before = int(m.optimizer.iterations)
            h = m.fit(xs if n_in > 1 else xs[0], ys if len(ys) > 1 else ys[0], epochs=2, batch_size=4,
                      shuffle=False, verbose=0)
            pred = m.predict(xs if n_in > 1 else xs[0], verbose=0)
            pred = pred if isinstance(pred, list) else [pred]
            out[name + ext] = {"iterations": [before, int(m.optimizer.iterations)]}
            if not any(type(l).__name__ == "Dropout" for l in m.layers):  # dropout's masks are each framework's own
                out[name + ext].update(loss=[round(float(v), 6) for v in h.history["loss"]],
                                       predict=[float(np.abs(p).sum()) for p in pred])
            else:
                out[name + ext]["finite_losses"] = bool(np.all(np.isfinite(h.history["loss"])))
    print("PARITY " + json.dumps(out))
""").replace("INTEROP", repr(os.path.join(HERE, "..", "interop"))).replace(
    "FIXTURES", repr(os.path.join(HERE, "..", "model", "fixtures")))


def close(a, b):
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)
    if isinstance(a, float):
        return abs(a - b) <= 1e-4 * max(abs(a), abs(b)) + 1e-6
    return a == b


def main():
    keras_out, nnfit_out = parity_runs.run_both(SCRIPT, sys.argv, timeout=900)
    failed = [k for k in keras_out if not close(keras_out[k], nnfit_out.get(k))]
    for k in sorted(keras_out):
        print(f"{'ok  ' if k not in failed else 'DIFF'} {k}: keras {keras_out[k]}" +
              ("" if k not in failed else f"\\n     nnfit {nnfit_out.get(k)}"))
    if failed:
        sys.exit(f"{len(failed)} of {len(keras_out)} differ from Keras: {failed}")
    print(f"all {len(keras_out)} model files fit as Keras fits them")


if __name__ == "__main__":
    main()
