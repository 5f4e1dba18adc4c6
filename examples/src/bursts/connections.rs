//! The connection burst: an echo server on the runtime under test, and a
//! client (always tokio, on a current-thread runtime, so both servers face
//! the same load) that opens every connection, holds them all open at once,
//! echoes `rounds` messages on each and checks every byte.
//!
//! `bursts` runs the client in a process of its own, so that the server
//! has the whole descriptor limit to itself.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{Barrier, Semaphore};

use super::rt::wait_until;
use super::{Memory, Row};
use crate::harness::{Runtime, RuntimeKind, brigade_builder, tokio_builder};
use crate::memory::{mib, open_fds, peak_rss_bytes};

/// Bytes per echoed message.
pub const MESSAGE: usize = 64;
/// Connection attempts in flight at once, so as not to overflow the
/// listener's backlog.
const CONNECTING: usize = 256;
/// The server's read buffer per connection, inside its task.
const BUFFER: usize = 1024;
/// Back-off of the accept loop after an error (out of descriptors).
const ACCEPT_BACK_OFF: Duration = Duration::from_millis(10);

/// What the client saw.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ClientReport {
    /// Connections established.
    pub established: usize,
    /// Connections that failed to establish.
    pub connect_errors: usize,
    /// Bytes sent and received back intact.
    pub echoed: u64,
    /// Connections whose echo failed (an error, an early close or wrong bytes).
    pub echo_errors: usize,
    /// The first error, if any.
    pub first_error: Option<String>,
}

impl ClientReport {
    /// One line for the server process to read back: counts, then the
    /// first error (if any) as the rest of the line.
    pub fn to_line(&self) -> String {
        let error = self.first_error.as_deref().unwrap_or("");
        let (established, connect_errors) = (self.established, self.connect_errors);
        let (echoed, echo_errors) = (self.echoed, self.echo_errors);
        format!("client {established} {connect_errors} {echoed} {echo_errors} {error}")
    }

    /// Parses [`to_line`](Self::to_line)'s output.
    pub fn parse(line: &str) -> Option<ClientReport> {
        let mut fields = line.strip_prefix("client ")?.splitn(5, ' ');
        let mut number = || fields.next()?.parse::<u64>().ok();
        let (established, connect_errors) = (number()? as usize, number()? as usize);
        let (echoed, echo_errors) = (number()?, number()? as usize);
        let error = fields.next().unwrap_or("").trim();
        Some(ClientReport {
            established,
            connect_errors,
            echoed,
            echo_errors,
            first_error: (!error.is_empty()).then(|| error.to_owned()),
        })
    }
}

/// What a connection burst measured.
#[derive(Debug)]
pub struct ConnectionsOutcome {
    /// The descriptor limit the server ran under.
    pub fd_limit: u64,
    /// Connections the client was asked to open.
    pub target: usize,
    /// The client's report.
    pub client: ClientReport,
    /// Connections the server accepted.
    pub accepted: usize,
    /// The most connections the server held open at once.
    pub max_open: usize,
    /// Accept errors plus connections that failed on the server's side.
    pub server_errors: u64,
    /// Before the burst, the runtime and listener up.
    pub before: Memory,
    /// The peak of the server's resident memory (`VmHWM`), in bytes.
    pub peak_rss: u64,
    /// Once every connection has closed.
    pub after: Memory,
    /// The server's open descriptors before and after.
    pub fds: (usize, usize),
}

impl ConnectionsOutcome {
    /// A row of the table printed by `bursts`.
    pub fn row(&self, runtime: &str) -> Row {
        let per_connection =
            self.peak_rss.saturating_sub(self.before.rss) / self.max_open.max(1) as u64;
        vec![
            runtime.to_owned(),
            format!("{} / {}", self.target, self.fd_limit),
            format!("{} / {}", self.client.established, self.max_open),
            self.client.echoed.to_string(),
            format!(
                "{} / {} / {}",
                self.client.connect_errors, self.client.echo_errors, self.server_errors
            ),
            mib(self.before.rss),
            mib(self.peak_rss),
            per_connection.to_string(),
            mib(self.after.rss),
            format!("{} / {}", self.fds.0, self.fds.1),
        ]
    }
}

