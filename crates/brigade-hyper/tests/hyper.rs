//! A real hyper client against a real hyper server over loopback TCP, both
//! on brigade: HTTP/1.1 keep-alive, HTTP/2 with concurrent streams, and the
//! timer-driven settings (HTTP/1 header-read timeout, HTTP/2 keep-alive
//! pings). Every wait is bounded, so a bug fails the test instead of hanging.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use brigade::net::{TcpListener, TcpStream};
use brigade_hyper::{BrigadeExecutor, BrigadeIo, BrigadeTimer};
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode, Version};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

type Error = Box<dyn std::error::Error + Send + Sync>;

/// Generous bound on each test: only a hang comes near it.
const TEST_LIMIT: Duration = Duration::from_secs(60);

/// Size of the `/big` response: many reads and writes, past `BrigadeIo`'s
/// read cap and the sockets' buffers.
const BIG: usize = 3 << 20;

/// Runs `test` on a 2-worker brigade runtime, failing it after
/// [`TEST_LIMIT`]. In case the runtime is too broken for its own timer to
/// fire, a watchdog thread aborts the process, with a message, if the test
/// still runs [`TEST_LIMIT`] later.
fn run<F: Future<Output = Result<(), Error>>>(test: F) {
    let (_disarm, armed) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        // Dropping `_disarm` (the test returned or panicked) disconnects.
        if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = armed.recv_timeout(2 * TEST_LIMIT)
        {
            eprintln!("a hyper test still runs past its own timeout: the runtime hangs; aborting");
            std::process::abort();
        }
    });
    let rt = brigade::Builder::new().worker_threads(2).build().unwrap();
    // `timeout` needs the runtime, so it is created inside `block_on`.
    rt.block_on(async { brigade::time::timeout(TEST_LIMIT, test).await })
        .expect("test timed out")
        .unwrap();
}

/// PING frames seen in one direction of an HTTP/2 connection.
#[derive(Default)]
struct Pings {
    sent: usize,
    acks: usize,
}

/// Follows the HTTP/2 frames in one direction of a connection, from the
/// bytes as they pass, and counts the PING frames (type 6; flag 1: ACK).
struct FrameScanner {
    /// Bytes of the client's connection preface still to skip.
    preface_left: usize,
    /// Bytes of the current frame's payload still to skip.
    payload_left: usize,
    /// The frame header read so far (9 bytes when whole).
    header: Vec<u8>,
    pings: Arc<Mutex<Pings>>,
}

impl FrameScanner {
    fn new(preface: bool) -> Self {
        FrameScanner {
            preface_left: if preface { 24 } else { 0 },
            payload_left: 0,
            header: Vec::with_capacity(9),
            pings: Arc::default(),
        }
    }

    fn scan(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let skip = if self.preface_left > 0 {
                &mut self.preface_left
            } else {
                &mut self.payload_left
            };
            if *skip > 0 {
                let skipped = (*skip).min(bytes.len());
                *skip -= skipped;
                bytes = &bytes[skipped..];
                continue;
            }
            let take = (9 - self.header.len()).min(bytes.len());
            self.header.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.header.len() == 9 {
                let header = std::mem::take(&mut self.header);
                self.payload_left = usize::from(header[0]) << 16
                    | usize::from(header[1]) << 8
                    | usize::from(header[2]);
                if header[3] == 6 {
                    let mut pings = self.pings.lock().unwrap();
                    if header[4] & 1 == 1 {
                        pings.acks += 1;
                    } else {
                        pings.sent += 1;
                    }
                }
            }
        }
    }
}

/// A client's stream that counts the PING frames it writes and reads.
struct PingCounting<T> {
    inner: T,
    written: FrameScanner,
    read: FrameScanner,
}

impl<T: futures_io::AsyncRead + Unpin> futures_io::AsyncRead for PingCounting<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<std::io::Result<usize>> {
        let read = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(n)) = read {
            self.read.scan(&buf[..n]);
        }
        read
    }
}

impl<T: futures_io::AsyncWrite + Unpin> futures_io::AsyncWrite for PingCounting<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let written = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = written {
            self.written.scan(&buf[..n]);
        }
        written
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_close(cx)
    }
}

/// `GET /x` → `GET /x`; `POST /x` with body `b` → `POST /x b`; `/big` →
/// [`BIG`] bytes of a pattern.
async fn handler(request: Request<Incoming>) -> Result<Response<Full<Bytes>>, hyper::Error> {
    let head = format!("{} {}", request.method(), request.uri().path());
    if request.uri().path() == "/big" {
        return Ok(Response::new(Full::new(big_body())));
    }
    let body = request.into_body().collect().await?.to_bytes();
    let reply = if body.is_empty() {
        head
    } else {
        format!("{head} {}", String::from_utf8_lossy(&body))
    };
    Ok(Response::new(Full::new(Bytes::from(reply))))
}

