#!/usr/bin/env bash
# Counts the `unsafe` sites in the crates' sources (comments left out):
# the blocks (each needs its `// SAFETY:` comment, which clippy's
# `undocumented_unsafe_blocks` enforces), and every other use of the
# keyword (an `unsafe fn` a trait requires, such as `FromRawFd::from_raw_fd`,
# and `unsafe impl Send`/`Sync`). With --list, prints each site.
#
# usage: scripts/unsafe_sites.sh [--list]
set -euo pipefail
cd "$(dirname "$0")/.."

sites() {
    grep -rnE --include='*.rs' '\bunsafe\b' crates/*/src |
        grep -vE '^[^:]+:[0-9]+:[[:space:]]*//' |
        grep -E 'unsafe (\{|fn|impl|trait|extern)|unsafe$' || true
}

if [[ ${1:-} == --list ]]; then
    sites
fi
blocks=$(sites | grep -c 'unsafe {' || true)
all=$(sites | wc -l)
echo "unsafe blocks: $blocks; unsafe fns and impls: $((all - blocks)); all sites: $all"
