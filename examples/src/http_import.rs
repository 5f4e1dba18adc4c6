//! An HTTP server under a bulk import: a hyper HTTP/1.1 server answering
//! `GET /` with a small body, next to an optional CPU-bound import job, on
//! brigade or (for comparison) on tokio.
//!
//! - **Server**: hyper 1.x's HTTP/1.1 connection builder, one task per
//!   connection, keep-alive. On brigade it runs through `brigade-hyper`
//!   (`BrigadeIo`, `BrigadeTimer`); on tokio through hyper-util's `TokioIo`
//!   and `TokioTimer`. The handler is the same function on both.
//! - **Import**: `tasks` tasks (default `workers × 2`), each hashing batches
//!   of [`ROWS_PER_BATCH`] synthetic rows ([`import_batch`], about 50–100 µs
//!   of CPU in a release build) in a loop, with a yield point after each
//!   batch:
//!   - brigade: tasks spawned with `spawn_elastic` (`spawn` with
//!     `--no-elastic`), `yield_if_busy().await` after each batch, the way
//!     brigade asks bulk work to be written;
//!   - tokio: tasks spawned with `tokio::spawn`, `tokio::task::yield_now()`
//!     after each batch. `yield_now` is tokio's closest equivalent: it gives
//!     way at every batch, as `yield_if_busy` does when requests wait.
//!     `consume_budget()` is the other candidate, but it yields only once a
//!     task has spent its budget of 128 units, about 10 ms of batches here,
//!     which would handicap tokio (see docs/decisions.md#mixed-load);
//!   - `--no-yield`: the same loops without any yield point.
//!
//! [`start`] starts a runtime with the server and the import;
//! `examples/http_import.rs` is the command-line front end ([`run`]).

use std::collections::hash_map::DefaultHasher;
use std::convert::Infallible;
use std::future::{Ready, ready};
use std::hash::Hasher;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use brigade::task::{Builder, TaskClass};
use brigade_hyper::{BrigadeExecutor, BrigadeIo, BrigadeTimer};
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};

use crate::harness::{Runtime, brigade_builder, tokio_builder};

mod config;
pub use crate::harness::RuntimeKind;
pub use config::{Config, HELP, ImportMode};

/// The body of `GET /`.
pub const BODY: &str = "hello from http_import\n";

/// Rows hashed per import batch.
pub const ROWS_PER_BATCH: u64 = 1024;

/// Bytes per synthetic row.
const ROW_BYTES: usize = 128;

/// One import batch: synthesises rows `first_row..first_row +
/// ROWS_PER_BATCH` (128 bytes each) and hashes each with std's SipHash
/// (`DefaultHasher`); returns the sum of the hashes.
#[inline(never)]
pub fn import_batch(first_row: u64) -> u64 {
    let mut digest = 0u64;
    let mut row = [0u8; ROW_BYTES];
    for id in first_row..first_row + ROWS_PER_BATCH {
        // The row's columns: an xorshift stream seeded by its id.
        let mut x = id.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        for column in row.chunks_exact_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            column.copy_from_slice(&x.to_le_bytes());
        }
        let mut hasher = DefaultHasher::new();
        hasher.write(&row);
        digest = digest.wrapping_add(hasher.finish());
    }
    digest
}

