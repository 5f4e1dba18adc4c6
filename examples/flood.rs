//! The flood demo: does yielded background work still run when foreground
//! work keeps every worker busy for good? Compares `max_yield_delay` values
//! (the yield queue's starvation bound) on the same load, interleaved.
//!
//! ```text
//! cargo run --release -p brigade-examples --example flood
//! cargo run --release -p brigade-examples --example flood -- --delays-ms off,25,50,100
//! cargo run --release -p brigade-examples --example flood -- --bg-yield now
//! ```
//!
//! See `examples/src/flood.rs` for the load and what is measured.

use brigade_examples::flood::{self, Config};

fn main() {
    let config = match Config::parse(std::env::args().skip(1)) {
        Ok(config) => config,
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(if message == flood::HELP { 0 } else { 2 });
        }
    };
    match flood::run(&config) {
        Ok(runs) => print!("\n{}", flood::format_table(&config, &runs)),
        Err(error) => {
            eprintln!("flood failed: {error}");
            std::process::exit(1);
        }
    }
}
