#!/usr/bin/env bash
# Every citation of docs/results.md or docs/decisions.md by anchor
# (`results.md#crowded-host`) names an anchor that exists
# (`<a id="crowded-host"></a>`), in-page links too, and no anchor is
# defined twice. Prints each broken one and exits non-zero; prints
# "doc anchors: ok" otherwise. Under a second; CI runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
broken=$(
    git ls-files -co --exclude-standard | grep -v '^target/' | while read -r f; do
        [ -f "$f" ] || continue
        grep -oE '(results|decisions)\.md#[A-Za-z0-9_-]+' "$f" | while read -r c; do
            doc=docs/${c%%#*} id=${c#*#}
            grep -qF "<a id=\"$id\"></a>" "$doc" || echo "missing: $f cites $c"
        done || true
    done
    for doc in docs/results.md docs/decisions.md; do
        grep -oE '\]\(#[A-Za-z0-9_-]+\)' "$doc" | sed 's/^](#//; s/)$//' | while read -r id; do
            grep -qF "<a id=\"$id\"></a>" "$doc" || echo "missing: $doc links #$id"
        done || true
        grep -oE '<a id="[^"]+"></a>' "$doc" | sort | uniq -d | sed "s|^|defined twice in $doc: |" || true
    done
)
if [ -n "$broken" ]; then
    echo "$broken" >&2
    exit 1
fi
echo "doc anchors: ok"
