#!/usr/bin/env bash
# The background floor (`Builder::background_floor`) under closed-loop
# clients: brigade at each floor beside tokio, in interleaved rounds (the
# order rotates from round to round), background job on throughout:
#
#   http  examples/http_import --import, wrk -t2 -c64 --latency on GET /;
#         background: the import's rows/s
#   kv    examples/kv --snapshot-every-ms 0, redis-benchmark -t get,set
#         -n REQUESTS -c 20 (two rows, SET and GET); background: snapshot MB/s
#   axum  examples/axum_service (bulk re-index on), wrk -t2 -c64 --latency
#         on GET /kv/KEY; background: bulk units/s
#
# Background throughput is the mean of the server's per-second lines
# printed while the client ran, leaving out seconds with under half the
# window's peak requests/s (the client starting or ending). Each row:
# round, case, runtime, floor, test, requests/s, p50 ms, p99 ms,
# background/s. Then medians per (case, runtime, floor) and the ratios to
# tokio's medians.
#
# usage: scripts/floor_bench.sh [--cases "http kv axum"] [--floors "0 0.25 0.5"]
#                               [--workers W] [--rounds R] [--secs S]
#                               [--requests N] [--out DIR]
# Defaults: all cases, floors 0 0.25 0.5, 2 workers, 5 rounds, 5 s per wrk
# run, 200000 requests per redis-benchmark test. Needs wrk and
# redis-benchmark (redis-tools). The clients share the host's cores with
# the server. Not part of CI: it measures speed.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/bench.sh

cases="http kv axum" floors="0 0.25 0.5" workers=2 rounds=5 secs=5 requests=200000
out=target/floor-bench
while [ $# -gt 0 ]; do
    case "$1" in
        --cases) cases=$2; shift 2 ;;
        --floors) floors=$2; shift 2 ;;
        --workers) workers=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --secs) secs=$2; shift 2 ;;
        --requests) requests=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
        *) echo "unknown flag $1 (try --help)" >&2; exit 2 ;;
    esac
done

cargo build --release -p brigade-examples --example http_import --example kv \
    --example axum_service
bin=target/release/examples
mkdir -p "$out"
results="$out/results.tsv"
[ -s "$results" ] ||
    printf 'round\tcase\truntime\tfloor\ttest\trps\tp50_ms\tp99_ms\tbackground\n' >"$results"
kill_server_at_exit

# Starts CASE's server on RUNTIME (brigade with FLOOR), logging to LOG;
# sets $port.
start_server() {
    local case=$1 runtime=$2 floor=$3 log=$4 flags=(--runtime "$runtime" --workers "$workers")
    [ "$runtime" = brigade ] && flags+=(--background-floor "$floor")
    : >"$log"
    case "$case" in
        http) "$bin/http_import" --port 0 --import --secs 600 "${flags[@]}" >"$log" 2>&1 & ;;
        kv) "$bin/kv" --port 0 --snapshot-every-ms 0 --secs 600 "${flags[@]}" >"$log" 2>&1 & ;;
        axum) "$bin/axum_service" --addr 127.0.0.1:0 --secs 600 "${flags[@]}" >"$log" 2>&1 & ;;
    esac
    server_pid=$!
    port=$(wait_port "$log" "$server_pid" \
        's/.*listening on \(http:\/\/\)\{0,1\}127\.0\.0\.1:\([0-9]*\).*/\2/p' "$case") || exit 1
    sleep 1 # the background job gets going
}

# Mean background/s over lines FROM..TO of CASE's LOG, leaving out seconds
# under half the peak requests/s.
background_rate() {
    sed -n "$3,$4p" "$2" | awk -v case="$1" '
        case == "http" && / requests\/s / { r[++n] = $3; b[n] = $5 }
        case == "kv" && / commands\/s / { r[++n] = $3; b[n] = $9 }
        case == "axum" && /^t=/ { split($2, a, "="); split($3, c, "="); r[++n] = a[2]; b[n] = c[2] }
        END {
            for (i = 1; i <= n; i++) if (r[i] + 0 > peak) peak = r[i] + 0
            for (i = 1; i <= n; i++) if (r[i] + 0 >= peak / 2) { s += b[i]; used++ }
            if (used) printf "%.1f", s / used; else printf "-"
        }'
}

