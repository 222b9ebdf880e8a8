#!/usr/bin/env bash
# The Python package as a user installs it: `pip install .` into a fresh venv (pip's build
# isolation fetches scikit-build-core and pybind11 from PyPI; NumPy comes as the package's
# declared dependency), then the package's tests run from outside the source tree against
# the installed copy. scripts/test.sh runs it after the release tests; the CMake build it
# makes (build/pip/) reuses the release build's objects through ccache (test.sh sets CCACHE_BASEDIR so the unity sources match).
# usage: scripts/python_install_test.sh        NNFIT_PIP_VENV: the venv (default build/pip-venv)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${NNFIT_PIP_VENV:-$repo/build/pip-venv}
rm -rf "$venv"
/usr/bin/python3 -m venv "$venv"
start=$(date +%s)
# scikit-build-core takes Python's compiler (x86_64-linux-gnu-g++) unless CXX says otherwise;
# the release build's (c++) gives the same command lines, so ccache serves its objects.
CC=${CC:-cc} CXX=${CXX:-c++} "$venv/bin/pip" install --quiet --disable-pip-version-check "$repo" pytest
echo "== pip install . took $(( $(date +%s) - start )) s"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
where=$("$venv/bin/python" -c "import nnfit, nnfit._nnfit; print(nnfit._nnfit.__file__)")
case "$where" in
  "$venv"/*) echo "== nnfit imported from $where" ;;
  *) echo "python_install_test: nnfit was imported from $where, not from the venv" >&2; exit 1 ;;
esac
"$venv/bin/python" -m pytest -q -p no:cacheprovider "$repo/tests/python"
