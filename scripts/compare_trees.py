#!/usr/bin/env python3
"""The table of scripts/compare_trees.sh: for each measure, the median
brigade/tokio ratio of each commit over the rounds, its range, and
after/before. Reads the outputs that script writes into RUNS.

usage: compare_trees.py RUNS BEFORE_NAME AFTER_NAME
"""
import collections
import glob
import re
import statistics
import sys

runs, before_name, after_name = sys.argv[1:4]
# measure -> "before"/"after" -> one brigade/tokio ratio per round
ratios = collections.defaultdict(lambda: collections.defaultdict(list))


def micros(cell):
    number, unit = cell.split()
    return float(number) * (1000 if unit == "ms" else 1)


def mixed_load(path, tree):
    """p99 and background share of yield_if_busy against tokio's yield_now."""
    case, rows = None, {}
    row = re.compile(r"^(\S+/\S+)\s+(\S+ \S+)\s+(\S+ \S+)\s+(\S+ \S+)\s+(\S+ \S+)\s+\S+\s+(\S+)")
    for line in open(path):
        heading = re.match(r"^(foreground alone|quiet host|crowded host)", line)
        if heading:
            case = heading.group(1)
            continue
        cells = row.match(line)
        if cells and case:
            try:
                rows[(case, cells.group(1))] = (micros(cells.group(3)), cells.group(6))
            except ValueError:
                pass
    for case in ("quiet host", "crowded host"):
        ours, theirs = rows.get((case, "brigade/yield_if_busy")), rows.get((case, "tokio/yield_now"))
        if ours and theirs:
            ratios[f"mixed_load {case}: p99"][tree].append(ours[0] / theirs[0])
            ratios[f"mixed_load {case}: background share"][tree].append(float(ours[1]) / float(theirs[1]))
    ours, theirs = rows.get(("foreground alone", "idle/brigade")), rows.get(("foreground alone", "idle/tokio"))
    if ours and theirs:
        ratios["mixed_load alone: p99"][tree].append(ours[0] / theirs[0])


def json_number(path, key):
    found = re.search(r'"%s":([0-9.eE+-]+)' % key, open(path).read())
    return float(found.group(1)) if found else None


def kv(path, tree, round_):
    tokio = path.replace("-brigade.json", "-tokio.json")
    for key in ("p50_ms", "p99_ms"):
        ours, theirs = json_number(path, key), json_number(tokio, key)
        if ours and theirs:
            ratios[f"kv, 20k requests/s beside a snapshot: {key[:-3]}"][tree].append(ours / theirs)
    snapshot = [open(f"{runs}/kv-snapshot-{round_}-{tree}-{rt}.txt").read().strip() for rt in ("brigade", "tokio")]
    if "-" not in snapshot:
        ratios["kv snapshot MB/s"][tree].append(float(snapshot[0]) / float(snapshot[1]))


UNITS = {"ps": 1e-6, "ns": 1e-3, "µs": 1, "us": 1, "ms": 1e3, "s": 1e6}


def rt_compare(path, tree):
    """criterion's `NAME time: [low median high]`, NAME = workload/runtime."""
    times, name = {}, None
    for line in open(path):
        line = line.strip()
        alone = re.match(r"^(\S+/(?:brigade|tokio))$", line)
        if alone:
            name = alone.group(1)
        timed = re.match(r"^(\S+/(?:brigade|tokio))?\s*time:\s+\[\S+ \S+ (\S+) (\S+) \S+ \S+\]", line)
        if timed:
            times[timed.group(1) or name] = float(timed.group(2)) * UNITS[timed.group(3)]
    for name, ours in times.items():
        workload = name.rsplit("/", 1)[0]
        if name.endswith("/brigade") and f"{workload}/tokio" in times:
            ratios[f"rt_compare {workload}: time"][tree].append(ours / times[f"{workload}/tokio"])


for path in glob.glob(f"{runs}/mixed-load-*.txt"):
    mixed_load(path, re.search(r"-(before|after)\.txt$", path).group(1))
for path in glob.glob(f"{runs}/kv-load-*-brigade.json"):
    round_, tree = re.search(r"kv-load-(\d+)-(before|after)-brigade", path).groups()
    kv(path, tree, round_)
for path in glob.glob(f"{runs}/rt-compare-*.txt"):
    rt_compare(path, re.search(r"-(before|after)\.txt$", path).group(1))

print(f"| brigade / tokio, median (range) | before ({before_name}) | after ({after_name}) | after / before |")
print("|---|---|---|---|")
for measure in sorted(ratios):
    b, a = ratios[measure]["before"], ratios[measure]["after"]
    if b and a:
        mb, ma = statistics.median(b), statistics.median(a)
        print(f"| {measure} | {mb:.3f} ({min(b):.2f}–{max(b):.2f}) | {ma:.3f} ({min(a):.2f}–{max(a):.2f}) | {ma / mb:.2f} |")
