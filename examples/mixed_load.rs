//! The mixed-load demo: foreground request latency while background tasks
//! saturate every worker, on brigade and on tokio, side by side.
//!
//! ```text
//! cargo run --release -p brigade-examples --example mixed_load -- --bg 8 --unit-us 10
//! ```
//!
//! Prints a table (p50, p99, p99.9, max latency, background CPU share) and
//! writes an SVG chart to `target/brigade-report/mixed_load.svg`. See
//! `examples/src/mixed_load.rs` for what is measured and how.

use brigade_examples::mixed_load::{self, Config};

fn main() {
    let config = match Config::parse(std::env::args().skip(1)) {
        Ok(config) => config,
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(if message == mixed_load::HELP { 0 } else { 2 });
        }
    };
    let outcomes = match mixed_load::run(&config) {
        Ok(outcomes) => outcomes,
        Err(error) => {
            eprintln!("mixed_load failed: {error}");
            std::process::exit(1);
        }
    };
    println!();
    print!("{}", mixed_load::format_table(&outcomes));
    let relative = mixed_load::format_relative_throughput(&outcomes);
    if !relative.is_empty() {
        println!("\nbackground throughput relative to no yield points:");
        print!("{relative}");
    }
    let title = format!(
        "Foreground latency, {} workers, {} background tasks × {} µs units",
        config.workers, config.background_tasks, config.unit_us
    );
    let svg = mixed_load::render_svg(&outcomes, &title);
    let written = config
        .out
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(&config.out, svg));
    match written {
        Ok(()) => println!("\nchart written to {}", config.out.display()),
        Err(error) => eprintln!("\ncould not write {}: {error}", config.out.display()),
    }
}
