#!/usr/bin/env bash
# run.sh of the GPU bundle (scripts/gpu_bundle.sh copies this file there; docs/gpu_bundle.md):
# nnfit's first checks on a machine with an NVIDIA GPU, in one call, staged so that what
# matters most runs first, within a time budget:
#   0. the environment: unpack, find the CUDA, cuBLAS, cuDNN and NCCL libraries in the
#      machine's toolkit and its Python's nvidia-* wheels (env.log); no GPU: stop here
#   1. device: nnfit doctor and the device tests (a skip is a failure)
#   2. train: the Fashion-MNIST CNN on cuda:0 for one epoch, graphs on and off, the two
#      losses agreeing; mixed_bfloat16 and mixed_float16
#   3. timing: the step of the CNN and the MLP (steady-state epochs), its breakdown
#      (nnfit profile), and PyTorch eager on the same GPU where it imports
#   4. extra: compute-sanitizer memcheck, the Python wheel (where the bundle carries one)
# Everything lands in OUT (at most 8 files: summary.md, env.log and one log per stage, each
# check's output capped), summary.md rewritten after every check.
#
# usage: ./run.sh [OUT]           (default $OUT, else ./out)
#   NNFIT_RUN_BUDGET_S  seconds the whole run may take (default 570); a check gets at most
#                       what is left, and checks that would start past it are listed "not run"
#   NNFIT_STAGES        the stages to run (default "1 2 3 4")
#   NNFIT_CUDA_LIB_DIRS extra folders (':'-separated) to look for the CUDA libraries in first
#   NNFIT_RUN_ANYWAY=1  run the stages where no GPU is found (to try run.sh itself: the
#                       device checks then fail, their tests skipping); with it,
#   NNFIT_RUN_DEVICE    the device the training checks use (default cuda:0) and
#   NNFIT_RUN_STEPS     their --steps-per-epoch (default: the whole epoch)
# Exit: 0 when every check passed; 1 when one failed or no GPU was found; 2 when the bundle
# cannot run here (unpacking, nnfit does not start: glibc too old).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=$(realpath -m "${1:-${OUT:-$PWD/out}}")
budget_s=${NNFIT_RUN_BUDGET_S:-570}
stages=${NNFIT_STAGES:-1 2 3 4}
t_start=$(date +%s)
mkdir -p "$out" || exit 2
env_log=$out/env.log
: > "$env_log"
say() { echo "$*" | tee -a "$env_log"; }

# --- 0. unpack (once: a second run reuses the folder) --------------------------------------
root=$here/nnfit
if [ ! -x "$root/bin/nnfit" ] || ! cmp -s "$here/MANIFEST" "$root/MANIFEST"; then
  rm -rf "$root"
  say "unpacking nnfit-payload.tar.xz"
  if command -v xz > /dev/null; then
    tar -C "$here" -xJf "$here/nnfit-payload.tar.xz"
  else  # no xz-utils: Python's lzma
    python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" "$here/nnfit-payload.tar.xz" "$here"
  fi || { say "run.sh: cannot unpack $here/nnfit-payload.tar.xz"; exit 2; }
fi
nnfit=$root/bin/nnfit
tests=$root/bin
export FASHION_MNIST_DIR=$here/data

