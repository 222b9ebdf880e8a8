"""Runs inside the onnx venv (scripts/onnx_venv.sh): for each CASE.onnx in a folder, the
ONNX checker (with shape inference) and onnxruntime on the inputs of CASE.npz; prints one
JSON object per case with the outputs' largest differences from the expected arrays.

CASE.npz holds sets of arrays "s<k>_x<i>" (inputs in the graph's input order) and
"s<k>_y<j>" (the expected outputs), one set per batch shape to try.
"""
import json
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort


def check(path):
    out = {"case": os.path.basename(path)[:-5]}
    model = onnx.load(path)
    try:
        onnx.checker.check_model(model, full_check=True)
        out["checker"] = "ok"
    except Exception as e:  # noqa: BLE001  (reported, and the test fails on it)
        out["checker"] = f"{type(e).__name__}: {e}"
    out["ir_version"] = model.ir_version
    out["opset"] = [[o.domain, o.version] for o in model.opset_import]
    out["ops"] = [n.op_type for n in model.graph.node]
    out["initializers"] = [t.name for t in model.graph.initializer]

    def dims(v):
        return [d.dim_param if d.HasField("dim_param") else (d.dim_value if d.HasField("dim_value") else None)
                for d in v.type.tensor_type.shape.dim]

    out["inputs"] = [[v.name, dims(v), onnx.helper.tensor_dtype_to_np_dtype(v.type.tensor_type.elem_type).name]
                     for v in model.graph.input]
    out["outputs"] = [[v.name, dims(v)] for v in model.graph.output]
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    arrays = np.load(path[:-5] + ".npz")
    sets = sorted({k.split("_")[0] for k in arrays.files})
    out["sets"] = []
    for s in sets:
        xs = [arrays[f"{s}_x{i}"] for i in range(len(session.get_inputs()))]
        got = session.run(None, {v.name: x for v, x in zip(session.get_inputs(), xs)})
        result = []
        for j, g in enumerate(got):
            want = arrays[f"{s}_y{j}"]
            result.append({"shape": list(g.shape), "want_shape": list(want.shape),
                           "max_abs_diff": float(np.max(np.abs(g - want))) if g.shape == want.shape else None,
                           "max_abs": float(np.max(np.abs(want)))})
        out["sets"].append(result)
    return out


if __name__ == "__main__":
    folder = sys.argv[1]
    for name in sorted(os.listdir(folder)):
        if name.endswith(".onnx"):
            try:
                print(json.dumps(check(os.path.join(folder, name))))
            except Exception as e:  # noqa: BLE001  (one case's failure is that case's result)
                print(json.dumps({"case": name[:-5], "error": f"{type(e).__name__}: {e}"}))
