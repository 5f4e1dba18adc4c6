#!/usr/bin/env bash
# The `axum_service` and `grpc_service` examples on brigade and on tokio,
# under real clients, in interleaved rounds (the runtime that goes first
# alternates), with the bulk re-index job on unless a test says otherwise:
#
#   axum-rate-R     kv_load --http-kv at a fixed R requests/s (1 PUT in 10),
#                   latency from each request's due time (open loop)
#   axum-wrk        wrk -tT -c64 (closed loop, HTTP/1.1, GET /kv/KEY; T = --wrk-threads)
#   axum-wrk-nobulk the same with no bulk job (--bulk 0)
#   axum-h2load     h2load -t2 -c16 -m4 (closed loop, HTTP/2 prior knowledge)
#   grpc-ghz-rps    ghz at a fixed --rps (unary Get)
#   grpc-ghz-max    ghz unbounded (unary Get)
#
# For each run it records requests/s, p50/p99 (p99.9 where the client
# gives it) and the bulk job's units/s while the client ran (from the
# server's per-second lines), then prints the medians over the rounds and
# the brigade/tokio ratios as a markdown table.
#
# usage: scripts/service_bench.sh [--rounds R] [--secs S] [--workers N] [--bulk N]
#                                 [--no-elastic] [--background-floor F]
#                                 [--rates "20000 50000"] [--grpc-rps RPS]
#                                 [--tests "axum-rate axum-wrk ..."] [--out DIR] [--pin]
#                                 [--wrk-threads T]
#   --rounds R   rounds (default 5)
#   --secs S     seconds each client runs (default 5)
#   --workers N  worker threads of each server (default 2; 1 leaves a core
#                to the clients)
#   --bulk N     bulk tasks where the bulk job is on (default 2 × workers)
#   --no-elastic brigade spawns the bulk tasks with spawn, not spawn_elastic
#   --background-floor F  brigade's background floor (Builder::background_floor,
#                default 0: none); the tokio server ignores it
#   --rates R    axum-rate's fixed rates, requests/s (default "20000 50000")
#   --grpc-rps N grpc-ghz-rps's rate (default 5000)
#   --out DIR    where the rows and the clients' output go (default target/service-bench)
#   --tests T    which tests (default all): axum-rate axum-wrk axum-wrk-nobulk
#                axum-h2load grpc-ghz-rps grpc-ghz-max
#   --pin        the server on CPUs 0..workers-1 and the clients on the rest
#                (taskset), so that they do not compete for a core; needs more
#                CPUs than workers
#   --wrk-threads T  wrk's threads (default 2). Two wrk threads on one
#                client core take turns in the OS's time slices, and a
#                request waits for the other thread's turn: with --pin on a
#                2-core host, 1 keeps that wait out of the p99
# SERVICE_BIN=DIR runs the servers (axum_service, grpc_service) built in
# DIR, another tree's target/release/examples, to compare two trees; the
# clients stay this tree's.
# Needs wrk, h2load (nghttp2-client) and ghz (GHZ=PATH, default ghz on
# PATH or ~/go/bin/ghz); a test whose client is missing is skipped.
# Everything runs on 127.0.0.1; every client run is bounded by `timeout`
# and every server by its own --secs. Not part of CI: it measures speed.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/bench.sh

rounds=5 secs=5 workers=2 bulk= elastic=() floor=() rates="20000 50000" grpc_rps=5000 out=target/service-bench
pin=0 wrk_threads=2
tests="axum-rate axum-wrk axum-wrk-nobulk axum-h2load grpc-ghz-rps grpc-ghz-max"
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) rounds=$2; shift 2 ;;
        --secs) secs=$2; shift 2 ;;
        --workers) workers=$2; shift 2 ;;
        --bulk) bulk=$2; shift 2 ;;
        --no-elastic) elastic=(--no-elastic); shift ;;
        --background-floor) floor=(--background-floor "$2"); shift 2 ;;
        --rates) rates=$2; shift 2 ;;
        --grpc-rps) grpc_rps=$2; shift 2 ;;
        --tests) tests=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --pin) pin=1; shift ;;
        --wrk-threads) wrk_threads=$2; shift 2 ;;
        -h|--help) sed -n '2,50p' "$0"; exit 0 ;;
        *) echo "unknown flag $1 (try --help)" >&2; exit 2 ;;
    esac
done
whole_numbers "$rounds" "$secs" "$workers" "$grpc_rps" "$wrk_threads" ${bulk:+"$bulk"}
bulk=${bulk:-$((2 * workers))}
ghz=${GHZ:-$(command -v ghz || echo "$HOME/go/bin/ghz")}
server_cpus=() client_cpus=()
if [ "$pin" = 1 ]; then
    cpus=$(nproc)
    [ "$cpus" -gt "$workers" ] || { echo "--pin needs more CPUs ($cpus) than workers ($workers)" >&2; exit 2; }
    server_cpus=(taskset -c "0-$((workers - 1))")
    client_cpus=(taskset -c "$workers-$((cpus - 1))")
