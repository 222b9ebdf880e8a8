#!/usr/bin/env bash
# Installs the dependencies, then configures, builds and tests the release preset, then
# builds the unit tests under AddressSanitizer + UBSan (LeakSanitizer on) and runs them:
# every module's except the kernel conformance sweep and the CLI end-to-end and doctor
# tests, which run the release binary.
# usage: scripts/test.sh [extra ctest arguments, e.g. -R Idx]
# NNFIT_JOBS overrides the parallelism (default: nproc); NNFIT_SKIP_SANITIZERS=1 skips
# the sanitizer pass.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
jobs=${NNFIT_JOBS:-$(nproc)}

scripts/setup.sh
cmake --preset release
cmake --build --preset release -j "$jobs"
ctest --preset release -j "$jobs" "$@"

if [[ "${NNFIT_SKIP_SANITIZERS:-0}" != 1 && $# -eq 0 ]]; then
  sanitized=(nnfit_core_tests nnfit_memory_tests nnfit_io_tests nnfit_data_tests nnfit_graph_tests nnfit_nn_tests
             nnfit_model_tests nnfit_profile_tests)
  cmake --preset asan-ubsan
  cmake --build --preset asan-ubsan -j "$jobs" --target "${sanitized[@]}"
  for t in "${sanitized[@]}"; do
    echo "== $t (ASan + UBSan)"
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 "build/asan-ubsan/tests/$t" --gtest_brief=1
  done
fi