# --- 0. the machine --------------------------------------------------------------------------
manifest() { sed -n "s/^$1: //p" "$root/MANIFEST"; }
glibc_here=$(getconf GNU_LIBC_VERSION 2> /dev/null | awk '{print $2}')
say "bundle: $(manifest source); built for $(manifest cuda_architectures); needs glibc >= $(manifest glibc_needed), GLIBCXX_$(manifest glibcxx_needed)"
say "machine: $(. /etc/os-release 2> /dev/null && echo "$PRETTY_NAME"), glibc ${glibc_here:-?}, $(nproc) cores, kernel $(uname -r)"
# libstdc++: the machine's where it is new enough, else the carried one (lib/gcc/, which
# needs glibc >= MANIFEST's glibc_needed_with_carried_libstdcxx).
if ! start=$("$nnfit" --version 2>&1); then
  say "nnfit does not start with the machine's libstdc++: $start"
  export LD_LIBRARY_PATH=$root/lib/gcc${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  if ! start=$("$nnfit" --version 2>&1); then
    say "run.sh: the bundled nnfit cannot start here: $start (this glibc: ${glibc_here:-?}; the bundle needs >= $(manifest glibc_needed), and >= $(manifest glibc_needed_with_carried_libstdcxx) with its own libstdc++): rebuild from nnfit-source.tar.xz (docs/gpu_bundle.md)"
    exit 2
  fi
  say "libstdc++: the bundle's (lib/gcc/)"
else
  say "libstdc++: the machine's ($(ldd "$nnfit" | awk '$1 == "libstdc++.so.6" {print $3}'))"
fi
say "$start"

# The CUDA libraries: the toolkit's folders first, then every nvidia-* wheel's lib folder
# of the Python on PATH (site-packages/nvidia/*/lib), then the system's.
py=$(command -v python3 || command -v python || true)
cands=()
[ -n "${NNFIT_CUDA_LIB_DIRS:-}" ] && IFS=: read -r -a cands <<< "$NNFIT_CUDA_LIB_DIRS"
for d in ${CUDA_HOME:+$CUDA_HOME/lib64} ${CUDA_PATH:+$CUDA_PATH/lib64} \
  "$(dirname "$(dirname "$(command -v nvcc 2> /dev/null || echo /none/bin/nvcc)")")/lib64" \
  /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda-13*/lib64; do
  cands+=("$d")
done
if [ -n "$py" ]; then
  while IFS= read -r d; do cands+=("$d"); done < <("$py" - << 'EOF' 2> /dev/null
import glob, os, site, sys
roots = site.getsitepackages() + [site.getusersitepackages()] + [p for p in sys.path if p.endswith("-packages")]
seen = set()
for r in roots:
    for d in sorted(glob.glob(os.path.join(r, "nvidia", "*", "lib")) + glob.glob(os.path.join(r, "nvidia", "*", "*", "lib"))):
        if d not in seen:
            seen.add(d)
            print(d)
EOF
)
fi
lib_path=""
for d in "${cands[@]}"; do
  [ -d "$d" ] || continue
  case ":$lib_path:" in *":$d:"*) ;; *) lib_path=${lib_path:+$lib_path:}$d ;; esac
done
export LD_LIBRARY_PATH=$lib_path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
say "python: ${py:-none} $("${py:-false}" -c 'import sys; print(sys.version.split()[0])' 2> /dev/null)"
say "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
cuda_found=""
for lib in $(manifest cuda_libraries_needed) libcuda.so.1 libnvidia-ml.so.1; do
  where=""
  IFS=: read -r -a dirs <<< "$lib_path"
  for d in "${dirs[@]}"; do
    [ -e "$d/$lib" ] && { where=$(realpath "$d/$lib"); break; }
  done
  [ -z "$where" ] && where=$( (ldconfig -p 2> /dev/null || /sbin/ldconfig -p 2> /dev/null) | awk -v l="$lib" '$1 == l {print $NF; exit}')
  say "library $lib: ${where:-NOT FOUND}"
  cuda_found+="$lib ${where:-**not found**}; "
