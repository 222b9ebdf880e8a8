#!/usr/bin/env bash
# Makes the GPU bundle (docs/gpu_bundle.md): a self-contained folder that runs nnfit's first
# GPU checks on a lent machine with an NVIDIA GPU, the driver, a CUDA 13 toolkit and a
# Python with NVIDIA's nvidia-* wheels, but no Debian packages and no network. It carries
# nnfit, its plugins and the device test binaries built for sm_90 + compute_90 PTX (preset
# gpu-bundle, run paths $ORIGIN/../lib), every shared library they load except the C
# runtime and CUDA's own (run.sh finds those on the machine), the examples, Fashion-MNIST,
# the source tree (git archive of HEAD) and run.sh. The key decision: everything but the
# data and run.sh travels as one xz tarball, since oneDNN alone is 40 MB uncompressed and
# the whole folder must stay under 64 MiB.
#
# usage: scripts/gpu_bundle.sh [OUT_DIR]      (default gpu-bundle/, git-ignored)
#   NNFIT_BUNDLE_BUILD=DIR   use this configured build tree instead of build/gpu-bundle
#   NNFIT_BUNDLE_NO_BUILD=1  do not (re)build: package what the build tree holds
#   NNFIT_BUNDLE_WHEEL=FILE  also carry this wheel (wheel/), see docs/gpu_bundle.md
# Exit: 0 with the folder made and under the limit; 1 otherwise.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$(realpath -m "${1:-$repo/gpu-bundle}")
build=$(realpath -m "${NNFIT_BUNDLE_BUILD:-$repo/build/gpu-bundle}")
limit_bytes=$((64 * 1024 * 1024))
# What the bundle runs: the CLI, the plugins it loads, and the gtest binaries holding the
# device tests (CudaDevice.* ops and CudaDeviceVendor.* in nnfit_cuda_host_tests; the
# allocator and streams in nnfit_backend_tests; NCCL over one rank in nnfit_dist_tests).
executables=(nnfit tests/nnfit_cuda_host_tests tests/nnfit_backend_tests tests/nnfit_dist_tests)
plugins=(libnnfit_cuda.so libnnfit_nccl.so libnnfit_mpi.so)

# Not carried: the C runtime (glibc's libraries and the loader, which must match the
# machine's kernel and each other) and CUDA's libraries and the driver's (run.sh finds them
# in the machine's toolkit and its Python's nvidia-* wheels). libgomp is carried in lib/
# (OpenMP's runtime goes with the compiler that built the code). libstdc++ and libgcc_s are
# carried in lib/gcc/, which no run path names: Debian 12's libstdc++ needs glibc 2.36
# (arc4random) where nnfit itself needs 2.34, so run.sh uses the machine's libstdc++ (Ubuntu
# 22.04's and newer have the GLIBCXX_3.4.30 nnfit needs) and falls back to lib/gcc/ only
# where that one is too old.
not_carried='^(linux-vdso|ld-linux|libc|libm|libmvec|libpthread|libdl|librt|libresolv|libutil|libanl|libnsl|libBrokenLocale|libnss_[a-z]*)\.so'
cuda_libs='^(libcuda|libcudart|libcublas|libcublasLt|libcudnn[a-z_]*|libnccl|libnvrtc[a-z-]*|libnvJitLink|libcupti|libnvidia-[a-z-]*)\.so'

if [[ -z ${NNFIT_BUNDLE_NO_BUILD:-} ]]; then
  if [[ -z ${NNFIT_BUNDLE_BUILD:-} ]]; then
    (cd "$repo" && { [[ -f $build/CMakeCache.txt ]] || cmake --preset gpu-bundle; } && cmake --build --preset gpu-bundle)
  else
    cmake --build "$build" -j 2 --target nnfit nnfit_cuda nnfit_nccl nnfit_mpi nnfit_cuda_host_tests \
      nnfit_backend_tests nnfit_dist_tests
  fi
fi
for f in "${executables[@]}" libnnfit_cuda.so; do
  [[ -f $build/$f ]] || { echo "gpu_bundle: $build/$f not built" >&2; exit 1; }
