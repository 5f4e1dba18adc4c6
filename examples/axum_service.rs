//! An axum app on brigade's workers beside a bulk job, or the same app on
//! tokio: JSON get/put on an in-memory store (`GET /kv/{key}`, `PUT
//! /kv/{key}` with `{"value": …}`), `GET /health`, and with feature
//! `tokio-compat` `GET /proxy/{key}`, a handler that calls the service
//! through hyper-util's tokio-based client. The bulk job re-indexes the
//! store in units of about 50–100 µs, in `spawn_elastic` tasks with
//! `yield_if_busy()` between units (`yield_now()` on tokio). Prints requests/s and bulk units/s each second
//! and a `summary` line at the end.
//!
//! ```text
//! cargo run --release -p brigade-examples --example axum_service -- --runtime brigade --secs 10
//! cargo run --release -p brigade-examples --example kv_load -- --http-kv --addr 127.0.0.1:3000 --keys 100000 --rate 20000
//! curl -X PUT -H 'content-type: application/json' -d '{"value":[1,2]}' 127.0.0.1:3000/kv/a
//! cargo run --release -p brigade-examples --features tokio-compat --example axum_service   # adds /proxy/{key}
//! ```
//!
//! Flags: `--runtime brigade|tokio`, `--addr`, `--workers`, `--bulk N` (0 =
//! no bulk job), `--no-elastic` (brigade: `spawn` the bulk tasks, not
//! `spawn_elastic`), `--keys`, `--secs` (0 = run until killed),
//! `--cpu-limit C` (the server inside a fresh cgroup with a quota of C CPUs). See
//! `examples/src/service/http.rs`; `scripts/service_bench.sh` compares the
//! runtimes.

use brigade_examples::service::{self, Config};

const HELP: &str = "usage: axum_service [flags]

An axum app beside a bulk job, on brigade or tokio. PORT is 3000. Routes:
  GET /kv/{key}           the value as JSON, 404 if absent
  PUT /kv/{key}           body {\"value\": [bytes]}
  GET /health             the thread that served it
  GET /proxy/{key}        with feature tokio-compat: GET /kv/{key} through hyper-util's
                          tokio-based client
";

fn main() {
    let help = format!(
        "{HELP}\n{}{}",
        service::config::FLAGS,
        brigade_examples::cgroup::CPU_LIMIT_HELP
    );
    let args: Vec<String> = std::env::args().skip(1).collect();
    match brigade_examples::cgroup::cpu_limit_flag(&args) {
        Ok(Some(cpus)) => brigade_examples::cgroup::rerun_inside_limit(cpus, "axum_service"),
        Ok(None) => {}
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(2);
        }
    }
    let config = match Config::parse(args, 3000, &help) {
        Ok(config) => config,
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(if message == help { 0 } else { 2 });
        }
    };
    match service::http::start(&config) {
        Ok(server) => service::run(&config, server),
        Err(error) => {
            eprintln!("axum_service: cannot start on {}: {error}", config.addr);
            std::process::exit(1);
        }
    }
}
