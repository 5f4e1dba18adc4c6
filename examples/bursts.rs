//! Bursts on brigade and tokio: 10 million tasks at once, as many TCP
//! connections as the descriptor limit allows, and 1 million sleeps
//! aborted at once; memory per task, memory afterwards, errors.
//!
//! ```text
//! cargo run --release -p brigade-examples --example bursts
//! cargo run --release -p brigade-examples --example bursts -- --case timers --runtime brigade
//! ```
//!
//! Prints one markdown table per case, a row per runtime, each row measured
//! in a fresh child process. See `examples/src/bursts.rs` for what is
//! measured and docs/results.md#bursts for results.

use brigade_examples::bursts::{self, Config};

fn main() {
    let config = match Config::parse(std::env::args().skip(1)) {
        Ok(config) => config,
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(if message == bursts::HELP { 0 } else { 2 });
        }
    };
    if let Err(error) = bursts::run(&config) {
        eprintln!("bursts failed: {error}");
        std::process::exit(1);
    }
}
