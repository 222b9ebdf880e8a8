#!/usr/bin/env bash
# Makes (once) and prints the path of the Python that the Keras interop tests use: a venv
# with Keras 3, tf-keras (Keras 2 files) and TensorFlow's CPU build from PyPI, kept outside
# the checkout (NNFIT_KERAS_VENV, default ~/.cache/nnfit/venvs/keras) and reused while the
# pinned versions match (scripts/pinned_venv.sh).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
exec "$here/pinned_venv.sh" "${NNFIT_KERAS_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/nnfit/venvs/keras}" \
  "keras==3.15.1 tf-keras==2.21.0 tensorflow-cpu==2.21.0 h5py numpy"
