//! An HTTP server under a bulk import: hyper on brigade answering `GET /`,
//! next to an optional CPU-bound import that hashes rows at full speed.
//!
//! ```text
//! cargo run --release -p brigade-examples --example http_import -- --import
//! wrk -t1 -c16 -d10s --latency http://127.0.0.1:8080/
//! ```
//!
//! Prints requests/s and rows imported/s every second. `--no-yield` runs the
//! import without yield points; `--runtime tokio` runs the same server and
//! import on tokio. See `examples/src/http_import.rs` for the details and
//! docs/results.md#http-import for results.

use brigade_examples::http_import::{self, Config};

fn main() {
    let config = match Config::parse(std::env::args().skip(1)) {
        Ok(config) => config,
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(if message == http_import::HELP { 0 } else { 2 });
        }
    };
    if let Err(error) = http_import::run(&config) {
        eprintln!("http_import failed: {error}");
        std::process::exit(1);
    }
}
