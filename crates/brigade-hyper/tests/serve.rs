//! `brigade_hyper::serve` with an axum app and real clients over loopback
//! TCP: hyper-util's client on a tokio runtime of its own (HTTP/1.1 and
//! HTTP/2 with prior knowledge), and plain blocking sockets where the test
//! needs to control the bytes. Every wait is bounded by `support::LIMIT`.

mod support;

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use axum::extract::{Extension, State};
use axum::routing::{get, post};
use axum::{Router, body::Bytes};
use http_body_util::{BodyExt, Full};
use hyper::Version;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use support::{LIMIT, connect, fetch, get_on, read_response, start, wait_closed};

type Error = Box<dyn std::error::Error + Send + Sync>;

/// A server and its future can be spawned and sent, as `axum::serve`'s.
#[test]
fn the_server_and_its_future_are_send() {
    fn send<T: Send>() {}
    send::<brigade_hyper::Serve<Router>>();
    send::<brigade_hyper::ServeFuture>();
}

/// What the handlers of [`app`] share with the test.
#[derive(Clone)]
struct Probe {
    /// `/slow` sends here when it starts.
    started: Arc<Mutex<mpsc::Sender<()>>>,
    /// `/slow` returns once it takes a permit here.
    release: Arc<tokio::sync::Semaphore>,
}

/// The test's end of a [`Probe`].
struct Control {
    started: mpsc::Receiver<()>,
    release: Arc<tokio::sync::Semaphore>,
}

impl Control {
    /// Waits, bounded, until `/slow` has started `n` times.
    fn wait_started(&self, n: usize) {
        for _ in 0..n {
            self.started
                .recv_timeout(LIMIT)
                .expect("the slow handler started");
        }
    }
}

/// The app under test.
fn app() -> (Router, Control) {
    let (started, started_rx) = mpsc::channel();
    let release = Arc::new(tokio::sync::Semaphore::new(0));
    let probe = Probe {
        started: Arc::new(Mutex::new(started)),
        release: Arc::clone(&release),
    };
    let router = Router::new()
        .route("/", get(|| async { "hello" }))
        .route("/worker", get(worker))
        .route("/echo", post(|body: Bytes| async move { body }))
        .route("/slow", get(slow))
        .route("/panic", get(panics))
        .route("/peer", get(peer))
        .with_state(probe);
    let control = Control {
        started: started_rx,
        release,
    };
    (router, control)
}

/// Where the handler runs: "worker" on a brigade worker, in a task.
async fn worker() -> String {
    if support::on_brigade_worker() {
        "worker".to_owned()
    } else {
        format!("not a brigade worker: {:?}", thread::current().name())
    }
}

/// Tells the test it started, then waits for the test's release.
async fn slow(State(probe): State<Probe>) -> &'static str {
    let _ = probe.started.lock().unwrap().send(());
    probe.release.acquire().await.unwrap().forget();
    "slow done"
}

async fn panics() -> &'static str {
    panic!("this handler panics on purpose")
}

async fn peer(Extension(info): Extension<brigade_hyper::ConnectInfo>) -> String {
    info.0.to_string()
}

/// Runs `test` on a tokio runtime of its own (the clients' side), bounded.
fn on_tokio<F: Future<Output = Result<(), Error>>>(test: F) {
    let rt = support::tokio_client_runtime();
    rt.block_on(async { tokio::time::timeout(LIMIT, test).await })
        .expect("the clients timed out")
        .unwrap();
}

#[test]
fn routes_are_served_over_http1_and_http2_on_one_port_on_brigade_workers() {
    let (router, _control) = app();
    let server = start(router, |serve| serve);
    let addr = server.addr;
    on_tokio(async move {
        let http1 = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
        let http2 = Client::builder(TokioExecutor::new())
            .http2_only(true)
            .build_http::<Full<Bytes>>();
        for (client, version) in [(&http1, Version::HTTP_11), (&http2, Version::HTTP_2)] {
            for (path, expected) in [("/", "hello"), ("/worker", "worker")] {
                let response = client.get(format!("http://{addr}{path}").parse()?).await?;
                assert_eq!(response.status(), 200, "{path} over {version:?}");
                assert_eq!(response.version(), version);
                let body = response.into_body().collect().await?.to_bytes();
                assert_eq!(body, expected, "{path} over {version:?}");
            }
            let request = http::Request::post(format!("http://{addr}/echo"))
                .body(Full::new(Bytes::from_static(b"ping")))?;
            let response = client.request(request).await?;
            assert_eq!(response.status(), 200);
            assert_eq!(response.into_body().collect().await?.to_bytes(), "ping");
        }
        Ok(())
    });
    server.shutdown().unwrap();
}

