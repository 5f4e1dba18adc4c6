#!/usr/bin/env bash
# The README's quickstart, as a newcomer follows it: a new project outside
# the workspace, depending on this clone's brigade by path (the dependency
# line the README gives), whose main.rs is the README's quickstart code.
# It must build and print what the example says. The project is made in a
# temporary directory, removed at the end; it builds into
# target/quickstart (the workspace's Cargo.lock seeds its lock file, so it
# gets the versions CI tests).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

project=$(mktemp -d)
trap 'rm -rf "$project"' EXIT
mkdir -p "$project/src"

# The dependency line and the code: the README's first toml and rust blocks
# after "## Quickstart", with the clone's path in place of the placeholder.
block() { # LANGUAGE
    awk -v lang="$1" '
        /^## Quickstart/ { inside = 1; next }
        inside && /^## / { exit }
        inside && $0 == "```" lang { take = 1; next }
        take && /^```/ { exit }
        take { print }
    ' README.md
}
dependency=$(block toml | grep '^brigade = ')
if [ -z "$dependency" ]; then
    echo "quickstart_check: no brigade dependency line in the README's quickstart" >&2
    exit 1
fi
block rust >"$project/src/main.rs"
if [ ! -s "$project/src/main.rs" ]; then
    echo "quickstart_check: no rust block in the README's quickstart" >&2
    exit 1
fi
cat >"$project/Cargo.toml" <<TOML
[package]
name = "quickstart"
version = "0.1.0"
edition = "2024"

[dependencies]
${dependency//\/path\/to\/brigade/$root}
TOML
cp Cargo.lock "$project/Cargo.lock"

echo "quickstart_check: $(grep '^brigade = ' "$project/Cargo.toml")"
output=$(CARGO_TARGET_DIR="$root/target/quickstart" \
    cargo run --quiet --manifest-path "$project/Cargo.toml")
echo "$output"
if ! grep -q "reply: pong, rows imported: 1000000" <<<"$output"; then
    echo "quickstart_check: the quickstart did not print what the README says" >&2
    exit 1
fi
