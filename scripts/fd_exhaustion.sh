#!/usr/bin/env bash
# Runs examples/kv with few file descriptors, opens more client connections
# than it can accept, and measures the server's CPU while accept fails with
# EMFILE: an accept loop that spins shows ~100% of a core, one that backs
# off shows ~0%. Then closes the clients and checks the server accepts and
# answers again.
#
#   scripts/fd_exhaustion.sh [path/to/kv] [seconds]
#
# Default binary: target/release/examples/kv (built if missing); default
# window: 3 s. Needs prlimit (util-linux) and python3. Also samples the
# server's open descriptors through the window: with the table full the
# count stays the same (the runtime opens no file as it runs). A count one
# above the limit is a descriptor the server inherited above it.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/bench.sh
kv=${1:-target/release/examples/kv}
window=${2:-3}
if [[ ! -x $kv ]]; then
    cargo build --release -p brigade-examples --example kv
fi
nofile=${NOFILE:-64}
log=$(mktemp)
kill_server_at_exit
trap '[ -n "${server_pid:-}" ] && kill "$server_pid" 2>/dev/null; rm -f "$log"; true' EXIT
prlimit --nofile=$nofile:$nofile "$kv" --port 0 --workers 2 --no-snapshot --prefill 0 \
    --secs 600 >"$log" 2>&1 &
server_pid=$!
port=$(kv_port "$log" "$server_pid") || exit 1
python3 - "$port" "$server_pid" "$window" "$nofile" <<'PY'
import os, socket, sys, time
port, pid, window, nofile = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
ticks = os.sysconf("SC_CLK_TCK")

def cpu_seconds():
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / ticks  # utime + stime

def ping():
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"PING\r\n")
        return s.recv(64)

deadline = time.time() + 30
while True:
    try:
        ping(); break
    except OSError:
        if time.time() > deadline: sys.exit("the server did not start")
        time.sleep(0.05)
# More connections than descriptors: the rest wait in the backlog, and
# accept fails with EMFILE.
clients = [socket.create_connection(("127.0.0.1", port)) for _ in range(nofile + 16)]
time.sleep(0.5)
start_cpu, start = cpu_seconds(), time.time()
counts = set()
while time.time() - start < window:
    counts.add(len(os.listdir(f"/proc/{pid}/fd")))
    time.sleep(0.01)
used = cpu_seconds() - start_cpu
print(f"server CPU while out of descriptors: {100 * used / (time.time() - start):.1f}% of one core "
      f"({used:.2f} s in {window:.0f} s)")
print(f"server descriptors open meanwhile: {min(counts)}..{max(counts)} (limit {nofile})")
for c in clients: c.close()
deadline = time.time() + 10
while True:
    try:
        reply = ping(); break
    except OSError:
        if time.time() > deadline: sys.exit("the server did not recover")
        time.sleep(0.05)
print(f"after the clients left, the server answers: {reply!r}")
PY
lines=$(($(wc -l <"$log") - 1))
echo "server output after its first line: $lines lines"
