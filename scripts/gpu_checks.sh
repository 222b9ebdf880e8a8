# shellcheck shell=bash
# The checks of a first GPU run, shared by scripts/gpu_first_run.sh (a build tree, ctest)
# and the GPU bundle's run.sh (scripts/gpu_bundle.sh: test binaries run directly). Sourced,
# not run. Each check is one command whose output goes to a log, and one row of a markdown
# table, OUT/summary.md, that is rewritten after every check (with the check running now),
# so a run cut short still says how far it got (docs/gpu_bundle.md, "summary.md").
#
# The caller sets, before gc_init:
#   GC_OUT          folder for summary.md and the logs
#   GC_PY           a Python 3 for the metrics checks (default: python3)
#   GC_STAGE_LOGS   1: one log per stage (OUT/<stage>.log, checks appended, so a run leaves
#                   a handful of files); 0 (default): one log per check (OUT/NN-<name>.log)
#   GC_LOG_CAP      bytes a check may leave in its log (default 4 MiB): the rest of a longer
#                   output is cut from its middle, its head and tail kept
#   GC_KEEP_GOING   1: a failed check is recorded and the run goes on; 0 (default): stop

gc_init() {  # gc_init TITLE FACTS_MARKDOWN
  GC_TITLE=$1
  GC_FACTS=$2
  export GC_PY=${GC_PY:-python3}
  GC_STAGE_LOGS=${GC_STAGE_LOGS:-0}
  GC_LOG_CAP=${GC_LOG_CAP:-4194304}
  GC_KEEP_GOING=${GC_KEEP_GOING:-0}
  GC_ROWS=""
  GC_N=0
  GC_PASSED=0
  GC_FAILED=0
  GC_STAGE=""
  GC_STARTED=$(date -u +%FT%TZ)
  GC_T0=$(date +%s)
  mkdir -p "$GC_OUT"
  gc_write_summary "starting"
}

# gc_write_summary STATUS: summary.md = header, facts, the table so far, and STATUS.
gc_write_summary() {
  local tmp="$GC_OUT/.summary.md.tmp"
  {
    printf '# %s\n\n' "$GC_TITLE"
    printf -- '- started: %s; elapsed: %ss\n' "$GC_STARTED" "$(($(date +%s) - GC_T0))"
    [ -n "$GC_FACTS" ] && printf '%s\n' "$GC_FACTS"
    printf '\n| # | stage | check | result | seconds | detail |\n|---:|---|---|---|---:|---|\n'
    printf '%s' "$GC_ROWS"
    printf '\n**Status:** %s\n' "$1"
  } > "$tmp" && mv "$tmp" "$GC_OUT/summary.md"
}

gc_stage() {  # gc_stage NAME: the stage the following checks belong to (and their log)
  GC_STAGE=$1
}