/// How long one [`import_batch`] takes on this machine (the median of a
/// few), for the start-up line.
pub fn batch_duration() -> Duration {
    let mut times: Vec<Duration> = (0..21u64)
        .map(|batch| {
            let started = Instant::now();
            std::hint::black_box(import_batch(batch * ROWS_PER_BATCH));
            started.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

/// The server's answer: `GET /` → 200 with [`BODY`]; anything else → 404.
pub fn respond<B>(request: &Request<B>) -> Response<Full<Bytes>> {
    let (status, body) = if request.method() == Method::GET && request.uri().path() == "/" {
        (StatusCode::OK, BODY)
    } else {
        (StatusCode::NOT_FOUND, "not found\n")
    };
    let mut response = Response::new(Full::new(Bytes::from_static(body.as_bytes())));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    response
}

/// Counters shared by the server, the import and the report.
#[derive(Default)]
struct Shared {
    stop: AtomicBool,
    rows: AtomicU64,
    requests: AtomicU64,
    /// Import tasks not yet ended or dropped (see [`Importing`]).
    importing: AtomicU64,
}

/// Counts an import task in `Shared::importing` from its spawn until its
/// future ends or is dropped, so a shutdown that gave up on a task shows.
struct Importing(Arc<Shared>);

impl Importing {
    fn new(shared: &Arc<Shared>) -> Self {
        shared.importing.fetch_add(1, Ordering::Relaxed);
        Importing(shared.clone())
    }
}

impl Drop for Importing {
    fn drop(&mut self) {
        self.0.importing.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The hyper service: counts the request and answers it with [`respond`].
struct Handler(Arc<Shared>);

impl hyper::service::Service<Request<Incoming>> for Handler {
    type Response = Response<Full<Bytes>>;
    type Error = Infallible;
    type Future = Ready<Result<Self::Response, Infallible>>;

    fn call(&self, request: Request<Incoming>) -> Self::Future {
        self.0.requests.fetch_add(1, Ordering::Relaxed);
        ready(Ok(respond(&request)))
    }
}

impl Shared {
    /// One import batch; `false` once the import should stop.
    fn import_one_batch(&self, next_row: &mut u64) -> bool {
        if self.stop.load(Ordering::Relaxed) {
            return false;
        }
        std::hint::black_box(import_batch(*next_row));
        *next_row += ROWS_PER_BATCH;
        self.rows.fetch_add(ROWS_PER_BATCH, Ordering::Relaxed);
        true
    }
}

/// The first row of import task `task`'s range.
fn first_row(task: usize) -> u64 {
    (task as u64) << 40
}

/// A runtime with the server (and the import, if on) running.
pub struct Server {
    addr: SocketAddr,
    runtime: Option<Runtime>,
    shared: Arc<Shared>,
    started: Instant,
}

/// What a run did, from [`Server::shutdown`].
#[derive(Debug, Clone, Copy)]
pub struct Totals {
    /// Requests answered.
    pub requests: u64,
    /// Rows imported.
    pub rows: u64,
    /// From start to shutdown.
    pub elapsed: Duration,
    /// Import tasks still alive when shutdown returned: 0 unless it gave up
    /// waiting for one (after 5 s) and left it running.
    pub imports_left: u64,
}

/// Starts `config.runtime` with the server on `127.0.0.1:config.port` and,
/// unless `config.import` is off, `config.tasks` import tasks.
pub fn start(config: &Config) -> io::Result<Server> {
    let shared = Arc::new(Shared::default());
    let addr = SocketAddr::from(([127, 0, 0, 1], config.port));
    let (runtime, addr) = match config.runtime {
        RuntimeKind::Brigade => start_brigade(config, addr, &shared)?,
        RuntimeKind::Tokio => start_tokio(config, addr, &shared)?,
    };
    Ok(Server {
        addr,
        runtime: Some(runtime),
        shared,
        started: Instant::now(),
    })
}

fn start_brigade(
    config: &Config,
    addr: SocketAddr,
    shared: &Arc<Shared>,
) -> io::Result<(Runtime, SocketAddr)> {
    let rt = brigade_builder(config.workers)
        .thread_name("http-import-brigade")
        .background_floor(config.background_floor)
        .crowded_host_handoff(config.crowded_host_handoff)
        .spread_workers(config.spread_workers)
        .build()?;
    let listener = rt.block_on(brigade::net::TcpListener::bind(addr))?;
    let addr = listener.local_addr()?;
    let server_shared = shared.clone();
    let http2 = config.http2;
    rt.spawn(async move {
        loop {
            // Backs off while out of file descriptors (logging once), rather
            // than spinning; an error here means the listener is unusable.
            let stream = match brigade_hyper::accept(&listener).await {
                Ok((stream, _)) => stream,
                Err(error) => {
                    eprintln!("accept failed, no longer accepting: {error}");
                    return;
                }
            };
            let _ = stream.set_nodelay(true);
            let service = Handler(server_shared.clone());
            // Errors are clients going away mid-request: nothing to do.
            // Connections are foreground: under a backlog of pipelined
            // requests hyper wakes the connection's own task again and
            // again, which a default-class task would be demoted for.
            let io = BrigadeIo::new(stream);
            let connection = Builder::new().class(TaskClass::Foreground);
            if http2 {
                connection.spawn(async move {
                    let _ = hyper::server::conn::http2::Builder::new(BrigadeExecutor::new())
                        .timer(BrigadeTimer::new())
                        .serve_connection(io, service)
                        .await;
                });
            } else {
                connection.spawn(async move {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .timer(BrigadeTimer::new())
                        .serve_connection(io, service)
                        .await;
                });
            }
        }
    });
    let yielding = config.import == ImportMode::Yielding;
    for task in 0..import_tasks(config) {
        let shared = shared.clone();
        let importing = Importing::new(&shared);
        let import = async move {
            let _importing = importing;
            let mut next_row = first_row(task);
            while shared.import_one_batch(&mut next_row) {
                if yielding {
                    brigade::yield_if_busy().await;
                }
            }
        };
        if config.elastic {
            rt.spawn_elastic(import);
        } else {
            rt.spawn(import);
        }
    }
    Ok((Runtime::Brigade(rt), addr))
}

fn start_tokio(
    config: &Config,
    addr: SocketAddr,
    shared: &Arc<Shared>,
) -> io::Result<(Runtime, SocketAddr)> {
    let rt = tokio_builder(config.workers)
        .thread_name("http-import-tokio")
        .build()?;
    let listener = rt.block_on(tokio::net::TcpListener::bind(addr))?;
    let addr = listener.local_addr()?;
    let server_shared = shared.clone();
    let http2 = config.http2;
    rt.spawn(async move {
        loop {
            let stream = match listener.accept().await {
                Ok((stream, _)) => stream,
                Err(error) => {
                    eprintln!("accept failed: {error}");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            };
            let _ = stream.set_nodelay(true);
            let service = Handler(server_shared.clone());
            let io = hyper_util::rt::TokioIo::new(stream);
            if http2 {
                tokio::spawn(async move {
                    let _ = hyper::server::conn::http2::Builder::new(
                        hyper_util::rt::TokioExecutor::new(),
                    )
                    .timer(hyper_util::rt::TokioTimer::new())
                    .serve_connection(io, service)
                    .await;
                });
            } else {
                tokio::spawn(async move {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .timer(hyper_util::rt::TokioTimer::new())
                        .serve_connection(io, service)
                        .await;
                });
            }
        }
    });
    let yielding = config.import == ImportMode::Yielding;
    for task in 0..import_tasks(config) {
        let shared = shared.clone();
        let importing = Importing::new(&shared);
        rt.spawn(async move {
            let _importing = importing;
            let mut next_row = first_row(task);
            while shared.import_one_batch(&mut next_row) {
                if yielding {
                    tokio::task::yield_now().await;
                }
            }
        });
    }
    Ok((Runtime::Tokio(rt), addr))
}

fn import_tasks(config: &Config) -> usize {
    match config.import {
        ImportMode::Off => 0,
        ImportMode::Yielding | ImportMode::NoYield => config.tasks,
    }
}

impl Server {
    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Rows imported so far.
    pub fn rows(&self) -> u64 {
        self.shared.rows.load(Ordering::Relaxed)
    }

    /// brigade's elastic CPU limit and scheduling-latency histogram (`None`
    /// on tokio), for the per-second line.
    pub fn elastic_view(&self) -> Option<(f64, brigade::LatencySnapshot)> {
        match &self.runtime {
            Some(Runtime::Brigade(rt)) => {
                let metrics = rt.metrics();
                Some((
                    metrics.elastic_utilization_limit(),
                    metrics.scheduling_latency(),
                ))
            }
            _ => None,
        }
    }

    /// Requests answered so far.
    pub fn requests(&self) -> u64 {
        self.shared.requests.load(Ordering::Relaxed)
    }

    /// Stops the import and shuts the runtime down (waiting at most 5 s for
    /// its threads).
    pub fn shutdown(mut self) -> Totals {
        let elapsed = self.started.elapsed();
        self.stop();
        Totals {
            requests: self.requests(),
            rows: self.rows(),
            elapsed,
            imports_left: self.shared.importing.load(Ordering::Relaxed),
        }
    }

    fn stop(&mut self) {
        // Import loops check the flag after each batch, so even those
        // without yield points end and let the workers stop.
        self.shared.stop.store(true, Ordering::Relaxed);
        let Some(runtime) = self.runtime.take() else {
            return;
        };
        if let Some(rt) = runtime.as_brigade() {
            let metrics = rt.metrics();
            eprintln!(
                "brigade: {} long polls, {} compensations, {} workers spread",
                metrics.long_polls(),
                metrics.compensations(),
                metrics.spread_moves()
            );
        }
        runtime.shutdown(Duration::from_secs(5));
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The command-line front end: starts the server, prints its address and a
/// line of requests/s and rows/s every second, and stops after
/// `config.duration` (printing totals) or never.
pub fn run(config: &Config) -> io::Result<()> {
    if config.import != ImportMode::Off {
        println!(
            "import batch: {ROWS_PER_BATCH} rows, {} µs on this machine",
            batch_duration().as_micros()
        );
    }
    let server = start(config)?;
    let import = match config.import {
        ImportMode::Off => "off".to_owned(),
        mode => {
            let spawn = match config.runtime {
                RuntimeKind::Brigade if config.elastic => "spawn_elastic",
                RuntimeKind::Brigade | RuntimeKind::Tokio => "spawn",
            };
            format!(
                "{} tasks, {spawn}, {}",
                config.tasks,
                mode.describe(config.runtime)
            )
        }
    };
    println!(
        "listening on http://{}/ ({}, {} workers, import: {import})",
        server.addr(),
        config.runtime.name(),
        config.workers,
    );
    let started = Instant::now();
    let (mut last_time, mut last_requests, mut last_rows) = (started, 0, 0);
    let mut last_latency = server.elastic_view().map(|(_, latency)| latency);
    for second in 1u32.. {
        let due = started + Duration::from_secs(second.into());
        let end = config.duration.map(|duration| started + duration);
        let next = end.map_or(due, |end| end.min(due));
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
        let (now, requests, rows) = (Instant::now(), server.requests(), server.rows());
        let secs = now.duration_since(last_time).as_secs_f64();
        let mut elastic = String::new();
        if let (Some((limit, latency)), Some(last)) = (server.elastic_view(), &last_latency) {
            if config.import != ImportMode::Off && config.elastic {
                let p99 = latency.since(last).quantile(0.99);
                elastic = format!(
                    "  elastic limit {limit:.2}, scheduling p99 {:.2} ms",
                    p99.as_secs_f64() * 1e3
                );
            }
            last_latency = Some(latency);
        }
        println!(
            "{:>5.1} s  {:>8.0} requests/s  {:>10.0} rows/s{elastic}",
            now.duration_since(started).as_secs_f64(),
            (requests - last_requests) as f64 / secs,
            (rows - last_rows) as f64 / secs,
        );
        (last_time, last_requests, last_rows) = (now, requests, rows);
        if end.is_some_and(|end| now >= end) {
            break;
        }
    }
    let totals = server.shutdown();
    let secs = totals.elapsed.as_secs_f64();
    println!(
        "total: {} requests ({:.0}/s), {} rows ({:.0}/s) in {secs:.1} s",
        totals.requests,
        totals.requests as f64 / secs,
        totals.rows,
        totals.rows as f64 / secs,
    );
    Ok(())
}

#[cfg(test)]
mod tests;
