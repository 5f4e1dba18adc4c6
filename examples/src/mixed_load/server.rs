//! The runtime under test: the echo servers (on brigade, on tokio and on a
//! plain OS thread) and the background tasks.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::{RuntimeKind, Variant, YieldKind};
use crate::busy::spin;
use crate::harness::{Runtime, brigade_builder, tokio_builder};

/// A counter written by one background task, on its own cache line.
#[repr(align(128))]
#[derive(Default)]
struct UnitCounter(AtomicU64);

/// Settings of one run of a [`Variant`].
#[derive(Debug, Clone, Copy)]
pub struct Scenario {
    /// The variant.
    pub variant: Variant,
    /// Worker threads.
    pub workers: usize,
    /// Background tasks.
    pub background_tasks: usize,
    /// [`spin`] iterations per background unit.
    pub unit_iterations: u64,
    /// brigade only: run the fallback driver thread (`Builder::driver_thread`).
    pub driver_thread: bool,
    /// Inside a CPU limit of this many CPUs, with `workers` not set by the
    /// user: each runtime sizes itself as in such a container (brigade from
    /// the cgroup; tokio, through `available_parallelism`, to the limit
    /// rounded down).
    pub limit_sized: Option<f64>,
}

/// A runtime with its echo server and background load running.
pub struct Running {
    /// The echo server's address.
    pub addr: SocketAddr,
    runtime: Runtime,
    thread_server: Option<ThreadServer>,
    stop: Arc<AtomicBool>,
    units: Arc<Vec<UnitCounter>>,
    started: Instant,
}

/// What the background load did.
#[derive(Debug, Clone)]
pub struct BackgroundReport {
    /// Units completed by all background tasks.
    pub units: u64,
    /// How long the background ran.
    pub elapsed: Duration,
    /// On brigade, what its metrics counted: long polls and compensations
    /// (stuck workers are a cause of latency worth seeing next to the
    /// figures, see `Builder::compensation_threshold`), task classes and
    /// rescues of starving yielded work. `None` on tokio.
    pub brigade_metrics: Option<String>,
}

impl Scenario {
    /// Starts the runtime, the echo server and the background tasks.
    pub fn start(&self) -> io::Result<Running> {
        let stop = Arc::new(AtomicBool::new(false));
        let background = if self.variant.yield_kind == YieldKind::NoBackground {
            0
        } else {
            self.background_tasks
        };
        let units: Arc<Vec<UnitCounter>> =
            Arc::new((0..background).map(|_| UnitCounter::default()).collect());
        let thread_server = if self.variant.yield_kind == YieldKind::NoYieldThreadServer {
            Some(ThreadServer::start(&stop)?)
        } else {
            None
        };
        let runtime = match self.variant.runtime {
            RuntimeKind::Brigade => {
                let mut builder = match self.limit_sized {
                    Some(_) => brigade::Builder::new(),
                    None => brigade_builder(self.workers),
                };
                Runtime::Brigade(builder.driver_thread(self.driver_thread).build()?)
            }
            RuntimeKind::Tokio => {
                let workers = self
                    .limit_sized
                    .map_or(self.workers, |cpus| (cpus.floor() as usize).max(1));
                Runtime::Tokio(tokio_builder(workers).build()?)
            }
        };
        let addr = match &thread_server {
            Some(server) => server.addr,
            None => start_echo_server(&runtime)?,
        };
        for index in 0..background {
            let task = BackgroundTask::new(self, &stop, &units, index);
            match &runtime {
                Runtime::Brigade(rt) if self.variant.yield_kind == YieldKind::ElasticIfBusy => {
                    drop(rt.spawn_elastic(task.run_brigade()))
                }
                Runtime::Brigade(rt) => drop(rt.spawn(task.run_brigade())),
                Runtime::Tokio(rt) => drop(rt.spawn(task.run_tokio())),
            }
        }
        Ok(Running {
            addr,
            runtime,
            thread_server,
            stop,
            units,
            started: Instant::now(),
        })
    }
}

impl Running {
    /// Background units done so far.
    pub fn units_done(&self) -> u64 {
        self.units
            .iter()
            .map(|counter| counter.0.load(Ordering::Relaxed))
            .sum()
    }

    /// How long the background has run so far.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// Stops the background load and the runtime.
    pub fn stop(self) -> BackgroundReport {
        self.stop.store(true, Ordering::Relaxed);
        let elapsed = self.started.elapsed();
        let units = self.units_done();
        let brigade_metrics = self.runtime.as_brigade().map(|rt| {
            let metrics = rt.metrics();
            format!(
                "brigade: {} long polls, {} compensations, {} descheduled, {} demotions, {} promotions, {} yield-queue rescues, yield delay max {:?}",
                metrics.long_polls(),
                metrics.compensations(),
                metrics.descheduled_stretches(),
                metrics.demotions(),
                metrics.promotions(),
                metrics.yield_queue_rescues(),
                metrics.yield_delay().max(),
            )
        });
        self.runtime.shutdown(Duration::from_secs(5));
        if let Some(server) = self.thread_server {
            server.stop();
        }
        BackgroundReport {
            units,
            elapsed,
            brigade_metrics,
        }
    }
}

