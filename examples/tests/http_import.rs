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
        runtime,
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
    let started = Instant::now();
    let totals = server.shutdown();
    assert!(started.elapsed() < LIMIT && totals.rows > 0);
}