/// The table's header, matching [`ConnectionsOutcome::row`].
pub const HEADER: [&str; 10] = [
    "runtime",
    "connections / fd limit",
    "established / max open",
    "bytes echoed",
    "errors: connect / echo / server",
    "RSS before",
    "peak RSS",
    "peak bytes/conn.",
    "RSS after",
    "fds before / after",
];

/// Counters of the echo server.
#[derive(Default)]
struct ServerCounts {
    accepted: AtomicUsize,
    open: AtomicUsize,
    max_open: AtomicUsize,
    errors: AtomicU64,
}

impl ServerCounts {
    fn opened(&self) {
        self.accepted.fetch_add(1, Relaxed);
        let open = self.open.fetch_add(1, Relaxed) + 1;
        self.max_open.fetch_max(open, Relaxed);
    }

    fn closed(&self, outcome: io::Result<()>) {
        if outcome.is_err() {
            self.errors.fetch_add(1, Relaxed);
        }
        self.open.fetch_sub(1, Relaxed);
    }
}

/// Runs the echo server on a fresh runtime of `kind` with `workers`
/// workers, calls `client` with its address (it returns once its
/// connections are done), then waits at most `limit` for every connection
/// to close.
///
/// # Errors
/// If the runtime or the listener cannot be set up, or the client fails.
pub fn run(
    kind: RuntimeKind,
    workers: usize,
    fd_limit: u64,
    target: usize,
    limit: Duration,
    client: impl FnOnce(SocketAddr) -> io::Result<ClientReport>,
) -> io::Result<ConnectionsOutcome> {
    let counts = Arc::new(ServerCounts::default());
    let (runtime, addr) = start_server(kind, workers, &counts)?;
    let before = Memory::now();
    let fds_before = open_fds().unwrap_or(0);
    let report = client(addr)?;
    wait_until(limit, || counts.open.load(Relaxed) == 0);
    let outcome = ConnectionsOutcome {
        fd_limit,
        target,
        client: report,
        accepted: counts.accepted.load(Relaxed),
        max_open: counts.max_open.load(Relaxed),
        server_errors: counts.errors.load(Relaxed),
        before,
        peak_rss: peak_rss_bytes().unwrap_or(0),
        after: Memory::now(),
        fds: (fds_before, open_fds().unwrap_or(0)),
    };
    runtime.shutdown(Duration::from_secs(5));
    Ok(outcome)
}

fn start_server(
    kind: RuntimeKind,
    workers: usize,
    counts: &Arc<ServerCounts>,
) -> io::Result<(Runtime, SocketAddr)> {
    let counts = counts.clone();
    match kind {
        RuntimeKind::Brigade => {
            let rt = brigade_builder(workers).build()?;
            let listener = rt.block_on(brigade::net::TcpListener::bind("127.0.0.1:0"))?;
            let addr = listener.local_addr()?;
            rt.spawn(brigade_accept_loop(listener, counts));
            Ok((Runtime::Brigade(rt), addr))
        }
        RuntimeKind::Tokio => {
            let rt = tokio_builder(workers).build()?;
            let listener = rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))?;
            let addr = listener.local_addr()?;
            rt.spawn(tokio_accept_loop(listener, counts));
            Ok((Runtime::Tokio(rt), addr))
        }
    }
}

async fn brigade_accept_loop(listener: brigade::net::TcpListener, counts: Arc<ServerCounts>) {
    loop {
        let Ok((mut stream, _)) = listener.accept().await else {
            counts.errors.fetch_add(1, Relaxed);
            brigade::time::sleep(ACCEPT_BACK_OFF).await;
            continue;
        };
        counts.opened();
        let counts = counts.clone();
        brigade::spawn(async move {
            let mut buffer = [0u8; BUFFER];
            let outcome = async {
                loop {
                    match stream.read(&mut buffer).await? {
                        0 => return Ok(()),
                        n => stream.write_all(&buffer[..n]).await?,
                    }
                }
            };
            counts.closed(outcome.await);
        });
    }
}

