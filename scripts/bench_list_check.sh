#!/usr/bin/env bash
# Every bench binary, asked only to list its benchmarks (`--list`) or for
# its usage (`--help`), with its output piped into `head -1`, must print
# that line and end within a bound, with status 0: it starts no runtime and
# no background load for these, and a closed pipe ends it quietly (no
# panic, no hang; see harness::end_quietly_on_closed_pipe).
#
#   scripts/bench_list_check.sh            # builds the benches first
#
# A bench that runs past BENCH_LIST_TIMEOUT seconds (default 60) is killed
# and the check fails; so does one that panics or prints nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

limit=${BENCH_LIST_TIMEOUT:-60}
# The bench executables, from cargo's own account of what it built.
mapfile -t executables < <(
  cargo bench -p brigade-benches --no-run --locked --message-format=json 2>/dev/null |
    grep '"kind":\["bench"\]' |
    grep -o '"executable":"[^"]*"' |
    sed 's/^"executable":"//; s/"$//'
)
if [ "${#executables[@]}" -eq 0 ]; then
  echo "bench_list_check: cargo built no bench executables" >&2
  exit 1
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failed=0
for exe in "${executables[@]}"; do
  name=$(basename "$exe" | sed 's/-[0-9a-f]*$//')
  for flag in --list --help; do
    started=$(date +%s)
    set +e
    # cargo bench passes --bench; criterion expects it.
    timeout --kill-after=5 "$limit" "$exe" --bench "$flag" 2>"$scratch/err" | head -1 >"$scratch/out"
    status=${PIPESTATUS[0]}
    set -e
    took=$(($(date +%s) - started))
    problem=""
    case "$status" in
      0) ;; # done, or ended quietly by the closed pipe
      124 | 137) problem="still running after ${limit} s (killed)" ;;
      *) problem="exit status $status" ;;
    esac
    if grep -q 'panicked' "$scratch/err"; then
      problem="${problem:+$problem; }panicked: $(grep -m1 panicked "$scratch/err")"
    fi
    if [ ! -s "$scratch/out" ]; then
      problem="${problem:+$problem; }printed nothing"
    fi
    if [ -n "$problem" ]; then
      echo "FAIL $name $flag | head -1: $problem" >&2
      failed=1
    else
      echo "ok   $name $flag | head -1 (${took} s): $(cat "$scratch/out")"
    fi
  done
done
exit "$failed"
