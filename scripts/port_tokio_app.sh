#!/usr/bin/env bash
# Ports a published tokio application to brigade by renames only, and runs
# the application's own, unchanged test suite on brigade (issue #26's
# acceptance test).
#
#   scripts/port_tokio_app.sh [CRATE [VERSION]]     default: mini-redis 0.4.1
#   PORT_RUNS=50 scripts/port_tokio_app.sh bb8 0.9.1
#
# The second form is issue #41's acceptance test: bb8, a connection pool,
# whose tests (`#[tokio::test]`, current-thread) rely on the body and its
# spawned tasks taking turns on one thread; its suite is run 50 times.
#
# Steps:
#   1. Fetch the crate's published package with cargo (a throwaway crate
#      that depends on exactly that version, `cargo metadata` to have cargo
#      download and unpack it), and copy it into a temporary directory.
#      Nothing of the application is stored in this repository.
#   2. Apply the renames of the issue's table to every `.rs` file, and only
#      those (see RENAMES below); tokio::sync, tokio::io, tokio::select! and
#      tokio-stream stay.
#   3. Add brigade as a path dependency of the copy (default features:
#      `tokio-io` and `macros`; BRIGADE_FEATURES adds more, e.g.
#      `BRIGADE_FEATURES=tokio-compat`), start from brigade's Cargo.lock so
#      shared dependencies resolve to the versions brigade is tested with.
#   4. `cargo test` the copy: its lib, bins, integration tests and doc tests.
#
# Environment:
#   PORT_WORK_DIR     where to put the copy (default: a new temp dir, kept
#                     so failures can be looked at; its path is printed)
#   CARGO_TARGET_DIR  build directory (default: target/port-tokio-app in
#                     this repository, so reruns are incremental)
#   BRIGADE_FEATURES  extra brigade features, comma-separated
#   PORT_TEST_ARGS    extra arguments for `cargo test` (e.g. `--test server`)
#   PORT_RUNS         run the suite this many times (default 1); step 5
#                     then prints how many runs passed, and how often each
#                     failing test failed (a flaky port: a semantic gap)
#
# Exit status: cargo test's (with PORT_RUNS, 0 only if every run passed).
# A failure is a change the port needed that is more than a rename:
# docs/porting.md lists them.

set -euo pipefail

crate=${1:-mini-redis}
version=${2:-0.4.1}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=${PORT_WORK_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/port-${crate}.XXXXXX")}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$repo/target/port-tokio-app}

# The renames of issue #26, as sed expressions over paths (and the two
# attributes). `\b` leaves `tokio::task_local!` (executor-agnostic) alone.
RENAMES=(
    -e 's/#\[tokio::main\b/#[brigade::main/g'
    -e 's/#\[tokio::test\b/#[brigade::test/g'
    -e 's/\btokio::spawn\b/brigade::spawn/g'
    -e 's/\btokio::net\b/brigade::net/g'
    -e 's/\btokio::time\b/brigade::time/g'
    -e 's/\btokio::signal\b/brigade::signal/g'
    -e 's/\btokio::task\b/brigade::task/g'
    -e 's/\btokio::runtime\b/brigade::runtime/g'
)

step() { printf '\n== %s\n' "$*" >&2; }

step "1. fetch ${crate} ${version} with cargo"
fetch="$work/fetch"
mkdir -p "$fetch/src"
cat >"$fetch/Cargo.toml" <<EOF
[package]
name = "port-fetch"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
${crate} = "=${version}"

[workspace]
EOF
: >"$fetch/src/lib.rs"
manifest=$(cargo metadata --manifest-path "$fetch/Cargo.toml" --format-version 1 |
    grep -o "\"manifest_path\":\"[^\"]*/${crate}-${version}/Cargo.toml\"" |
    head -n 1 | cut -d'"' -f4)
if [[ -z "$manifest" ]]; then
    echo "could not find ${crate} ${version}'s unpacked package" >&2
    exit 2
fi
app="$work/app"
rm -rf "$app"
cp -R "$(dirname "$manifest")" "$app"
chmod -R u+w "$app"
echo "copied $(dirname "$manifest") to $app" >&2

step "2. renames"
find "$app" -name '*.rs' -print0 | xargs -0 sed -i -E "${RENAMES[@]}"
grep -rnE 'brigade::' --include='*.rs' "$app" | sed "s|^$app/||" >"$work/renamed.txt" || true
echo "$(wc -l <"$work/renamed.txt") lines now name brigade (list: $work/renamed.txt)" >&2
grep -rnE '\btokio::(spawn|net|time|signal|runtime)\b|#\[tokio::' --include='*.rs' "$app" \
    | sed "s|^$app/||" >"$work/not_renamed.txt" || true
if [[ -s "$work/not_renamed.txt" ]]; then
    echo "left on tokio (grouped imports the renames do not reach):" >&2
    cat "$work/not_renamed.txt" >&2
fi

step "3. brigade as a path dependency"
features=""
if [[ -n "${BRIGADE_FEATURES:-}" ]]; then
    features="features = [$(sed -E 's/[^,]+/"&"/g' <<<"$BRIGADE_FEATURES")]"
fi
cat >>"$app/Cargo.toml" <<EOF

[dependencies.brigade]
path = "$repo/crates/brigade"
$features

[workspace]
EOF
cp "$repo/Cargo.lock" "$app/Cargo.lock"

step "4. cargo test (the application's own suite)"
echo "work dir: $work; build dir: $CARGO_TARGET_DIR" >&2
status=0
# shellcheck disable=SC2086 # PORT_TEST_ARGS is split on purpose.
cargo test --manifest-path "$app/Cargo.toml" --no-fail-fast ${PORT_TEST_ARGS:-} 2>&1 |
    tee "$work/test.log" || status=$?
echo "full log: $work/test.log" >&2
runs=${PORT_RUNS:-1}
if ((runs <= 1)); then
    exit "$status"
fi

step "5. the suite ${runs} times"
passed=0
: >"$work/failures.txt"
for ((run = 1; run <= runs; run++)); do
    log="$work/run-${run}.log"
    # shellcheck disable=SC2086 # PORT_TEST_ARGS is split on purpose.
    if cargo test --manifest-path "$app/Cargo.toml" --no-fail-fast ${PORT_TEST_ARGS:-} \
        >"$log" 2>&1; then
        passed=$((passed + 1))
        rm -f "$log"
    else
        grep -E '^test .* FAILED$' "$log" | sed -E 's/^test (.*) \.\.\. FAILED$/\1/' \
            >>"$work/failures.txt" || true
    fi
    echo "run ${run}: ${passed} of ${run} passed so far" >&2
done
echo "${passed} of ${runs} runs passed" >&2
if [[ -s "$work/failures.txt" ]]; then
    echo "failing tests (count, name; logs of failed runs: $work/run-N.log):" >&2
    sort "$work/failures.txt" | uniq -c | sort -rn >&2
fi
((passed == runs))
