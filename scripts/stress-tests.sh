#!/usr/bin/env bash
# Run the test suite several times in a row beside a CPU hog that keeps every core busy: a test
# that waits on time, ports or processes instead of events fails here. Any failure is a bug to fix,
# never a run to retry.
#
#   scripts/stress-tests.sh                                   # the whole suite, 5 times, under load
#   scripts/stress-tests.sh --runs 2 tests/runner/test_lifecycle.py   # a selection (pytest arguments)
#
# One line per run (passed or FAILED, pytest's summary, minutes), the failures' names, then a
# summary; each run's whole output is kept in data/stress/run-<n>.log ($STRESS_LOG_DIR). Exit 1 if any run failed.
set -uo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
  -h|--help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;  # the lines above, without a run
esac
runs=5
if [ "${1:-}" = "--runs" ]; then runs="$2"; shift 2; fi
cores=${STRESS_HOGS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}  # busy loops: one per CPU
logs=${STRESS_LOG_DIR:-data/stress}
mkdir -p "$logs"

hogs=()
stop_hogs() {
  [ "${#hogs[@]}" -gt 0 ] && kill "${hogs[@]}" 2>/dev/null
  wait 2>/dev/null
}
trap stop_hogs EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
for _ in $(seq "$cores"); do
  ( trap - INT TERM; while :; do :; done ) &   # a busy loop per core, at the tests' own priority
  hogs+=("$!")
done
echo "stress: $runs run(s) of ./test.sh $* beside $cores busy loop(s)"

failed=0
for run in $(seq "$runs"); do
  started=$(date +%s)
  ./test.sh -q -p no:cacheprovider "$@" > "$logs/run-$run.log" 2>&1
  code=$?
  minutes=$(awk -v s="$(( $(date +%s) - started ))" 'BEGIN { printf "%.1f", s / 60 }')
  summary=$(grep -E '^(=+ )?[0-9]+ (passed|failed|error)' "$logs/run-$run.log" | tail -1 | tr -d '=' | xargs)
  if [ "$code" -eq 0 ]; then
    echo "run $run/$runs: passed ($summary) in $minutes min"
  else
    failed=$((failed + 1))
    echo "run $run/$runs: FAILED, exit $code (${summary:-no summary}) in $minutes min; output: $logs/run-$run.log"
    grep -E '^(FAILED|ERROR) ' "$logs/run-$run.log" | sed 's/^/  /'
    grep -A20 '^LEFT BEHIND' "$logs/run-$run.log" | sed 's/^/  /'
  fi
done
echo "stress: $((runs - failed)) of $runs run(s) passed under load"
[ "$failed" -eq 0 ]