/// Whether connecting to `addr` is refused.
fn refused(addr: SocketAddr) -> bool {
    matches!(TcpStream::connect(addr), Err(error) if error.kind() == io::ErrorKind::ConnectionRefused)
}

#[test]
fn graceful_shutdown_finishes_requests_in_flight_and_refuses_new_connections() {
    let (router, control) = app();
    let mut server = start(router, |serve| serve);
    let addr = server.addr;
    // One slow request over HTTP/1.1 and one over HTTP/2.
    let http1 = thread::spawn(move || fetch(addr, "/slow"));
    let http2 = thread::spawn(move || {
        let rt = support::tokio_client_runtime();
        rt.block_on(async {
            let client = Client::builder(TokioExecutor::new())
                .http2_only(true)
                .build_http::<Full<Bytes>>();
            let response = client.get(format!("http://{addr}/slow").parse()?).await?;
            let status = response.status();
            let body = response.into_body().collect().await?.to_bytes();
            Ok::<_, Error>((status, body))
        })
    });
    control.wait_started(2);

    server.signal_shutdown();
    // The listener closes while both requests are still in flight.
    let deadline = Instant::now() + LIMIT;
    while !refused(addr) {
        assert!(Instant::now() < deadline, "new connections still accepted");
        thread::sleep(Duration::from_millis(5));
    }
    assert!(!http1.is_finished() && !http2.is_finished());

    control.release.add_permits(2);
    let (status, body) = http1.join().unwrap().unwrap();
    assert_eq!(
        (status.as_str(), body.as_str()),
        ("HTTP/1.1 200 OK", "slow done")
    );
    let (status, body) = http2.join().unwrap().unwrap();
    assert_eq!((status.as_u16(), &body[..]), (200, &b"slow done"[..]));
    server.wait().unwrap();
    assert!(refused(addr), "connections refused after serve returned");
}

#[test]
fn the_shutdown_timeout_closes_connections_still_open() {
    let (router, control) = app();
    let server = start(router, |serve| {
        serve.shutdown_timeout(Duration::from_millis(100))
    });
    let mut stuck = connect(server.addr);
    write!(stuck, "GET /slow HTTP/1.1\r\nhost: test\r\n\r\n").unwrap();
    control.wait_started(1);
    // Never released: the shutdown gives up on it after 100 ms.
    server.shutdown().unwrap();
    assert!(
        read_response(&mut stuck).is_err(),
        "the stuck request got no response"
    );
}

#[test]
fn dropping_the_server_closes_its_listener_and_connections() {
    let (router, control) = app();
    let mut server = start(router, |serve| serve);
    let mut idle = connect(server.addr);
    assert_eq!(get_on(&mut idle, "/").unwrap().1, "hello");
    let mut busy = connect(server.addr);
    write!(busy, "GET /slow HTTP/1.1\r\nhost: test\r\n\r\n").unwrap();
    control.wait_started(1);
    // Never released: only closing the connection ends that request.
    server.abort();
    wait_closed(&mut idle).unwrap();
    wait_closed(&mut busy).unwrap();
    assert!(refused(server.addr));
}

#[test]
fn a_panicking_handler_ends_only_its_connection() {
    let (router, _control) = app();
    let server = start(router, |serve| serve);
    let addr = server.addr;
    let mut kept = connect(addr);
    assert_eq!(get_on(&mut kept, "/").unwrap().1, "hello");

    let mut panicking = connect(addr);
    let answer = get_on(&mut panicking, "/panic");
    assert!(
        answer.is_err(),
        "no response from a panicked handler: {answer:?}"
    );

    // The server goes on, on the open connection and on new ones.
    assert_eq!(get_on(&mut kept, "/").unwrap().1, "hello");
    for _ in 0..3 {
        assert_eq!(fetch(addr, "/").unwrap().1, "hello");
    }

    // Over HTTP/2 the handler's stream gets no response; the server goes on.
    on_tokio(async move {
        let http2 = Client::builder(TokioExecutor::new())
            .http2_only(true)
            .build_http::<Full<Bytes>>();
        let hello = format!("http://{addr}/").parse::<http::Uri>()?;
        assert_eq!(http2.get(hello.clone()).await?.status(), 200);
        let panicked = http2.get(format!("http://{addr}/panic").parse()?).await;
        assert!(panicked.is_err(), "no response: {panicked:?}");
        let response = http2.get(hello).await?;
        assert_eq!(response.into_body().collect().await?.to_bytes(), "hello");
        Ok(())
    });
    server.shutdown().unwrap();
}

