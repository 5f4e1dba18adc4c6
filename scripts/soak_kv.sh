#!/usr/bin/env bash
# The `--kv` mode of scripts/soak.sh: the `kv` example (release build) with
# its snapshot running back to back, under redis-benchmark in cycles (load
# for --on-secs, quiet for --off-secs), for --minutes (default 30, or
# $SOAK_MINUTES). Every --sample-secs it samples kv's RSS (/proc/PID/status),
# open fds (/proc/PID/fd) and live heap (`INFO memory`'s used_memory: glibc's
# heap in use), and each cycle checks a SET/GET round trip with redis-cli.
# Errors seen by the client: redis-benchmark exit codes and error lines, and
# failed round trips. At the end a summary (start/end/max RSS, fds, heap,
# errors) and a verdict: PASS needs no client error, kv still running, and,
# between the end of the first quiet spell (warm-up) and the end of the
# last, the same fd count and the heap within 5 %.
# Needs redis-tools (redis-benchmark, redis-cli).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/bench.sh

minutes=${SOAK_MINUTES:-30}
on_secs=20
off_secs=10
sample_secs=10
runtime=brigade
# redis-benchmark's random keys (key:000000xxxxxx) are kv's prefilled keys,
# and its 100-byte values their size: SETs overwrite, the map stays the same
# size, and a growing heap is a leak.
prefill=1000000
while [[ $# -gt 0 ]]; do
    case $1 in
        --minutes) minutes=$2; shift 2 ;;
        --on-secs) on_secs=$2; shift 2 ;;
        --off-secs) off_secs=$2; shift 2 ;;
        --sample-secs) sample_secs=$2; shift 2 ;;
        --runtime) runtime=$2; shift 2 ;;
        --prefill) prefill=$2; shift 2 ;;
        -h|--help)
            echo "usage: scripts/soak.sh --kv [--minutes M] [--on-secs S] [--off-secs S]"
            echo "                        [--sample-secs S] [--runtime brigade|tokio] [--prefill N]"
            echo "  defaults: 30 minutes (or \$SOAK_MINUTES), 20 s on / 10 s off, a sample every 10 s"
            exit 0 ;;
        *) echo "unknown flag $1 (try --kv --help)" >&2; exit 2 ;;
    esac
done
for tool in redis-benchmark redis-cli; do
    command -v "$tool" >/dev/null || { echo "$tool not found: install redis-tools" >&2; exit 2; }
done

cargo build --release -p brigade-examples --example kv
out=target/soak-kv
mkdir -p "$out"
log=$out/kv.log
samples=$out/samples.tsv
bench_log=$out/redis-benchmark.log
quiet=$out/quiet.tsv
: >"$quiet"
: >"$bench_log"
target/release/examples/kv --port 0 --runtime "$runtime" --snapshot-every-ms 0 --prefill "$prefill" >"$log" 2>&1 &
kv_pid=$!
sampler_pid=
cleanup() {
    [[ -n $sampler_pid ]] && kill "$sampler_pid" 2>/dev/null || true
    kill "$kv_pid" 2>/dev/null || true
}
trap cleanup EXIT

# The port, from kv's first line, once the prefill is done (up to 300 s:
# --prefill may be large).
port=$(kv_port "$log" "$kv_pid" 600 0.5) || exit 1
head -1 "$log"

sample() {
    local rss fds heap
    rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$kv_pid/status" 2>/dev/null || echo 0)
    fds=$(ls "/proc/$kv_pid/fd" 2>/dev/null | wc -l)
    heap=$(redis-cli -p "$port" INFO memory 2>/dev/null | tr -d '\r' | awk -F: '/^used_memory:/ {print int($2 / 1024)}')
    printf '%s\t%s\t%s\t%s\n' "$SECONDS" "${rss:-0}" "$fds" "${heap:-0}"
}
SECONDS=0
printf 'secs\trss_kib\tfds\theap_kib\n' >"$samples"
(
    while kill -0 "$kv_pid" 2>/dev/null; do
        line=$(sample)
        echo "$line" >>"$samples"
        echo "$line" | awk -F'\t' '{printf "%6d s  rss %8.1f MiB  fds %4d  heap %8.1f MiB\n", $1, $2/1024, $3, $4/1024}'
        sleep "$sample_secs"
    done
) &
sampler_pid=$!

