#!/usr/bin/env bash
# Makes (once) and prints the Python of a benchmark peer, so the benches measure the
# current PyTorch and Keras from PyPI, not whatever a machine happens to have:
#   scripts/peer_venvs.sh torch   PyTorch 2.x (the reference peer; ~5 GB with the CUDA
#                                 libraries PyPI's default wheel brings, unused on a CPU)
#   scripts/peer_venvs.sh keras   TensorFlow's CPU build + Keras 3 (scripts/keras_venv.sh,
#                                 the venv the Keras interop tests use)
# Venvs live outside the checkout (NNFIT_TORCH_VENV, default
# ${XDG_CACHE_HOME:-~/.cache}/nnfit/venvs/torch2) and are reused while the pins match.
# scripts/pinned_venv.sh makes them, with Debian's /usr/bin/python3 (python3-venv).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
case "${1:-}" in
  keras) exec "$here/keras_venv.sh" ;;
  torch) ;;
  *) echo "usage: scripts/peer_venvs.sh torch|keras (prints the peer's Python, making its venv once)" >&2; exit 2 ;;
esac
exec "$here/pinned_venv.sh" "${NNFIT_TORCH_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/nnfit/venvs/torch2}" \
  "torch==2.15.0 numpy" "about 5 GB"
