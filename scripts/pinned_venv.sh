#!/usr/bin/env bash
# Makes (once) and prints the Python of a venv holding exactly the pinned PyPI packages:
#   scripts/pinned_venv.sh VENV "PKG==X PKG2==Y ..." [WHAT]
# The venv is reused while its pins match. One maker at a time (a lock beside VENV): tests
# run in parallel under ctest, and the second must wait for the first's venv, not find it
# half made. The pins are written last, so a venv cut off mid-install is made again
# (--clear) by the next run. Debian's /usr/bin/python3 makes it (python3-venv, setup.sh).
# WHAT (e.g. "about 5 GB") is added to the line saying it installs.
set -euo pipefail
venv=$1
want=$2
what=${3:-}
mkdir -p "$(dirname "$venv")"
exec 9>"$venv.lock"
flock 9
if [[ ! -x "$venv/bin/python" || "$(cat "$venv/.nnfit-pins" 2>/dev/null)" != "$want" ]]; then
  echo "$(basename "$0"): installing $want into $venv${what:+ ($what)}" >&2
  /usr/bin/python3 -m venv --clear "$venv" >&2
  # shellcheck disable=SC2086
  "$venv/bin/pip" install --quiet --disable-pip-version-check $want >&2
  echo "$want" > "$venv/.nnfit-pins"
fi
exec 9>&-
echo "$venv/bin/python"