/// Sends a request head a byte every 50 ms until the server closes the
/// connection: how many bytes it sent, and for how long.
fn slow_header_client(addr: SocketAddr, head: &[u8]) -> io::Result<(usize, Duration)> {
    // Before connecting: the server's timeout starts after this.
    let start = Instant::now();
    let mut stream = connect(addr);
    stream.set_read_timeout(Some(Duration::from_millis(50)))?;
    let mut reply = [0u8; 256];
    for (sent, byte) in head.iter().enumerate() {
        if stream.write_all(&[*byte]).is_err() {
            return Ok((sent, start.elapsed()));
        }
        match stream.read(&mut reply) {
            Ok(0) => return Ok((sent + 1, start.elapsed())),
            // An error response before the close: read on to the close.
            Ok(_) => {
                stream.set_read_timeout(Some(LIMIT))?;
                wait_closed(&mut stream)?;
                return Ok((sent + 1, start.elapsed()));
            }
            Err(error) if error.kind() == io::ErrorKind::ConnectionReset => {
                return Ok((sent + 1, start.elapsed()));
            }
            Err(error)
                if matches!(
                    error.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            Err(error) => return Err(error),
        }
    }
    Err(io::Error::other("the whole head was sent: not dropped"))
}

#[test]
fn slow_header_and_silent_clients_are_dropped_while_others_are_served() {
    const TIMEOUT: Duration = Duration::from_millis(200);
    // About 4 s at a byte per 50 ms: far past the timeout.
    const HEAD: &[u8] =
        b"GET / HTTP/1.1\r\nhost: test\r\nx-padding: 0123456789012345678901234567890123456789\r\n\r\n";
    let (router, _control) = app();
    let server = start(router, |serve| serve.header_read_timeout(Some(TIMEOUT)));
    let addr = server.addr;
    let slow = thread::spawn(move || slow_header_client(addr, HEAD));
    let silent = thread::spawn(move || {
        let start = Instant::now();
        let mut stream = connect(addr);
        wait_closed(&mut stream).map(|()| start.elapsed())
    });

    for _ in 0..5 {
        assert_eq!(fetch(addr, "/").unwrap().1, "hello");
    }

    let (sent, lasted) = slow.join().unwrap().unwrap();
    assert!(sent < HEAD.len(), "dropped before its head was complete");
    assert!(
        lasted >= TIMEOUT,
        "dropped by the timeout, after {lasted:?}"
    );
    let lasted = silent.join().unwrap().unwrap();
    assert!(
        lasted >= TIMEOUT,
        "dropped by the timeout, after {lasted:?}"
    );
    server.shutdown().unwrap();
}

#[test]
fn at_the_connection_cap_the_next_connection_waits_then_is_served() {
    let (router, _control) = app();
    let server = start(router, |serve| serve.max_connections(2));
    let addr = server.addr;
    let mut first = connect(addr);
    let mut second = connect(addr);
    assert_eq!(get_on(&mut first, "/").unwrap().1, "hello");
    assert_eq!(get_on(&mut second, "/").unwrap().1, "hello");

    // The third connects (the listen backlog takes it) but is not accepted.
    let mut third = connect(addr);
    write!(third, "GET / HTTP/1.1\r\nhost: test\r\n\r\n").unwrap();
    third
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut byte = [0u8];
    let answer = third.read(&mut byte);
    assert!(
        matches!(&answer, Err(error) if matches!(error.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut)),
        "third request not answered while the first two are held: {answer:?}"
    );

    drop(first);
    third.set_read_timeout(Some(LIMIT)).unwrap();
    let (status, body) = read_response(&mut third).unwrap();
    // `byte` was not read: the status line is whole.
    assert_eq!(
        (status.as_str(), body.as_str()),
        ("HTTP/1.1 200 OK", "hello")
    );
    assert_eq!(get_on(&mut second, "/").unwrap().1, "hello");
    server.shutdown().unwrap();
}

#[test]
fn handlers_see_the_peer_address_as_connect_info() {
    let (router, _control) = app();
    #[cfg(feature = "axum")]
    let router = router.route("/axum-peer", get(axum_peer));
    let server = start(router, |serve| serve.with_connect_info());
    let mut client = connect(server.addr);
    let local = client.local_addr().unwrap().to_string();
    assert_eq!(get_on(&mut client, "/peer").unwrap().1, local);
    #[cfg(feature = "axum")]
    assert_eq!(get_on(&mut client, "/axum-peer").unwrap().1, local);
    server.shutdown().unwrap();

    // Without `with_connect_info` there is none: axum's extractor fails.
    let (router, _control) = app();
    let server = start(router, |serve| serve);
    let (status, _) = fetch(server.addr, "/peer").unwrap();
    assert_eq!(status, "HTTP/1.1 500 Internal Server Error");
    server.shutdown().unwrap();
}

#[cfg(feature = "axum")]
async fn axum_peer(
    axum::extract::ConnectInfo(peer): axum::extract::ConnectInfo<SocketAddr>,
) -> String {
    peer.to_string()
}

#[test]
fn the_longest_durations_are_settings_too_not_panics() {
    let (router, _control) = app();
    let server = start(router, |serve| {
        serve
            .header_read_timeout(Some(Duration::MAX))
            .http2_keep_alive_interval(Some(Duration::MAX))
            .http2_keep_alive_timeout(Duration::MAX)
            .shutdown_timeout(Duration::MAX)
            .max_connections(usize::MAX)
            .http2_max_concurrent_streams(u32::MAX)
    });
    let addr = server.addr;
    on_tokio(async move {
        let http1 = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
        let http2 = Client::builder(TokioExecutor::new())
            .http2_only(true)
            .build_http::<Full<Bytes>>();
        for client in [&http1, &http2] {
            let response = client.get(format!("http://{addr}/").parse()?).await?;
            assert_eq!(response.into_body().collect().await?.to_bytes(), "hello");
        }
        Ok(())
    });
    server.shutdown().unwrap();
}

#[test]
fn invalid_settings_are_errors_that_name_them_when_the_server_starts() {
    type Configure = fn(brigade_hyper::Serve<Router>) -> brigade_hyper::Serve<Router>;
    let cases: [(Configure, &str); 3] = [
        (|serve| serve.max_connections(0), "max_connections"),
        (
            |serve| serve.http2_max_concurrent_streams(0),
            "http2_max_concurrent_streams",
        ),
        (
            |serve| serve.header_read_timeout(Some(Duration::ZERO)),
            "header_read_timeout",
        ),
    ];
    for (configure, setting) in cases {
        let (router, _control) = app();
        let mut server = start(router, configure);
        let error = server.wait().unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidInput);
        assert!(
            error.to_string().contains(setting),
            "{error} names {setting}"
        );
        // The listener was closed with the failed server.
        assert!(refused(server.addr));
    }
}

/// A connection with a backlog of pipelined requests: hyper's HTTP/1
/// dispatcher serves a few, wakes its own task and returns, again and
/// again. A default-class task that keeps waking itself is demoted to
/// background work; a connection must never be, or its requests wait
/// behind the bulk jobs.
#[test]
fn a_connection_with_a_backlog_of_pipelined_requests_stays_foreground() {
    const REQUESTS: usize = 400;
    let (router, _control) = app();
    let server = start(router, |serve| serve);
    let before = server.runtime().metrics().demotions();

    let mut stream = connect(server.addr);
    let backlog = "GET / HTTP/1.1\r\nhost: test\r\n\r\n".repeat(REQUESTS);
    stream.write_all(backlog.as_bytes()).unwrap();
    for served in 0..REQUESTS {
        let (status, body) =
            read_response(&mut stream).unwrap_or_else(|error| panic!("response {served}: {error}"));
        assert!(status.contains("200"), "response {served}: {status}");
        assert_eq!(body, "hello");
    }

    let demoted = server.runtime().metrics().demotions() - before;
    assert_eq!(demoted, 0, "the connection's task was demoted");
    server.shutdown().unwrap();
}
