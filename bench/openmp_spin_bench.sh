#!/bin/bash
# OpenMP spin A/B (bench/RESULTS.md, "OpenMP spin"): trains MODEL for EPOCHS with each setting,
# alternating within each of ROUNDS rounds; prints the median samples/s of the epochs after the
# first and the median input wait. Settings: a spin count, "default" (libgomp's own), "passive".
# usage: bench/openmp_spin_bench.sh mlp 3 3 default 10000 1000 passive
cd "$(dirname "$0")/.."
export FASHION_MNIST_DIR="${FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}"
model=$1; epochs=$2; rounds=$3; shift 3
for r in $(seq $rounds); do
  for v in "$@"; do
    case $v in
      passive) envs="OMP_WAIT_POLICY=passive";;
      *) envs="NNFIT_OPENMP_SPIN=$v";;
    esac
    env -u GOMP_SPINCOUNT -u OMP_WAIT_POLICY $envs build/release/nnfit train examples/fashion_mnist_$model.json --epochs $epochs --threads 2 --batch-size 128 --quiet --metrics-json /tmp/spin_$model.json > /dev/null 2>&1
    /usr/bin/python3 -c "
import json,statistics as st; m=json.load(open('/tmp/spin_$model.json'))['epochs'][1:]
print('$model', '$v', 'round $r', round(st.median(e['samples_per_s'] for e in m)), 'wait %.2f%%' % (100*st.median(e['input_wait_fraction'] for e in m)))"
  done
done
