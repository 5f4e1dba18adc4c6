#!/usr/bin/env bash
# Runs brigade's randomised operation-sequence test (crates/brigade/tests/
# random_ops/) under AddressSanitizer, with its leak detector on, on the
# nightly toolchain: use-after-free, double free, buffer overflows and heap
# leaks anywhere in the runtime (tasks, wakers, JoinHandles, the blocking
# pool, the reactor) fail the run, with the report on stderr.
#
# On a 2-core machine: about 40 s to build from scratch (target/asan), then
# about 15 s to run the test's default 500 seeds (ASan costs it under 2x:
# the test mostly waits on timers, sockets and threads).
#
# Prints "ASan run skipped: no nightly toolchain" and exits 0 when
# `cargo +nightly` is not available. Otherwise exits non-zero if the build,
# the test or ASan fails.
#
# Environment: BRIGADE_RANDOM_OPS_SEEDS, BRIGADE_RANDOM_OPS_SEED and the test's
# other variables (see the top of random_ops/main.rs) pass through; ASAN_OPTIONS
# is extended, not replaced. Extra arguments go to the test binary (e.g.
# `--nocapture`).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! cargo +nightly --version >/dev/null 2>&1; then
  echo "ASan run skipped: no nightly toolchain"
  exit 0
fi

# An explicit --target keeps the sanitizer off build scripts and proc macros
# (brigade-macros), which run inside the compiler and are not instrumented.
target="$(rustc +nightly -vV | sed -n 's/^host: //p')"

export RUSTFLAGS="-Zsanitizer=address -Cforce-frame-pointers=yes"
export RUSTDOCFLAGS="-Zsanitizer=address"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target/asan}"
# detect_leaks: LeakSanitizer runs at exit (a future, waker or task that is
# never freed is a leak). halt_on_error: stop at the first report.
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export RUST_BACKTRACE="${RUST_BACKTRACE:-1}"

cargo +nightly test -p brigade --locked --target "$target" --test random_ops -- "$@"