# Loads 127.0.0.1:$port for CASE; prints one "test rps p50 p99" line per test.
run_client() {
    local case=$1 raw=$2
    case "$case" in
        http|axum)
            local path=/
            [ "$case" = axum ] && path=/kv/key:000000000042
            timeout $((secs + 60)) wrk -t2 -c64 -d"${secs}s" --latency \
                "http://127.0.0.1:$port$path" >"$raw" 2>&1 || true
            echo "wrk $(wrk_figures "$raw")" ;;
        kv)
            timeout 300 redis-benchmark -p "$port" -t get,set -n "$requests" -c 20 --csv \
                >"$raw" 2>/dev/null || true
            tr -d '"' <"$raw" | awk -F, '$1 == "SET" || $1 == "GET" { printf "%s %.0f %s %s\n", $1, $2, $5, $7 }' ;;
    esac
}

run_one() {
    local round=$1 case=$2 runtime=$3 floor=$4
    local name="r$round-$case-$runtime-$floor"
    local log="$out/server-$name.log"
    start_server "$case" "$runtime" "$floor" "$log"
    local before after lines
    before=$(wc -l <"$log")
    lines=$(run_client "$case" "$out/client-$name.txt")
    sleep 0.2
    after=$(wc -l <"$log")
    stop_server
    local background
    background=$(background_rate "$case" "$log" "$((before + 1))" "$after")
    while read -r test rps p50 p99; do
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$case" "$runtime" "$floor" \
            "$test" "${rps:--}" "${p50:--}" "${p99:--}" "$background" | tee -a "$results"
    done <<<"$lines"
}

echo "caveat: $(nproc) cores for $workers server workers and the client; they compete for CPU."
for round in $(seq "$rounds"); do
    variants=("tokio -")
    for floor in $floors; do variants+=("brigade $floor"); done
    # Rotate the order from round to round.
    count=${#variants[@]}
    for case in $cases; do
        for i in $(seq 0 $((count - 1))); do
            read -r runtime floor <<<"${variants[$(((i + round) % count))]}"
            run_one "$round" "$case" "$runtime" "$floor"
        done
    done
done

echo
echo "medians over the rounds in $results ($workers workers):"
python3 - "$results" "$workers" <<'EOF'
import csv, statistics, sys

rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
def med(case, test, runtime, floor, col):
    v = [float(r[col]) for r in rows if (r["case"], r["test"], r["runtime"], r["floor"]) ==
         (case, test, runtime, floor) and r[col] not in ("-", "")]
    return (statistics.median(v), len(v)) if v else (None, 0)
def ratio(b, t):
    return "-" if b is None or not t else f"{b / t:.2f}"
keys = list(dict.fromkeys((r["case"], r["test"], r["runtime"], r["floor"]) for r in rows))
print("| case | test | runtime | floor | n | req/s | p50 ms | p99 ms | background/s "
      "| req/s ÷ tokio | p99 ÷ tokio | background ÷ tokio |")
print("|" + "---|" * 12)
for case, test, runtime, floor in keys:
    m = {c: med(case, test, runtime, floor, c)[0] for c in ("rps", "p50_ms", "p99_ms", "background")}
    t = {c: med(case, test, "tokio", "-", c)[0] for c in ("rps", "p99_ms", "background")}
    n = med(case, test, runtime, floor, "rps")[1]
    f = lambda v, d: "-" if v is None else f"{v:.{d}f}"
    print(f"| {case} | {test} | {runtime} | {floor} | {n} | {f(m['rps'], 0)} | {f(m['p50_ms'], 3)} "
          f"| {f(m['p99_ms'], 3)} | {f(m['background'], 1)} | {ratio(m['rps'], t['rps'])} "
          f"| {ratio(m['p99_ms'], t['p99_ms'])} | {ratio(m['background'], t['background'])} |")
EOF