fi
keys=100000

cargo build --release -p brigade-examples --example axum_service --example grpc_service \
    --example kv_load
bin=target/release/examples
server_bin=${SERVICE_BIN:-$bin}
mkdir -p "$out"
results="$out/results.tsv"
printf 'round\truntime\ttest\trps\tp50_ms\tp99_ms\tp999_ms\tbulk_units_per_s\n' >"$results"

have() { command -v "$1" >/dev/null 2>&1 || [ -x "$1" ]; }
# The client of each test, to skip a test whose client is missing.
client_of() {
    case "$1" in
        axum-rate) echo "$bin/kv_load" ;;
        axum-wrk|axum-wrk-nobulk) echo wrk ;;
        axum-h2load) echo h2load ;;
        grpc-*) echo "$ghz" ;;
    esac
}
selected=()
for test in $tests; do
    client=$(client_of "$test")
    [ -n "$client" ] || { echo "unknown test $test" >&2; exit 2; }
    if have "$client"; then selected+=("$test"); else echo "skipping $test: $client not found" >&2; fi
done

kill_server_at_exit

# Starts EXAMPLE on RUNTIME with BULK tasks on a free port, logging to LOG;
# sets $port. The server ends by itself after long enough for any client.
start_server() {
    local example=$1 runtime=$2 bulk_tasks=$3 log=$4
    : >"$log"
    "${server_cpus[@]}" "$server_bin/$example" --runtime "$runtime" --workers "$workers" --bulk "$bulk_tasks" \
        --keys "$keys" --addr 127.0.0.1:0 --secs $((secs + 120)) "${elastic[@]}" "${floor[@]}" >"$log" 2>&1 &
    server_pid=$!
    port=$(wait_port "$log" "$server_pid" 's/^listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$example") ||
        exit 1
    sleep 1 # the bulk job gets going
}

# Bulk units/s in lines FROM..TO of LOG: the difference of the running
# totals over the difference of the times (`t=…s … bulk_units=N`).
bulk_rate() {
    sed -n "$2,$3p" "$1" | awk '/^t=/ {
        t = substr($1, 3) + 0; for (i = 2; i <= NF; i++) if ($i ~ /^bulk_units=/) u = substr($i, 12) + 0
        if (n++ == 0) { t0 = t; u0 = u } }
        END { if (n > 1 && t > t0) printf "%.0f", (u - u0) / (t - t0); else printf "-" }'
}

# Runs the client of TEST against 127.0.0.1:$port; prints "rps p50 p99 p999".
run_client() {
    local test=$1 rate=$2 name=$3 bound=$((secs + 60))
    local key=key:000000000042 raw="$out/client-$name.txt"
    case "$test" in
        axum-rate)
            # kv_load exits with 1 if a request failed: the row is kept, and
            # its complaint shown.
            timeout "$bound" "${client_cpus[@]}" "$bin/kv_load" --http-kv --addr "127.0.0.1:$port" --rate "$rate" \
                --connections 16 --keys "$keys" --ratio 1:9 --secs "$secs" --json \
                >"$raw" 2>"$out/client-$name.err" || true
            if [ -s "$out/client-$name.err" ]; then sed "s/^/$name: /" "$out/client-$name.err" >&2; fi
            python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))
print(r["achieved_rate"], r["p50_ms"], r["p99_ms"], r["p999_ms"])' "$raw" 2>/dev/null \
                || echo "- - - -" ;;
        axum-wrk|axum-wrk-nobulk)
            timeout "$bound" "${client_cpus[@]}" wrk -t"$wrk_threads" -c64 -d"${secs}s" --latency "http://127.0.0.1:$port/kv/$key" \
                >"$raw" 2>&1 || true
            echo "$(wrk_figures "$raw") -" ;;
        axum-h2load)
            local log="$out/client-$name.log"
            timeout "$bound" "${client_cpus[@]}" h2load -t2 -c16 -m4 -D "$secs" --log-file="$log" \
                "http://127.0.0.1:$port/kv/$key" >"$raw" 2>&1 || true
            local rps
            rps=$(awk '/^finished in/ { gsub(",", "", $4); printf "%.0f", $4 }' "$raw")
            # Per-request durations (µs, 3rd column) of the 2xx answers.
            local pct
            pct=$(awk -F'\t' '$2 ~ /^2/ { print $3 }' "$log" 2>/dev/null | sort -n | awk '
                { v[NR] = $1 } END {
                    if (NR == 0) { print "- - -"; exit }
                    split("50 99 99.9", q, " ")
                    for (i = 1; i <= 3; i++) { k = int(NR * q[i] / 100); if (k < 1) k = 1
                        printf "%.3f%s", v[k] / 1000, i < 3 ? " " : "\n" } }')
            rm -f "$log"
            echo "${rps:--} $pct" ;;
        grpc-ghz-rps|grpc-ghz-max)
            local limit=()
            if [ "$test" = grpc-ghz-rps ]; then limit=(--rps "$rate"); fi
            timeout "$bound" "${client_cpus[@]}" "$ghz" --insecure --proto examples/proto/kv.proto --call kv.Kv/Get \
                -d "{\"key\":\"$key\"}" "${limit[@]}" --connections 4 -c 50 -z "${secs}s" \
                --format json "127.0.0.1:$port" >"$raw" 2>"$out/client-$name.err" || true
            python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))
