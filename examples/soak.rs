//! Soak test: one brigade runtime under mixed load for minutes, watching for
//! leaks (memory, file descriptors, tasks), failed or lost requests, aborts
//! that do not take and a runtime that will not drop. Not part of CI (it
//! runs for minutes): `scripts/soak.sh --minutes 10 --workers 2 --sample-secs 10`.
//!
//! Prints a progress line every `--sample-secs`, then a summary and a
//! verdict, PASS or FAIL with the reasons (exit status 1 on FAIL). See
//! `examples/src/soak.rs` for what runs and what PASS needs.

use brigade_examples::soak::{self, Config, LiveHeap};

/// Counts live heap bytes, for the leak check.
#[global_allocator]
static HEAP: LiveHeap = LiveHeap::new();

fn main() {
    let config = match Config::parse(std::env::args().skip(1)) {
        Ok(config) => config,
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(if message == soak::HELP { 0 } else { 2 });
        }
    };
    let pass = soak::run(&config, &HEAP).unwrap_or_else(|error| {
        eprintln!("soak failed: {error}");
        false
    });
    std::process::exit(if pass { 0 } else { 1 });
}
