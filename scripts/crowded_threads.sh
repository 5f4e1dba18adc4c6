#!/usr/bin/env bash
# Where the crowded host's CPU goes, per thread: `kv` (2 workers, the
# snapshot back to back) under `kv_load` at a fixed rate, the client on the
# server's cores, brigade and tokio in turn. Over about 2 s in the middle
# of the client's 5 s it prints, for each run:
#   - the host's idle time and the client's CPU, in % of one core;
#   - the snapshot's MB/s and the client's p99;
#   - each server thread's CPU (% of one core) and voluntary/involuntary
#     context switches per second (from /proc);
#   - with perf available (and allowed), the server threads' wake-ups over
#     2 s, by the CPU each was woken onto (`sched:sched_wakeup`).
#
# usage: scripts/crowded_threads.sh [--rounds R] [--rate RATE] [--out DIR]
#   --rounds R   rounds, each running brigade and tokio (default 2)
#   --rate RATE  kv_load's requests/s (default 50000)
#   --out DIR    where the logs go (default target/crowded-threads)
# KV_SERVER=PATH runs another build of the server (to compare two trees);
# extra server flags go in KV_FLAGS (e.g. KV_FLAGS="--no-crowded-handoff",
# which the tokio server ignores).
# Not part of CI: it measures speed.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/bench.sh

rounds=2 rate=50000 out=target/crowded-threads
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) rounds=$2; shift 2 ;;
        --rate) rate=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
        *) echo "unknown flag $1 (try --help)" >&2; exit 2 ;;
    esac
done
whole_numbers "$rounds" "$rate"
cargo build --release -p brigade-examples --example kv --example kv_load
bin=target/release/examples
mkdir -p "$out"
have_perf=0
if command -v perf >/dev/null 2>&1 && perf record -e sched:sched_wakeup -a -o /dev/null -- true >/dev/null 2>&1; then
    have_perf=1
fi
kill_server_at_exit

# "name cpu_ticks voluntary involuntary" for each thread of PID.
threads() {
    local task
    for task in /proc/"$1"/task/*; do
        printf '%s %s %s\n' "$(tr ' ' _ <"$task/comm")" "$(awk '{ print $14 + $15 }' "$task/stat")" \
            "$(awk '/^voluntary_ctxt/ { v = $2 } /^nonvoluntary_ctxt/ { n = $2 } END { print v, n }' "$task/status")"
    done
}
host_idle() { awk '/^cpu / { print $5 + $6 }' /proc/stat; }

run_one() {
    local round=$1 runtime=$2 name="r$1-$2"
    local log="$out/server-$name.log"
    "${KV_SERVER:-$bin/kv}" --port 0 --workers 2 --runtime "$runtime" --snapshot-every-ms 0 --secs 9 ${KV_FLAGS:-} >"$log" 2>&1 &
    server_pid=$!
    local port
    port=$(kv_port "$log" "$server_pid") || exit 1
    sleep 1
    "$bin/kv_load" --addr "127.0.0.1:$port" --rate "$rate" --secs 5 --drain-secs 2 --json \
        >"$out/load-$name.json" 2>/dev/null &
    local load_pid=$!
    sleep 1.5
    threads "$server_pid" >"$out/threads-a.txt"
    local idle0 client0 idle1 client1 t0 t1
    idle0=$(host_idle) client0=$(process_ticks "$load_pid") t0=$(date +%s.%N)
    if [ "$have_perf" = 1 ]; then
        perf record -q -e sched:sched_wakeup -a -o "$out/wakeups-$name.data" -- sleep 2 >/dev/null 2>&1
    else
        sleep 2
    fi
    threads "$server_pid" >"$out/threads-b.txt"
    idle1=$(host_idle) client1=$(process_ticks "$load_pid") t1=$(date +%s.%N)
    wait "$load_pid" || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=
    local secs
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
    local snapshot p99
    # The snapshot's MB/s in the server's lines for seconds 3 and 4 (the
    # client runs from about 1 s to 6 s).
    snapshot=$(awk '/ commands\/s / && ($1 == "3.0" || $1 == "4.0") { s += $9; n++ }
        END { if (n) printf "%.0f", s / n; else printf "-" }' "$log")
    p99=$(json_number p99_ms "$out/load-$name.json")
    # Clock ticks are 1/100 s, so ticks per second are % of one core.
    echo "== round $round, $runtime ($secs s): host idle $(awk -v t=$((idle1 - idle0)) -v s="$secs" 'BEGIN { printf "%.0f", t / s }')%," \
        "client $(awk -v t=$((client1 - client0)) -v s="$secs" 'BEGIN { printf "%.0f", t / s }')% of a core," \
        "snapshot ${snapshot} MB/s, p99 ${p99:--} ms"
    paste "$out/threads-a.txt" "$out/threads-b.txt" | awk -v s="$secs" '{ d = $6 - $2
        if (d > 0) printf "   %-18s %4.0f%% of a core  %7.0f voluntary/s  %7.0f involuntary/s\n", $1, d / s, ($7 - $3) / s, ($8 - $4) / s }'
    if [ "$have_perf" = 1 ]; then
        echo "   wake-ups of its threads (thread id: count onto each CPU, in 2 s):"
        perf script -i "$out/wakeups-$name.data" -F trace 2>/dev/null \
            | sed -n -E "s/^ *comm=kv-$runtime pid=([0-9]+) .*target_cpu=([0-9]+).*/\1 \2/p" \
            | sort | uniq -c | awk '{ printf "     %s onto CPU %d: %d\n", $2, $3, $1 }'
    fi
}

for round in $(seq "$rounds"); do
    order=$(runtime_order "$round")
    for runtime in $order; do
        run_one "$round" "$runtime"
    done
done