ms = {d["percentage"]: d["latency"] / 1e6 for d in r.get("latencyDistribution") or []}
bad = sum(n for code, n in (r.get("statusCodeDistribution") or {}).items() if code != "OK")
if bad: print(f"{bad} calls failed", file=sys.stderr)
print(round(r["rps"]), ms.get(50, "-"), ms.get(99, "-"), "-")' "$raw" 2>>"$out/client-$name.err" \
                || echo "- - - -" ;;
    esac
}

# One run: a server, its client, a row of $results.
run_one() {
    local round=$1 runtime=$2 test=$3 rate=$4
    local label=$test example=axum_service bulk_tasks=$bulk
    case "$test" in
        axum-rate) label="axum-rate-$rate" ;;
        axum-wrk-nobulk) bulk_tasks=0 ;;
        grpc-ghz-rps) label="grpc-ghz-rps-$rate"; example=grpc_service ;;
        grpc-*) example=grpc_service ;;
    esac
    local name="r$round-$runtime-$label" log
    log="$out/server-r$round-$runtime-$label.log"
    start_server "$example" "$runtime" "$bulk_tasks" "$log"
    local before after figures
    before=$(wc -l <"$log")
    figures=$(run_client "$test" "$rate" "$name")
    after=$(wc -l <"$log")
    stop_server
    local units=-
    if [ "$bulk_tasks" -gt 0 ]; then units=$(bulk_rate "$log" "$before" "$after"); fi
    # shellcheck disable=SC2086
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$runtime" "$label" $figures "$units" \
        | tee -a "$results"
}


if [ "$pin" = 1 ]; then
    echo "pinned: server on CPUs 0-$((workers - 1)), clients on $workers-$(($(nproc) - 1))."
else
    echo "caveat: the clients run on this machine too ($(nproc) cores for $workers server workers and"
    echo "the client threads); they compete for CPU, so these figures compare the runtimes under"
    echo "the same crowding rather than measure either alone."
fi
echo "ghz --rps paces its workers, which wait for answers (not a strict open loop); kv_load is one."
for round in $(seq "$rounds"); do
    # Alternate which runtime goes first from round to round.
    order=$(runtime_order "$round")
    for test in "${selected[@]}"; do
        case "$test" in
            axum-rate) test_rates=$rates ;;
            grpc-ghz-rps) test_rates=$grpc_rps ;;
            *) test_rates=- ;;
        esac
        for rate in $test_rates; do
            for runtime in $order; do
                run_one "$round" "$runtime" "$test" "$rate"
            done
        done
    done
done

echo
if [ ${#elastic[@]} -gt 0 ]; then spawn=spawn; else spawn=spawn_elastic; fi
echo "medians of $rounds rounds, $workers workers, $bulk bulk tasks (brigade: $spawn) ($results):"
echo
python3 - "$results" <<'EOF'
import csv, statistics, sys

rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
def median(test, runtime, column):
    values = [float(r[column]) for r in rows
              if r["test"] == test and r["runtime"] == runtime and r[column] not in ("-", "")]
    return statistics.median(values) if values else None
def cell(value, digits):
    return "-" if value is None else f"{value:.{digits}f}"
def ratio(b, t):
    return "-" if b is None or t is None or t == 0 else f"{b / t:.2f}"
tests = list(dict.fromkeys(r["test"] for r in rows))
columns = [("rps", "req/s", 0), ("p50_ms", "p50 ms", 3), ("p99_ms", "p99 ms", 3),
           ("p999_ms", "p99.9 ms", 3), ("bulk_units_per_s", "bulk units/s", 0)]
header = ["test"]
for _, title, _ in columns:
    header += [f"brigade {title}", f"tokio {title}", "b/t"]
print("| " + " | ".join(header) + " |")
print("|" + "---|" * len(header))
for test in tests:
    line = [test]
    for column, _, digits in columns:
        b, t = median(test, "brigade", column), median(test, "tokio", column)
        line += [cell(b, digits), cell(t, digits), ratio(b, t)]
    print("| " + " | ".join(line) + " |")
EOF
