//! brigade's sockets with tokio's I/O traits: hyper-util's `TokioIo` over a
//! brigade `TcpStream` serves HTTP/1.1 on a brigade runtime (the `tokio-io`
//! feature). Every wait is bounded by socket timeouts.

use std::convert::Infallible;
use std::io::{Read, Write};
use std::time::Duration;

use http_body_util::Full;
use hyper::{Request, Response};

const BODY: &[u8] = b"served through TokioIo";

#[test]
fn hyper_util_tokio_io_serves_over_a_brigade_stream() {
    let rt = brigade::Builder::new().worker_threads(2).build().unwrap();
    let listener = rt
        .block_on(brigade::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    rt.spawn(async move {
        let (stream, _) = listener.accept().await.expect("accept");
        let service = hyper::service::service_fn(|_: Request<hyper::body::Incoming>| async {
            Ok::<_, Infallible>(Response::new(Full::new(BODY)))
        });
        hyper::server::conn::http1::Builder::new()
            .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
            .await
            .expect("serve the connection");
    });
    let mut client = std::net::TcpStream::connect(addr).unwrap();
    client
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    client
        .write_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut response = String::new();
    client
        .read_to_string(&mut response)
        .expect("a complete response");
    assert!(response.starts_with("HTTP/1.1 200 OK\r\n"), "{response}");
    assert!(
        response.ends_with(std::str::from_utf8(BODY).unwrap()),
        "{response}"
    );
    rt.shutdown_timeout(Duration::from_secs(10));
}
