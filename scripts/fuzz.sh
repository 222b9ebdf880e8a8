#!/usr/bin/env bash
# Builds nnfit's libFuzzer targets with clang (the fuzz preset: ASan + UBSan, every library
# instrumented) in build/fuzz and runs one (or all, one after another) for SECONDS each (default 60)
# from a seed corpus: fuzz/seeds/TARGET, the real files of ../shared/formats/samples and
# the tests' fixtures, and the target's stored findings. Findings land in
# build/fuzz/findings/TARGET; keep each (after its fix) in tests/fuzz/regressions/TARGET/,
# which nnfit_fuzz_tests replays. Targets and their entry points: docs/fuzzing.md.
# usage: scripts/fuzz.sh [TARGET|all] [SECONDS]     TARGET: keras_file (default), idx, ...
# NNFIT_FUZZ_SEED and NNFIT_FUZZ_RUNS fix libFuzzer's seed and stop after that many inputs:
# CI sets both, so a commit's fuzz stage explores the same inputs on every run (SECONDS
# still caps it); a developer leaves them unset to explore afresh. NNFIT_JOBS: build jobs;
# NNFIT_FUZZ_NO_BUILD=1 runs the built fuzzer without configuring or building (concurrent runs);
# NNFIT_FUZZ_BUILD_ONLY=1 builds it and stops; NNFIT_FUZZ_TIMEOUT: seconds one input may take (20).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
targets=(idx npy npz csv tfrecord example image keras_json train_config tfevents profile doctor_root keras_file)
target=${1:-keras_file}
seconds=${2:-60}
if [[ "$target" == all ]]; then
  if [[ -z "${NNFIT_FUZZ_NO_BUILD:-}" ]]; then  # one build for all: the libraries are shared
    names=(); for t in "${targets[@]}"; do names+=("nnfit_${t}_fuzzer"); done
    cmake --preset fuzz > /dev/null
    cmake --build --preset fuzz -j "${NNFIT_JOBS:-$(nproc)}" --target "${names[@]}"
  fi
  [[ -n "${NNFIT_FUZZ_BUILD_ONLY:-}" ]] && exit 0
  for t in "${targets[@]}"; do NNFIT_FUZZ_NO_BUILD=1 "$0" "$t" "$seconds"; done
  exit 0
fi
[[ " ${targets[*]} " == *" $target "* ]] || { echo "fuzz.sh: unknown target '$target' (known: all ${targets[*]})" >&2; exit 2; }
command -v clang++-14 > /dev/null || { echo "fuzz.sh: needs clang++-14 (Debian's clang-14; scripts/setup.sh installs it)" >&2; exit 2; }
if [[ -z "${NNFIT_FUZZ_NO_BUILD:-}" ]]; then
  cmake --preset fuzz > /dev/null
  cmake --build --preset fuzz -j "${NNFIT_JOBS:-$(nproc)}" --target "nnfit_${target}_fuzzer"
fi
[[ -n "${NNFIT_FUZZ_BUILD_ONLY:-}" ]] && exit 0

corpus=build/fuzz/corpus/$target
findings=build/fuzz/findings/$target
mkdir -p "$corpus" "$findings"
seed() { for f in "$@"; do [[ -f "$f" && "$f" != *.error ]] && cp -n "$f" "$corpus"/; done; return 0; }
samples=../shared/formats/samples
seed fuzz/seeds/"$target"/* tests/fuzz/regressions/"$target"/*
case "$target" in
  npy) seed "$samples"/npy/* tests/model/fixtures/*.npy ;;
  npz) seed tests/model/fixtures/*.npz tests/io/fixtures/npz/*.npz ;;
  tfrecord) seed "$samples"/tfrecord/* tests/io/fixtures/tfrecord/*.tfrecord* ;;
  keras_json) seed tests/model/fixtures/*.json ;;
  train_config) seed examples/*.json ;;
  tfevents) seed "$samples"/tensorboard/events.out.tfevents.* ;;
  keras_file) seed "$samples"/keras/* tests/model/fixtures/*.keras tests/model/fixtures/*.h5 ;;
esac
dict=
case "$target" in
  npy|npz) dict=fuzz/dicts/npy.dict ;;
  keras_json|train_config|profile|doctor_root|keras_file) dict=fuzz/dicts/$target.dict ;;
esac
[[ "$target" == keras_json ]] && dict=fuzz/dicts/json.dict
# allocator_may_return_null: a size read from a damaged file asks malloc for exabytes; as in
# production, malloc returns null and the reader fails cleanly. scripts/asan.supp and
# lsan.supp: libhdf5's own over-reads and leaks on damaged files (each file says which).
# -rss_limit_mb and -malloc_limit_mb: no input may make a reader allocate more than 2 GiB,
# but libhdf5 (keras_file) asks for up to 4 GiB, never touched, for a damaged object
# header before it fails to read it (docs/design/fuzzing.md, "Left to libhdf5").
malloc_mb=2048
[[ "$target" == keras_file ]] && malloc_mb=4096
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:suppressions=$PWD/scripts/asan.supp
export LSAN_OPTIONS=suppressions=$PWD/scripts/lsan.supp
echo "== fuzz $target: ${seconds} s${NNFIT_FUZZ_RUNS:+, at most $NNFIT_FUZZ_RUNS inputs}${NNFIT_FUZZ_SEED:+, seed $NNFIT_FUZZ_SEED}"
exec "build/fuzz/fuzz/nnfit_${target}_fuzzer" "$corpus" -artifact_prefix="$findings/" ${dict:+-dict="$dict"} \
  -max_total_time="$seconds" -max_len=600000 -timeout="${NNFIT_FUZZ_TIMEOUT:-20}" -rss_limit_mb=$((malloc_mb + 512)) -malloc_limit_mb=$malloc_mb -print_final_stats=1 \
  ${NNFIT_FUZZ_SEED:+-seed="$NNFIT_FUZZ_SEED"} ${NNFIT_FUZZ_RUNS:+-runs="$NNFIT_FUZZ_RUNS"}
