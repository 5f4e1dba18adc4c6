//! brigade's runtime metrics in Prometheus text format: the runtime
//! publishes them through the `metrics` facade (brigade's `metrics`
//! feature), `metrics-exporter-prometheus`'s recorder renders them, and a
//! brigade TCP server answers `GET /metrics` with the page.
//!
//! The exporter's own HTTP listener runs on tokio's runtime, so the page
//! is served here on brigade's sockets instead, with a minimal HTTP/1.1
//! reply (one request per connection, as Prometheus scrapes).

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use brigade::net::{TcpListener, TcpStream};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Installs the Prometheus recorder as the process's `metrics` recorder
/// (once per process: a second call is an error).
pub fn install_recorder() -> io::Result<PrometheusHandle> {
    PrometheusBuilder::new()
        .install_recorder()
        .map_err(|error| io::Error::other(format!("installing the Prometheus recorder: {error}")))
}

/// Serves the metrics page on `listener` until the task is dropped,
/// publishing the runtime's figures every `interval` and once more before
/// each scrape.
pub async fn serve(listener: TcpListener, handle: PrometheusHandle, interval: Duration) {
    let metrics = brigade::Handle::current().metrics();
    brigade::spawn(metrics.clone().publish_every(interval));
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        metrics.publish();
        let page = handle.render();
        brigade::spawn(async move {
            let _ = answer(stream, &page).await;
        });
    }
}

/// Binds `addr` and returns the listener with its bound address.
pub async fn bind(addr: SocketAddr) -> io::Result<(TcpListener, SocketAddr)> {
    let listener = TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    Ok((listener, local))
}

/// Reads one request's head; answers `/metrics` with the page, anything
/// else with 404.
async fn answer(mut stream: TcpStream, page: &str) -> io::Result<()> {
    let mut head = Vec::new();
    let mut chunk = [0u8; 1024];
    while !head.windows(4).any(|window| window == b"\r\n\r\n") {
        let read = stream.read(&mut chunk).await?;
        if read == 0 || head.len() > 16 * 1024 {
            return Ok(());
        }
        head.extend_from_slice(&chunk[..read]);
    }
    let (status, body) = if head.starts_with(b"GET /metrics ") {
        ("200 OK", page)
    } else {
        ("404 Not Found", "not found: try /metrics\n")
    };
    let reply = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/plain; version=0.0.4\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(reply.as_bytes()).await?;
    stream.shutdown().await
}
