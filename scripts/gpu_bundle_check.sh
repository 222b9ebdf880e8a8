#!/usr/bin/env bash
# Checks a GPU bundle (scripts/gpu_bundle.sh; docs/gpu_bundle.md) on a machine without a
# GPU, as far as that goes:
#   1. size: the folder as made, source included, is under 64 MiB;
#   2. run.sh, on a copy, ends within 30 s with a non-zero exit and a line saying no GPU
#      was found (it also unpacks the payload, which the next checks use);
#   3. ldd: every library the carried binaries, plugins and libraries load, with
#      LD_LIBRARY_PATH naming only the bundle (lib/ and lib/gcc/, the carried libstdc++ that
#      run.sh falls back to), resolves inside it, but the C runtime's and CUDA's;
#      and so do the carried wheel's extension and plugins, where the bundle has a wheel;
#   4. the carried nnfit trains one CPU epoch of the Fashion-MNIST MLP under `env -i` with a
#      minimal PATH and LD_LIBRARY_PATH holding only the bundle, and the libraries the
#      process maps (LD_DEBUG=libs) come from the bundle or the C runtime.
# usage: scripts/gpu_bundle_check.sh [BUNDLE_DIR]     (default gpu-bundle/)
# Exit: 0 when every check passed.
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bundle=$(realpath "${1:-$repo/gpu-bundle}")
c_runtime='^(linux-vdso|ld-linux-x86-64|libc|libm|libmvec|libpthread|libdl|librt|libresolv|libutil|libanl|libnsl|libBrokenLocale|libnss_[a-z]*)\.so'
cuda_libs='^(libcuda|libcudart|libcublas|libcublasLt|libcudnn[a-z_]*|libnccl|libnvrtc[a-z-]*|libnvJitLink|libcupti|libnvidia-[a-z-]*)\.so'
failed=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; failed=1; }

