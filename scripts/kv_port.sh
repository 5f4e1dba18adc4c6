# Sourced by the scripts that start `examples/kv.rs`: `kv_port LOG PID`
# waits (up to 60 s: the prefill comes first) for the server's
# "kv listening on 127.0.0.1:PORT ..." line in LOG and prints PORT. If the
# server exits or the time runs out, it shows LOG on stderr and returns 1.
kv_port() {
    local log=$1 pid=$2 port=
    for _ in $(seq 600); do
        port=$(sed -n 's/^kv listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$log" | head -1)
        [ -n "$port" ] && { echo "$port"; return 0; }
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    echo "kv did not start:" >&2
    cat "$log" >&2
    return 1
}