fn big_body() -> Bytes {
    (0..BIG)
        .map(|i| (i % 251) as u8)
        .collect::<Vec<u8>>()
        .into()
}

/// Which protocol the test server speaks.
#[derive(Clone, Copy)]
enum Protocol {
    Http1,
    /// HTTP/2 with keep-alive pings every `ping` (and a 5 s ack timeout).
    Http2 {
        ping: Option<Duration>,
    },
}

/// A server on an ephemeral loopback port; counts accepted connections.
struct Server {
    addr: SocketAddr,
    accepted: Arc<AtomicUsize>,
}

async fn start_server(protocol: Protocol) -> Result<Server, Error> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let accepted = Arc::new(AtomicUsize::new(0));
    let counter = accepted.clone();
    brigade::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
            stream.set_nodelay(true).unwrap();
            let io = BrigadeIo::new(stream);
            brigade::spawn(async move {
                let served = match protocol {
                    Protocol::Http1 => {
                        hyper::server::conn::http1::Builder::new()
                            .timer(BrigadeTimer::new())
                            .serve_connection(io, service_fn(handler))
                            .await
                    }
                    Protocol::Http2 { ping } => {
                        hyper::server::conn::http2::Builder::new(BrigadeExecutor::new())
                            .timer(BrigadeTimer::new())
                            .keep_alive_interval(ping)
                            .keep_alive_timeout(Duration::from_secs(5))
                            .serve_connection(io, service_fn(handler))
                            .await
                    }
                };
                if let Err(error) = served {
                    panic!("server connection failed: {error}");
                }
            });
        }
    });
    Ok(Server { addr, accepted })
}

fn get(path: &str) -> Request<Full<Bytes>> {
    Request::get(path)
        .header("host", "localhost")
        .body(Full::default())
        .unwrap()
}

async fn body_text(response: Response<Incoming>) -> Result<String, Error> {
    assert_eq!(response.status(), StatusCode::OK);
    let body = response.into_body().collect().await?.to_bytes();
    Ok(String::from_utf8(body.to_vec())?)
}

#[test]
fn http1_keep_alive_serves_many_requests_on_one_connection() {
    run(async {
        let server = start_server(Protocol::Http1).await?;
        let stream = TcpStream::connect(server.addr).await?;
        stream.set_nodelay(true)?;
        let (mut sender, connection) =
            hyper::client::conn::http1::handshake(BrigadeIo::new(stream)).await?;
        let connection = brigade::spawn(connection);

        for i in 0..200 {
            sender.ready().await?;
            let response = sender.send_request(get(&format!("/item/{i}"))).await?;
            assert_eq!(response.version(), Version::HTTP_11);
            assert_eq!(body_text(response).await?, format!("GET /item/{i}"));
            if i % 50 == 0 {
                let request = Request::post("/upload")
                    .header("host", "localhost")
                    .body(Full::new(Bytes::from(format!("row {i}"))))?;
                sender.ready().await?;
                let response = sender.send_request(request).await?;
                assert_eq!(body_text(response).await?, format!("POST /upload row {i}"));
            }
        }
        // A body far larger than one read or one socket buffer.
        sender.ready().await?;
        let response = sender.send_request(get("/big")).await?;
        let body = response.into_body().collect().await?.to_bytes();
        assert_eq!(body.len(), BIG);
        assert!(body == big_body(), "the large body arrived corrupted");

        assert_eq!(
            server.accepted.load(Ordering::SeqCst),
            1,
            "keep-alive not used"
        );
        drop(sender);
        connection.await??; // the client connection ends cleanly
        Ok(())
    });
}

#[test]
fn http2_serves_concurrent_streams_on_one_connection() {
    const STREAMS: usize = 32;
    run(async {
        let server = start_server(Protocol::Http2 { ping: None }).await?;
        let stream = TcpStream::connect(server.addr).await?;
        stream.set_nodelay(true)?;
        let (sender, connection) = hyper::client::conn::http2::Builder::new(BrigadeExecutor::new())
            .timer(BrigadeTimer::new())
            .handshake(BrigadeIo::new(stream))
            .await?;
        let connection = brigade::spawn(connection);

        // Every request is in flight at once, each on its own task.
        let requests: Vec<_> = (0..STREAMS)
            .map(|i| {
                let mut sender = sender.clone();
                brigade::spawn(async move {
                    sender.ready().await?;
                    let request = Request::post(format!("http://localhost/stream/{i}"))
                        .body(Full::new(Bytes::from(format!("payload {i}"))))?;
                    let response = sender.send_request(request).await?;
                    assert_eq!(response.version(), Version::HTTP_2);
                    let text = body_text(response).await?;
                    assert_eq!(text, format!("POST /stream/{i} payload {i}"));
                    Ok::<(), Error>(())
                })
            })
            .collect();
        for request in requests {
            request.await??;
        }
        let mut big = sender.clone();
        let response = big.send_request(get("http://localhost/big")).await?;
        let body = response.into_body().collect().await?.to_bytes();
        assert!(body == big_body(), "the large body arrived corrupted");

        assert_eq!(server.accepted.load(Ordering::SeqCst), 1);
        drop((sender, big));
        connection.await??;
        Ok(())
    });
}