done
grep -q '^CMAKE_CUDA_ARCHITECTURES:.*=90$' "$build/CMakeCache.txt" ||
  echo "gpu_bundle: warning: $build is not built for CMAKE_CUDA_ARCHITECTURES=90 (preset gpu-bundle)" >&2

rm -rf "$out"
mkdir -p "$out"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/nnfit
mkdir -p "$root/bin" "$root/lib/nnfit" "$root/share/nnfit/compat" "$root/examples"
for f in "${executables[@]}"; do
  strip -o "$root/bin/$(basename "$f")" "$build/$f"
done
for p in "${plugins[@]}"; do
  [[ -f $build/$p ]] && strip -o "$root/lib/nnfit/$p" "$build/$p"
done
cp "$repo"/data/compat/*.csv "$root/share/nnfit/compat/"
cp "$repo"/examples/*.json "$root/examples/"
# The recipe of this build, for rebuilding the CUDA plugin there with its nvcc
# (docs/gpu_bundle.md, "A fix on the GPU machine").
cp "$build/compile_commands.json" "$root/share/nnfit/compile_commands.json"
mkdir -p "$root/scripts"
cp "$repo/scripts/gpu_bundle_torch_peer.py" "$repo/scripts/gpu_bundle_wheel_smoke.py" \
  "$repo/scripts/gpu_bundle_rebuild_cuda.py" "$root/scripts/"

# Every library the binaries and plugins load (ldd lists the whole closure), but the C
# runtime and CUDA's, copied under the name the loader asks for.
for elf in "$root"/bin/* "$root"/lib/nnfit/*.so; do
  ldd "$elf" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r name path; do
  if [[ $name =~ $not_carried || $name =~ $cuda_libs ]]; then continue; fi
  [[ -f $root/lib/$name ]] || cp -L "$path" "$root/lib/$name"
done
mkdir -p "$root/lib/gcc"
for l in libstdc++.so.6 libgcc_s.so.1; do
  [[ -f $root/lib/$l ]] && mv "$root/lib/$l" "$root/lib/gcc/$l"
done
missing=$(for elf in "$root"/bin/* "$root"/lib/nnfit/*.so; do ldd "$elf" | grep 'not found' || true; done | sort -u)
[[ -z $missing ]] || echo "gpu_bundle: warning: not found here: $missing" >&2

# The newest symbol versions the files need (run.sh compares with the machine's): of glibc
# for nnfit, the test binaries, the CUDA and NCCL plugins and the libraries they load; of
# glibc for the carried libstdc++ (lib/gcc/) and for the MPI plugin's libraries (never
# loaded on one GPU); of libstdc++ (GLIBCXX) for the binaries.
newest() {  # newest PREFIX FILES...: the newest PREFIX_x.y.z version the files need
  local prefix=$1
  shift
  for f in "$@"; do objdump -T "$f" 2> /dev/null | grep -o "${prefix}_[0-9.]*" || true; done | sort -u -V | tail -n 1 | cut -d_ -f2
}
closure() {  # closure ELF...: the carried libraries (paths) they load
  for elf in "$@"; do LD_LIBRARY_PATH=$root/lib:$root/lib/gcc ldd "$elf" | awk '$3 ~ /^\// {print $3}'; done |
    grep "^$root/lib/" | sort -u
}
main_elves=("$root"/bin/* "$root"/lib/nnfit/libnnfit_cuda.so)
[[ -f $root/lib/nnfit/libnnfit_nccl.so ]] && main_elves+=("$root/lib/nnfit/libnnfit_nccl.so")
mapfile -t main_libs < <(closure "${main_elves[@]}" | grep -v "^$root/lib/gcc/")
glibc_needed=$(newest GLIBC "${main_elves[@]}" "${main_libs[@]}")
glibcxx_needed=$(newest GLIBCXX "${main_elves[@]}" "${main_libs[@]}")
glibc_needed_gcc=$(newest GLIBC "$root"/lib/gcc/*)
glibc_needed_mpi=""
if [[ -f $root/lib/nnfit/libnnfit_mpi.so ]]; then
  mapfile -t mpi_libs < <(closure "$root/lib/nnfit/libnnfit_mpi.so" | grep -v "^$root/lib/gcc/")
  glibc_needed_mpi=$(newest GLIBC "${mpi_libs[@]}")
fi

describe=$(git -C "$repo" describe --always --dirty)
{
  echo "nnfit GPU bundle"
  echo "source: $describe ($(git -C "$repo" log -1 --format=%cI))"
  echo "made: $(date -u +%FT%TZ) on $(. /etc/os-release && echo "$PRETTY_NAME"), $(gcc --version | head -n 1)"
  echo "cuda_architectures: $(grep '^CMAKE_CUDA_ARCHITECTURES:' "$build/CMakeCache.txt" | cut -d= -f2)"
  echo "cuda_built_with: $(cat "$build"/CMakeFiles/*/CMakeCUDACompiler.cmake 2> /dev/null |
    sed -n 's/^set(CMAKE_CUDA_COMPILER_VERSION "\([0-9.]*\)")/\1/p' | head -n 1)"
  echo "build_id: $(sed -n 's/^NNFIT_BUILD_ID:[A-Z]*=//p' "$build/CMakeCache.txt")"
  echo "glibc_needed: $glibc_needed"
  echo "glibcxx_needed: $glibcxx_needed"
  echo "glibc_needed_with_carried_libstdcxx: $glibc_needed_gcc"
  echo "glibc_needed_by_mpi_plugin: $glibc_needed_mpi"
  echo "cuda_libraries_needed: $(for p in "$root"/lib/nnfit/*.so; do objdump -p "$p" | awk '/NEEDED/ {print $2}'; done |
    grep -E "$cuda_libs" | sort -u | tr '\n' ' ')"
  echo "carried_libraries: $(find "$root/lib" -maxdepth 1 -type f -printf '%f\n' | sort | tr '\n' ' ')"
  echo "carried_fallback_libraries: $(find "$root/lib/gcc" -type f -printf 'gcc/%f\n' | sort | tr '\n' ' ')"
} > "$root/MANIFEST"
cp "$root/MANIFEST" "$out/MANIFEST"

