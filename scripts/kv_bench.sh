#!/usr/bin/env bash
# The `kv` example under load: runtime brigade/tokio x snapshot off/on
# (on = back to back, `--snapshot-every-ms 0`) x workers 2/1, in
# interleaved rounds. For each run it starts the server (release build,
# default prefill of 1,000,000 keys of 100 bytes) and loads it with
#   closed (default): redis-benchmark -p PORT -t get,set -n REQUESTS -c CLIENTS --csv
#     a closed loop: each connection sends when its last reply is in, so a
#     faster server also gets a busier client; rows SET and GET;
#   open (--client open): kv_load --rate RATE --connections CLIENTS --secs SECS
#     an open loop: RATE requests/s (SET/GET 50/50) whatever the server does,
#     latency from each request's due time; one row per rate ("open@RATE",
#     requests/s = the rate kv_load achieved);
# and records requests/s, p50 and p99, plus the snapshot's throughput: the
# mean of the server's per-second lines printed while the load ran.
# Closed needs redis-benchmark (`apt-get install redis-tools`).
#
# usage: scripts/kv_bench.sh [--client closed|open] [--rounds R] [--clients C]
#                            [--requests N] [--rate "20000 50000"] [--secs S]
#                            [--client-rt] [--workers "2 1"] [--snapshots "off on"]
#                            [--out DIR]
# --client-rt runs kv_load under `chrt -f 1` (root or CAP_SYS_NICE): its
# sends and reads then preempt the server's busy threads on a small host,
# so its latencies are the server's, not its own waits for a core (which
# kv_load reports as "send lag").
# Extra server flags can be given in KV_FLAGS (e.g. KV_FLAGS="--elastic", or
# KV_FLAGS="--background-floor 0.5", which the tokio server ignores);
# KV_SERVER=PATH runs another build of the server (to compare two trees).
# NEIGHBOURS=N crowds the host with N busy processes for the whole run.
# Not part of CI: it measures speed.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/bench.sh

rounds=3 requests=200000 clients=20 workers_list="2 1" out=target/kv-bench
client=closed rates=20000 secs=5 snapshots="off on" load_prefix=()
while [ $# -gt 0 ]; do
    case "$1" in
        --client) client=$2; shift 2 ;;
        --rate) rates=$2; shift 2 ;;
        --secs) secs=$2; shift 2 ;;
        --snapshots) snapshots=$2; shift 2 ;;
        --client-rt) load_prefix=(chrt -f 1); shift ;;
        --rounds) rounds=$2; shift 2 ;;
        --requests) requests=$2; shift 2 ;;
        --clients) clients=$2; shift 2 ;;
        --workers) workers_list=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
        *) echo "unknown flag $1 (try --help)" >&2; exit 2 ;;
    esac