# 1. size
total=$(du -sb "$bundle" | cut -f1)
du -sh "$bundle" "$bundle"/* | sed 's/^/  /'
if [ "$total" -le $((64 * 1024 * 1024)) ]; then
  pass "size: $total bytes ($(awk -v b="$total" 'BEGIN {printf "%.1f", b / 1048576}') MiB) <= 64 MiB"
else
  fail "size: $total bytes > 64 MiB"
fi

# 2. run.sh on a copy, where no GPU is
copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
cp -r "$bundle" "$copy/bundle"
t0=$(date +%s.%N)
(cd "$copy" && timeout 60 ./bundle/run.sh "$copy/out") > "$copy/run.txt" 2>&1
code=$?
seconds=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
sed 's/^/  run.sh| /' "$copy/run.txt" | tail -n 20
echo "  run.sh exit $code after ${seconds}s; out/: $(ls "$copy/out" | tr '\n' ' ')"
if [ "$code" -ne 0 ] && [ "$code" -ne 124 ] && awk -v s="$seconds" 'BEGIN {exit !(s < 30)}' &&
   grep -q 'no NVIDIA GPU found' "$copy/run.txt" && grep -q 'no NVIDIA GPU found' "$copy/out/summary.md"; then
  pass "run.sh without a GPU: exit $code after ${seconds}s, says no GPU was found (stdout and summary.md)"
else
  fail "run.sh without a GPU: exit $code after ${seconds}s (wanted non-zero, < 30 s, 'no NVIDIA GPU found')"
fi
root=$copy/bundle/nnfit
[ -x "$root/bin/nnfit" ] || { fail "run.sh did not unpack $root/bin/nnfit"; exit 1; }

# 3. ldd with only the bundle on LD_LIBRARY_PATH
bad=0
checked=0
for elf in "$root"/bin/* "$root"/lib/nnfit/*.so "$root"/lib/*.so* "$root"/lib/gcc/*; do
  checked=$((checked + 1))
  while read -r name arrow path _; do
    [ "$arrow" = "=>" ] || continue
    [[ $name =~ $c_runtime || $name =~ $cuda_libs ]] && continue
    case $path in
      "$root"/*) ;;
      *) echo "  $elf: $name => $path"; bad=$((bad + 1)) ;;
    esac
  done < <(env -i LD_LIBRARY_PATH="$root/lib:$root/lib/gcc" /usr/bin/ldd "$elf" 2>&1)
done
if [ "$bad" -eq 0 ]; then
  pass "ldd: every library of $checked carried ELF files resolves inside the bundle (but the C runtime's and CUDA's)"
else
  fail "ldd: $bad libraries resolve outside the bundle"
fi
echo "  not carried, as ldd resolves them here: $(for elf in "$root"/bin/* "$root"/lib/nnfit/*.so; do
  env -i LD_LIBRARY_PATH="$root/lib:$root/lib/gcc" /usr/bin/ldd "$elf"; done | awk '$2 == "=>" {print $1}' | grep -E "$c_runtime|$cuda_libs" |
  sort -u | tr '\n' ' ')"

# 3b. the carried wheel's extension and plugins: their libraries are the bundle's too
wheel=$(find "$copy/bundle/wheel" -name 'nnfit-*.whl' 2> /dev/null | head -n 1)
if [ -n "$wheel" ]; then
  python3 -m zipfile -e "$wheel" "$copy/wheel"
  bad=0
  for elf in "$copy"/wheel/nnfit/*.so; do
    while read -r name arrow path _; do
      [ "$arrow" = "=>" ] || continue
      [[ $name =~ $c_runtime || $name =~ $cuda_libs ]] && continue
      case $path in "$root"/*) ;; *) echo "  $elf: $name => $path"; bad=$((bad + 1)) ;; esac
    done < <(env -i LD_LIBRARY_PATH="$root/lib:$root/lib/gcc" /usr/bin/ldd "$elf" 2>&1)
  done
  if [ "$bad" -eq 0 ]; then
    pass "ldd: the wheel's $(basename "$wheel") extension and plugins find every library in the bundle's lib/ (but the C runtime's and CUDA's)"
  else
    fail "ldd: $bad libraries of the wheel resolve outside the bundle"
  fi
fi

# 4. one CPU epoch with only the bundle
home=$copy/home
mkdir -p "$home"
env -i PATH=/usr/bin:/bin HOME="$home" LD_LIBRARY_PATH="$root/lib:$root/lib/gcc" FASHION_MNIST_DIR="$copy/bundle/data" LD_DEBUG=libs \
  LD_DEBUG_OUTPUT="$copy/ld" "$root/bin/nnfit" train "$root/examples/fashion_mnist_mlp.json" --device cpu --epochs 1 \
  --seed 1 --metrics-json "$copy/mlp.json" > "$copy/train.txt" 2>&1
code=$?
tail -n 3 "$copy/train.txt" | tr '\r' '\n' | tail -n 3 | sed 's/^/  nnfit| /'
outside=$(cat "$copy"/ld.* 2> /dev/null | sed -n 's/.*calling init: //p' | sort -u | while read -r lib; do
  case $lib in "$root"/*) ;; *) [[ $(basename "$lib") =~ $c_runtime ]] || echo "$lib" ;; esac
done)
loaded=$(cat "$copy"/ld.* 2> /dev/null | sed -n 's/.*calling init: //p' | sort -u | wc -l)
epoch=$(python3 -c "import json,sys; e=json.load(open(sys.argv[1]))['epochs'][-1]; print('loss %.4f accuracy %.4f val_accuracy %.4f, %.0f samples/s' % (e['loss'], e['accuracy'], e['val_accuracy'], e['samples_per_s']))" "$copy/mlp.json" 2> /dev/null)
if [ "$code" -eq 0 ] && [ -n "$epoch" ] && [ -z "$outside" ]; then
  pass "CPU epoch with only the bundle: $epoch; $loaded libraries mapped, none from outside the bundle but the C runtime"
else
  fail "CPU epoch with only the bundle: exit $code, metrics '${epoch}', libraries from outside: ${outside:-none}"
  tail -n 20 "$copy/train.txt"
fi
exit $failed
