#!/usr/bin/env bash
# What each request costs the server on a crowded host, counted rather than
# timed: `kv` (2 workers, snapshot back to back) under kv_load's open loop
# at a fixed rate, brigade and tokio, with the client either on the
# server's cores (crowded) or pinned apart with taskset (server on CPU 0,
# client on CPU 1). For each run, over the client's 5 s:
#   perf stat -p SERVER: context switches, CPU migrations, syscalls (all,
#   and epoll_wait/epoll_pwait, futex, sched_yield);
#   kv_load's p99 and the snapshot's MB/s;
#   brigade's counters over the server's whole run (polls, yields, yield
#   queue entries, rescues, parks, steals, idle_not_serving, ...), printed
#   by kv at the end of a timed run.
# Rows go to OUT/results.tsv; per-request figures are counts / requests.
#
# usage: scripts/crowded_counts.sh [--rounds R] [--rate "20000"] [--out DIR]
# Needs perf (linux-perf) allowed to read tracepoints. Not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/bench.sh

rounds=1 rates=20000 out=target/crowded-counts secs=5
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) rounds=$2; shift 2 ;;
        --rate) rates=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
        *) echo "unknown flag $1 (try --help)" >&2; exit 2 ;;
    esac
done
cargo build --release -p brigade-examples --example kv --example kv_load
bin=target/release/examples
mkdir -p "$out"
results="$out/results.tsv"
[ -s "$results" ] || printf 'round\tplacement\truntime\trate\trequests\tp99_ms\tsnap_MBps\tcs\tmigrations\tsyscalls\tepoll_waits\tfutex\tsched_yield\tcounters\n' >"$results"
events=context-switches,cpu-migrations,raw_syscalls:sys_enter
events+=,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_epoll_pwait
events+=,syscalls:sys_enter_futex,syscalls:sys_enter_sched_yield
kill_server_at_exit

run_one() {
    local round=$1 placement=$2 runtime=$3 rate=$4
    local name="r$round-$placement-$runtime-$rate" server_cpu=() client_cpu=()
    if [ "$placement" = pinned ]; then server_cpu=(taskset -c 0); client_cpu=(taskset -c 1); fi
    local log="$out/server-$name.log"
    : >"$log"
    "${server_cpu[@]}" "$bin/kv" --port 0 --workers 2 --runtime "$runtime" \
        --snapshot-every-ms 0 --secs $((secs + 4)) >"$log" 2>&1 &
    server_pid=$!
    local port
    port=$(kv_port "$log" "$server_pid") || exit 1
    sleep 1
    local before
    before=$(wc -l <"$log")
    perf stat -x, -e "$events" -p "$server_pid" -o "$out/perf-$name.csv" -- sleep "$secs" &
    local perf_pid=$!
    "${client_cpu[@]}" "$bin/kv_load" --addr "127.0.0.1:$port" --rate "$rate" --secs "$secs" \
        --drain-secs 2 --json >"$out/load-$name.json" 2>/dev/null || true
    wait "$perf_pid" || true
    local after
    after=$(wc -l <"$log")
    wait "$server_pid" 2>/dev/null || true
    server_pid=
    local snap counters count
    snap=$(snapshot_mbps "$log" "$((before + 1))" "$after")
    counters=$(sed -n 's/^brigade counters: //p' "$log" | tr ' ' ',')
    count() { awk -F, -v e="$1" '$3 == e { printf "%s", $1 }' "$out/perf-$name.csv"; }
    local requests p99
    requests=$(json_number answered "$out/load-$name.json")
    p99=$(json_number p99_ms "$out/load-$name.json")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$placement" \
        "$runtime" "$rate" "${requests:--}" "${p99:--}" "$snap" "$(count context-switches)" \
        "$(count cpu-migrations)" "$(count raw_syscalls:sys_enter)" \
        "$(( $(count syscalls:sys_enter_epoll_wait) + $(count syscalls:sys_enter_epoll_pwait) ))" \
        "$(count syscalls:sys_enter_futex)" "$(count syscalls:sys_enter_sched_yield)" \
        "${counters:--}" | tee -a "$results"
}

for round in $(seq "$rounds"); do
    order=$(runtime_order "$round")
    for rate in $rates; do
        for placement in crowded pinned; do
            for runtime in $order; do
                run_one "$round" "$placement" "$runtime" "$rate"
            done
        done
    done
done