done
case "$client" in
    closed)
        rates=- # one pass; redis-benchmark sets its own pace
        command -v redis-benchmark >/dev/null || {
            echo "redis-benchmark not found: apt-get install redis-tools" >&2
            exit 1
        } ;;
    open)
        if [ ${#load_prefix[@]} -gt 0 ] && ! "${load_prefix[@]}" true; then
            echo "--client-rt: cannot run as SCHED_FIFO here (needs root or CAP_SYS_NICE)" >&2
            exit 1
        fi ;;
    *) echo "--client must be closed or open, got $client" >&2; exit 2 ;;
esac

cargo build --release -p brigade-examples --example kv --example kv_load
server=${KV_SERVER:-target/release/examples/kv}
load=target/release/examples/kv_load
mkdir -p "$out"
results="$out/results.tsv"
printf 'round\tworkers\truntime\tsnapshot\ttest\trps\tp50_ms\tp99_ms\tsnap_MBps\tsnap_Mkeys\n' >"$results"
server_pid=
neighbour_pids=()
trap '[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
      [ ${#neighbour_pids[@]} -gt 0 ] && kill "${neighbour_pids[@]}" 2>/dev/null || true' EXIT
# Busy neighbours (as `brigade_examples::neighbours` starts them).
for _ in $(seq "${NEIGHBOURS:-0}"); do
    sh -c 'while :; do :; done' &
    neighbour_pids+=($!)
done

# One run: starts the server, loads it, appends its rows to $results (SET
# and GET for redis-benchmark, one for kv_load).
run_one() {
    local round=$1 workers=$2 runtime=$3 snapshot=$4 rate=$5
    local name="r$round-w$workers-$runtime-$snapshot"
    [ "$rate" = - ] || name="$name-rate$rate"
    local log="$out/server-$name.log"
    local flags=(--port 0 --workers "$workers" --runtime "$runtime")
    if [ "$snapshot" = on ]; then flags+=(--snapshot-every-ms 0); else flags+=(--no-snapshot); fi
    : >"$log" # exists before the server opens it, for the loop below
    # shellcheck disable=SC2086
    "$server" "${flags[@]}" ${KV_FLAGS:-} >"$log" 2>&1 &
    server_pid=$!
    local port
    port=$(kv_port "$log" "$server_pid") || exit 1
    sleep 1
    local before after
    before=$(wc -l <"$log")
    if [ "$client" = closed ]; then
        redis-benchmark -p "$port" -t get,set -n "$requests" -c "$clients" --csv \
            >"$out/bench-$name.csv" 2>/dev/null
    else
        # kv_load exits with 1 if a request failed: the row is kept, and
        # its complaint shown.
        "${load_prefix[@]}" "$load" --addr "127.0.0.1:$port" --rate "$rate" --connections "$clients" \
            --secs "$secs" --json >"$out/load-$name.json" 2>"$out/load-$name.err" || true
        if [ -s "$out/load-$name.err" ]; then sed "s/^/$name: /" "$out/load-$name.err" >&2; fi
    fi
    sleep 0.2
    after=$(wc -l <"$log")
    kill "$server_pid"
    wait "$server_pid" 2>/dev/null || true
    server_pid=
    # Snapshot throughput: mean of the per-second lines printed during the
    # benchmark, leaving out seconds with under half the peak commands/s
    # (the benchmark started or ended, or switched from SET to GET, then).
    local snap
    snap=$(sed -n "$((before + 1)),${after}p" "$log" | awk '
        / commands\/s / { n++; cmds[n] = $3; keys[n] = $6; mb[n] = $9; if ($3 > peak) peak = $3 }
        END {
            for (i = 1; i <= n; i++) if (cmds[i] >= peak / 2) { k += keys[i]; m += mb[i]; used++ }
            if (used) printf "%.1f\t%.2f", m / used, k / used; else printf "-\t-"
        }')
    [ "$snapshot" = on ] || snap=$'-\t-'
    local prefix="$round	$workers	$runtime	$snapshot"
    if [ "$client" = closed ]; then
        tr -d '"' <"$out/bench-$name.csv" | awk -F, -v prefix="$prefix" -v snap="$snap" '
            $1 == "SET" || $1 == "GET" { printf "%s\t%s\t%.0f\t%s\t%s\t%s\n", prefix, $1, $2, $5, $7, snap }' \
            | tee -a "$results"
    else
        local json="$out/load-$name.json" achieved p50 p99
        achieved=$(json_number achieved_rate "$json")
        p50=$(json_number p50_ms "$json")
        p99=$(json_number p99_ms "$json")
        printf '%s\topen@%s\t%.0f\t%.3f\t%.3f\t%s\n' "$prefix" "$rate" "${achieved:-0}" \
            "${p50:-0}" "${p99:-0}" "$snap" | tee -a "$results"
    fi
}

for round in $(seq "$rounds"); do
    for workers in $workers_list; do
        for snapshot in $snapshots; do
            for rate in $rates; do
                # Alternate which runtime goes first from round to round.
                order=$(runtime_order "$round")
                for runtime in $order; do
                    run_one "$round" "$workers" "$runtime" "$snapshot" "$rate"
                done
            done
        done
    done
done

echo
echo "ranges over $rounds rounds ($results):"
printf 'workers\truntime\tsnapshot\ttest\trequests/s\tp50 ms\tp99 ms\tsnapshot MB/s\tsnapshot M keys/s\n'
awk -F'\t' 'NR > 1 {
    key = $2 "\t" $3 "\t" $4 "\t" $5
    if (!(key in seen)) { seen[key] = 1; order[++n] = key }
    for (i = 6; i <= 10; i++) {
        if ($i == "-") continue
        if (!((key, i) in lo) || $i + 0 < lo[key, i]) lo[key, i] = $i + 0
        if (!((key, i) in hi) || $i + 0 > hi[key, i]) hi[key, i] = $i + 0
    }
} END {
    for (k = 1; k <= n; k++) {
        line = order[k]
        for (i = 6; i <= 10; i++) {
            if ((order[k], i) in lo) line = line "\t" lo[order[k], i] "-" hi[order[k], i]
            else line = line "\t-"
        }
        print line
    }
}' "$results" | sort -t$'\t' -k1,1r -k3,3 -k4,4r -k2,2

# ratios COLUMN TITLE: COLUMN of brigade's rows over tokio's, per round.
ratios() {
    echo
    echo "$2, brigade / tokio, per round (workers, snapshot, test: ratios):"
    awk -F'\t' -v col="$1" 'NR > 1 && $col != "-" {
        v[$1, $2, $4, $5, $3] = $col; rounds[$1] = 1; keys[$2 "\t" $4 "\t" $5] = 1
    }
    END {
        for (key in keys) {
            split(key, part, "\t")
            line = key ":"
            for (r = 1; r in rounds; r++) {
                b = v[r, part[1], part[2], part[3], "brigade"]; t = v[r, part[1], part[2], part[3], "tokio"]
                if (t > 0) line = line sprintf(" %.2f", b / t)
            }
            print line
        }
    }' "$results" | sort -r
}

if [ "$client" = closed ]; then ratios 6 "requests/s"; fi
ratios 8 "p99 latency"
if [[ " $snapshots " = *" on "* ]]; then ratios 9 "snapshot MB/s"; fi
