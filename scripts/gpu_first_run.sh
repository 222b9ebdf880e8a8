#!/usr/bin/env bash
# The first run of nnfit on an NVIDIA GPU (docs/design/cuda.md, "What a first GPU run must
# check"), as one command: every check in order, each a command whose whole output goes to
# OUT/NN-name.log, stopping at the first failure with what it points at. The device tests
# skip where no GPU is usable; here a skip is a failure (the point is to run them). On a
# machine without a usable GPU the first check stops it and says why.
#
# Usage: scripts/gpu_first_run.sh [BUILD_DIR] [OUT_DIR]
#   BUILD_DIR  a configured and built tree with the CUDA backend (default build/release)
#   OUT_DIR    where the logs and summary.md go (default gpu-first-run-<date>)
# Exit: 0 when every check passed, 1 at the first that did not, 2 on bad usage.
#
# Written without a GPU (none was available where nnfit is built): the commands and their
# order are the design's; expect to adjust thresholds after the first real run.
set -u

build=${1:-build/release}
out=${2:-gpu-first-run-$(date +%Y%m%d-%H%M%S)}
src=$(cd "$(dirname "$0")/.." && pwd)
nnfit="$build/nnfit"
if [ ! -x "$nnfit" ]; then
  echo "gpu_first_run: $nnfit not found: build first (cmake --preset release && cmake --build build/release)" >&2
  exit 2
fi
mkdir -p "$out" || exit 2
# The checks' runner (check, summary, metrics) is shared with the GPU bundle's run.sh.
# shellcheck source=scripts/gpu_checks.sh
source "$src/scripts/gpu_checks.sh"
GC_OUT=$out GC_PY=/usr/bin/python3
gc_init "nnfit: first GPU run" "- source: $(git -C "$src" describe --always --dirty 2>/dev/null || echo 'not a git tree'); build: $build"
export nnfit out cnn="$src/examples/fashion_mnist_cnn.json"
check() {  # check NAME MEANING CMD...: stops the run at the first failure
  local name=$1 meaning=$2
  shift 2
  gc_check "$name" "$meaning" 3600 "$@"
}
train() {  # train OUTNAME [flags...]: one epoch of the Fashion-MNIST CNN on cuda:0
  local name=$1
  shift
  "$nnfit" train "$cnn" --device cuda:0 --epochs 1 --seed 1 --quiet --metrics-json "$out/$name.json" "$@" &&
    gc_metrics "$out/$name.json" 0.85
}

gpus=$(gc_gpu_count "$nnfit")
check doctor "the driver, the GPU or the build's architectures (nnfit doctor's failing check says which and how to fix it; it lists $gpus GPU(s))" \
  bash -c "'$nnfit' doctor && [ '${gpus:-0}' -ge 1 ]"
check memory-and-streams "device or pinned memory, the BFC allocator, or the two streams and their events (the pinned double buffer)" \
  ctest --test-dir "$build" -R "CudaSubAllocator|CudaBackend|QueuesRunTheDoubleBuffer" -E WithoutADevice --output-on-failure
check own-kernels "an own kernel that matched the reference on the host fails on the device: a launch problem (grid, stream, pointer kind), a math-library difference or a compiler difference (the bit-for-bit cases separate the last)" \
  ctest --test-dir "$build" -R "CudaDevice\." --output-on-failure
if command -v compute-sanitizer > /dev/null || [ -x /usr/local/cuda/bin/compute-sanitizer ]; then
  sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  check memcheck "an own kernel reads or writes outside its buffers" \
    "$sanitizer" --tool memcheck --error-exitcode 1 "$build/tests/nnfit_cuda_host_tests" --gtest_filter='*CudaDevice.*'
  check racecheck "two indices of an own kernel write the same memory (the kernel/launcher split promises they never do)" \
    "$sanitizer" --tool racecheck --error-exitcode 1 "$build/tests/nnfit_cuda_host_tests" --gtest_filter='*CudaDevice.*'
else
  gc_note compute-sanitizer "not found: memcheck and racecheck not run"
fi
check vendor-kernels "cuBLASLt or cuDNN against the reference: with the emulated plans passing (CudaDescriptors), a descriptor attribute, not the layout" \
  ctest --test-dir "$build" -R "CudaDeviceVendor" --output-on-failure
check fashion-mnist-e2e "a whole training run on cuda:0 (the model's device path: placement, copies, streams, graphs)" \
  ctest --test-dir "$build" -R "FashionMnistCnnTrainsOnCuda0" --output-on-failure
check graphs-on "the CNN with every step captured as a CUDA graph (the default)" train graphs_on
check graphs-off "the CNN launching kernel by kernel (NNFIT_CUDA_GRAPHS=0)" env NNFIT_CUDA_GRAPHS=0 "$nnfit" train "$cnn" \
  --device cuda:0 --epochs 1 --seed 1 --quiet --metrics-json "$out/graphs_off.json"
check graphs-agree "a captured step computes something else than the same step launched kernel by kernel (a value read from launch arguments instead of the StepScalars)" \
  gc_same_loss "$out/graphs_on.json" "$out/graphs_off.json"
check mixed-float16 "mixed precision with loss scaling on the device" train mixed_float16 --dtype-policy mixed_float16
check profile "the step breakdown on a device (kernels timed by their runs, h2d_us the batch's staging)" \
  bash -c "'$nnfit' train '$cnn' --device cuda:0 --epochs 1 --steps-per-epoch 50 --seed 1 --quiet --logdir '$out/logdir' &&
           '$nnfit' profile '$out/logdir'"
if ctest --test-dir "$build" -N -R NcclOverOneRank | grep -q NcclOverOneRank; then
  check nccl-one-rank "NCCL's bootstrap or a collective on device memory" \
    ctest --test-dir "$build" -R "NcclOverOneRank" --output-on-failure
fi
if [ "${gpus:-0}" -ge 2 ] && command -v mpirun > /dev/null; then
  check two-gpus-nccl "data-parallel on two GPUs: each rank on its own GPU, the gradients summed on the devices over NCCL" \
    bash -c "mpirun -np 2 '$nnfit' train '$cnn' --epochs 1 --seed 1 --metrics-json '$out/two_gpus.json' 2>&1 | tee /dev/stderr |
             grep -q 'summed on the device over NCCL'"
  check two-gpus-graphs-off "data-parallel on two GPUs with every step kernel by kernel and the sums launched directly" \
    mpirun -np 2 -x NNFIT_CUDA_GRAPHS=0 "$nnfit" train "$cnn" --epochs 1 --seed 1 --quiet \
    --metrics-json "$out/two_gpus_graphs_off.json"
  check two-gpus-graphs-agree "a captured data-parallel step (its sums inside the graph) computes something else than the same step launched directly" \
    gc_same_loss "$out/two_gpus.json" "$out/two_gpus_graphs_off.json"
else
  gc_note two-gpus-nccl "$gpus GPU(s), mpirun $(command -v mpirun > /dev/null && echo found || echo 'not found')"
fi
gc_finish