errors=0
cycles=0
runs=0
end=$((minutes * 60))
while ((SECONDS < end)); do
    cycles=$((cycles + 1))
    on_until=$((SECONDS + on_secs))
    while ((SECONDS < on_until && SECONDS < end)); do
        runs=$((runs + 1))
        status=0
        output=$(redis-benchmark -p "$port" -t get,set -n 20000 -c 50 -d 100 -r "$prefill" -q 2>&1) || status=$?
        echo "$output" >>"$bench_log"
        bad=$(grep -ciE 'error|unexpected|refused|reset' <<<"$output" || true)
        if ((status != 0 || bad > 0)); then
            errors=$((errors + 1))
            echo "[$SECONDS s] redis-benchmark: exit $status, $bad error lines:" >&2
            grep -iE 'error|unexpected|refused|reset' <<<"$output" | head -3 >&2 || true
        fi
    done
    value="cycle-$cycles-$RANDOM"
    got=$(redis-cli -p "$port" SET soak:check "$value" 2>&1 && redis-cli -p "$port" GET soak:check 2>&1 | tail -1) || true
    if [[ $(tail -1 <<<"$got") != "$value" ]]; then
        errors=$((errors + 1))
        echo "[$SECONDS s] SET/GET round trip failed: $got" >&2
    fi
    sleep "$((SECONDS + off_secs < end ? off_secs : (end > SECONDS ? end - SECONDS : 0)))"
    # A sample at the end of each quiet spell, for the verdict.
    sample >>"$quiet"
done
alive=yes
kill -0 "$kv_pid" 2>/dev/null || alive=no
kill "$sampler_pid" 2>/dev/null || true
wait "$sampler_pid" 2>/dev/null || true
sampler_pid=
snapshots=$(grep -c '^snapshot ' "$log" || true)

echo
echo "summary: $minutes min, $cycles cycles ($on_secs s on / $off_secs s off), $runs redis-benchmark runs, $snapshots snapshots, kv running at the end: $alive"
# Start: the first sample; after warm-up: the end of the first quiet spell;
# end: the end of the last one; max: over every sample.
awk -F'\t' '
    FNR == NR { if (FNR == 1) { rw = $2; fw = $3; hw = $4 } r = $2; f = $3; h = $4; next }
    FNR == 1 { next }
    FNR == 2 { r0 = $2; f0 = $3; h0 = $4 }
    { if ($2 > rm) rm = $2; if ($3 > fm) fm = $3; if ($4 > hm) hm = $4 }
    END {
        printf "RSS   start %8.1f MiB  after warm-up %8.1f MiB  end %8.1f MiB  max %8.1f MiB\n", r0/1024, rw/1024, r/1024, rm/1024
        printf "heap  start %8.1f MiB  after warm-up %8.1f MiB  end %8.1f MiB  max %8.1f MiB\n", h0/1024, hw/1024, h/1024, hm/1024
        printf "fds   start %8d      after warm-up %8d      end %8d      max %8d\n", f0, fw, f, fm
        printf "%d %d %d %d\n", fw, f, hw, h > "/dev/stderr"
    }' "$quiet" "$samples" 2>"$out/verdict.in"
echo "client errors: $errors (redis-benchmark output in $bench_log, kv output in $log, samples in $samples)"
read -r fds_warm fds_end heap_warm heap_end <"$out/verdict.in"
reasons=()
((errors == 0)) || reasons+=("$errors client errors")
[[ $alive == yes ]] || reasons+=("kv exited")
((fds_end == fds_warm)) || reasons+=("fds $fds_warm -> $fds_end")
((heap_end * 100 <= heap_warm * 105)) || reasons+=("heap grew more than 5 %")
if ((${#reasons[@]} == 0)); then
    echo "PASS"
else
    echo "FAIL: ${reasons[*]}"
    exit 1
fi