done
gpu_names=$(timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader 2> /dev/null)
gpus_listed=$(ls -d /proc/driver/nvidia/gpus/* 2> /dev/null | wc -l)
say "nvidia-smi: ${gpu_names:-(none or not found)}; /proc/driver/nvidia/gpus lists $gpus_listed"
say "nvcc: $(nvcc --version 2> /dev/null | tail -n 2 | head -n 1 || echo 'not found')"
if [ -n "$py" ]; then
  say "torch: $(timeout 60 "$py" -c 'import torch; print(torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())' 2>&1 | tail -n 1)"
fi

# shellcheck source=scripts/gpu_checks.sh
source "$here/gpu_checks.sh"
GC_OUT=$out GC_PY=${py:-python3} GC_STAGE_LOGS=1 GC_KEEP_GOING=1 GC_LOG_CAP=$((2 * 1024 * 1024))
gc_init "nnfit: GPU bundle run" "- bundle: $(manifest source), built for $(manifest cuda_architectures); $start
- machine: $(. /etc/os-release 2> /dev/null && echo "$PRETTY_NAME"), glibc ${glibc_here:-?}, $(nproc) cores
- GPU: ${gpu_names:-none listed by nvidia-smi} ($gpus_listed in /proc/driver/nvidia/gpus)
- CUDA libraries: $cuda_found"

if [ -z "$gpu_names" ] && [ "$gpus_listed" -eq 0 ] && [ "${NNFIT_RUN_ANYWAY:-0}" != 1 ]; then
  gc_stage 1-device
  gc_check doctor "what nnfit doctor says of this machine (no GPU listed)" 20 "$nnfit" doctor
  GC_FAILED=$((GC_FAILED + 1))
  gc_write_summary "stopped: no NVIDIA GPU found (nvidia-smi lists none, /proc/driver/nvidia/gpus is empty)"
  say "run.sh: no NVIDIA GPU found: nvidia-smi lists none and /proc/driver/nvidia/gpus is empty; stopping (summary: $out/summary.md)"
  exit 1
fi

# check NAME MEANING LIMIT_S CMD...: gc_check within what is left of the budget.
check() {
  local name=$1 meaning=$2 limit=$3 left
  shift 3
  left=$((budget_s - ($(date +%s) - t_start)))
  if [ "$left" -lt 15 ]; then
    gc_note "$name" "out of time (NNFIT_RUN_BUDGET_S=$budget_s)"
    return 1
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  gc_check "$name" "$meaning" "$limit" "$@"
}
wants() { case " $stages " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

# gtests BINARY FILTER: the device tests of one binary in one process; if that fails, each
# case again in its own process (a crash or a sticky CUDA error then names its case), as
# long as 60 s allow.
gtests() {
  local bin=$1 filter=$2 code t0 name failed=""
  "$bin" --gtest_filter="$filter" --gtest_color=no
  code=$?
  [ $code -eq 0 ] && return 0
  echo "--- one process per case (the run above exited $code)"
  t0=$(date +%s)
  for name in $("$bin" --gtest_filter="$filter" --gtest_list_tests | awk '/^[^ ]/ {s=$1} /^  / {print s $1}'); do
    if [ $(($(date +%s) - t0)) -gt 60 ]; then
      echo "detail: failed alone: ${failed:-none} (stopped re-running after 60 s)"
      return $code
    fi
    timeout 30 "$bin" --gtest_filter="$name" --gtest_color=no > /dev/null 2>&1 || failed+="$name "
  done
  echo "detail: failed alone: ${failed:-none}"
  return $code
}
doctor() {  # nnfit doctor, its last line the detail
  local report code
  report=$("$nnfit" doctor 2>&1)
  code=$?
  printf '%s\n' "$report"
  echo "detail: $(printf '%s\n' "$report" | grep -v '^ *$' | tail -n 1)"
  return $code
}
cnn=$root/examples/fashion_mnist_cnn.json
mlp=$root/examples/fashion_mnist_mlp.json
work=$here/work
mkdir -p "$work"
export nnfit cnn mlp work
export device=${NNFIT_RUN_DEVICE:-cuda:0} steps=${NNFIT_RUN_STEPS:+--steps-per-epoch $NNFIT_RUN_STEPS}
train() {  # train NAME MIN_ACCURACY CONFIG [flags...]: one epoch on cuda:0, metrics checked
  local name=$1 min=$2 config=$3
  shift 3
  rm -f "$work/$name.json"
  # shellcheck disable=SC2086
  "$nnfit" train "$config" --device "$device" --epochs 1 $steps --seed 1 --quiet --metrics-json "$work/$name.json" "$@" &&
    gc_metrics "$work/$name.json" "$min" "$device"
}
graphs_off() {  # graphs_off CMD...: CMD with every step launched kernel by kernel
  export NNFIT_CUDA_GRAPHS=0
  "$@"
}
timing() {  # timing NAME CONFIG [flags...]: 3 epochs; the last one's step time
  local name=$1 config=$2
  shift 2
  rm -f "$work/$name.json"
  # shellcheck disable=SC2086
  "$nnfit" train "$config" --device "$device" --epochs 3 $steps --seed 1 --quiet --metrics-json "$work/$name.json" "$@" || return
  "$GC_PY" - "$work/$name.json" << 'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
print(json.dumps(m, indent=1)[:20000])
e = m["epochs"][-1]
bs = 128
print("detail: %s: %.0f samples/s, %.3f ms/step (batch %d, epoch %d of %d), memory peak %s bytes" % (
    m["device"]["name"], e["samples_per_s"], 1000.0 * bs / e["samples_per_s"], bs, len(m["epochs"]), len(m["epochs"]),
    int(e["memory_peak_bytes"]) if "memory_peak_bytes" in e else "?"))
EOF
}

profile_cnn() {  # 100 steps of the CNN with --logdir, then nnfit profile; its mean step and verdict the detail
  local report
  rm -rf "$work/logdir"
  "$nnfit" train "$cnn" --device "$device" --epochs 1 --steps-per-epoch "${NNFIT_RUN_STEPS:-100}" --seed 1 --quiet \
    --logdir "$work/logdir" || return
  report=$("$nnfit" profile "$work/logdir") || return
  printf '%s\n' "$report"
  echo "detail: $(printf '%s\n' "$report" | grep -m 1 '^mean step'); $(printf '%s\n' "$report" | grep -m 1 '^verdict')"
}

wheel_check() {  # the bundle's wheel into a folder of its own for the machine's Python (and its NumPy), without the network
  rm -rf "$work/site"
  "$py" -m pip install --target "$work/site" --no-deps --no-index --disable-pip-version-check --quiet "$wheel" || return
  # lib/: the libraries a wheel that auditwheel did not repair needs (the same as nnfit's).
  (cd "$work" && PYTHONPATH=$work/site${PYTHONPATH:+:$PYTHONPATH} LD_LIBRARY_PATH=$root/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
    "$py" "$root/scripts/gpu_bundle_wheel_smoke.py" "${device/#cuda:/gpu:}")
}

if wants 1; then
  gc_stage 1-device
  check doctor "the driver, the GPU or the build's architectures (nnfit doctor's failing check says which and how to fix it)" 60 \
    doctor
  check cuda-libraries "a library the CUDA plugins need is not on this machine (env.log says where each was looked for)" 20 \
    bash -c "for p in '$root'/lib/nnfit/*.so; do echo \"== \$p\"; ldd \"\$p\"; done > '$work/ldd.txt'; cat '$work/ldd.txt';
             ! grep 'not found' '$work/ldd.txt' && echo 'detail: every library the plugins need resolves'"
  check memory-and-streams "device or pinned memory, the BFC allocator, or the two streams and their events (the pinned double buffer)" 120 \
    gtests "$tests/nnfit_backend_tests" 'CudaSubAllocator.*:CudaBackend.*:CudaDevice.*-*WithoutADevice*'
  check own-kernels "an own kernel that matched the reference on the host fails on the device: a launch problem (grid, stream, pointer kind), a math-library difference or a compiler difference (the bit-for-bit cases separate the last)" 240 \
    gtests "$tests/nnfit_cuda_host_tests" '*CudaDevice.*:CudaHostCoverage.TheDeviceRegistryHasEveryHostRunKernel'
  check vendor-kernels "cuBLASLt or cuDNN against the reference: with the emulated plans passing (CudaDescriptors), a descriptor attribute, not the layout" 180 \
    gtests "$tests/nnfit_cuda_host_tests" 'CudaDeviceVendor.*'
  if [ -f "$root/lib/nnfit/libnnfit_nccl.so" ]; then
    check nccl-one-rank "NCCL's bootstrap or a collective on device memory" 60 \
      gtests "$tests/nnfit_dist_tests" 'CudaDevice.NcclOverOneRank'
  fi
fi
if wants 2; then
  gc_stage 2-train
  # The same command and thresholds as CliTest.FashionMnistCnnTrainsOnCuda0 (tests/e2e),
  # whose binary is not carried: it names the build tree's nnfit and examples by path.
  check cnn-graphs-on "the CNN with every step captured as a CUDA graph (the default): the model's device path (placement, copies, streams, graphs)" 150 \
    train graphs_on 0.85 "$cnn"
  check cnn-graphs-off "the CNN launching kernel by kernel (NNFIT_CUDA_GRAPHS=0)" 150 \
    graphs_off train graphs_off 0.85 "$cnn"
  check graphs-agree "a captured step computes something else than the same step launched kernel by kernel (a value read from launch arguments instead of the StepScalars)" 20 \
    gc_same_loss "$work/graphs_on.json" "$work/graphs_off.json"
  check cnn-mixed-bfloat16 "mixed_bfloat16 on the device" 150 train mixed_bfloat16 0.85 "$cnn" --dtype-policy mixed_bfloat16
  check cnn-mixed-float16 "mixed precision with loss scaling on the device" 150 train mixed_float16 0.85 "$cnn" --dtype-policy mixed_float16
fi
if wants 3; then
  gc_stage 3-timing
  check time-cnn "the CNN's step, graphs on (3 epochs; the last one timed)" 120 timing time_cnn "$cnn"
  check time-cnn-graphs-off "the CNN's step launched kernel by kernel" 120 \
    graphs_off timing time_cnn_graphs_off "$cnn"
  check time-mlp "the MLP's step, graphs on" 120 timing time_mlp "$mlp"
  check profile-cnn "the step breakdown on the device (kernels timed by their runs, h2d_us the batch's staging)" 120 \
    profile_cnn
  if [ -n "$py" ] && timeout 60 "$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2> /dev/null; then
    check torch-cnn "PyTorch eager, the same CNN on the same GPU (the peer)" 150 "$py" "$root/scripts/gpu_bundle_torch_peer.py" cnn 3
    check torch-mlp "PyTorch eager, the same MLP on the same GPU (the peer)" 120 "$py" "$root/scripts/gpu_bundle_torch_peer.py" mlp 3
  else
    gc_note torch "PyTorch with CUDA not importable from ${py:-no python}"
  fi
fi
if wants 4; then
  gc_stage 4-extra
  sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2> /dev/null || true)
  if [ -n "$sanitizer" ]; then
    check memcheck-fit "an own kernel reads or writes outside its buffers in a short fit" 180 \
      "$sanitizer" --tool memcheck --error-exitcode 1 "$nnfit" train "$cnn" --device cuda:0 --epochs 1 --steps-per-epoch 20 --seed 1 --quiet
  else
    gc_note memcheck "compute-sanitizer not found"
  fi
  wheel=$(find "$here/wheel" -name 'nnfit-*.whl' 2> /dev/null | head -n 1)
  if [ -n "$wheel" ] && [ -n "$py" ]; then
    export wheel py root
    check python-wheel "the Python package (from nnfit import keras) trains on the GPU: the wheel, its plugin or its libraries" 180 \
      wheel_check
  else
    gc_note python-wheel "no wheel in the bundle (wheel/) or no Python"
  fi
fi
gc_finish