#[test]
fn http2_keep_alive_pings_run_on_the_brigade_timer() {
    run(async {
        // Both ends ping every 20 ms (the timer drives the intervals and
        // the ack timeouts); the connection idles through several pings,
        // each one answered, and must still serve.
        let ping = Duration::from_millis(20);
        let server = start_server(Protocol::Http2 { ping: Some(ping) }).await?;
        let stream = TcpStream::connect(server.addr).await?;
        let stream = PingCounting {
            inner: stream,
            written: FrameScanner::new(true),
            read: FrameScanner::new(false),
        };
        let (from_client, to_client) = (stream.written.pings.clone(), stream.read.pings.clone());
        let (mut sender, connection) =
            hyper::client::conn::http2::Builder::new(BrigadeExecutor::new())
                .timer(BrigadeTimer::new())
                .keep_alive_interval(ping)
                .keep_alive_timeout(Duration::from_secs(5))
                .keep_alive_while_idle(true)
                .handshake(BrigadeIo::new(stream))
                .await?;
        let connection = brigade::spawn(connection);
        for round in 0..3 {
            // Idle until two more of the client's pings were acknowledged
            // by the server (which hyper does only after a quiet interval),
            // checking every ping interval; `run` bounds the wait.
            let acked_before = to_client.lock().unwrap().acks;
            while to_client.lock().unwrap().acks < acked_before + 2 {
                brigade::time::sleep(ping).await;
            }
            let response = sender
                .send_request(get(&format!("http://localhost/after-idle/{round}")))
                .await?;
            assert_eq!(
                body_text(response).await?,
                format!("GET /after-idle/{round}")
            );
        }
        {
            let (from_client, to_client) = (from_client.lock().unwrap(), to_client.lock().unwrap());
            assert!(
                from_client.sent >= 6,
                "the client sent {} pings",
                from_client.sent
            );
            assert!(
                to_client.acks >= 6,
                "the server acknowledged {} pings",
                to_client.acks
            );
            // Every ping the server sent that reached the client was
            // answered (the last one's answer may still be on its way out).
            assert!(
                from_client.acks + 1 >= to_client.sent,
                "the server sent {} pings, the client acknowledged {}",
                to_client.sent,
                from_client.acks
            );
        }
        assert_eq!(server.accepted.load(Ordering::SeqCst), 1);
        drop(sender);
        connection.await??;
        Ok(())
    });
}

#[test]
fn http1_header_read_timeout_closes_a_slow_connection() {
    run(async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let server = brigade::spawn(async move {
            let (stream, _) = listener.accept().await?;
            let served = hyper::server::conn::http1::Builder::new()
                .timer(BrigadeTimer::new())
                .header_read_timeout(Duration::from_millis(50))
                .serve_connection(
                    BrigadeIo::new(stream),
                    service_fn(|_: Request<Incoming>| async {
                        Ok::<_, Infallible>(Response::new(Full::<Bytes>::default()))
                    }),
                )
                .await;
            Ok::<_, Error>(served)
        });

        // Half a request head, then nothing.
        let mut client = TcpStream::connect(addr).await?;
        client.write_all(b"GET / HTTP/1.1\r\nhost: loc").await?;
        let served = server.await??;
        let error = served.expect_err("a stalled request head was not timed out");
        assert!(error.is_timeout(), "unexpected error: {error}");
        // hyper closed the connection: the client reads the end of stream
        // (possibly after a 408 response).
        let mut rest = Vec::new();
        let mut buf = [0u8; 1024];
        loop {
            match client.read(&mut buf).await? {
                0 => break,
                n => rest.extend_from_slice(&buf[..n]),
            }
        }
        let rest = String::from_utf8_lossy(&rest);
        assert!(
            rest.is_empty() || rest.starts_with("HTTP/1.1 408"),
            "{rest}"
        );
        Ok(())
    });
}

#[test]
fn the_executor_spawns_from_outside_the_runtime_with_a_handle() {
    use hyper::rt::Executor;
    let rt = brigade::Builder::new().worker_threads(1).build().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let executor = BrigadeExecutor::from(rt.handle().clone());
    assert!(executor.handle().is_some() && BrigadeExecutor::new().handle().is_none());
    executor.execute(async move {
        let in_runtime = brigade::Handle::try_current().is_ok();
        tx.send(in_runtime).unwrap();
    });
    assert!(rx.recv_timeout(TEST_LIMIT).expect("task never ran"));
}
