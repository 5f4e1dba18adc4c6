#!/bin/sh
# One brigade/tokio table across the criterion benches, from the results
# that `cargo bench` left in target/criterion:
#
#   cargo bench
#   scripts/bench_summary.sh [CRITERION_DIR]
#
# See examples/bench_summary.rs for where it looks and
# examples/src/bench_summary.rs for how benchmarks are paired.
set -eu
cd "$(dirname "$0")/.."
exec cargo run --quiet --release --locked -p brigade-examples --example bench_summary -- "$@"
