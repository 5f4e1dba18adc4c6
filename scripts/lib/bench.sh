# Helpers shared by the benchmark scripts in scripts/. Sourced, not run,
# right after the script's `cd` to the repository root, from where the
# path holds wherever the script was started:
#
#   cd "$(dirname "$0")/.."
#   source scripts/lib/bench.sh
#
# It defines functions only: it sets no shell option, no variable and no
# trap until a function is called. Each function says what it reads and
# what it prints; the ones that handle a server started in the background
# use the caller's global `server_pid`.

# wait_port LOG PID SED_SCRIPT NAME [TRIES [INTERVAL]]
#
# Waits for a server started in the background (process PID, writing to
# LOG) to print the line that names its port, and prints the port.
# SED_SCRIPT is a `sed -n` script that prints the port from that line
# (e.g. 's/^listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p'); the first match
# counts. It looks TRIES times (default 600), INTERVAL seconds apart
# (default 0.1: a bound of 60 s, long enough for kv's prefill). If PID
# exits first or the time runs out, it prints "NAME did not start:" and LOG
# on stderr and returns 1; callers write `port=$(wait_port ...) || exit 1`.
wait_port() {
    local log=$1 pid=$2 script=$3 name=$4 tries=${5:-600} interval=${6:-0.1} port=
    for _ in $(seq "$tries"); do
        port=$(sed -n "$script" "$log" | head -1)
        [ -n "$port" ] && { echo "$port"; return 0; }
        kill -0 "$pid" 2>/dev/null || break
        sleep "$interval"
    done
    echo "$name did not start:" >&2
    cat "$log" >&2
    return 1
}

# kv_port LOG PID [TRIES [INTERVAL]]
#
# wait_port for examples/kv.rs, whose first line is "kv listening on
# 127.0.0.1:PORT ..." (printed once the prefill is done).
kv_port() {
    wait_port "$1" "$2" 's/^kv listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' kv "${@:3}"
}

# kill_server_at_exit
#
# Clears `server_pid` and sets an EXIT trap that kills the server it names,
# if any, so that a script stopped midway (an error, Ctrl-C) leaves no
# server behind. The trap replaces any other EXIT trap of the script.
kill_server_at_exit() {
    server_pid=
    trap '[ -n "${server_pid:-}" ] && kill "$server_pid" 2>/dev/null; true' EXIT
}

# stop_server
#
# Stops the server `server_pid` names (SIGTERM), waits for it, and clears
# `server_pid`. A server that has already exited is not an error.
stop_server() {
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=
}

# to_ms FIGURE
#
# A latency as wrk prints it (1.23ms, 456.00us, 1.01s) in ms, with three
# decimals; "-" for anything else (an empty figure: wrk printed none).
to_ms() {
    awk -v v="$1" 'BEGIN {
        if (v ~ /us$/) printf "%.3f", v / 1000; else if (v ~ /ms$/) printf "%.3f", v + 0;
        else if (v ~ /s$/) printf "%.3f", v * 1000; else printf "-" }'
}

# wrk_figures FILE
#
# From the output of `wrk --latency` in FILE, prints "RPS P50 P99":
# requests/s (a whole number) and the 50% and 99% latencies in ms (to_ms).
# A figure wrk did not print (it failed, or ran past its timeout) is "-".
wrk_figures() {
    local rps
    rps=$(awk '/^Requests\/sec:/ { printf "%.0f", $2 }' "$1")
    echo "${rps:--} $(to_ms "$(awk '$1 == "50%" { print $2 }' "$1")")" \
        "$(to_ms "$(awk '$1 == "99%" { print $2 }' "$1")")"
}

# median
#
# The median of the numbers on stdin, one a line: the middle one in
# numeric order, the lower of the two middle ones for an even count; 0 for
# none.
median() {
    sort -n | awk '{v[NR] = $1} END {print (NR ? v[int((NR + 1) / 2)] : 0)}'
}

# json_number FIELD FILE
#
# The number FIELD of a one-line JSON object in FILE (kv_load --json's
# summary, e.g. `json_number p99_ms load.json`); nothing if it is absent.
json_number() {
    sed -n "s/.*\"$1\":\([0-9.eE+-]*\).*/\1/p" "$2"
}

# snapshot_mbps LOG FROM TO
#
# The mean snapshot MB/s (the 9th field of the per-second
# "... commands/s ..." lines) that examples/kv.rs printed in lines FROM..TO
# of LOG, with one decimal; "-" if there is no such line.
snapshot_mbps() {
    sed -n "$2,$3p" "$1" |
        awk '/ commands\/s / { n++; m += $9 } END { if (n) printf "%.1f\n", m / n; else print "-" }'
}

# runtime_order ROUND
#
# The order in which round ROUND runs the two runtimes: "brigade tokio" in
# odd rounds, "tokio brigade" in even ones, so that neither always goes
# first on a host that drifts.
runtime_order() {
    if [ $(($1 % 2)) = 1 ]; then echo "brigade tokio"; else echo "tokio brigade"; fi
}

# whole_numbers VALUE...
#
# Exits the script with status 2, saying "not a whole number: VALUE" on
# stderr, unless every VALUE is digits only (a flag's argument).
whole_numbers() {
    local number
    for number in "$@"; do
        [[ "$number" =~ ^[0-9]+$ ]] || { echo "not a whole number: $number" >&2; exit 2; }
    done
}

# process_ticks PID
#
# The CPU time process PID has used so far, user plus system, in clock
# ticks (`getconf CLK_TCK` a second), from /proc/PID/stat (read after the
# command name, which may hold spaces).
process_ticks() {
    awk '{sub(/.*\) /, ""); print $12 + $13}' "/proc/$1/stat"
}
