#!/usr/bin/env python3
"""Lines up a load's slow requests with what the server's threads did.

Input:
  - the slow requests from `kv_load --slow-log FILE` (due and reply times,
    CLOCK_MONOTONIC ns);
  - a scheduler trace of the same seconds, recorded on the same clock:
      perf record -k CLOCK_MONOTONIC -a -e sched:sched_switch \\
          -e sched:sched_wakeup -o sched.data -- sleep 3

Slow requests whose due-to-reply spans overlap are merged into episodes.
For each episode it measures, from the trace, how long each CPU sat idle
and how long each server thread ran or waited for a CPU (runnable: woken,
or preempted, and not yet running). An episode where a CPU was idle for
a third of it or more while a server thread waited for a CPU is one where
the kernel kept the server's threads off an idle CPU ("stacked"): no
runtime can serve requests then with the thread that waits.

usage: scripts/tail_episodes.py SLOW_LOG SCHED_DATA SERVER_COMM [--top N]
  SERVER_COMM: a substring of the server's thread names (`http-import`,
  `kv-brigade`, ...). Needs `perf` on the PATH. Not part of CI.

Example (2 workers, a fixed 20,000 requests/s;
docs/decisions.md#http-import-tail):
  target/release/examples/http_import --workers 2 --import --port 8080 --secs 22 &
  sleep 2
  target/release/examples/kv_load --http --addr 127.0.0.1:8080 --rate 20000 \\
      --connections 16 --secs 18 --slow-log /tmp/slow.txt --slow-ms 0.4 &
  sleep 10; perf record -k CLOCK_MONOTONIC -a -e sched:sched_switch \\
      -e sched:sched_wakeup -o /tmp/sched.data -- sleep 3; wait
  scripts/tail_episodes.py /tmp/slow.txt /tmp/sched.data http-import
"""

import bisect
import collections
import re
import subprocess
import sys

SWITCH = re.compile(
    r"prev_comm=(.*?) prev_pid=(\d+) prev_prio=\d+ prev_state=(\S+) ==> "
    r"next_comm=(.*?) next_pid=(\d+)"
)
WAKEUP = re.compile(r"comm=(.*?) pid=(\d+) prio=\d+ target_cpu=(\d+)")


def read_slow(path):
    """(due, reply) pairs in seconds."""
    slow = []
    with open(path) as lines:
        for line in lines:
            if line.startswith("#") or not line.strip():
                continue
            due, reply = line.split()
            slow.append((int(due) / 1e9, int(reply) / 1e9))
    return slow


def read_trace(path, server):
    """Per-CPU run intervals (start, end, "comm/tid") and the server
    threads' runnable-but-waiting intervals (start, end, tid)."""
    script = subprocess.run(
        ["perf", "script", "-i", path, "-F", "cpu,time,event,trace"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    on_cpu, since = {}, {}
    runs = collections.defaultdict(list)
    waits, runnable_since = [], {}
    for line in script.splitlines():
        fields = line.split()
        if len(fields) < 3:
            continue
        cpu = int(fields[0].strip("[]"))
        at = float(fields[1].rstrip(":"))
        if "sched_switch" in line:
            match = SWITCH.search(line)
            if not match:
                continue
            prev_comm, prev_tid, prev_state, next_comm, next_tid = match.groups()
            if cpu in on_cpu:
                runs[cpu].append((since[cpu], at, on_cpu[cpu]))
            on_cpu[cpu], since[cpu] = f"{next_comm}/{next_tid}", at
            if server in prev_comm and prev_state.startswith("R"):
                runnable_since[prev_tid] = at  # preempted: still runnable
            if server in next_comm and next_tid in runnable_since:
                waits.append((runnable_since.pop(next_tid), at, next_tid))
        elif "sched_wakeup" in line:
            match = WAKEUP.search(line)
            if match and server in match.group(1):
                runnable_since[match.group(2)] = at
    return runs, waits


def episodes_of(slow):
    """Merges overlapping (due, reply) spans: [start, end, requests]."""
    merged = []
    for due, reply in sorted(slow):
        if merged and due <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], reply)
            merged[-1][2] += 1
        else:
            merged.append([due, reply, 1])
    return merged


class Intervals:
    """(start, end, ...) tuples, sorted, with the overlap with a span
    found by bisection (the longest interval bounds the look back)."""

    def __init__(self, intervals):
        self.items = sorted(intervals)
        self.starts = [item[0] for item in self.items]
        self.longest = max((item[1] - item[0] for item in self.items), default=0.0)

    def overlapping(self, start, end):
        index = bisect.bisect_left(self.starts, start - self.longest)
        while index < len(self.items) and self.items[index][0] < end:
            item = self.items[index]
            if item[1] > start:
                yield item, min(item[1], end) - max(item[0], start)
            index += 1

    def overlap(self, start, end):
        return sum(length for _, length in self.overlapping(start, end))


def main(argv):
    if len(argv) < 4:
        print(__doc__)
        return 2
    slow_path, trace_path, server = argv[1:4]
    top = int(argv[argv.index("--top") + 1]) if "--top" in argv else 5
    runs, waits = read_trace(trace_path, server)
    if not runs:
        print("no sched_switch events in the trace")
        return 1
    first = min(r[0][0] for r in runs.values())
    last = max(r[-1][1] for r in runs.values())
    slow = [(d, r) for d, r in read_slow(slow_path) if first < d and r < last]
    episodes = episodes_of(slow)
    print(
        f"{len(slow)} slow requests in the trace's {last - first:.2f} s, "
        f"{len(episodes)} episodes"
    )
    cpus = sorted(runs)
    idle_of = {cpu: Intervals(x for x in runs[cpu] if x[2].startswith("swapper")) for cpu in cpus}
    server_runs = Intervals(
        (s, e, task) for cpu in cpus for s, e, task in runs[cpu] if server in task
    )
    waiting = Intervals(waits)
    kinds = collections.Counter()
    details = []
    for start, end, requests in episodes:
        length = end - start
        idle = [idle_of[cpu].overlap(start, end) / length for cpu in cpus]
        waited = waiting.overlap(start, end) / length
        if max(idle) >= 1 / 3 and waited >= 1 / 3:
            kind = "stacked: a CPU idle while a server thread waited for one"
        elif waited >= 1 / 3:
            kind = "crowded: a server thread waited for a CPU, none idle"
        else:
            kind = "server threads ran or slept"
        kinds[kind] += requests
        details.append((length, requests, start, end, idle))
    for kind, requests in kinds.most_common():
        print(f"  {requests:6d} slow requests ({100 * requests / max(1, len(slow)):.0f}%): {kind}")
    print(f"longest {top} episodes:")
    for length, requests, start, end, idle in sorted(details, reverse=True)[:top]:
        threads = collections.defaultdict(lambda: [0.0, 0.0])
        for (_, _, task), ran in server_runs.overlapping(start, end):
            threads[task.split("/")[1]][0] += ran
        for (_, _, tid), wait in waiting.overlapping(start, end):
            threads[tid][1] += wait
        idle_text = ", ".join(f"cpu{c} idle {100 * i:.0f}%" for c, i in zip(cpus, idle))
        thread_text = ", ".join(
            f"{tid} ran {ran * 1e3:.2f} waited {wait * 1e3:.2f} ms"
            for tid, (ran, wait) in sorted(threads.items())
        )
        print(f"  {length * 1e3:.2f} ms, {requests} slow: {idle_text}; {thread_text}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