struct BackgroundTask {
    yield_kind: YieldKind,
    iterations: u64,
    stop: Arc<AtomicBool>,
    units: Arc<Vec<UnitCounter>>,
    index: usize,
}

impl BackgroundTask {
    fn new(
        scenario: &Scenario,
        stop: &Arc<AtomicBool>,
        units: &Arc<Vec<UnitCounter>>,
        index: usize,
    ) -> Self {
        BackgroundTask {
            yield_kind: scenario.variant.yield_kind,
            iterations: scenario.unit_iterations,
            stop: stop.clone(),
            units: units.clone(),
            index,
        }
    }

    fn unit(&self) {
        std::hint::black_box(spin(self.iterations));
        let counter = &self.units[self.index].0;
        counter.store(counter.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
    }

    async fn run_brigade(self) {
        while !self.stop.load(Ordering::Relaxed) {
            self.unit();
            match self.yield_kind {
                YieldKind::BrigadeYieldNow => brigade::yield_now().await,
                YieldKind::NoYield | YieldKind::NoYieldThreadServer => {}
                _ => brigade::yield_if_busy().await,
            }
        }
    }

    async fn run_tokio(self) {
        while !self.stop.load(Ordering::Relaxed) {
            self.unit();
            match self.yield_kind {
                YieldKind::TokioConsumeBudget => tokio::task::coop::consume_budget().await,
                YieldKind::NoYield | YieldKind::NoYieldThreadServer => {}
                _ => tokio::task::yield_now().await,
            }
        }
    }
}

/// Starts [`brigade_echo_server`] or [`tokio_echo_server`] in `runtime`, on
/// a free port at 127.0.0.1; returns its address.
pub fn start_echo_server(runtime: &Runtime) -> io::Result<SocketAddr> {
    match runtime {
        Runtime::Brigade(rt) => rt.block_on(async {
            let listener = brigade::net::TcpListener::bind("127.0.0.1:0").await?;
            let addr = listener.local_addr()?;
            brigade::spawn(brigade_echo_server(listener));
            Ok(addr)
        }),
        Runtime::Tokio(rt) => rt.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
            let addr = listener.local_addr()?;
            tokio::spawn(tokio_echo_server(listener));
            Ok(addr)
        }),
    }
}

/// Echoes every byte back on each connection `listener` accepts, a task per
/// connection: the foreground's server on brigade.
pub async fn brigade_echo_server(listener: brigade::net::TcpListener) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    while let Ok((mut stream, _)) = listener.accept().await {
        let _ = stream.set_nodelay(true);
        brigade::spawn(async move {
            let mut byte = [0u8; 1];
            while let Ok(1) = stream.read(&mut byte).await {
                if stream.write_all(&byte).await.is_err() {
                    break;
                }
            }
        });
    }
}

/// [`brigade_echo_server`] on tokio.
pub async fn tokio_echo_server(listener: tokio::net::TcpListener) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    while let Ok((mut stream, _)) = listener.accept().await {
        let _ = stream.set_nodelay(true);
        tokio::spawn(async move {
            let mut byte = [0u8; 1];
            while let Ok(1) = stream.read(&mut byte).await {
                if stream.write_all(&byte).await.is_err() {
                    break;
                }
            }
        });
    }
}

/// An echo server on a plain OS thread with blocking sockets, for the
/// `no_yield+thread_server` reference. It serves one connection at a time.
struct ThreadServer {
    addr: SocketAddr,
    thread: std::thread::JoinHandle<()>,
}

impl ThreadServer {
    /// How often a connection's read wakes to check the stop flag.
    const STOP_CHECK: Duration = Duration::from_millis(100);

    fn start(stop: &Arc<AtomicBool>) -> io::Result<ThreadServer> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let stop = stop.clone();
        let thread = std::thread::Builder::new()
            .name("thread-server".to_owned())
            .spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    if let Ok(stream) = stream {
                        Self::echo(stream, &stop);
                    }
                }
            })?;
        Ok(ThreadServer { addr, thread })
    }

    fn echo(mut stream: TcpStream, stop: &AtomicBool) {
        let _ = stream.set_nodelay(true);
        let _ = stream.set_read_timeout(Some(Self::STOP_CHECK));
        let mut byte = [0u8; 1];
        while !stop.load(Ordering::Relaxed) {
            match stream.read(&mut byte) {
                Ok(1) => {
                    if stream.write_all(&byte).is_err() {
                        return;
                    }
                }
                Err(error)
                    if matches!(
                        error.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) => {}
                _ => return,
            }
        }
    }

    /// Ends the thread; the stop flag must already be set. A connection of
    /// our own wakes its `accept`.
    fn stop(self) {
        let _ = TcpStream::connect(self.addr);
        let _ = self.thread.join();
    }
}
