//! brigade's runtime metrics for Prometheus: a small workload runs while
//! `GET /metrics` answers with every figure in Prometheus text format
//! (`brigade_*`, per-worker ones labelled `worker`).
//!
//! ```text
//! cargo run --release -p brigade-examples --features prometheus --example prometheus -- 127.0.0.1:9090
//! curl -s http://127.0.0.1:9090/metrics | grep brigade_worker_polls_total
//! ```

use std::net::SocketAddr;
use std::time::Duration;

fn main() -> std::io::Result<()> {
    let addr: SocketAddr = match std::env::args().nth(1) {
        None => "127.0.0.1:9090".parse().expect("a valid address"),
        Some(arg) => arg.parse().map_err(|error| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("usage: prometheus [ADDR]; {arg:?} is not an address: {error}"),
            )
        })?,
    };
    let handle = brigade_examples::prometheus::install_recorder()?;
    let rt = brigade::Runtime::new()?;
    rt.block_on(async move {
        let (listener, local) = brigade_examples::prometheus::bind(addr).await?;
        println!("serving brigade's metrics on http://{local}/metrics");
        // The workload: a background loop that steps aside when busy.
        brigade::spawn(async {
            loop {
                std::hint::black_box((0..10_000u64).sum::<u64>());
                brigade::yield_if_busy().await;
                brigade::time::sleep(Duration::from_millis(1)).await;
            }
        });
        brigade_examples::prometheus::serve(listener, handle, Duration::from_secs(1)).await;
        Ok(())
    })
}
