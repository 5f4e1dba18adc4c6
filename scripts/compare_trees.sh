#!/usr/bin/env bash
# Two commits of brigade side by side, to show that a change changed no
# behaviour (or what it changed): builds `mixed_load`, `kv`, `kv_load` and
# the `rt_compare` bench at each commit, then runs interleaved rounds (the
# commit that goes first alternates) of
#   mixed_load --secs 2    the demo's quiet and crowded host, and alone
#   kv + kv_load           2 workers, snapshot back to back, an open loop of
#                          20k requests/s (SET/GET) for 4 s, brigade and tokio
#   rt_compare             tokio's scheduler workloads, 2 workers, short runs
# and prints, for each measure, the median brigade/tokio ratio of each
# commit over the rounds (with its range) and after/before. Each commit is
# compared with tokio in its own run, so the host's drift cancels; compare
# the ratios, and read a change smaller than the ranges as none.
#
# usage: scripts/compare_trees.sh BEFORE AFTER [--rounds R] [--out DIR]
#   BEFORE, AFTER  commits (anything `git worktree add` takes)
#   --rounds R     rounds (default 5; about two minutes each on 2 cores)
#   --out DIR      where the builds and outputs go (default target/compare-trees)
# Not part of CI: it measures speed.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/bench.sh

[ $# -ge 2 ] || { sed -n '2,21p' "$0"; exit 2; }
before=$1 after=$2; shift 2
rounds=5 out=target/compare-trees
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) rounds=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        *) echo "unknown flag $1" >&2; exit 2 ;;
    esac
done
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "--rounds must be a positive number" >&2; exit 2; }
repo=$(pwd)
mkdir -p "$out/runs"
out=$(cd "$out" && pwd)

# Each commit is built in a worktree of its own, into this clone's target
# directory (the dependencies are built once), and its binaries copied out.
build() {
    local name=$1 commit=$2 tree="$out/src-$1"
    rm -rf "$tree" "${out:?}/$name"
    git worktree add --force --detach "$tree" "$commit" >/dev/null
    (cd "$tree" &&
        CARGO_TARGET_DIR="$repo/target" cargo build --release --locked -p brigade-examples \
            --example mixed_load --example kv --example kv_load &&
        CARGO_TARGET_DIR="$repo/target" cargo bench --locked -p brigade-benches \
            --bench rt_compare --no-run 2>&1 | tee "$out/bench-build-$name.txt")
    mkdir -p "$out/$name"
    cp "$repo"/target/release/examples/{mixed_load,kv,kv_load} "$out/$name/"
    local bench
    bench=$(sed -n 's/.*Executable .*(\(.*\))$/\1/p' "$out/bench-build-$name.txt" | tail -1)
    cp "$bench" "$out/$name/rt_compare"
    git worktree remove --force "$tree"
}
build before "$before"
build after "$after"

kill_server_at_exit

kv_one() { # name runtime round
    local bin="$out/$1" tag="$3-$1-$2"
    local log="$out/runs/kv-server-$tag.log"
    : >"$log"
    "$bin/kv" --port 0 --workers 2 --runtime "$2" --snapshot-every-ms 0 >"$log" 2>&1 &
    server_pid=$!
    local port
    port=$(kv_port "$log" "$server_pid") || exit 1
    sleep 1
    local first
    first=$(wc -l <"$log")
    timeout 60 "$bin/kv_load" --addr "127.0.0.1:$port" --rate 20000 --connections 20 \
        --secs 4 --json >"$out/runs/kv-load-$tag.json" 2>/dev/null || true
    local last
    last=$(wc -l <"$log")
    kill "$server_pid"
    wait "$server_pid" 2>/dev/null || true
    server_pid=
    # The snapshot's MB/s: the mean of the server's lines while the load ran.
    snapshot_mbps "$log" "$((first + 1))" "$last" >"$out/runs/kv-snapshot-$tag.txt"
}

for round in $(seq "$rounds"); do
    if [ $((round % 2)) = 1 ]; then order="before after" runtimes="brigade tokio"
    else order="after before" runtimes="tokio brigade"; fi
    for name in $order; do
        timeout 300 "$out/$name/mixed_load" --secs 2 --out "$out/runs/chart-$name.svg" \
            >"$out/runs/mixed-load-$round-$name.txt" 2>&1
        for runtime in $runtimes; do kv_one "$name" "$runtime" "$round"; done
        (cd "$out/runs" && CARGO_TARGET_DIR="$out/criterion-$name" BENCH_WORKERS=2 \
            timeout 600 "$out/$name/rt_compare" --bench --noplot --warm-up-time 0.5 \
            --measurement-time 1 >"$out/runs/rt-compare-$round-$name.txt" 2>&1)
        echo "round $round: $name done"
    done
done
python3 scripts/compare_trees.py "$out/runs" "$before" "$after"
