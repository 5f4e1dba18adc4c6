//! Shared by the `serve` tests: a server on a brigade runtime of its own,
//! and a plain blocking HTTP/1.1 client, each wait bounded.

#![allow(dead_code, unreachable_pub)] // each test file uses a part

use std::future::IntoFuture;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use brigade::net::TcpListener;
use brigade_hyper::Serve;
use hyper::body::Incoming;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The bound on every wait: only a bug comes near it.
pub const LIMIT: Duration = Duration::from_secs(20);

/// Whether the caller runs on one of brigade's workers (a worker or a
/// spare, named `brigade-w-N` and `brigade-s-N`; its other threads, the
/// blocking pool's and tokio-compat's, are named for their roles too),
/// inside a brigade task.
pub fn on_brigade_worker() -> bool {
    let name = std::thread::current().name().unwrap_or("").to_owned();
    let worker = name.starts_with("brigade-w-") || name.starts_with("brigade-s-");
    worker && brigade::task::try_id().is_some()
}

/// A server running on a 2-worker brigade runtime of its own, until
/// [`Server::shutdown`].
pub struct Server {
    pub addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    done: Option<brigade::JoinHandle<io::Result<()>>>,
    rt: brigade::Runtime,
}

/// Starts `service` with [`brigade_hyper::serve`], set up by `configure`,
/// and a graceful-shutdown signal that [`Server::shutdown`] sends.
pub fn start<S, B>(service: S, configure: impl FnOnce(Serve<S>) -> Serve<S>) -> Server
where
    S: tower_service::Service<http::Request<Incoming>, Response = http::Response<B>>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let rt = brigade::Builder::new().worker_threads(2).build().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let (addr, done) = rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let serve = configure(brigade_hyper::serve(listener, service));
        let addr = serve.local_addr().unwrap();
        let serve = serve.with_graceful_shutdown(async {
            let _ = stopped.await;
        });
        (addr, brigade::spawn(serve.into_future()))
    });
    Server {
        addr,
        stop: Some(stop),
        done: Some(done),
        rt,
    }
}

impl Server {
    /// Sends the shutdown signal (once).
    pub fn signal_shutdown(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }

    /// Sends the shutdown signal and waits, bounded, for `serve` to return.
    pub fn shutdown(mut self) -> io::Result<()> {
        self.signal_shutdown();
        self.wait()
    }

    /// Waits, bounded, for `serve` to return.
    pub fn wait(&mut self) -> io::Result<()> {
        let done = self.done.take().expect("waited once");
        self.rt
            .block_on(async { brigade::time::timeout(LIMIT, done).await })
            .expect("serve did not return in time")
            .expect("serve's task panicked")
    }

    /// Drops `serve`'s future (aborts its task), bounded.
    pub fn abort(&mut self) {
        let done = self.done.take().expect("waited once");
        done.abort();
        let ended = self
            .rt
            .block_on(async { brigade::time::timeout(LIMIT, done).await })
            .expect("the aborted serve did not end in time");
        assert!(ended.unwrap_err().is_cancelled());
    }

    /// The runtime the server runs on.
    pub fn runtime(&self) -> &brigade::Runtime {
        &self.rt
    }
}

/// A blocking TCP connection with bounded reads and writes.
pub fn connect(addr: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(LIMIT)).unwrap();
    stream.set_write_timeout(Some(LIMIT)).unwrap();
    stream
}

/// Sends `GET path` on `stream` (keeping it open) and reads the response:
/// its status line and body. An error if the connection ends first.
pub fn get_on(stream: &mut TcpStream, path: &str) -> io::Result<(String, String)> {
    write!(stream, "GET {path} HTTP/1.1\r\nhost: test\r\n\r\n")?;
    read_response(stream)
}

/// Reads one response with a `content-length` from `stream`.
pub fn read_response(stream: &mut TcpStream) -> io::Result<(String, String)> {
    let mut head = Vec::new();
    let mut byte = [0u8];
    while !head.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte)? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let length = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse::<usize>().ok())?
        })
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body)?;
    let status = head.lines().next().unwrap_or_default().to_owned();
    Ok((status, String::from_utf8_lossy(&body).into_owned()))
}

/// `GET path` on a fresh connection: the status line and body.
pub fn fetch(addr: SocketAddr, path: &str) -> io::Result<(String, String)> {
    get_on(&mut connect(addr), path)
}

/// Waits, bounded, until the server closes `stream` (end of stream or a
/// reset), discarding what it sends first.
pub fn wait_closed(stream: &mut TcpStream) -> io::Result<()> {
    let mut sink = [0u8; 1024];
    loop {
        match stream.read(&mut sink) {
            Ok(0) => return Ok(()),
            Ok(_) => continue,
            Err(error) if error.kind() == io::ErrorKind::ConnectionReset => return Ok(()),
            Err(error) => return Err(error),
        }
    }
}

/// A tokio runtime on threads of its own, for tokio-based clients.
pub fn tokio_client_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}
