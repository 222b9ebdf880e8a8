#!/bin/bash
# A/B of two nnfit builds on the Fashion-MNIST MLP and convnet: ROUNDS rounds (default 5),
# each training both models for 3 epochs with each binary, the binaries' order swapped every
# other round so the shared machine's drift falls on both. Prints one line per run: round,
# model, label (A or B) and the median step time in µs (input wait + forward + backward +
# update + h2d + callbacks) over the steps after the first epoch, from the run's steps.jsonl.
#   bench/ab_step.sh A_NNFIT B_NNFIT [ROUNDS]      (run from the repository's top folder)
set -eu
a=$1 b=$2 rounds=${3:-5}
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
for r in $(seq 1 "$rounds"); do
  for m in mlp cnn; do
    order="A B"; [ $((r % 2)) = 0 ] && order="B A"
    for which in $order; do
      bin=$a; [ "$which" = B ] && bin=$b
      rm -rf "$log/run"
      "$bin" train "examples/fashion_mnist_$m.json" --epochs 3 --logdir "$log/run" >/dev/null
      us=$(/usr/bin/python3 -c "
import json, statistics, sys
steps = [json.loads(l) for l in open(sys.argv[1])]
rest = steps[len(steps) // 3:]
keys = ('input_wait_us', 'h2d_us', 'forward_us', 'backward_us', 'update_us', 'callbacks_us')
print(round(statistics.median(sum(s[k] for k in keys) for s in rest), 1))" "$log/run/steps.jsonl")
      echo "round$r $m $which $us"
    done
  done
done
