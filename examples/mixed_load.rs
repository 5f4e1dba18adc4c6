//! The mixed-load demo: foreground request latency while background tasks
//! saturate every worker, on brigade and on tokio, side by side.
//!
//! ```text
//! cargo run --release -p brigade-examples --example mixed_load
//! cargo run --release -p brigade-examples --example mixed_load -- --all --rounds 3
//! ```
//!
//! Without flags it runs the foreground alone, then 64 background tasks ×
//! 100 µs units on a quiet host and on a host crowded by a busy neighbour
//! process, with brigade's `yield_if_busy`, brigade's plain `yield_now` and
//! tokio's `yield_now`, in about 35 s. It prints a table per case (p50,
//! p99, p99.9, max latency, background CPU share), a verdict per case, and
//! writes two SVG charts to `target/brigade-report/` (`--help` for the
//! flags). See `examples/src/mixed_load.rs` for what is measured and how.

use std::path::{Path, PathBuf};

use brigade_examples::mixed_load::{self, CaseResult, Config};

fn main() {
    let config = match Config::parse(std::env::args().skip(1)) {
        Ok(config) => config,
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(if message == mixed_load::HELP { 0 } else { 2 });
        }
    };
    if let Some(addr) = config.client {
        if let Err(error) = mixed_load::client(&config, addr) {
            eprintln!("mixed_load --client failed: {error}");
            std::process::exit(1);
        }
        return;
    }
    if let Some(addr_file) = &config.serve {
        if let Err(error) = mixed_load::serve(&config, addr_file) {
            eprintln!("mixed_load --serve failed: {error}");
            std::process::exit(1);
        }
        return;
    }
    let results = match mixed_load::run(&config) {
        Ok(results) => results,
        Err(error) => {
            eprintln!("mixed_load failed: {error}");
            std::process::exit(1);
        }
    };
    print_tables(&results, &config);
    let info = mixed_load::chart_info(&config);
    write_chart(&config.out, mixed_load::render_svg(&results, &info));
    write_chart(
        &tradeoff_path(&config.out),
        mixed_load::render_tradeoff_svg(&results, &info),
    );
    let verdict = mixed_load::format_verdict(&results);
    if !verdict.is_empty() {
        print!("\n{verdict}");
    }
}

/// A table per case, with the relative throughput where its references ran
/// (`--all`).
fn print_tables(results: &[CaseResult], config: &Config) {
    for result in results {
        let workload = match result.case.kind {
            mixed_load::CaseKind::Idle => "no background".to_owned(),
            _ => mixed_load::workload(config),
        };
        println!("\n{}, {workload}:", result.case.label());
        print!("{}", mixed_load::format_table(&result.outcomes));
        let relative = mixed_load::format_relative_throughput(&result.outcomes);
        if !relative.is_empty() {
            println!("background throughput relative to no yield points:");
            print!("{relative}");
        }
    }
    let elastic = results
        .iter()
        .flat_map(|result| &result.outcomes)
        .any(|outcome| outcome.name.contains("elastic"));
    if elastic {
        print!("{}", mixed_load::ELASTIC_NOTE);
    }
    println!();
}

/// The trade-off chart's path: `out`'s name with `_tradeoff`, beside it.
fn tradeoff_path(out: &Path) -> PathBuf {
    let stem = out
        .file_stem()
        .map_or("mixed_load".into(), |stem| stem.to_string_lossy());
    out.with_file_name(format!("{stem}_tradeoff.svg"))
}

fn write_chart(path: &Path, svg: String) {
    let written = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(path, svg));
    match written {
        Ok(()) => {
            // Shown to the user: without the `examples/..` of the default.
            let path = path.canonicalize().unwrap_or_else(|_| path.to_owned());
            println!("chart written to {}", path.display());
        }
        Err(error) => eprintln!("could not write {}: {error}", path.display()),
    }
}
