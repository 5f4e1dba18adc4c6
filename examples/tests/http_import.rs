//! `http_import` in-process: the server answers every request correctly
//! while the import keeps the workers busy. Clients are plain OS threads
//! with keep-alive HTTP/1.1 connections; every wait is bounded.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use brigade_examples::http_import::{self, BODY, Config, ImportMode, RuntimeKind, Server};

/// Generous bound on every wait: only a hang comes near it.
const LIMIT: Duration = Duration::from_secs(60);

/// A blocking HTTP/1.1 client on one keep-alive connection.
struct Client {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Client {
    fn connect(addr: SocketAddr) -> io::Result<Client> {
        let stream = TcpStream::connect(addr)?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(LIMIT))?;
        stream.set_write_timeout(Some(LIMIT))?;
        Ok(Client {
            reader: BufReader::new(stream.try_clone()?),
            writer: stream,
        })
    }

    /// Sends `GET path`; returns the status code and the body.
    fn get(&mut self, path: &str) -> io::Result<(u16, String)> {
        write!(
            self.writer,
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        )?;
        let mut line = String::new();
        self.reader.read_line(&mut line)?;
        let status = line
            .strip_prefix("HTTP/1.1 ")
            .and_then(|rest| rest.get(..3))
            .and_then(|code| code.parse().ok())
            .ok_or_else(|| io::Error::other(format!("bad status line {line:?}")))?;
        let mut length = None;
        loop {
            line.clear();
            if self.reader.read_line(&mut line)? == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            let (name, value) = header.split_once(':').unwrap_or((header, ""));
            if name.eq_ignore_ascii_case("connection") && value.trim() == "close" {
                return Err(io::Error::other(
                    "the server closed a keep-alive connection",
                ));
            }
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().ok();
            }
        }
        let length = length.ok_or_else(|| io::Error::other("no content-length"))?;
        let mut body = vec![0; length];
        self.reader.read_exact(&mut body)?;
        String::from_utf8(body)
            .map(|body| (status, body))
            .map_err(io::Error::other)
    }
}

fn wait_for(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + LIMIT;
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn config(runtime: RuntimeKind) -> Config {
    Config {
        port: 0,
        workers: 2,
        import: ImportMode::Yielding,
        tasks: 4,
        elastic: true,
        background_floor: 0.0,
        crowded_host_handoff: true,
        spread_workers: true,
        runtime,
        http2: false,
        duration: None,
    }
}

/// Sends `connections × per_connection` requests for `/` from as many
/// threads, each on one keep-alive connection, and checks every response.
fn serve_correctly_during_import(server: &Server, connections: usize, per_connection: usize) {
    let addr = server.addr();
    wait_for("the import to start", || server.rows() > 0);
    let clients: Vec<_> = (0..connections)
        .map(|_| {
            std::thread::spawn(move || {
                let mut client = Client::connect(addr).expect("connect");
                for i in 0..per_connection {
                    let (status, body) = client
                        .get("/")
                        .unwrap_or_else(|error| panic!("request {i} failed: {error}"));
                    assert_eq!((status, body.as_str()), (200, BODY), "request {i}");
                }
                let (status, _) = client.get("/missing").expect("request for /missing");
                assert_eq!(status, 404);
            })
        })
        .collect();
    for client in clients {
        client.join().expect("a client thread failed");
    }
    let total = (connections * (per_connection + 1)) as u64;
    assert_eq!(server.requests(), total);
    // The import is still alive after the requests.
    let rows = server.rows();
    wait_for("the import to go on", || server.rows() > rows);
}

#[test]
fn brigade_serves_1000_requests_correctly_during_the_import() {
    let server = http_import::start(&config(RuntimeKind::Brigade)).unwrap();
    serve_correctly_during_import(&server, 4, 250);
    let totals = server.shutdown();
    assert!(totals.rows > 0 && totals.requests == 1004, "{totals:?}");
}

/// `--background-floor`: the runtime takes it (a bad one would fail the
/// start), and requests are still all answered, the import still going.
#[test]
fn brigade_with_a_background_floor_serves_requests_correctly_during_the_import() {
    let mut config = config(RuntimeKind::Brigade);
    config.background_floor = 0.5;
    let server = http_import::start(&config).unwrap();
    serve_correctly_during_import(&server, 4, 100);
    server.shutdown();
}

#[test]
fn tokio_serves_requests_correctly_during_the_import() {
    let server = http_import::start(&config(RuntimeKind::Tokio)).unwrap();
    serve_correctly_during_import(&server, 2, 100);
    server.shutdown();
}

#[test]
fn shutdown_stops_an_import_without_yield_points() {
    let mut config = config(RuntimeKind::Brigade);
    config.import = ImportMode::NoYield;
    let server = http_import::start(&config).unwrap();
    wait_for("the import to start", || server.rows() > 0);
    let totals = server.shutdown();
    assert!(totals.rows > 0);
    // Shutdown ended every import loop (each sees the stop flag after its
    // batch) instead of giving up on them after its 5 s bound.
    assert_eq!(totals.imports_left, 0, "{totals:?}");
}

/// `--http2`: the same server over HTTP/2 with prior knowledge (what
/// `h2load` speaks), many concurrent streams on one connection, from
/// hyper's HTTP/2 client on a tokio runtime of the test's own.
fn serve_http2(runtime: RuntimeKind) {
    let mut config = config(runtime);
    config.http2 = true;
    let server = http_import::start(&config).unwrap();
    let addr = server.addr();
    let client = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let bodies = client.block_on(async move {
        tokio::time::timeout(LIMIT, async move {
            let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
            let (sender, connection) = hyper::client::conn::http2::handshake(
                hyper_util::rt::TokioExecutor::new(),
                hyper_util::rt::TokioIo::new(stream),
            )
            .await
            .unwrap();
            tokio::spawn(connection);
            let requests = (0..100).map(|_| {
                let mut sender = sender.clone();
                async move {
                    let request = hyper::Request::get(format!("http://{addr}/"))
                        .body(http_body_util::Empty::<hyper::body::Bytes>::new())
                        .unwrap();
                    let response = sender.send_request(request).await.unwrap();
                    assert_eq!(response.status(), 200);
                    let body = http_body_util::BodyExt::collect(response.into_body()).await;
                    body.unwrap().to_bytes()
                }
            });
            let tasks: Vec<_> = requests.map(tokio::spawn).collect();
            let mut bodies = Vec::new();
            for task in tasks {
                bodies.push(task.await.unwrap());
            }
            bodies
        })
        .await
        .expect("HTTP/2 requests hang")
    });
    assert!(bodies.iter().all(|body| body == BODY.as_bytes()));
    assert_eq!(server.requests(), 100);
    server.shutdown();
}

#[test]
fn brigade_serves_http2_during_the_import() {
    serve_http2(RuntimeKind::Brigade);
}

#[test]
fn tokio_serves_http2_during_the_import() {
    serve_http2(RuntimeKind::Tokio);
}