# The payload: -9 matters (oneDNN), -T2 keeps to this machine's share of the cores.
tar -C "$stage" -cf - nnfit | xz -9 -T2 > "$out/nnfit-payload.tar.xz"
git -C "$repo" archive --prefix=nnfit-source/ HEAD | xz -9 -T2 > "$out/nnfit-source.tar.xz"
mkdir -p "$out/data"
data=${FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
for f in train-images-idx3-ubyte.gz train-labels-idx1-ubyte.gz t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz; do
  cp "$data/$f" "$out/data/$f"
done
if [[ -n ${NNFIT_BUNDLE_WHEEL:-} ]]; then
  mkdir -p "$out/wheel"
  cp "$NNFIT_BUNDLE_WHEEL" "$out/wheel/"
fi
cp "$repo/scripts/gpu_bundle_run.sh" "$out/run.sh"
cp "$repo/scripts/gpu_checks.sh" "$out/gpu_checks.sh"
chmod +x "$out/run.sh"
(cd "$out" && shopt -s nullglob && sha256sum nnfit-payload.tar.xz nnfit-source.tar.xz data/* wheel/* > SHA256SUMS)

du -ab "$out" | sort -n | tail -n 12
total=$(du -sb "$out" | cut -f1)
printf 'gpu_bundle: %s: %d bytes (%s MiB) of %d allowed; unpacked payload %s; needs glibc >= %s and GLIBCXX_%s\n' "$out" "$total" \
  "$(awk -v b="$total" 'BEGIN {printf "%.1f", b / 1048576}')" "$limit_bytes" "$(du -sh "$root" | cut -f1)" "$glibc_needed" "$glibcxx_needed"
if [[ $total -gt $limit_bytes ]]; then
  echo "gpu_bundle: over the 64 MiB limit" >&2
  exit 1
fi
