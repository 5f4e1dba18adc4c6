//! A small Redis-protocol key-value server with a background snapshot of
//! the whole map, for `redis-cli` and `redis-benchmark`.
//!
//! ```text
//! cargo run --release -p brigade-examples --example kv -- --workers 2
//! redis-benchmark -t get,set -n 200000 -c 20
//! ```
//!
//! Prints commands/s and the snapshot's keys/s and MB/s every second.
//! `--no-snapshot` turns the snapshot off; `--runtime tokio` runs the same
//! server and snapshot on tokio. See `examples/src/kv/mod.rs` for the
//! details and docs/results.md's "Key-value server under a snapshot" for
//! results.

use brigade_examples::kv::{self, Config};

fn main() {
    let config = match Config::parse(std::env::args().skip(1)) {
        Ok(config) => config,
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(if message == kv::HELP { 0 } else { 2 });
        }
    };
    if let Err(error) = kv::run(&config) {
        eprintln!("kv failed: {error}");
        std::process::exit(1);
    }
}