# gc_row NAME RESULT SECONDS DETAIL: a row of the table (also for what was not run).
gc_row() {
  local detail=${4//|/\\|}
  GC_ROWS+=$(printf '| %s | %s | %s | %s | %s | %s |' "${GC_N:--}" "${GC_STAGE:--}" "$1" "$2" "$3" "${detail//$'\n'/ }")
  GC_ROWS+=$'\n'
}

gc_note() {  # gc_note NAME TEXT: a row for something not run, and why
  local n=$GC_N
  GC_N="-"
  gc_row "$1" "not run" "" "$2"
  GC_N=$n
  gc_write_summary "running"
}

# gc_log NAME: the log file a check writes to.
gc_log() {
  if [ "$GC_STAGE_LOGS" = 1 ]; then
    printf '%s/%s.log' "$GC_OUT" "${GC_STAGE:-checks}"
  else
    printf '%s/%02d-%s.log' "$GC_OUT" "$GC_N" "$1"
  fi
}

# gc_append_capped FILE LOG: FILE appended to LOG, cut in the middle past GC_LOG_CAP bytes.
gc_append_capped() {
  local size half
  size=$(wc -c < "$1")
  if [ "$size" -le "$GC_LOG_CAP" ]; then
    cat "$1" >> "$2"
  else
    half=$((GC_LOG_CAP / 2))
    { head -c "$half" "$1"
      printf '\n[... %d bytes cut by the runner (GC_LOG_CAP=%d) ...]\n' "$((size - 2 * half))" "$GC_LOG_CAP"
      tail -c "$half" "$1"; } >> "$2"
  fi
}

# gc_detail LOG: one line for the summary's detail column: the last line the command printed
# starting with "detail: ", else gtest's or ctest's counts, else its first line that says
# "error", else its last line.
gc_detail() {
  local d
  d=$(grep -a '^detail: ' "$1" | tail -n 1 | cut -c9-)
  if [ -z "$d" ]; then
    d=$(grep -a -E '^\[  PASSED  \] [0-9]+ test|^\[  FAILED  \] [0-9]+ test|^\[  SKIPPED \] [0-9]+ test|tests passed, [0-9]+ tests failed' "$1" |
        tr '\n' ' ' | sed 's/\[ *\([A-Z]*\) *\]/\1/g; s/, listed below://g')
  fi
  [ -z "$d" ] && d=$(grep -a -m 1 'error' "$1")
  [ -z "$d" ] && d=$(grep -a -v '^ *$' "$1" | tail -n 1)
  printf '%s' "$d" | cut -c1-300
}

# gc_check NAME MEANING TIMEOUT_S CMD...: runs CMD (killed after TIMEOUT_S seconds) with its
# output in the log. It fails on a non-zero exit, a test that skipped (here a skip is a
# failure: the point is to run the device tests), or a test filter that matched nothing.
# Returns CMD's code (77 a skip, 78 no test ran, 124 a timeout); exits the script on a
# failure unless GC_KEEP_GOING=1. CMD may be a shell function.
gc_check() {
  local name=$1 meaning=$2 limit=$3
  shift 3
  GC_N=$((GC_N + 1))
  local log raw t0 code seconds why detail
  log=$(gc_log "$name")
  raw=$(mktemp "${TMPDIR:-/tmp}/nnfit-check.XXXXXX")
  gc_write_summary "running check $GC_N ($name) since $(date -u +%TZ), timeout ${limit}s"
  echo "== $GC_N. $name: $*"
  t0=$(date +%s)
  # timeout runs programs: a shell function (gc_metrics, a caller's own) runs in a bash that
  # is given every function of this one (its variables must be exported). timeout signals
  # the whole process group, so nnfit under `bash -c` goes too.
  if declare -F "$1" > /dev/null; then
    timeout -k 10 "$limit" bash -c "$(declare -f)"$'\n''"$@"' gc_check "$@" > "$raw" 2>&1
  else
    timeout -k 10 "$limit" "$@" > "$raw" 2>&1
  fi
  code=$?
  seconds=$(($(date +%s) - t0))
  if [ $code -eq 0 ] && grep -a -q '\*\*\*Skipped\|^\[  SKIPPED \]' "$raw"; then
    code=77
  elif [ $code -eq 0 ] && grep -a -q '^\[==========\] 0 tests from\|^No tests were found' "$raw"; then
    code=78
  fi
  { printf '\n===== check %s: %s (stage %s)\n===== command: %s\n' "$GC_N" "$name" "${GC_STAGE:--}" "$*"
    gc_append_capped "$raw" /dev/stdout
    printf '===== exit %d after %ds\n' "$code" "$seconds"; } >> "$log"
  detail=$(gc_detail "$raw")
  if [ $code -eq 0 ]; then
    GC_PASSED=$((GC_PASSED + 1))
    gc_row "$name" "passed" "$seconds" "$detail"
    echo "passed ($seconds s) $detail"
  else
    case $code in
      77) why="a test skipped" ;;
      78) why="no test matched" ;;
      124 | 137) why="timed out after ${limit}s" ;;
      *) why="exit $code" ;;
    esac
    GC_FAILED=$((GC_FAILED + 1))
    gc_row "$name" "**FAILED** ($why)" "$seconds" "$meaning${detail:+ — $detail}"
    echo "FAILED ($why): $meaning"
    echo "--- last lines of $log:"
    tail -n 25 "$raw"
  fi
  rm -f "$raw"
  if [ $code -ne 0 ] && [ "$GC_KEEP_GOING" != 1 ]; then
    gc_finish
    exit 1
  fi
  gc_write_summary "running"
  return $code
}

# gc_finish: the summary's last status line; returns 0 when no check failed.
gc_finish() {
  local status="finished: $GC_PASSED passed, $GC_FAILED failed"
  [ "$GC_FAILED" -eq 0 ] && status+=" (every check passed)"
  gc_write_summary "$status, $(($(date +%s) - GC_T0))s in all"
  echo "$status; summary: $GC_OUT/summary.md"
  [ "$GC_FAILED" -eq 0 ]
}

# gc_metrics METRICS_JSON MIN_VAL_ACCURACY [DEVICE]: a training run's metrics (nnfit train
# --metrics-json) checked: on DEVICE (default: a CUDA device), above the accuracy. Prints
# a detail line.
gc_metrics() {
  "$GC_PY" - "$1" "$2" "${3:-cuda:}" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
e = m["epochs"][-1]
print(json.dumps(m, indent=1)[:20000])
assert m["device"]["name"].startswith(sys.argv[3]), "trained on " + m["device"]["name"] + ": " + m["device"].get("reason", "")
print("detail: device %s, val_accuracy %.4f, loss %.4f, %.0f samples/s" % (m["device"]["name"], e["val_accuracy"], e["loss"], e["samples_per_s"]))
assert e["val_accuracy"] > float(sys.argv[2]), "val_accuracy %s <= %s" % (e["val_accuracy"], sys.argv[2])
EOF
}

# gc_same_loss A_JSON B_JSON: the last epochs' losses of two runs agree to float rounding
# (graphs on and off: a captured step must compute what the step launched directly does).
gc_same_loss() {
  "$GC_PY" - "$1" "$2" <<'EOF'
import json, sys
a = json.load(open(sys.argv[1]))["epochs"][-1]
b = json.load(open(sys.argv[2]))["epochs"][-1]
print("detail: loss %.6f vs %.6f; %.0f vs %.0f samples/s" % (a["loss"], b["loss"], a["samples_per_s"], b["samples_per_s"]))
sys.exit(0 if abs(a["loss"] - b["loss"]) <= 1e-3 * (1 + abs(b["loss"])) else 1)
EOF
}

# gc_gpu_count NNFIT: how many GPUs `nnfit doctor --json` lists (0 when it cannot say).
gc_gpu_count() {
  "$1" doctor --json 2>/dev/null |
    "$GC_PY" -c "import json,sys; print(len(json.load(sys.stdin)['facts'].get('gpus') or []))" 2>/dev/null || echo 0
}
