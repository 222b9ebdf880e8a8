#!/usr/bin/env bash
# Makes (once) and prints the path of the Python that the Keras interop tests use: a venv
# with Keras 3, tf-keras (Keras 2 files) and TensorFlow's CPU build from PyPI, kept outside
# the checkout (NNFIT_KERAS_VENV, default ~/.cache/nnfit/venvs/keras) and reused while the
# pinned versions match. Debian's /usr/bin/python3 makes the venv (python3-venv, setup.sh).
set -euo pipefail
venv=${NNFIT_KERAS_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/nnfit/venvs/keras}
want="keras==3.15.1 tf-keras==2.21.0 tensorflow-cpu==2.21.0 h5py numpy"
# One maker at a time: the interop tests run in parallel under ctest, and the second must
# wait for the first's venv, not find it half made. The pins are written last, so a venv
# cut off mid-install is made again (--clear) by the next run.
mkdir -p "$(dirname "$venv")"
exec 9>"$venv.lock"
flock 9
if [[ ! -x "$venv/bin/python" || "$(cat "$venv/.nnfit-pins" 2>/dev/null)" != "$want" ]]; then
  echo "keras_venv.sh: installing $want into $venv" >&2
  /usr/bin/python3 -m venv --clear "$venv" >&2
  # shellcheck disable=SC2086
  "$venv/bin/pip" install --quiet --disable-pip-version-check $want >&2
  echo "$want" > "$venv/.nnfit-pins"
fi
exec 9>&-
echo "$venv/bin/python"
