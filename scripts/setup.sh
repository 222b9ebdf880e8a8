#!/usr/bin/env bash
# Installs every dependency nnfit needs to build, test and run, from Debian packages
# (bookworm or newer). Idempotent and non-interactive: when everything is already installed
# it only checks and prints the summary. Runs as root, or as a user with sudo.
#
# usage: scripts/setup.sh [--peers] [--update]
#   --peers   also make the benchmark peers' venvs (scripts/peer_venvs.sh): PyTorch 2.x (the
#             reference) and TensorFlow + Keras 3 from PyPI, cached outside the checkout
#   --update  run apt-get update even if nothing is missing
set -euo pipefail

PACKAGES=(
  build-essential g++ cmake ninja-build ccache pkg-config
  libdnnl-dev           # oneDNN (CPU backend); OpenMP is GCC's libgomp, part of g++
  ocl-icd-opencl-dev    # Debian's oneDNN is built with its OpenCL GPU runtime: dnnl-config.cmake
                        # calls find_package(OpenCL REQUIRED), and libdnnl-dev only recommends it
  zlib1g-dev            # gzip in io (IDX, TFRecord)
  libjpeg62-turbo-dev libpng-dev  # JPEG/PNG decoding in io (image folders)
  libhdf5-dev           # HDF5 C library: Keras's .h5 and model.weights.h5 (io)
  libzip-dev            # zip containers: Keras 3's .keras files (io)
  libopenmpi-dev openmpi-bin  # Open MPI: data-parallel training (`mpirun -np N nnfit train`), dist module
  clang-14 libclang-rt-14-dev  # libFuzzer targets (scripts/fuzz.sh): clang and its fuzzer/sanitizer runtimes
  nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  dataset-fashion-mnist # /usr/share/datasets/fashion-mnist
  python3
  python3-dev pybind11-dev  # the Python package's extension (python/, nnfit._nnfit)
  python3-numpy python3-pytest  # its tests (tests/python, ctest -L python) with Debian's python3
  python3-pil libturbojpeg0     # keras.utils' images (Pillow) and TensorFlow's JPEG decoding (image_dataset_from_directory)
  python3-venv          # tests/profile/tensorboard_reads_test.py makes ~/.venvs/tb (tensorboard from PyPI) itself
  chromium              # headless, renders the `nnfit profile --html` report in tests/e2e/html_report_browser.cpp
  graphviz              # `dot`, which keras.utils.plot_model draws with (tests/python/test_plot_model.py)
)
PEER_PACKAGES=(python3-venv)
PEERS=0
FORCE_UPDATE=0
for arg in "$@"; do
  case "$arg" in
    --peers) PEERS=1 ;;
    --update) FORCE_UPDATE=1 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown option '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

export DEBIAN_FRONTEND=noninteractive
if [[ $(id -u) -eq 0 ]]; then
  SUDO=()
elif command -v sudo >/dev/null 2>&1; then
  SUDO=(sudo DEBIAN_FRONTEND=noninteractive)
else
  echo "setup.sh: needs root or sudo to install Debian packages" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "setup.sh: apt-get not found; nnfit's setup expects Debian (bookworm or newer)" >&2
  exit 1
fi

wanted=("${PACKAGES[@]}")
((PEERS)) && wanted+=("${PEER_PACKAGES[@]}")

is_installed() {
  [[ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null || true)" == installed ]]
}
has_candidate() {
  local cand
  cand=$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ {print $2}')
  [[ -n "$cand" && "$cand" != "(none)" ]]
}

missing=()
for p in "${wanted[@]}"; do is_installed "$p" || missing+=("$p"); done

unavailable=()
if ((${#missing[@]} > 0 || FORCE_UPDATE)); then
  echo "==> apt-get update"
  "${SUDO[@]}" apt-get update -q
  installable=()
  for p in "${missing[@]}"; do
    if has_candidate "$p"; then installable+=("$p"); else unavailable+=("$p"); fi
  done
  if ((${#installable[@]} > 0)); then
    echo "==> apt-get install ${installable[*]}"
    "${SUDO[@]}" apt-get install -y --no-install-recommends "${installable[@]}"
  fi
fi

# Peers: the venvs belong to the user who asked for them, also when this runs under sudo.
VENV_USER=$(id -un)
if [[ $(id -u) -eq 0 && -n "${SUDO_USER:-}" ]]; then VENV_USER=$SUDO_USER; fi
as_venv_user() {
  if [[ "$VENV_USER" == "$(id -un)" ]]; then "$@"; else sudo -u "$VENV_USER" -H "$@"; fi
}
if ((PEERS)); then
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  for peer in torch keras; do
    echo "==> benchmark peer $peer: $(as_venv_user "$here/peer_venvs.sh" "$peer")"
  done
fi

# Summary, llm.c style: one line per thing we need, ✓ or ✗ with what to do.
fail=0
ok() { printf '  \u2713 %s\n' "$1"; }
bad() { printf '  \u2717 %s\n' "$1"; fail=1; }
echo "nnfit setup summary:"
for p in "${wanted[@]}"; do
  if is_installed "$p"; then
    ok "$p $(dpkg-query -W -f='${Version}' "$p")"
  elif [[ " ${unavailable[*]} " == *" $p "* ]]; then
    bad "$p: no such package in the configured apt sources (enable Debian main, bookworm or newer)"
  else
    bad "$p: not installed (see the apt-get output above)"
  fi
done
cmake_version=$(cmake --version 2>/dev/null | awk 'NR==1 {print $3}')
if [[ -n "$cmake_version" ]] && printf '3.25\n%s\n' "$cmake_version" | sort -V -C; then
  ok "cmake $cmake_version (>= 3.25)"
else
  bad "cmake ${cmake_version:-missing}: nnfit needs >= 3.25 (CMakePresets v6)"
fi
if [[ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]]; then
  ok "Fashion-MNIST in /usr/share/datasets/fashion-mnist"
else
  bad "Fashion-MNIST missing from /usr/share/datasets/fashion-mnist (package dataset-fashion-mnist)"
fi
if ((PEERS)); then
  for check in "torch:import torch; print(torch.__version__):PyTorch" \
               "keras:import tensorflow as tf, keras; print(tf.__version__, keras.__version__):TensorFlow + Keras"; do
    IFS=: read -r peer code label <<< "$check"
    py=$(as_venv_user "$here/peer_venvs.sh" "$peer" 2>/dev/null || true)
    if [[ -n "$py" ]] && v=$(as_venv_user "$py" -c "$code" 2>/dev/null); then
      ok "$label $v in ${py%/bin/python}"
    else
      bad "$label: the venv of scripts/peer_venvs.sh $peer cannot import it (rerun with --peers)"
    fi
  done
fi
if ((fail)); then
  echo "setup.sh: some dependencies are missing (✗ above)" >&2
  exit 1
fi
echo "setup.sh: all dependencies present"
