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
    println!();
    let relative = mixed_load::format_relative_throughput(&outcomes);
    if !relative.is_empty() {
        println!("\nbackground throughput relative to no yield points:");
        print!("{relative}");
    }
    let title = format!(
        "Foreground latency, {} workers, {} background tasks × {} µs units",
        config.workers, config.background_tasks, config.unit_us
    );
    write_chart(&config.out, mixed_load::render_svg(&outcomes, &title));
    let tradeoff = format!(
        "Foreground p99 against background share, {} workers, {} background tasks × {} µs units",
        config.workers, config.background_tasks, config.unit_us
    );
    write_chart(
        &config.out.with_file_name(format!(
            "{}_tradeoff.svg",
            config
                .out
                .file_stem()
                .map_or("mixed_load".into(), |stem| stem.to_string_lossy())
        )),
        mixed_load::render_tradeoff_svg(&outcomes, &tradeoff),
    );
}

fn write_chart(path: &std::path::Path, svg: String) {
    let written = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(path, svg));
    match written {
        Ok(()) => println!("chart written to {}", path.display()),
        Err(error) => eprintln!("could not write {}: {error}", path.display()),
    }
}
