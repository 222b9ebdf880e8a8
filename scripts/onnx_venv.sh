#!/usr/bin/env bash
# Makes (once) and prints the path of the Python that checks nnfit's ONNX files
# (tests/python/test_onnx_export.py): a venv with onnxruntime and onnx (its checker) from
# PyPI, kept outside the checkout (NNFIT_ONNX_VENV, default ~/.cache/nnfit/venvs/onnx) and
# reused while the pinned versions match (scripts/pinned_venv.sh). About 60 MB.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
exec "$here/pinned_venv.sh" "${NNFIT_ONNX_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/nnfit/venvs/onnx}" \
  "onnxruntime==1.32.0 onnx==1.23.2 numpy" "about 60 MB"
