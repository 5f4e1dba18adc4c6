#!/usr/bin/env bash
# `http_import` (2 workers, the import on) under `kv_load --http` at a
# fixed rate, on brigade with the crowded-host hand-off on and off
# (`--no-crowded-handoff`) and on tokio, in interleaved rounds; the client
# runs on the same cores (a crowded host). brigade's import is spawned with
# `spawn` (`--no-elastic`), so that the elastic controller's ramp from its
# low starting limit does not set a 5 s run's import rate.
#
# For each run: the rate kv_load achieved, its p50 and p99 (from each
# request's due time), and the import's rows/s (the median of the
# server's per-second lines while the load ran). Then the medians over the
# rounds of each brigade variant's per-round ratio to tokio.
#
# usage: ROUNDS=5 RATE=20000 SECS=5 VARIANTS="..." scripts/http_import_rate.sh
# VARIANTS (default "brigade-on brigade-off tokio") may also name
# brigade-nospread: the default settings with `--no-spread`
# (`Builder::spread_workers(false)`).
# Not part of CI: it measures speed.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/bench.sh
rounds=${ROUNDS:-5} rate=${RATE:-20000} secs=${SECS:-5}
whole_numbers "$rounds" "$rate" "$secs"
cargo build --release -p brigade-examples --example http_import --example kv_load
bin=target/release/examples
out=target/http-import-rate
mkdir -p "$out"
rows="$out/results.tsv"
printf 'round\tvariant\trps\tp50_ms\tp99_ms\timport_rows_per_s\n' >"$rows"

kill_server_at_exit

for round in $(seq "$rounds"); do
    for variant in ${VARIANTS:-brigade-on brigade-off tokio}; do
        case $variant in
            brigade-on) flags=(--runtime brigade --no-elastic) ;;
            brigade-off) flags=(--runtime brigade --no-elastic --no-crowded-handoff) ;;
            brigade-nospread) flags=(--runtime brigade --no-elastic --no-spread) ;;
            tokio) flags=(--runtime tokio) ;;
            *) echo "unknown variant $variant" >&2; exit 2 ;;
        esac
        log="$out/server-r$round-$variant.log"
        "$bin/http_import" --port 0 --workers 2 --import --secs $((secs + 4)) "${flags[@]}" >"$log" 2>&1 &
        server_pid=$!
        port=$(wait_port "$log" "$server_pid" 's|^listening on http://127\.0\.0\.1:\([0-9]*\)/.*|\1|p' \
            http_import 100) || exit 1
        sleep 1 # the import under way before the load starts
        report=$(timeout $((secs + 30)) "$bin/kv_load" --http --addr "127.0.0.1:$port" --rate "$rate" \
            --connections 16 --secs "$secs" --json)
        wait "$server_pid" || true
        server_pid=
        # Per-second lines "T s N requests/s R rows/s ...": the ones while
        # the load ran (after the first second of it).
        import=$(awk '$2 == "s" && $1 + 0 >= 3 && $1 + 0 <= '"$((secs + 1))"' {print $5}' "$log" | median)
        python3 -c 'import json, sys
d = json.loads(sys.argv[1])
print("\t".join([sys.argv[2], sys.argv[3], str(d["achieved_rate"]), str(d["p50_ms"]), str(d["p99_ms"]), sys.argv[4]]))' \
            "$report" "$round" "$variant" "$import" | tee -a "$rows"
    done
done

python3 - "$rows" <<'PY'
import csv, statistics, sys
by = {}
for row in csv.DictReader(open(sys.argv[1]), delimiter="\t"):
    by.setdefault(row["variant"], {})[row["round"]] = row
print(f"\nmedians of the per-round ratios to tokio ({sys.argv[1]}):")
print("| variant | p50 | p99 | import |\n|---|---|---|---|")
for variant in (v for v in by if v != "tokio"):
    cells = []
    for key in ("p50_ms", "p99_ms", "import_rows_per_s"):
        ratios = [float(r[key]) / float(by["tokio"][n][key]) for n, r in by[variant].items()]
        cells.append(f"{statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f})")
    print(f"| {variant} | " + " | ".join(cells) + " |")
PY
