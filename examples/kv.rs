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
//! server and snapshot on tokio; `--cpu-limit C` runs the server inside a
//! fresh cgroup with a quota of C CPUs (`examples/src/cgroup.rs`). See `examples/src/kv/mod.rs` for the
//! details and docs/results.md#kv for results.

use brigade_examples::kv::{self, Config};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match brigade_examples::cgroup::cpu_limit_flag(&args) {
        Ok(Some(cpus)) => brigade_examples::cgroup::rerun_inside_limit(cpus, "kv"),
        Ok(None) => {}
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(2);
        }
    }
    let config = match Config::parse(args) {
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
