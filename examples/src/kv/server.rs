//! The server on either runtime: the accept loop (one task per
//! connection) and the snapshot task. Everything else — commands, store,
//! snapshot — is the same code on both.

use crate::harness::{Runtime, brigade_builder, tokio_builder};
use std::io;
use std::net::SocketAddr;
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::config::{Config, RuntimeKind};
use super::connection::serve;
use super::snapshot::{SnapshotSettings, SnapshotStats, run_snapshots};
use super::store::Store;

/// What the connections, the snapshot task and the report share.
#[derive(Default)]
struct Shared {
    store: Store,
    stop: AtomicBool,
    commands: AtomicU64,
    connections: AtomicU64,
    snapshots: SnapshotStats,
}

/// A runtime with the server (and the snapshot task, if on) running.
pub struct Server {
    addr: SocketAddr,
    runtime: Option<Runtime>,
    shared: Arc<Shared>,
    started: Instant,
    prefill_time: Duration,
}

/// What a run did, from [`Server::shutdown`].
#[derive(Debug, Clone, Copy)]
pub struct Totals {
    /// Commands answered.
    pub commands: u64,
    /// Connections accepted.
    pub connections: u64,
    /// Snapshots finished.
    pub snapshots: u64,
    /// Keys serialised by the snapshots (finished or not).
    pub keys_serialised: u64,
    /// Bytes serialised by the snapshots (finished or not).
    pub bytes_serialised: u64,
    /// From start (after the prefill) to shutdown.
    pub elapsed: Duration,
}

/// Fills the store with `config.prefill` keys (on `config.workers` threads),
/// then starts `config.runtime` with the server on
/// `127.0.0.1:config.port` and, if `config.snapshot` is on, the snapshot
/// task.
pub fn start(config: &Config) -> io::Result<Server> {
    let shared = Arc::new(Shared::default());
    let prefill_started = Instant::now();
    prefill(&shared.store, config);
    let prefill_time = prefill_started.elapsed();
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
        prefill_time,
    })
}

/// Splits the prefill over `config.workers` threads (shards are locked,
/// so they can fill the store side by side).
fn prefill(store: &Store, config: &Config) {
    let threads = config.workers as u64;
    let share = config.prefill.div_ceil(threads);
    std::thread::scope(|scope| {
        for thread in 0..threads {
            let range: Range<u64> =
                (thread * share).min(config.prefill)..((thread + 1) * share).min(config.prefill);
            scope.spawn(move || store.prefill(range, config.value_size));
        }
    });
}

fn start_brigade(
    config: &Config,
    addr: SocketAddr,
    shared: &Arc<Shared>,
) -> io::Result<(Runtime, SocketAddr)> {
    let rt = brigade_builder(config.workers)
        .thread_name("kv-brigade")
        .background_floor(config.background_floor)
        .crowded_host_handoff(config.crowded_host_handoff)
        .spread_workers(config.spread_workers)
        .build()?;
    let listener = rt.block_on(brigade::net::TcpListener::bind(addr))?;
    let addr = listener.local_addr()?;
    let accept_shared = shared.clone();
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
            accept_shared.connections.fetch_add(1, Ordering::Relaxed);
            let shared = accept_shared.clone();
            // Errors are clients going away: nothing to do.
            brigade::spawn(async move {
                let _ = serve(stream, &shared.store, &shared.commands).await;
            });
        }
    });
    if let Some(settings) = config.snapshot.clone() {
        let shared = shared.clone();
        let snapshot = async move {
            run_snapshots(
                &shared.store,
                &shared.snapshots,
                &settings,
                &shared.stop,
                brigade::yield_if_busy,
                brigade::time::sleep,
            )
            .await;
        };
        if config.elastic {
            rt.spawn_elastic(snapshot);
        } else {
            rt.spawn(snapshot);
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
        .thread_name("kv-tokio")
        .build()?;
    let listener = rt.block_on(tokio::net::TcpListener::bind(addr))?;
    let addr = listener.local_addr()?;
    let accept_shared = shared.clone();
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
            accept_shared.connections.fetch_add(1, Ordering::Relaxed);
            let shared = accept_shared.clone();
            tokio::spawn(async move {
                let _ = serve(stream, &shared.store, &shared.commands).await;
            });
        }
    });
    if let Some(settings) = config.snapshot.clone() {
        let shared = shared.clone();
        rt.spawn(async move {
            run_snapshots(
                &shared.store,
                &shared.snapshots,
                &settings,
                &shared.stop,
                tokio::task::yield_now,
                tokio::time::sleep,
            )
            .await;
        });
    }
    Ok((Runtime::Tokio(rt), addr))
}

/// The yield point after each snapshot chunk, for the start-up line.
pub fn describe_snapshot(config: &Config) -> String {
    let Some(SnapshotSettings { every, path }) = &config.snapshot else {
        return "off".to_owned();
    };
    let (spawn, yield_point) = match config.runtime {
        RuntimeKind::Brigade if config.elastic => ("spawn_elastic", "yield_if_busy"),
        RuntimeKind::Brigade => ("spawn", "yield_if_busy"),
        RuntimeKind::Tokio => ("spawn", "yield_now"),
    };
    let pause = if every.is_zero() {
        "back to back".to_owned()
    } else {
        format!("every {} ms", every.as_millis())
    };
    let file = path
        .as_ref()
        .map_or_else(String::new, |path| format!(", saved to {}", path.display()));
    format!("{pause}, {spawn} + {yield_point} after each chunk{file}")
}

impl Server {
    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// How long the prefill took.
    pub fn prefill_time(&self) -> Duration {
        self.prefill_time
    }

    /// Commands answered so far.
    pub fn commands(&self) -> u64 {
        self.shared.commands.load(Ordering::Relaxed)
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> u64 {
        self.shared.connections.load(Ordering::Relaxed)
    }

    /// The snapshot task's counters.
    pub fn snapshots(&self) -> &SnapshotStats {
        &self.shared.snapshots
    }

    /// brigade's scheduler counters so far, as one line of `name=value`
    /// pairs; `None` on tokio. With the host's context switches and
    /// syscalls over the same run (`perf stat`), they show what each
    /// request costs the scheduler.
    pub fn brigade_counters(&self) -> Option<String> {
        let metrics = self.runtime.as_ref()?.as_brigade()?.metrics();
        Some(format!(
            "polls={} yields={} yield_queue_entries={} rescues={} parks={} steals={} \
             idle_not_serving={} descheduled_stretches={} compensations={} demotions={} \
             spread_moves={}",
            metrics.total_polls(),
            metrics.yields(),
            metrics.yield_queue_entries(),
            metrics.yield_queue_rescues(),
            metrics.total_parks(),
            metrics.total_steals(),
            metrics.idle_not_serving(),
            metrics.descheduled_stretches(),
            metrics.compensations(),
            metrics.demotions(),
            metrics.spread_moves(),
        ))
    }

    /// The map itself.
    pub fn store(&self) -> &Store {
        &self.shared.store
    }

    /// Stops the snapshot task and shuts the runtime down (waiting at most
    /// 5 s for its threads); open connections are closed.
    pub fn shutdown(mut self) -> Totals {
        let elapsed = self.started.elapsed();
        self.stop();
        let snapshots = &self.shared.snapshots;
        Totals {
            commands: self.commands(),
            connections: self.connections(),
            snapshots: snapshots.done(),
            keys_serialised: snapshots.keys(),
            bytes_serialised: snapshots.bytes(),
            elapsed,
        }
    }

    fn stop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
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
