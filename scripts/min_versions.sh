#!/usr/bin/env bash
# Checks that the lowest tokio the workspace's Cargo.toml declares
# (`tokio = { version = "X.Y", ... }` under [workspace.dependencies]) really
# builds brigade: in a scratch copy of brigade and brigade-macros alone, the
# lock file's tokio goes down to X.Y.0 (the repository's Cargo.lock is not
# touched), then brigade is checked with its default features and with
# `tokio-compat` (every target), and the tokio-compat tests run.
#
# Only brigade and its macros: the other members depend on hyper, whose h2
# needs a newer tokio-util, which needs a newer tokio; Cargo picks that for
# their users by itself. (On 2026-11-28, with tokio-util held at 0.7.17,
# the whole workspace checked, and the tokio-compat tests passed, on tokio
# 1.47.0; on 1.46.1 brigade's `tokio-compat` does not build:
# `poll_proceed` is private there.)
#
#   scripts/min_versions.sh
#
# Needs crates.io (the index and the tokio crate of that version), like
# scripts/publish_check.sh. Builds in target/min-versions (about a minute
# on 2 cores from nothing, a few seconds after).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

declared="$(sed -n 's/^tokio = { version = "\([0-9.]*\)".*/\1/p' Cargo.toml)"
case "$declared" in
  *.*.*) lowest=$declared ;;
  *.*) lowest=$declared.0 ;;
  *)
    echo "error: Cargo.toml declares tokio '$declared'; declare its lowest minor (\"1.N\")" >&2
    exit 1
    ;;
esac

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
git ls-files -z --cached --others --exclude-standard -- \
    Cargo.toml Cargo.lock crates/brigade crates/brigade-macros |
  tar --null -T - -c | tar -x -C "$scratch"
cd "$scratch"
sed -i 's|^members = .*|members = ["crates/brigade", "crates/brigade-macros"]|' Cargo.toml

cargo update --quiet -p tokio --precise "$lowest"
resolved="$(grep -A1 '^name = "tokio"$' Cargo.lock | sed -n 's/^version = "\(.*\)"/\1/p')"
if [[ $resolved != "$lowest" ]]; then
  echo "error: tokio resolved to $resolved, not $lowest" >&2
  exit 1
fi
echo "brigade against tokio $resolved (declared: $declared)"

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target/min-versions}"
cargo check -p brigade --all-targets --locked
cargo check -p brigade --all-targets --features tokio-compat --locked
cargo test -p brigade --features tokio-compat --locked \
  --test tokio_compat --test tokio_compat_events
echo "tokio $lowest is enough for brigade, tokio-compat included"
