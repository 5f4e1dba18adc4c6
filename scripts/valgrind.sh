#!/usr/bin/env bash
# Runs brigade's randomised operation-sequence test (crates/brigade/tests/
# random_ops/) under valgrind's memcheck: invalid reads and writes, uses of
# uninitialised memory, bad frees and leaks (definite and possible) fail the
# run. It builds the test binary with the stable toolchain (debug profile,
# target/valgrind), finds it from cargo's JSON output, and runs it under
# `valgrind --error-exitcode=1 --leak-check=full --fair-sched=yes`.
#
# valgrind runs the program's code 20-50x slower, one thread at a time, so
# the test runs fewer seeds (BRIGADE_RANDOM_OPS_SEEDS, default 150 here, of
# the test's 500) with a longer bound on each wait
# (BRIGADE_RANDOM_OPS_BOUND_SECS, default 120). The test mostly waits (on
# timers, sockets and threads), so the run is short: on a 2-core machine
# about 30 s to build from scratch (target/valgrind) and 30 s to run.
#
# Exits non-zero if the build, the test or valgrind fails (valgrind's own
# error exit code is 1; the test's failure is 101). Extra arguments go to the
# test binary (e.g. `--nocapture`).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v valgrind >/dev/null 2>&1; then
  echo "valgrind.sh: valgrind is not installed" >&2
  exit 1
fi

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target/valgrind}"
export BRIGADE_RANDOM_OPS_SEEDS="${BRIGADE_RANDOM_OPS_SEEDS:-150}"
export BRIGADE_RANDOM_OPS_BOUND_SECS="${BRIGADE_RANDOM_OPS_BOUND_SECS:-120}"

# Build, and take the test executable from cargo's build messages (one JSON
# object per line): the artifact of the test target named random_ops.
messages="$(cargo test -p brigade --locked --test random_ops --no-run --message-format=json)"
binary="$(printf '%s\n' "$messages" \
  | grep '"reason":"compiler-artifact"' \
  | grep '"name":"random_ops"' \
  | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p')"
if [[ -z "$binary" || "$(printf '%s\n' "$binary" | wc -l)" -ne 1 || ! -x "$binary" ]]; then
  echo "valgrind.sh: could not find the random_ops test executable in cargo's output (got: '$binary')" >&2
  exit 1
fi
echo "valgrind.sh: $binary, $BRIGADE_RANDOM_OPS_SEEDS seed(s)"

# --fair-sched=yes: valgrind runs one thread at a time; without a fair lock
#   the test's spinning background loops can keep the others off the CPU for
#   long stretches.
# --errors-for-leak-kinds=definite,possible: the default, spelled out; a
#   "still reachable" block (a global allocated once, such as std's or
#   tracing's) is not an error.
# --trace-children=no: the test starts no other programs.
# scripts/valgrind.supp: two "possibly lost" reports that are not leaks (std's
# current-thread handle, crossbeam-epoch's per-thread records), each
# explained there.
exec valgrind \
  --tool=memcheck \
  --suppressions=scripts/valgrind.supp \
  --error-exitcode=1 \
  --leak-check=full \
  --errors-for-leak-kinds=definite,possible \
  --show-leak-kinds=definite,possible \
  --fair-sched=yes \
  --trace-children=no \
  --num-callers=40 \
  "$binary" --test-threads=1 "$@"