async fn tokio_accept_loop(listener: tokio::net::TcpListener, counts: Arc<ServerCounts>) {
    loop {
        let Ok((mut stream, _)) = listener.accept().await else {
            counts.errors.fetch_add(1, Relaxed);
            tokio::time::sleep(ACCEPT_BACK_OFF).await;
            continue;
        };
        counts.opened();
        let counts = counts.clone();
        tokio::spawn(async move {
            let mut buffer = [0u8; BUFFER];
            let outcome = async {
                loop {
                    match stream.read(&mut buffer).await? {
                        0 => return Ok(()),
                        n => stream.write_all(&buffer[..n]).await?,
                    }
                }
            };
            counts.closed(outcome.await);
        });
    }
}

/// The client: opens `connections` connections to `addr` (at most 256
/// connecting at a time), holds them all open, then echoes `rounds`
/// messages of [`MESSAGE`] bytes on each and closes them together; the
/// whole run bounded by `limit`.
///
/// # Errors
/// If its runtime cannot be built.
pub fn client(
    addr: SocketAddr,
    connections: usize,
    rounds: usize,
    limit: Duration,
) -> io::Result<ClientReport> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let report = rt.block_on(async {
        let work = tokio::time::timeout(limit, client_connections(addr, connections, rounds));
        work.await.unwrap_or_else(|_| ClientReport {
            first_error: Some(format!("the client did not finish within {limit:?}")),
            ..ClientReport::default()
        })
    });
    Ok(report)
}

async fn client_connections(addr: SocketAddr, connections: usize, rounds: usize) -> ClientReport {
    let connecting = Arc::new(Semaphore::new(CONNECTING));
    // Every connection, established or not, meets the others twice: once
    // all are open (before the echo) and once all have echoed (before the
    // close), so that they are all open at the same time.
    let barrier = Arc::new(Barrier::new(connections));
    let tasks: Vec<_> = (0..connections)
        .map(|index| {
            let (connecting, barrier) = (connecting.clone(), barrier.clone());
            tokio::spawn(async move {
                let permit = connecting.acquire_owned().await;
                let stream = tokio::net::TcpStream::connect(addr).await;
                drop(permit);
                barrier.wait().await;
                let echoed = match stream {
                    Ok(mut stream) => Ok(echo(&mut stream, index, rounds).await),
                    Err(error) => Err(error),
                };
                barrier.wait().await;
                echoed
            })
        })
        .collect();
    let mut report = ClientReport::default();
    for task in tasks {
        let outcome = task
            .await
            .unwrap_or_else(|error| Err(io::Error::other(error)));
        let error = match outcome {
            Ok(Ok(bytes)) => {
                report.established += 1;
                report.echoed += bytes;
                continue;
            }
            Ok(Err(error)) => {
                report.established += 1;
                report.echo_errors += 1;
                error
            }
            Err(error) => {
                report.connect_errors += 1;
                error
            }
        };
        report.first_error.get_or_insert_with(|| error.to_string());
    }
    report
}

/// Sends `rounds` messages derived from `index` and checks each reply;
/// the bytes echoed.
async fn echo(stream: &mut tokio::net::TcpStream, index: usize, rounds: usize) -> io::Result<u64> {
    let mut reply = [0u8; MESSAGE];
    for round in 0..rounds {
        let message: [u8; MESSAGE] =
            std::array::from_fn(|at| (index.wrapping_mul(31) + round * 7 + at) as u8);
        stream.write_all(&message).await?;
        stream.read_exact(&mut reply).await?;
        if reply != message {
            return Err(io::Error::other(format!(
                "connection {index}, round {round}: the echo differs"
            )));
        }
    }
    Ok((rounds * MESSAGE) as u64)
}
