#!/usr/bin/env bash
# Every source file that a comment or a document names (`runtime/scheduler/placement.rs`,
# `worker/step_aside.rs`, `task_host.rs`) exists: a path matches when some
# file of the repository ends with it; a bare file name in a crate's
# source, when a file of that crate's source has that name. Run after moving or renaming a
# module, so that no pointer to the old place is left behind. Prints each
# broken one ("file:line: path") and exits non-zero; prints "doc paths: ok"
# otherwise. Under a second; CI runs it. CHANGELOG.md and
# docs/decisions.md are history and name files as they were.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 - <<'PY'
import os, re, subprocess, sys

listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"],
                        capture_output=True, text=True, check=True).stdout.split()
files = [f for f in listed if os.path.isfile(f) and not f.startswith("target/")]
# Placeholders in prose ("X/mod.rs") and files that scripts write
# themselves are not pointers into the tree.
not_pointers = re.compile(r"(^|/)X[./]|^(fetch|project)/")
history = {"CHANGELOG.md", "docs/decisions.md"}
named = re.compile(r"`([A-Za-z0-9_./-]+\.rs)`|\b((?:[a-z0-9_]+/)+[a-z0-9_]+\.rs)\b")
broken = []
for f in files:
    if f in history or not f.endswith((".rs", ".md", ".sh")):
        continue
    with open(f, errors="replace") as text:
        for number, line in enumerate(text, 1):
            for quoted, bare in named.findall(line):
                path = (quoted or bare).removeprefix("./")
                if not_pointers.search(path):
                    continue
                # A bare file name in a crate's source names a file of
                # that crate's source; a path, a file anywhere.
                src = re.match(r"crates/[^/]+/src/", f)
                pool = [e for e in files if e.startswith(src.group(0))] if src and "/" not in path else files
                if not any(e == path or e.endswith("/" + path) for e in pool):
                    broken.append(f"{f}:{number}: {path}")
if broken:
    print("\n".join(broken), file=sys.stderr)
    print("doc paths: the files above name source files that do not exist", file=sys.stderr)
    sys.exit(1)
print("doc paths: ok")
PY
