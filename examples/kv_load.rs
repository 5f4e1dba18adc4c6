//! An open-loop Redis-protocol load for the `kv` example: SET and GET at a
//! fixed rate, latency from each request's due time.
//!
//! ```text
//! cargo run --release -p brigade-examples --example kv -- --workers 2 --snapshot-every-ms 0
//! cargo run --release -p brigade-examples --example kv_load -- --rate 20000 --secs 5
//! ```
//!
//! With `--http-kv`, HTTP/1.1 `PUT /kv/KEY` and `GET /kv/KEY` to
//! `axum_service` instead (1 PUT in 10 here):
//!
//! ```text
//! cargo run --release -p brigade-examples --example axum_service -- --workers 2
//! cargo run --release -p brigade-examples --example kv_load -- --http-kv --addr 127.0.0.1:3000 \
//!     --keys 100000 --ratio 1:9 --rate 20000 --secs 5
//! ```
//!
//! Prints one summary line (`--json`: one JSON object) and a warning on
//! stderr if it could not send at 95% of `--rate`. Exits with 1 if a
//! request failed or went unanswered, or the `--slow-log` file could not be
//! written. See `examples/src/kv_load.rs`.

use brigade_examples::kv_load::{self, Config};

fn main() {
    let config = match Config::parse(std::env::args().skip(1)) {
        Ok(config) => config,
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(if message == kv_load::HELP { 0 } else { 2 });
        }
    };
    let report = match kv_load::run(&config) {
        Ok(report) => report,
        Err(error) => {
            eprintln!("kv_load failed: {error}");
            std::process::exit(1);
        }
    };
    if config.json {
        println!("{}", report.json());
    } else {
        println!("{}", report.summary());
    }
    if let Some(warning) = report.warning() {
        eprintln!("{warning}");
    }
    if let Some(error) = &report.tally.first_error {
        eprintln!("first error: {error}");
    }
    let mut failed = !report.clean();
    if let Some(path) = &config.slow_log
        && let Err(error) = kv_load::slow_log::write(path, &report.tally.slow)
    {
        eprintln!("kv_load: cannot write {}: {error}", path.display());
        failed = true;
    }
    if failed {
        std::process::exit(1);
    }
}
