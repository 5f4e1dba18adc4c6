//! The `axum_service` and `grpc_service` examples: a real service (an axum
//! app, a tonic service) over an in-memory store, beside a bulk job, on
//! brigade or on tokio with the same handlers.
//!
//! - **Store** ([`store`]): keys to values with versions, sharded.
//! - **Service**: [`http`] (axum: JSON get/put, health, and with feature
//!   `tokio-compat` a proxy route through hyper-util's tokio-based client)
//!   and [`grpc`] (tonic: unary get/put and a server-streaming scan).
//!   brigade serves them with `brigade_hyper::serve`, tokio with
//!   `axum::serve` and `tonic::transport::Server`.
//! - **Bulk job**: `--bulk` tasks re-indexing the store, a unit (a chunk of
//!   [`store::UNIT_ENTRIES`] keys hashed and sorted) at a time, with
//!   `brigade::yield_if_busy().await` between units on brigade and
//!   `tokio::task::yield_now().await` on tokio. On brigade they are
//!   spawned with `spawn_elastic` (`spawn` with `--no-elastic`), as
//!   brigade asks bulk work to be; `yield_now` is tokio's closest
//!   equivalent of the yield point (see `http_import`).
//! - **Report**: requests/s and bulk units/s each second, and a summary
//!   line at the end ([`run`]); every handler counts itself in [`Stats`],
//!   with the requests served off the runtime's worker threads.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::harness::{Runtime, RuntimeKind, brigade_builder, tokio_builder};

pub mod config;
pub mod grpc;
pub mod http;
pub mod store;

pub use config::Config;
use store::{Cursor, Store, Value};

/// Counters every handler and bulk task adds to.
#[derive(Debug)]
pub struct Stats {
    requests: AtomicU64,
    units: AtomicU64,
    off_worker: AtomicU64,
    stop: AtomicBool,
    /// How the names of the runtime's worker threads begin.
    worker_prefix: String,
}

impl Stats {
    fn new(worker_prefix: String) -> Stats {
        Stats {
            requests: AtomicU64::new(0),
            units: AtomicU64::new(0),
            off_worker: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            worker_prefix,
        }
    }

