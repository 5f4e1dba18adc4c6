//! A tonic (gRPC) service on brigade's workers beside a bulk job, or the
//! same service on tokio: `kv.Kv` (`examples/proto/kv.proto`) with unary
//! `Get` and `Put` and a server-streaming `Scan` over an in-memory store.
//! brigade serves tonic's routes with `brigade_hyper::serve` (HTTP/2 with
//! prior knowledge, as gRPC clients speak it); tokio with
//! `tonic::transport::Server`. The bulk job re-indexes the store in units
//! of about 50–100 µs, in `spawn_elastic` tasks with `yield_if_busy()`
//! between units (`yield_now()` on tokio). Prints requests/s and bulk units/s each second and a
//! `summary` line at the end. No `protoc` is needed to build it.
//!
//! ```text
//! cargo run --release -p brigade-examples --example grpc_service -- --runtime brigade --secs 10
//! ghz --insecure --proto examples/proto/kv.proto --call kv.Kv/Get \
//!     -d '{"key":"key:000000000042"}' --rps 5000 -z 5s 127.0.0.1:50051
//! ```
//!
//! Flags: `--runtime brigade|tokio`, `--addr`, `--workers`, `--bulk N` (0 =
//! no bulk job), `--no-elastic` (brigade: `spawn` the bulk tasks, not
//! `spawn_elastic`), `--keys`, `--secs` (0 = run until killed). See
//! `examples/src/service/grpc.rs`; `scripts/service_bench.sh` compares the
//! runtimes.

use brigade_examples::service::{self, Config};

const HELP: &str = "usage: grpc_service [flags]

A tonic service beside a bulk job, on brigade or tokio. PORT is 50051. Service
kv.Kv (examples/proto/kv.proto): unary Get and Put, server-streaming Scan.
";

fn main() {
    let help = format!("{HELP}\n{}", service::config::FLAGS);
    let config = match Config::parse(std::env::args().skip(1), 50051, &help) {
        Ok(config) => config,
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(if message == help { 0 } else { 2 });
        }
    };
    match service::grpc::start(&config) {
        Ok(server) => service::run(&config, server),
        Err(error) => {
            eprintln!("grpc_service: cannot start on {}: {error}", config.addr);
            std::process::exit(1);
        }
    }
}
