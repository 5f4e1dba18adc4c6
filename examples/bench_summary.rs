//! One brigade/tokio table across the criterion benches, from the results
//! `cargo bench` left in `target/criterion` (see
//! `brigade_examples::bench_summary` for how benchmarks are paired).
//!
//! ```text
//! cargo bench
//! scripts/bench_summary.sh            # or:
//! cargo run --release -p brigade-examples --example bench_summary -- [CRITERION_DIR]
//! ```
//!
//! The folder: the argument, else `$CRITERION_HOME`, else
//! `$CARGO_TARGET_DIR/criterion`, else the workspace's `target/criterion`.

use std::path::PathBuf;

use brigade_examples::bench_summary::{brigade_alone, format_summary, pairs, read_estimates};

const USAGE: &str = "usage: bench_summary [CRITERION_DIR]";

fn criterion_dir() -> Result<PathBuf, String> {
    let mut args = std::env::args().skip(1);
    let dir = match (args.next(), args.next()) {
        (Some(flag), _) if flag.starts_with('-') => return Err(USAGE.to_owned()),
        (Some(dir), None) => PathBuf::from(dir),
        (Some(_), Some(_)) => return Err(USAGE.to_owned()),
        (None, _) => match (
            std::env::var_os("CRITERION_HOME"),
            std::env::var_os("CARGO_TARGET_DIR"),
        ) {
            (Some(home), _) => PathBuf::from(home),
            (None, Some(target)) => PathBuf::from(target).join("criterion"),
            (None, None) => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/criterion"),
        },
    };
    // Shown to the user: without the `examples/..` of the default.
    Ok(dir.canonicalize().unwrap_or(dir))
}

fn main() {
    let dir = criterion_dir().unwrap_or_else(|usage| {
        eprintln!("{usage}");
        std::process::exit(2);
    });
    let (estimates, problems) = read_estimates(&dir).unwrap_or_else(|error| {
        eprintln!(
            "no criterion results in {}: {error}\nrun `cargo bench` first",
            dir.display()
        );
        std::process::exit(1);
    });
    for problem in &problems {
        eprintln!("skipped {problem}");
    }
    let pairs = pairs(&estimates);
    let alone = brigade_alone(&estimates);
    if pairs.is_empty() && alone.is_empty() {
        eprintln!(
            "{} results in {}, none with both a brigade and a tokio benchmark in its group",
            estimates.len(),
            dir.display()
        );
        std::process::exit(1);
    }
    if !pairs.is_empty() {
        print!("{}", format_summary(&pairs));
    }
    if !alone.is_empty() {
        println!("\nbrigade alone:");
        for line in alone {
            println!("  {line}");
        }
    }
    println!(
        "\nEach benchmark's latest run, from {}; \
         rows measured in different `cargo bench` runs compare as they are.",
        dir.display()
    );
}