    /// Counts a request served by the calling thread, and whether that
    /// thread was not one of the runtime's workers (a compat thread, say).
    pub fn served(&self) {
        self.requests.fetch_add(1, Ordering::Relaxed);
        let name = std::thread::current().name().unwrap_or("").to_owned();
        // A brigade spare (`brigade-s-N`) stands in for a worker.
        let spare = self.worker_prefix.starts_with("brigade-") && name.starts_with("brigade-s-");
        if !name.starts_with(&self.worker_prefix) && !spare {
            self.off_worker.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Requests served so far.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// Bulk units done so far.
    pub fn units(&self) -> u64 {
        self.units.load(Ordering::Relaxed)
    }

    /// Requests whose handler ran on a thread other than the runtime's
    /// workers.
    pub fn off_worker(&self) -> u64 {
        self.off_worker.load(Ordering::Relaxed)
    }

    /// How the names of the runtime's worker threads begin.
    pub fn worker_prefix(&self) -> &str {
        &self.worker_prefix
    }
}

/// A running service: its runtime, address and counters. Dropping it (or
/// [`Server::shutdown`]) stops the bulk job and the runtime.
pub struct Server {
    addr: SocketAddr,
    runtime: Option<Runtime>,
    stats: Arc<Stats>,
    started: Instant,
    unit: Duration,
}

/// How the names of the worker threads on `runtime` begin: brigade's
/// own role names (`brigade-w-N`, spares `brigade-s-N`, while its blocking
/// and tokio-compat threads are named otherwise), or the name tokio's
/// threads get (all of them: tokio has one name for every thread).
fn worker_prefix(runtime: RuntimeKind) -> String {
    match runtime {
        RuntimeKind::Brigade => "brigade-w-".to_owned(),
        RuntimeKind::Tokio => format!("svc-{runtime}"),
    }
}

/// The runtime `config` asks for, its workers named as [`worker_prefix`] says.
fn build_runtime(config: &Config) -> io::Result<Runtime> {
    Ok(match config.runtime {
        RuntimeKind::Brigade => {
            let mut builder = brigade_builder(config.workers);
            builder.background_floor(config.background_floor);
            Runtime::Brigade(builder.build()?)
        }
        RuntimeKind::Tokio => {
            let name = worker_prefix(config.runtime);
            Runtime::Tokio(tokio_builder(config.workers).thread_name(name).build()?)
        }
    })
}

/// Starts the runtime, prefills the store, starts the service with
/// `serve` (given the runtime, the store and the counters; it binds, spawns
/// the server and returns the address) and the bulk job.
fn start<V: Value>(
    config: &Config,
    value: impl Fn(u64) -> V,
    serve: impl FnOnce(&Runtime, Arc<Store<V>>, Arc<Stats>) -> io::Result<SocketAddr>,
) -> io::Result<Server> {
    let store = Arc::new(Store::prefilled(config.keys, value));
    let unit = store::unit_duration(&store);
    let runtime = build_runtime(config)?;
    let stats = Arc::new(Stats::new(worker_prefix(config.runtime)));
    let addr = serve(&runtime, store.clone(), stats.clone())?;
    for task in 0..config.bulk {
        spawn_bulk(&runtime, config.elastic, task, store.clone(), stats.clone());
    }
    Ok(Server {
        addr,
        runtime: Some(runtime),
        stats,
        started: Instant::now(),
        unit,
    })
}

/// Spawns bulk task `task`: re-index units until the server stops, with a
/// yield point after each; on brigade with `spawn_elastic` if `elastic`.
fn spawn_bulk<V: Value>(
    runtime: &Runtime,
    elastic: bool,
    task: usize,
    store: Arc<Store<V>>,
    stats: Arc<Stats>,
) {
    // Spread the tasks over the shards (a different stride than the
    // shards' count keeps them apart).
    let mut cursor = Cursor::at_shard(task * 5);
    let mut unit = move || {
        store.reindex_unit(&mut cursor);
        stats.units.fetch_add(1, Ordering::Relaxed);
        !stats.stop.load(Ordering::Relaxed)
    };
    match runtime {
        Runtime::Brigade(rt) => {
            let bulk = async move {
                while unit() {
                    brigade::yield_if_busy().await;
                }
            };
            if elastic {
                rt.spawn_elastic(bulk);
            } else {
                rt.spawn(bulk);
            }
        }
        Runtime::Tokio(rt) => {
            rt.spawn(async move {
                while unit() {
                    tokio::task::yield_now().await;
                }
            });
        }
    }
}

/// Spawns the server future on `runtime`; an error that ends it is printed.
fn spawn_server<F>(runtime: &Runtime, server: F)
where
    F: Future<Output = io::Result<()>> + Send + 'static,
{
    let report = |result: io::Result<()>| {
        if let Err(error) = result {
            eprintln!("the server stopped: {error}");
        }
    };
    match runtime {
        Runtime::Brigade(rt) => drop(rt.spawn(async move { report(server.await) })),
        Runtime::Tokio(rt) => drop(rt.spawn(async move { report(server.await) })),
    }
}

/// What a service did, from start to shutdown.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Totals {
    /// Requests served.
    pub requests: u64,
    /// Bulk units done.
    pub units: u64,
    /// Requests served off the runtime's workers.
    pub off_worker: u64,
    /// From start to shutdown.
    pub elapsed: Duration,
}

impl Server {
    /// The address the service listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The counters.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Waits, at most `timeout`, until the bulk job has done more than
    /// `units` units; the count then, or `None` if it made no progress.
    pub fn wait_for_units_above(&self, units: u64, timeout: Duration) -> Option<u64> {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let now = self.stats.units();
            if now > units {
                return Some(now);
            }
            if std::time::Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// How long one bulk unit took at start-up.
    pub fn unit_duration(&self) -> Duration {
        self.unit
    }

    /// Stops the bulk job and the runtime (waiting at most 5 s for its
    /// threads); the totals.
    pub fn shutdown(mut self) -> Totals {
        let elapsed = self.started.elapsed();
        self.stop();
        Totals {
            requests: self.stats.requests(),
            units: self.stats.units(),
            off_worker: self.stats.off_worker(),
            elapsed,
        }
    }

    fn stop(&mut self) {
        self.stats.stop.store(true, Ordering::Relaxed);
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown(Duration::from_secs(5));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The examples' front end: prints the address and unit length, a line of
/// requests/s and bulk units/s each second, and after `config.duration`
/// (never without one) a summary line:
///
/// ```text
/// summary runtime=brigade workers=2 bulk=4 secs=5.00 requests=… requests/s=… bulk_units=… bulk_units/s=… off_worker=0
/// ```
pub fn run(config: &Config, server: Server) {
    let spawn = match (config.runtime, config.elastic) {
        (RuntimeKind::Brigade, true) => ", spawn_elastic",
        (RuntimeKind::Brigade, false) => ", spawn",
        (RuntimeKind::Tokio, _) => "",
    };
    println!(
        "listening on {} ({}, {} workers, {} bulk tasks{spawn}; a bulk unit takes {} µs here)",
        server.addr(),
        config.runtime,
        config.workers,
        config.bulk,
        server.unit_duration().as_micros()
    );
    let started = Instant::now();
    let (mut last_requests, mut last_units, mut last) = (0, 0, started);
    let mut next = started;
    while config.duration.is_none_or(|d| started.elapsed() < d) {
        next += Duration::from_secs(1);
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
        let (now, requests, units) = (
            Instant::now(),
            server.stats.requests(),
            server.stats.units(),
        );
        let secs = (now - last).as_secs_f64();
        println!(
            "t={:.2}s requests/s={:.0} bulk_units/s={:.0} requests={requests} bulk_units={units}",
            (now - started).as_secs_f64(),
            (requests - last_requests) as f64 / secs,
            (units - last_units) as f64 / secs,
        );
        (last_requests, last_units, last) = (requests, units, now);
    }
    let totals = server.shutdown();
    let secs = totals.elapsed.as_secs_f64();
    println!(
        "summary runtime={} workers={} bulk={} secs={secs:.2} requests={} requests/s={:.0} \
         bulk_units={} bulk_units/s={:.0} off_worker={}",
        config.runtime,
        config.workers,
        config.bulk,
        totals.requests,
        totals.requests as f64 / secs,
        totals.units,
        totals.units as f64 / secs,
        totals.off_worker,
    );
}
