#!/usr/bin/env bash
# Builds nnfit's libFuzzer targets with clang (ASan + UBSan, every library instrumented)
# in build/fuzz and runs one for SECONDS (default 60) from a seed corpus of real files.
# Findings land in build/fuzz/findings/TARGET; keep each as a regression input under
# tests/model/fixtures/fuzz_regressions/ (replayed by nnfit_model_tests).
# usage: scripts/fuzz.sh [TARGET] [SECONDS]     TARGET: keras_file (default)
# NNFIT_FUZZ_SEED and NNFIT_FUZZ_RUNS fix libFuzzer's seed and stop after that many inputs:
# CI sets both, so a commit's fuzz stage explores the same inputs on every run (SECONDS
# still caps it); a developer leaves them unset to explore afresh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
target=${1:-keras_file}
seconds=${2:-60}
clang=$(command -v clang++-14 || command -v clang++ || true)
[[ -n "$clang" ]] || { echo "fuzz.sh: needs clang++ (Debian's clang-14; scripts/setup.sh installs it)" >&2; exit 2; }
cc=${clang/clang++/clang}
cmake -S . -B build/fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$clang" \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" -DNNFIT_FUZZ=ON -DNNFIT_BUILD_TESTS=OFF -DNNFIT_WITH_CUDA=OFF > /dev/null
cmake --build build/fuzz -j "${NNFIT_JOBS:-$(nproc)}" --target "nnfit_${target}_fuzzer"

corpus=build/fuzz/corpus/$target
findings=build/fuzz/findings/$target
mkdir -p "$corpus" "$findings"
case "$target" in
  keras_file)
    cp -n ../shared/formats/samples/keras/* "$corpus"/ 2>/dev/null || true
    cp -n tests/model/fixtures/*.keras tests/model/fixtures/*.h5 "$corpus"/
    cp -n tests/model/fixtures/fuzz_regressions/keras_file/* "$corpus"/ 2>/dev/null || true
    ;;
  *) echo "fuzz.sh: unknown target '$target' (known: keras_file)" >&2; exit 2 ;;
esac
# allocator_may_return_null: a size read from a damaged file asks malloc for exabytes; as in
# production, malloc returns null and the reader fails cleanly. scripts/asan.supp and
# lsan.supp: libhdf5's own over-reads and leaks on damaged files (each file says which).
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:suppressions=$PWD/scripts/asan.supp
export LSAN_OPTIONS=suppressions=$PWD/scripts/lsan.supp
exec "build/fuzz/fuzz/nnfit_${target}_fuzzer" "$corpus" -artifact_prefix="$findings/" \
  -max_total_time="$seconds" -max_len=600000 -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 \
  ${NNFIT_FUZZ_SEED:+-seed="$NNFIT_FUZZ_SEED"} ${NNFIT_FUZZ_RUNS:+-runs="$NNFIT_FUZZ_RUNS"}
