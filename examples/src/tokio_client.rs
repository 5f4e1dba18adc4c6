//! The `tokio-compat` demo's parts: a brigade-hyper HTTP server, a real
//! tokio-based client library (hyper-util's legacy `Client` with its tokio
//! executor and connector) calling it from inside brigade tasks, and the
//! cost of a tokio socket in a brigade task against brigade's own, on an
//! echo round trip. Needs feature `tokio-compat`.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::Instant;

use brigade::net::{TcpListener, TcpStream};
use brigade_hyper::{BrigadeIo, BrigadeTimer};
use hdrhistogram::Histogram;
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

/// The body every request gets.
pub const HELLO: &str = "hello from brigade";

/// Serves HTTP/1 on `listener` with brigade-hyper, on the current brigade
/// runtime, answering [`HELLO`] to every request. Never returns.
pub async fn serve_hello(listener: TcpListener) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        brigade::spawn(async move {
            let service = hyper::service::service_fn(|_: Request<Incoming>| async {
                Ok::<_, Infallible>(Response::new(Full::new(Bytes::from_static(
                    HELLO.as_bytes(),
                ))))
            });
            // Errors are clients going away: nothing to do.
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(BrigadeTimer::new())
                .serve_connection(BrigadeIo::new(stream), service)
                .await;
        });
    }
}

/// GETs `http://{addr}/` `count` times with hyper-util's tokio-based client
/// (its connector uses `tokio::net`, its executor `tokio::spawn`), reusing
/// the connection; returns every body. Run it inside a brigade task.
pub async fn get_with_hyper_util(addr: SocketAddr, count: usize) -> Result<Vec<Bytes>, String> {
    let client = Client::builder(TokioExecutor::new()).build_http::<Empty<Bytes>>();
    let uri: hyper::Uri = format!("http://{addr}/")
        .parse()
        .map_err(|error| format!("bad uri: {error}"))?;
    let mut bodies = Vec::with_capacity(count);
    for _ in 0..count {
        let response = client
            .get(uri.clone())
            .await
            .map_err(|error| format!("request failed: {error}"))?;
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|error| format!("body failed: {error}"))?;
        bodies.push(body.to_bytes());
    }
    Ok(bodies)
}

/// The echo server the round trips go to (the mixed-load demo's).
pub use crate::mixed_load::brigade_echo_server as serve_echo;

/// Which socket the echo client uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Socket {
    /// `brigade::net::TcpStream`.
    Brigade,
    /// `tokio::net::TcpStream`, through the compat runtime.
    Tokio,
}

/// `round_trips` one-byte round trips to the echo server at `addr` from a
/// brigade task using `socket`; returns their latencies in nanoseconds.
pub async fn echo_round_trips(
    addr: SocketAddr,
    socket: Socket,
    round_trips: usize,
) -> Histogram<u64> {
    let mut latencies =
        Histogram::new_with_bounds(1, 60_000_000_000, 3).expect("valid histogram bounds");
    match socket {
        Socket::Brigade => {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let mut stream = TcpStream::connect(addr).await.expect("connect");
            stream.set_nodelay(true).expect("nodelay");
            let mut byte = [7u8; 1];
            for _ in 0..round_trips {
                let started = Instant::now();
                stream.write_all(&byte).await.expect("write");
                assert_eq!(stream.read(&mut byte).await.expect("read"), 1);
                latencies.saturating_record(started.elapsed().as_nanos() as u64);
            }
        }
        Socket::Tokio => {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
            stream.set_nodelay(true).expect("nodelay");
            let mut byte = [7u8; 1];
            for _ in 0..round_trips {
                let started = Instant::now();
                stream.write_all(&byte).await.expect("write");
                assert_eq!(stream.read(&mut byte).await.expect("read"), 1);
                latencies.saturating_record(started.elapsed().as_nanos() as u64);
            }
        }
    }
    latencies
}
