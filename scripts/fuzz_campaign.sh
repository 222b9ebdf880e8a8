#!/usr/bin/env bash
# A long fuzzing campaign (issue 20: at least 30 minutes per target): runs scripts/fuzz.sh
# for each TARGET given (default: all 13) for SECONDS each (default 1800), one after the
# other, and appends one row per target to build/fuzz/campaign.tsv:
#   target  seconds  executions  execs_per_s  cov  ft  corpus  findings  cpu_s  peak_rss_mb  finished_utc
# cov and ft are libFuzzer's edge and feature coverage at the end; findings counts the
# crash/leak/timeout/oom artifacts left in build/fuzz/findings/TARGET; cpu_s is the CPU
# time the fuzzer got (under `nice` on a shared machine it is less than `seconds`).
# Each target's whole output: build/fuzz/campaign-TARGET.log. Run it under `nice -n 19`
# beside other work, and start two chains with different targets to use both cores.
# usage: scripts/fuzz_campaign.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds=${1:-1800}
shift || true
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(idx npy npz csv tfrecord example image keras_json train_config tfevents profile doctor_root keras_file)
# Build every target once, then run them without rebuilding (two chains may run at once).
mkdir -p build/fuzz
(
  flock 9
  NNFIT_FUZZ_BUILD_ONLY=1 NNFIT_JOBS=${NNFIT_JOBS:-1} scripts/fuzz.sh "${targets[0]}" > /dev/null
  names=()
  for t in "${targets[@]}"; do names+=("nnfit_${t}_fuzzer"); done
  cmake --build build/fuzz -j "${NNFIT_JOBS:-1}" --target "${names[@]}" > /dev/null
) 9> build/fuzz/.build.lock
export NNFIT_FUZZ_NO_BUILD=1
# A campaign runs under `nice` beside other work, where an input that takes 2 s alone can
# take 20 s of wall time: a slow input is one past 2 minutes here (CI keeps 20 s).
export NNFIT_FUZZ_TIMEOUT=${NNFIT_FUZZ_TIMEOUT:-120}
table=build/fuzz/campaign.tsv
[[ -f "$table" ]] || printf 'target\tseconds\texecutions\texecs_per_s\tcov\tft\tcorpus\tfindings\tcpu_s\tpeak_rss_mb\tfinished_utc\n' > "$table"
for t in "${targets[@]}"; do
  log=build/fuzz/campaign-$t.log
  mkdir -p "build/fuzz/findings/$t"
  before=$(find "build/fuzz/findings/$t" -type f | wc -l)
  # libFuzzer exits non-zero on a finding; the row is still written, the chain goes on.
  /usr/bin/time -f 'cpu_s %U %S' -o "build/fuzz/campaign-$t.time" scripts/fuzz.sh "$t" "$seconds" > "$log" 2>&1 || true
  after=$(find "build/fuzz/findings/$t" -type f | wc -l)
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  field() { sed -nE "s|.*[[:space:]]$1: ([0-9]+[kMb]?).*|\1|p" <<< "$last"; }
  stat() { sed -nE "s/^stat::$1:[[:space:]]+([0-9]+).*/\1/p" "$log" | tail -1; }
  cpu=$(awk '/^cpu_s/ {printf "%.0f", $2 + $3}' "build/fuzz/campaign-$t.time" 2>/dev/null || echo "")
  execs=$(stat number_of_executed_units)
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "$seconds" "${execs:-?}" "$(field exec/s)" "$(field cov)" \
    "$(field ft)" "$(field corp)" "$((after - before))" "${cpu:-?}" "$(stat peak_rss_mb)" "$(date -u +%FT%TZ)" >> "$table"
done
