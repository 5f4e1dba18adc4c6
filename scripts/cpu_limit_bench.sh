#!/usr/bin/env bash
# The mixed workload inside a container's CPU limit: brigade (default
# Builder: workers sized from the cgroup, background paced to the quota),
# tokio (`available_parallelism`'s worker count: the limit rounded down)
# and Go (its own GOMAXPROCS from the quota), each server in a fresh
# cgroup v1 `cpu` child with the quota, its client outside, in interleaved
# rounds. Per limit and workload, each round runs:
#
#   alone    brigade's echo server with no background (the requests-alone
#            p99 the target is measured against)
#   brigade  mixed_load's brigade/yield_if_busy
#   tokio    mixed_load's tokio/yield_now
#   go       scripts/go_anchor (runtime.Gosched after each unit)
#
# and prints one row per run: limit, workload, round, runtime, p50 ms,
# p99 ms, background CPUs, throttled periods/s (the cgroup's
# nr_throttled over the client's run, per second of it), and the server
# process's CPUs over the client's run (all its threads). Then the medians per (limit,
# workload, runtime). Every server is a process of its own, wholly inside
# the cgroup, and every runtime's client is the same one (`mixed_load --client`:
# 1 request/ms), outside it.
#
# usage: scripts/cpu_limit_bench.sh [--limits "0.5 1.0 1.5"]
#                                   [--workloads "64x100 8x10"] [--rounds R]
#                                   [--runtimes "alone brigade tokio go"]
#                                   [--secs S] [--out DIR] [--client-rt]
# Defaults: limits 0.5 1.0 1.5, workloads 64 × 100 µs and 8 × 10 µs units,
# 5 rounds, 3 s a run. --client-rt runs the client under SCHED_FIFO
# (`chrt -f 10`), so that where the server needs every CPU (1.5 on a
# 2-core host) the client is not queued behind the server's threads: it
# stands for a client on another host. Needs root, a cgroup v1 `cpu` controller and Go
# (>= 1.25). Not part of CI: it measures speed.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/bench.sh

limits="0.5 1.0 1.5" workloads="64x100 8x10" rounds=5 secs=3 out=target/cpu-limit-bench
runtimes="alone brigade tokio go" client_rt=""
while [ $# -gt 0 ]; do
    case "$1" in
        --limits) limits=$2; shift 2 ;;
        --workloads) workloads=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --runtimes) runtimes=$2; shift 2 ;;
        --secs) secs=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --client-rt) client_rt="chrt -f 10"; shift ;;
        -h|--help) sed -n '2,32p' "$0"; exit 0 ;;
        *) echo "unknown flag $1 (try --help)" >&2; exit 2 ;;
    esac
done
# The v1 hierarchy with the cpu controller: fields after " - " are the
# filesystem type, the source and the super options.
cpu_root=$(awk '{
    for (i = 7; i <= NF; i++) if ($i == "-") break
    if ($(i + 1) == "cgroup" && $(i + 3) ~ /(^|,)cpu(,|$)/) { print $5; exit }
}' /proc/self/mountinfo)
if [ "$(id -u)" -ne 0 ] || [ -z "$cpu_root" ]; then
    echo "cpu_limit_bench: needs root and a cgroup v1 cpu controller" >&2
    exit 1
fi

cargo build --release --locked -p brigade-examples --example mixed_load
(cd scripts/go_anchor && go build -o ../../target/go_anchor .)
bin=target/release/examples
mkdir -p "$out"
results="$out/results.tsv"
: >"$results"

