#!/usr/bin/env bash
# Checks that the published crates (brigade, brigade-macros, brigade-hyper)
# are ready for crates.io, without publishing anything:
#
# 1. `cargo package` packs the three together, so that brigade-hyper's
#    dependency on the unpublished brigade resolves to the brigade packed
#    beside it, and verifies each: it builds the packed crate alone, outside
#    the workspace, as a user would get it from crates.io. This needs
#    crates.io for the index and the dependencies.
# 2. Each package holds its README and both licence files.
# 3. The workspace's `rust-version` is true: the three crates build with that
#    toolchain (all features). Skipped, with a message, when that toolchain
#    is not installed.
# 4. docs.rs's build: nightly rustdoc with `--cfg docsrs` and all features,
#    as `[package.metadata.docs.rs]` in crates/brigade/Cargo.toml asks.
#    Skipped, with a message, without a nightly toolchain.
#
# On a 2-core machine, from a fresh clone with nothing built: about 50 s in
# all (3 and 4 build in their own folders, target/msrv and target/docsrs).
set -euo pipefail
cd "$(dirname "$0")/.."

crates=(brigade brigade-macros brigade-hyper)
packages=()
for crate in "${crates[@]}"; do packages+=(-p "$crate"); done

# --allow-dirty: .ci/run also runs on working trees with changes not yet
# committed; what is checked is what would be packed, not that it is
# committed.
cargo package "${packages[@]}" --locked --allow-dirty

for crate in "${crates[@]}"; do
  listing="$(cargo package -p "$crate" --list --locked --allow-dirty)"
  for file in README.md LICENSE-MIT LICENSE-APACHE; do
    if ! grep -qx "$file" <<<"$listing"; then
      echo "error: the $crate package lacks $file" >&2
      exit 1
    fi
  done
done
echo "packages hold README.md, LICENSE-MIT and LICENSE-APACHE"

msrv="$(sed -n 's/^rust-version = "\(.*\)"/\1/p' Cargo.toml)"
if cargo "+$msrv" --version >/dev/null 2>&1; then
  CARGO_TARGET_DIR=target/msrv cargo "+$msrv" check "${packages[@]}" \
    --all-features --locked
else
  echo "rust-version check skipped: no $msrv toolchain" \
    "(rustup toolchain install $msrv --profile minimal)"
fi

if cargo +nightly --version >/dev/null 2>&1; then
  RUSTDOCFLAGS="--cfg docsrs" CARGO_TARGET_DIR=target/docsrs \
    cargo +nightly doc "${packages[@]}" --all-features --no-deps --locked
else
  echo "docs.rs build skipped: no nightly toolchain"
fi
