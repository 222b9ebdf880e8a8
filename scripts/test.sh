#!/usr/bin/env bash
# Installs the dependencies, then configures, builds and tests the release preset, then
# `pip install .` of the Python package and its tests against the installed copy. Then one
# clang build under AddressSanitizer + UBSan (LeakSanitizer on; the fuzz preset) runs the
# unit tests of every module except the kernel conformance sweep and the CLI end-to-end and
# doctor tests (which run the release binary), and last the libFuzzer targets from the same
# objects (scripts/fuzz.sh) for a bounded time each from their seed corpora; any crash,
# hang, leak or undefined behaviour fails.
# usage: scripts/test.sh [extra ctest arguments, e.g. -R Idx]
# NNFIT_JOBS overrides the parallelism (default: nproc); NNFIT_SKIP_SANITIZERS=1 skips
# the sanitizer pass; NNFIT_SKIP_PIP=1 the pip install test; NNFIT_SKIP_FUZZ=1 the fuzzing;
# NNFIT_FUZZ_SECONDS caps its time per
# target (default 12), NNFIT_FUZZ_RUNS and NNFIT_FUZZ_SEED set its inputs (4000, seed 1).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
jobs=${NNFIT_JOBS:-$(nproc)}

scripts/setup.sh
# Unity builds compile sources generated inside each build directory (Note [Unity
# builds]); paths under build/ hashed relative to the directory a compile runs in let
# `pip install .` below (build/pip/TAG) reuse the release build's objects through ccache.
export CCACHE_BASEDIR="$PWD/build"
# The CUDA plugin and its host-run kernel tests wherever a toolkit is, GPU or not.
cuda=()
[[ -x "${CUDAToolkit_ROOT:-/usr/local/cuda}/bin/nvcc" ]] || command -v nvcc > /dev/null && cuda=(-DNNFIT_WITH_CUDA=ON)
cmake --preset release "${cuda[@]}"
cmake --build --preset release -j "$jobs"
ctest --preset release -j "$jobs" "$@"

# The Python package as users install it: `pip install .` into a fresh venv, its tests
# from outside the source tree (NNFIT_SKIP_PIP=1 skips it; it needs PyPI for the build
# backend, and reuses the release build's objects through ccache).
if [[ "${NNFIT_SKIP_PIP:-0}" != 1 && $# -eq 0 ]]; then
  scripts/python_install_test.sh
fi

# One clang build (the fuzz preset, build/fuzz: ASan + UBSan with UB fatal, LeakSanitizer
# on) serves both last stages: first the unit tests of every module but the kernel sweep
# and the CLI's end-to-end tests, then the libFuzzer targets (which only link against it).
if [[ "${NNFIT_SKIP_SANITIZERS:-0}" != 1 && $# -eq 0 ]]; then
  sanitized=(nnfit_core_tests nnfit_memory_tests nnfit_io_tests nnfit_data_tests nnfit_graph_tests nnfit_nn_tests
             nnfit_model_tests nnfit_engine_tests nnfit_profile_tests nnfit_dist_tests nnfit_fuzz_tests)
  cmake --preset fuzz
  cmake --build --preset fuzz -j "$jobs" --target "${sanitized[@]}"
  for t in "${sanitized[@]}"; do
    echo "== $t (ASan + UBSan)"
    ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:suppressions=$PWD/scripts/asan.supp \
      LSAN_OPTIONS=suppressions=$PWD/scripts/lsan.supp \
      UBSAN_OPTIONS=print_stacktrace=1 "build/fuzz/tests/$t" --gtest_brief=1
  done
fi

if [[ "${NNFIT_SKIP_FUZZ:-0}" != 1 && $# -eq 0 ]]; then
  # Every target (docs/fuzzing.md) from a fixed seed and input count: the same commit fuzzes
  # the same inputs on every run; the time cap keeps the stage within a few minutes.
  NNFIT_FUZZ_SEED=${NNFIT_FUZZ_SEED:-1} NNFIT_FUZZ_RUNS=${NNFIT_FUZZ_RUNS:-4000} \
    scripts/fuzz.sh all "${NNFIT_FUZZ_SECONDS:-12}"
fi