# One server inside a fresh cgroup with the quota (the whole process, from
# before it execs), `mixed_load --client` outside it; prints "p50 p99 cpus
# throttled/s". With a limit of at most one CPU the server runs on CPU 0
# and the client on CPU 1, so the client never takes turns with the server
# on one core; at 1.5 the server needs both.
serve_run() { # LIMIT COMMAND...
    local limit=$1; shift
    local dir="$cpu_root/brigade-bench-$$"
    mkdir -p "$dir"
    echo 100000 >"$dir/cpu.cfs_period_us"
    awk -v c="$limit" 'BEGIN {printf "%d\n", c * 100000}' >"$dir/cpu.cfs_quota_us"
    local server_cpus="" client_cpus=""
    if awk -v c="$limit" 'BEGIN {exit !(c <= 1)}'; then
        server_cpus="taskset -c 0" client_cpus="taskset -c 1"
    fi
    local addr_file="$out/addr"
    rm -f "$addr_file"
    sh -c "echo \$\$ > $dir/cgroup.procs && exec $server_cpus $*" >"$out/server.txt" 2>&1 &
    local server=$!
    for _ in $(seq 200); do [ -s "$addr_file" ] && break; sleep 0.05; done
    sleep 0.5
    local before after started ended
    before=$(awk '$1 == "nr_throttled" {print $2}' "$dir/cpu.stat")
    cpu_before=$(process_ticks "$server")
    started=$(date +%s.%N)
    # A slow server's requests go out late, so the client may run past
    # --secs; the server runs on until it is stopped, printing its
    # background's CPUs every second.
    $client_rt $client_cpus "$bin/mixed_load" --client "$(cat "$addr_file")" --secs "$secs" >"$out/client.txt" ||
        echo "p50_ms nan\np99_ms nan" >"$out/client.txt"
    after=$(awk '$1 == "nr_throttled" {print $2}' "$dir/cpu.stat")
    cpu_after=$(process_ticks "$server")
    ended=$(date +%s.%N)
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
    for tid in $(cat "$dir/tasks" 2>/dev/null); do echo "$tid" >"$cpu_root/tasks" || true; done
    rmdir "$dir"
    local p50 p99 cpus
    p50=$(awk '$1 == "p50_ms" {print $2}' "$out/client.txt")
    p99=$(awk '$1 == "p99_ms" {print $2}' "$out/client.txt")
    cpus=$(awk '$1 == "background_cpus" {cpus = $2} END {print cpus}' "$out/server.txt")
    # Throttled periods per second of the client's whole run (which a slow
    # server stretches past --secs).
    echo "$p50 $p99 ${cpus:-0} $(awk -v a="$after" -v b="$before" -v s="$started" -v e="$ended" \
        'BEGIN {printf "%.2f", (a - b) / (e - s)}') $(awk -v a="$cpu_after" -v b="$cpu_before" \
        -v s="$started" -v e="$ended" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.3f", (a - b) / hz / (e - s)}')"
}

mixed() { # LIMIT BG UNIT VARIANT
    serve_run "$1" "$bin/mixed_load" --serve "$out/addr" --only "$4" --bg "$2" \
        --unit-us "$3" --secs 600
}

go_run() { # LIMIT BG UNIT
    serve_run "$1" target/go_anchor serve "$out/addr" "$2" "$3" 600
}

for round in $(seq "$rounds"); do
    for limit in $limits; do
        for workload in $workloads; do
            bg=${workload%x*} unit=${workload#*x}
            for runtime in $runtimes; do
                case $runtime in
                    alone) stats=$(mixed "$limit" "$bg" "$unit" idle/brigade) ;;
                    brigade) stats=$(mixed "$limit" "$bg" "$unit" brigade/yield_if_busy) ;;
                    tokio) stats=$(mixed "$limit" "$bg" "$unit" tokio/yield_now) ;;
                    go) stats=$(go_run "$limit" "$bg" "$unit") ;;
                esac
                printf '%s\t%s\t%s\t%s\t%s\n' "$limit" "$workload" "$round" "$runtime" \
                    "${stats// /$'\t'}" | tee -a "$results"
            done
        done
    done
done

echo
echo "medians: limit, workload, runtime, p50 ms, p99 ms, background CPUs, throttled/s, process CPUs"
python3 - "$results" <<'EOF'
import statistics, sys
from collections import defaultdict
rows = defaultdict(list)
for line in open(sys.argv[1]):
    limit, workload, _, runtime, *values = line.split("\t")
    rows[(limit, workload, runtime)].append([float(v) for v in values])
for key, runs in rows.items():
    medians = [statistics.median(column) for column in zip(*runs)]
    print("\t".join(key), "\t".join(f"{m:.3f}" for m in medians), sep="\t")
EOF
