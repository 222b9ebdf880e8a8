#!/usr/bin/python3
"""Text classifier throughput and accuracy: nnfit against PyTorch and Keras in one run.

Two models (--model), each a Keras JSON file nnfit trains as is:
- bilstm (bench/text_bilstm.json): Embedding(2000, 32, mask_zero=True) ->
  Bidirectional(LSTM(32)) -> Dense(2) logits;
- transformer (bench/text_transformer.json): Embedding(2000, 64, mask_zero=True) -> a
  Transformer encoder block (MultiHeadAttention 4x16, residual + LayerNormalization,
  Dense 128 relu -> Dense 64, residual + LayerNormalization) -> GlobalAveragePooling1D ->
  Dense(2) logits.
Adam 1e-3, batch 64, on the token sequences of bench/text_data.py (20,000 training, 5,000
test; 16..64 tokens post-padded to 64, so the padding must be masked). The peers are
bench/peers/torch_text.py (PyTorch 2.x: pack_padded_sequence, or key_padding_mask and a
masked mean) and bench/peers/keras_text.py (Keras 3 on TensorFlow, the same JSON). Each
round runs the three alternately (the first rotates) with that round's seed (1, 2, 3,
...); throughput per run = median samples/s over the epochs after the first, per framework
= median over rounds; accuracy = median over rounds (seeds) of the last epoch's test
accuracy. Writes bench/RESULTS_text.md (bilstm) or bench/RESULTS_transformer.md.

    /usr/bin/python3 bench/text_bench.py [--model bilstm|transformer] [--rounds 3] [--epochs 3] [--threads 2]
"""
import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import compare_rounds as cr  # noqa: E402  (the rounds and the report)
import fmnist_bench as fb  # noqa: E402  (its process runner and report helpers)
import text_data  # noqa: E402
import varlen_text_bench as vt  # noqa: E402  (its section of RESULTS_text.md is kept)

REPO = fb.REPO
MODELS = {
    "bilstm": ("Text classifier (Embedding + Bidirectional LSTM)", "RESULTS_text.md",
               "PyTorch masks by `pack_padded_sequence`, Keras and nnfit by `mask_zero`."),
    "transformer": ("Transformer encoder block on token sequences", "RESULTS_transformer.md",
                    "PyTorch masks the padding as `key_padding_mask` and in a masked mean, Keras and nnfit by "
                    "`mask_zero` (the query and value masks of MultiHeadAttention, the masked "
                    "GlobalAveragePooling1D)."),
}


def run_nnfit(args, data, seed):
    cfg = json.loads((REPO / "bench" / f"text_{args.model}.json").read_text())
    cfg["fit"]["seed"] = seed
    config = Path(data) / f"text_{args.model}_seed{seed}.json"
    config.write_text(json.dumps(cfg))
    metrics = Path(data) / "metrics.json"
    fb.run([str(args.nnfit), "train", str(config), "--quiet", "--epochs", str(args.epochs), "--threads",
            str(args.threads), "--metrics-json", str(metrics)], args.timeout)
    m = json.loads(metrics.read_text())
    return [{"samples_per_s": float(e["samples_per_s"]), "test_acc": e.get("val_accuracy")} for e in m["epochs"]], \
        m.get("version", "nnfit")


def run_peer(args, framework, data, seed):
    python, script = (args.torch_python, "torch_text.py") if framework == "pytorch" else (args.keras_python, "keras_text.py")
    out = fb.run([str(python), str(REPO / "bench" / "peers" / script), str(data), str(args.epochs), str(args.threads),
                  str(seed), args.model], args.timeout)
    return fb.parse_peer_output(out)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", choices=sorted(MODELS), default="bilstm")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--frameworks", default="nnfit,pytorch,keras")
    p.add_argument("--nnfit", type=Path, default=REPO / "build" / "release" / "nnfit")
    p.add_argument("--torch-python", type=Path, default=None)
    p.add_argument("--keras-python", type=Path, default=None)
    p.add_argument("--timeout", type=int, default=1800)
    p.add_argument("--output", type=Path, help="default: bench/RESULTS_text.md or bench/RESULTS_transformer.md")
    args = p.parse_args()
    args.torch_python = fb.peer_python("torch", args.torch_python) if "pytorch" in args.frameworks else None
    args.keras_python = fb.peer_python("keras", args.keras_python) if "keras" in args.frameworks else None
    args.output = args.output or REPO / "bench" / MODELS[args.model][1]
    frameworks = cr.check_frameworks(args.frameworks, "text_bench")
    title, _, masking = MODELS[args.model]
    with tempfile.TemporaryDirectory() as data:
        text_data.make(data)
        runs, versions, started, load = cr.run_rounds(
            frameworks, args.rounds,
            lambda f, seed: run_nnfit(args, data, seed) if f == "nnfit" else run_peer(args, f, data, seed), "text_bench")
    intro = (f"The model of `bench/text_{args.model}.json` on the token sequences of `bench/text_data.py` (20,000 "
             f"training, 5,000 test, padding masked), batch 64, Adam 1e-3, {args.epochs} epochs, {args.threads} threads "
             f"each. Samples/s: median over {args.rounds} round(s) of each run's median over epochs 2..{args.epochs}; "
             f"frameworks alternate within a round. Test accuracy: median over the rounds' seeds (1..{args.rounds}) of "
             f"the last epoch's. {masking}")
    kept = ""  # bench/varlen_text_bench.py's section, which this report does not make
    if args.output.exists() and vt.SECTION_BEGIN in args.output.read_text():
        kept = vt.SECTION_BEGIN + args.output.read_text().split(vt.SECTION_BEGIN, 1)[1]
    cr.write_report(args.output, title, intro, runs, versions, started, load, "bench/text_bench.py")
    if kept:
        args.output.write_text(args.output.read_text().rstrip("\n") + "\n\n" + kept)
    print(args.output.read_text())


if __name__ == "__main__":
    main()
