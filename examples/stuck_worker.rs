//! The stuck-worker demo: what blocking calls made from async code do to
//! the other tasks, on brigade with compensation for stuck workers, brigade
//! without it (`compensation_threshold(None)`) and tokio, side by side.
//!
//! ```text
//! cargo run --release -p brigade-examples --example stuck_worker
//! cargo run --release -p brigade-examples --example stuck_worker -- --workers 1
//! cargo run --release -p brigade-examples --example stuck_worker -- --quick
//! ```
//!
//! Part 1 stalls every worker in a 2.5 s `std::thread::sleep` and measures
//! how long tasks spawned meanwhile wait to start; part 2 measures echo
//! round trips while one task per worker blocks it for 200 ms every second.
//! Prints a line per run and, at the end, markdown tables of the median
//! round. See `examples/src/stuck_worker.rs` for what is measured and how.

use brigade_examples::stuck_worker::{self, Config};

fn main() {
    let config = match Config::parse(std::env::args().skip(1)) {
        Ok(config) => config,
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(if message == stuck_worker::HELP { 0 } else { 2 });
        }
    };
    match stuck_worker::run(&config) {
        Ok(rows) => print!("\n{}", stuck_worker::format_tables(&config, &rows)),
        Err(error) => {
            eprintln!("stuck_worker failed: {error}");
            std::process::exit(1);
        }
    }
}
