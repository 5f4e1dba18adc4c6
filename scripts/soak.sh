#!/usr/bin/env bash
# Soak test for brigade: builds the `soak` example in release mode and runs
# it (default 10 minutes) with an echo server, background CPU load and task
# churn on one runtime, printing RSS, fd and request figures as it goes and
# a PASS/FAIL verdict at the end (exit status 1 on FAIL). Flags are passed
# through, e.g. `scripts/soak.sh --minutes 30 --workers 4 --sample-secs 10`
# (`--help` lists them). Not part of CI: it is long-running and its memory
# figures depend on the machine.
#
# `scripts/soak.sh --kv [--minutes M] ...` instead soaks the `kv` example
# under redis-benchmark (30 minutes by default; see scripts/soak_kv.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-} == --kv ]]; then
    shift
    exec scripts/soak_kv.sh "$@"
fi
exec cargo run --release -p brigade-examples --example soak -- "$@"
