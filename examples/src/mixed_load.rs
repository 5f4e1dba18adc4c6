//! The mixed-load experiment: foreground requests over loopback TCP while
//! background tasks keep every worker busy, on brigade and on tokio.
//!
//! - **Foreground**: a client on a plain OS thread (outside any runtime)
//!   sends a 1-byte request every millisecond (`--period-us`) to an echo server task in the
//!   runtime under test. Latency counts from when the request was due, so a
//!   stall shows up in full (open loop), but not the client's own sleep
//!   overshoot: a request is due at `max(scheduled time, previous reply)`.
//! - **Background**: `bg` tasks, each doing units of `unit_us` µs of CPU work
//!   (calibrated at start-up) in a loop, with a yield point after each unit.
//!
//! [`Scenario::start`] starts one runtime with its server and background
//! load; [`measure_open_loop`] drives the client. `benches/foreground_latency.rs`
//! reuses both.

use std::fmt::Write as _;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

mod chart;
mod config;
pub use chart::render_svg;
pub use config::{Config, HELP};

/// Which runtime runs the server and the background load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuntimeKind {
    /// brigade's multi-thread runtime.
    Brigade,
    /// tokio's multi-thread runtime.
    Tokio,
}

/// The yield point after each background unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum YieldKind {
    /// No background load at all (the idle baseline).
    NoBackground,
    /// `brigade::yield_if_busy()`.
    IfBusy,
    /// `brigade::yield_if_busy()` in tasks spawned with `spawn_elastic`.
    ElasticIfBusy,
    /// `brigade::yield_now()`.
    BrigadeYieldNow,
    /// `tokio::task::yield_now()`.
    TokioYieldNow,
    /// `tokio::task::consume_budget()`.
    TokioConsumeBudget,
    /// No yield point at all: the reference for background throughput (the
    /// foreground starves).
    NoYield,
    /// No yield point in the background, and the foreground served by a
    /// blocking OS thread outside the runtime, which the OS preempts the
    /// workers for. The background pays for the foreground's CPU (client,
    /// loopback TCP, context switches) as in the variants that serve it, so
    /// this is the reference that isolates the cost of the yield points.
    NoYieldThreadServer,
}

impl YieldKind {
    /// Whether the runtime under test answers the foreground at all.
    pub fn serves_foreground(self) -> bool {
        self != YieldKind::NoYield
    }
}

/// One configuration of the experiment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Variant {
    /// Name in the report.
    pub name: &'static str,
    /// The runtime under test.
    pub runtime: RuntimeKind,
    /// The background loops' yield point.
    pub yield_kind: YieldKind,
}

/// Every variant, in the order the demo runs them.
pub const VARIANTS: &[Variant] = &[
    Variant {
        name: "idle/brigade",
        runtime: RuntimeKind::Brigade,
        yield_kind: YieldKind::NoBackground,
    },
    Variant {
        name: "idle/tokio",
        runtime: RuntimeKind::Tokio,
        yield_kind: YieldKind::NoBackground,
    },
    Variant {
        name: "brigade/yield_if_busy",
        runtime: RuntimeKind::Brigade,
        yield_kind: YieldKind::IfBusy,
    },
    Variant {
        name: "brigade/elastic+yield_if_busy",
        runtime: RuntimeKind::Brigade,
        yield_kind: YieldKind::ElasticIfBusy,
    },
    Variant {
        name: "brigade/yield_now",
        runtime: RuntimeKind::Brigade,
        yield_kind: YieldKind::BrigadeYieldNow,
    },
    Variant {
        name: "tokio/yield_now",
        runtime: RuntimeKind::Tokio,
        yield_kind: YieldKind::TokioYieldNow,
    },
    Variant {
        name: "tokio/consume_budget",
        runtime: RuntimeKind::Tokio,
        yield_kind: YieldKind::TokioConsumeBudget,
    },
    Variant {
        name: "brigade/no_yield",
        runtime: RuntimeKind::Brigade,
        yield_kind: YieldKind::NoYield,
    },
    Variant {
        name: "tokio/no_yield",
        runtime: RuntimeKind::Tokio,
        yield_kind: YieldKind::NoYield,
    },
    Variant {
        name: "brigade/no_yield+thread_server",
        runtime: RuntimeKind::Brigade,
        yield_kind: YieldKind::NoYieldThreadServer,
    },
    Variant {
        name: "tokio/no_yield+thread_server",
        runtime: RuntimeKind::Tokio,
        yield_kind: YieldKind::NoYieldThreadServer,
    },
];

/// The variants whose background throughput the others are compared with.
const THROUGHPUT_REFERENCES: [&str; 2] = ["no_yield", "no_yield+thread_server"];

/// Busy work: `iterations` rounds of a multiply-add the optimiser cannot
/// remove.
#[inline(never)]
pub fn spin(iterations: u64) -> u64 {
    let mut x = std::hint::black_box(0x9E37_79B9_7F4A_7C15u64);
    for _ in 0..iterations {
        x = std::hint::black_box(
            x.wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407),
        );
    }
    x
}

/// How many [`spin`] iterations take `micros` µs on this machine while
/// `threads` threads spin at once (the median of all their trials, so one
/// preempted or unusually fast trial does not skew it).
///
/// Calibrate with as many threads as the workload keeps busy: a core running
/// alone may clock higher than with its neighbours busy, and a unit
/// calibrated on one thread then takes longer under load, which would show
/// up as lost background throughput.
pub fn calibrate(micros: u64, threads: usize) -> u64 {
    // About 2 ms a trial and 30 ms in all: a few 0.5 ms trials gave unit
    // lengths that differed by ±1.5 % from one calibration to the next.
    const TRIAL: u64 = 2_000_000;
    const TRIALS_PER_THREAD: usize = 15;
    let mut trials: Vec<Duration> = std::thread::scope(|scope| {
        let spinners: Vec<_> = (0..threads.max(1))
            .map(|_| {
                scope.spawn(|| {
                    (0..TRIALS_PER_THREAD)
                        .map(|_| {
                            let started = Instant::now();
                            std::hint::black_box(spin(TRIAL));
                            started.elapsed()
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        spinners
            .into_iter()
            .flat_map(|spinner| spinner.join().expect("calibration thread panicked"))
            .collect()
    });
    trials.sort();
    let per_micro = TRIAL as f64 / trials[trials.len() / 2].as_secs_f64() / 1e6;
    ((per_micro * micros as f64) as u64).max(1)
}

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
}

enum RuntimeHolder {
    Brigade(brigade::Runtime),
    Tokio(tokio::runtime::Runtime),
}

/// A runtime with its echo server and background load running.
pub struct Running {
    /// The echo server's address.
    pub addr: SocketAddr,
    runtime: RuntimeHolder,
    thread_server: Option<ThreadServer>,
    stop: Arc<AtomicBool>,
    units: Arc<Vec<UnitCounter>>,
    started: Instant,
}

/// What the background load did.
#[derive(Debug, Clone, Copy)]
pub struct BackgroundReport {
    /// Units completed by all background tasks.
    pub units: u64,
    /// How long the background ran.
    pub elapsed: Duration,
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
        let (runtime, runtime_addr) = match self.variant.runtime {
            RuntimeKind::Brigade => {
                let rt = brigade::Builder::new()
                    .worker_threads(self.workers)
                    .driver_thread(self.driver_thread)
                    .build()?;
                let addr = match thread_server {
                    Some(_) => None,
                    None => Some(rt.block_on(async {
                        let listener = brigade::net::TcpListener::bind("127.0.0.1:0").await?;
                        let addr = listener.local_addr()?;
                        brigade::spawn(brigade_echo_server(listener));
                        io::Result::Ok(addr)
                    })?),
                };
                for index in 0..background {
                    let task = BackgroundTask::new(self, &stop, &units, index);
                    if self.variant.yield_kind == YieldKind::ElasticIfBusy {
                        rt.spawn_elastic(task.run_brigade());
                    } else {
                        rt.spawn(task.run_brigade());
                    }
                }
                (RuntimeHolder::Brigade(rt), addr)
            }
            RuntimeKind::Tokio => {
                let rt = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(self.workers)
                    .enable_all()
                    .build()?;
                let addr = match thread_server {
                    Some(_) => None,
                    None => Some(rt.block_on(async {
                        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
                        let addr = listener.local_addr()?;
                        tokio::spawn(tokio_echo_server(listener));
                        io::Result::Ok(addr)
                    })?),
                };
                for index in 0..background {
                    let task = BackgroundTask::new(self, &stop, &units, index);
                    rt.spawn(task.run_tokio());
                }
                (RuntimeHolder::Tokio(rt), addr)
            }
        };
        let addr = match (&thread_server, runtime_addr) {
            (Some(server), _) => server.addr,
            (None, Some(addr)) => addr,
            (None, None) => unreachable!("the runtime serves when no thread does"),
        };
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
    /// Stops the background load and the runtime.
    pub fn stop(self) -> BackgroundReport {
        self.stop.store(true, Ordering::Relaxed);
        let elapsed = self.started.elapsed();
        let units = self
            .units
            .iter()
            .map(|counter| counter.0.load(Ordering::Relaxed))
            .sum();
        match self.runtime {
            RuntimeHolder::Brigade(rt) => {
                // Stuck workers are a cause of latency worth seeing next to
                // the figures (see `Builder::compensation_threshold`).
                let metrics = rt.metrics();
                eprintln!(
                    "  brigade: {} long polls, {} compensations",
                    metrics.long_polls(),
                    metrics.compensations()
                );
                rt.shutdown_timeout(Duration::from_secs(5))
            }
            RuntimeHolder::Tokio(rt) => rt.shutdown_timeout(Duration::from_secs(5)),
        }
        if let Some(server) = self.thread_server {
            server.stop();
        }
        BackgroundReport { units, elapsed }
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

/// Echoes every byte back on each connection `listener` accepts, a task per
/// connection: the foreground's server on brigade.
pub async fn brigade_echo_server(listener: brigade::net::TcpListener) {
    while let Ok((stream, _)) = listener.accept().await {
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

/// A connection to the echo server from a plain OS thread.
pub struct Client {
    stream: TcpStream,
}

impl Client {
    /// Connects; `reply_timeout` bounds every wait for a reply.
    pub fn connect(addr: SocketAddr, reply_timeout: Duration) -> io::Result<Client> {
        let stream = TcpStream::connect(addr)?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(reply_timeout))?;
        Ok(Client { stream })
    }

    /// Sends one byte and waits for its echo. An error (time-out included)
    /// means the server did not answer in time.
    pub fn round_trip(&mut self) -> io::Result<()> {
        self.stream.write_all(&[1])?;
        let mut reply = [0u8; 1];
        self.stream.read_exact(&mut reply)
    }
}

/// Foreground latencies of one run.
pub struct ForegroundReport {
    /// Latency of each answered request, in µs.
    pub latencies_us: Histogram<u64>,
    /// Requests due during the run.
    pub sent: u64,
    /// `true` if a request got no reply before the run (plus a grace
    /// second) ended: the foreground starved.
    pub starved: bool,
}

/// Sends a request every `period` for `duration` (open loop; see the module
/// docs) and records each one's latency.
pub fn measure_open_loop(
    addr: SocketAddr,
    duration: Duration,
    period: Duration,
) -> io::Result<ForegroundReport> {
    let mut client = Client::connect(addr, duration + Duration::from_secs(1))?;
    let mut latencies_us =
        Histogram::new_with_bounds(1, 60_000_000, 3).map_err(io::Error::other)?;
    let started = Instant::now();
    let mut previous_reply = started;
    let mut sent = 0u64;
    loop {
        let scheduled = started + period * sent as u32;
        if scheduled >= started + duration {
            break;
        }
        if let Some(wait) = scheduled.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        let due = scheduled.max(previous_reply);
        sent += 1;
        if client.round_trip().is_err() {
            return Ok(ForegroundReport {
                latencies_us,
                sent,
                starved: true,
            });
        }
        previous_reply = Instant::now();
        let micros = previous_reply.duration_since(due).as_micros() as u64;
        latencies_us.saturating_record(micros.max(1));
    }
    Ok(ForegroundReport {
        latencies_us,
        sent,
        starved: false,
    })
}

impl ForegroundReport {
    /// Adds another run's requests to this one (a later round of the same
    /// variant).
    fn merge(&mut self, other: ForegroundReport) {
        // Both histograms have the same bounds, so adding cannot fail.
        let _ = self.latencies_us.add(&other.latencies_us);
        self.sent += other.sent;
        self.starved |= other.starved;
    }
}

/// The result of one variant, over every round.
pub struct Outcome {
    /// The variant's name.
    pub name: String,
    /// Foreground latencies of every round together.
    pub foreground: ForegroundReport,
    /// Background CPU share of each round: units × unit time / (elapsed ×
    /// workers). Zero without background load.
    pub background_shares: Vec<f64>,
    /// Background work per second of each round, in [`spin`] iterations.
    /// Unlike the share, it does not depend on the calibration, so the
    /// throughput of two variants is compared with it.
    pub background_rates: Vec<f64>,
}

impl Outcome {
    /// The median background CPU share over the rounds.
    pub fn background_share(&self) -> f64 {
        median(&self.background_shares)
    }

    /// Adds a later round of the same variant.
    fn merge(&mut self, round: Outcome) {
        self.foreground.merge(round.foreground);
        self.background_shares.extend(round.background_shares);
        self.background_rates.extend(round.background_rates);
    }
}

/// The median of `values` (the upper one of the middle two for an even
/// count), or 0 for none.
pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied().unwrap_or(0.0)
}

/// Runs one variant with `config`'s settings.
pub fn run_variant(config: &Config, variant: Variant, unit_iterations: u64) -> io::Result<Outcome> {
    let scenario = Scenario {
        variant,
        workers: config.workers,
        background_tasks: config.background_tasks,
        unit_iterations,
        driver_thread: config.driver_thread,
    };
    let running = scenario.start()?;
    // Let the background settle before measuring.
    std::thread::sleep(Duration::from_millis(100));
    let foreground = measure_open_loop(running.addr, config.duration, config.period)?;
    let background = running.stop();
    let elapsed = background.elapsed.as_secs_f64();
    let busy_time = background.units as f64 * config.unit_us as f64 * 1e-6;
    let background_share = busy_time / (elapsed * config.workers as f64);
    let background_rate = background.units as f64 * unit_iterations as f64 / elapsed;
    Ok(Outcome {
        name: variant.name.to_owned(),
        foreground,
        background_shares: vec![background_share],
        background_rates: vec![background_rate],
    })
}

/// `micros` for a table: in µs below 10 ms, in ms (one decimal) above.
pub fn format_micros(micros: u64) -> String {
    if micros >= 10_000 {
        format!("{:.1} ms", micros as f64 / 1000.0)
    } else {
        format!("{micros} µs")
    }
}

/// Background throughput of each variant relative to the `no_yield`
/// variant of the same runtime (the cost of the yield points and of serving
/// the foreground) and to the `no_yield+thread_server` variant (the cost of
/// the yield points alone), a line per pair that ran. Each round is
/// compared with the same round's reference, run moments apart, and the
/// line gives the median (and the range, over several rounds).
pub fn format_relative_throughput(outcomes: &[Outcome]) -> String {
    let mut lines = String::new();
    for outcome in outcomes {
        let Some((runtime, kind)) = outcome.name.split_once('/') else {
            continue;
        };
        if THROUGHPUT_REFERENCES.contains(&kind) {
            continue;
        }
        for reference in THROUGHPUT_REFERENCES {
            let reference = format!("{runtime}/{reference}");
            if let Some(reference) = outcomes
                .iter()
                .find(|candidate| candidate.name == reference)
            {
                write_relative_line(&mut lines, outcome, reference);
            }
        }
    }
    lines
}

fn write_relative_line(lines: &mut String, outcome: &Outcome, reference: &Outcome) {
    let ratios: Vec<f64> = outcome
        .background_rates
        .iter()
        .zip(&reference.background_rates)
        .filter(|&(&rate, &reference_rate)| rate > 0.0 && reference_rate > 0.0)
        .map(|(rate, reference_rate)| rate / reference_rate)
        .collect();
    if ratios.is_empty() {
        return;
    }
    let _ = write!(
        lines,
        "{:<30} {:.3} of {}",
        outcome.name,
        median(&ratios),
        reference.name
    );
    if ratios.len() > 1 {
        let (low, high) = ratios
            .iter()
            .fold((f64::MAX, f64::MIN), |(low, high), &ratio| {
                (low.min(ratio), high.max(ratio))
            });
        let _ = write!(
            lines,
            " (median of {} rounds, {low:.3}–{high:.3})",
            ratios.len()
        );
    }
    lines.push('\n');
}

/// The results table.
pub fn format_table(outcomes: &[Outcome]) -> String {
    let mut table = String::new();
    let _ = writeln!(
        table,
        "{:<30} {:>10} {:>10} {:>10} {:>10} {:>9} {:>9}",
        "variant", "p50", "p99", "p99.9", "max", "requests", "bg share"
    );
    for outcome in outcomes {
        let latencies = &outcome.foreground.latencies_us;
        let cells: [String; 4] = if latencies.is_empty() {
            std::array::from_fn(|_| "-".to_owned())
        } else {
            [0.50, 0.99, 0.999, 1.0].map(|q| format_micros(latencies.value_at_quantile(q)))
        };
        let requests = if outcome.foreground.starved {
            "STARVED".to_owned()
        } else {
            outcome.foreground.sent.to_string()
        };
        let share = if outcome.background_share() > 0.0 {
            format!("{:.3}", outcome.background_share())
        } else {
            "-".to_owned()
        };
        let _ = writeln!(
            table,
            "{:<30} {:>10} {:>10} {:>10} {:>10} {:>9} {:>9}",
            outcome.name, cells[0], cells[1], cells[2], cells[3], requests, share
        );
    }
    table
}

/// Runs the demo: every selected variant, then the table and the chart.
pub fn run(config: &Config) -> io::Result<Vec<Outcome>> {
    println!(
        "mixed_load: {} workers, {} background tasks × {} µs units, {:.1} s per variant{}",
        config.workers,
        config.background_tasks,
        config.unit_us,
        config.duration.as_secs_f64(),
        if config.driver_thread {
            ", brigade with its fallback driver thread"
        } else {
            ""
        },
    );
    let selected: Vec<Variant> = VARIANTS
        .iter()
        .filter(|variant| config.selects(variant.name))
        .copied()
        .collect();
    let mut outcomes: Vec<Outcome> = Vec::new();
    for round in 1..=config.rounds {
        if config.rounds > 1 {
            println!("round {round} of {}", config.rounds);
        }
        for (index, variant) in selected.iter().enumerate() {
            // Calibrated per variant: the speed of a shared machine drifts.
            let unit_iterations = calibrate(config.unit_us, config.workers);
            println!(
                "running {} ({unit_iterations} iterations per unit) ...",
                variant.name
            );
            let outcome = run_variant(config, *variant, unit_iterations)?;
            match outcomes.get_mut(index) {
                Some(total) => total.merge(outcome),
                None => outcomes.push(outcome),
            }
        }
    }
    Ok(outcomes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(name: &str, latencies: &[u64], starved: bool, share: f64) -> Outcome {
        let mut histogram = Histogram::new_with_bounds(1, 60_000_000, 3).unwrap();
        for &latency in latencies {
            histogram.record(latency).unwrap();
        }
        Outcome {
            name: name.to_owned(),
            foreground: ForegroundReport {
                latencies_us: histogram,
                sent: latencies.len() as u64,
                starved,
            },
            background_shares: vec![share],
            background_rates: vec![share * 1e9],
        }
    }

    #[test]
    fn table_has_a_row_per_variant_with_percentiles() {
        let latencies: Vec<u64> = (1..=1000).collect();
        let table = format_table(&[
            outcome("idle/brigade", &latencies, false, 0.0),
            outcome("tokio/consume_budget", &[], true, 0.99),
        ]);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 3, "{table}");
        assert!(lines[0].starts_with("variant"));
        assert!(lines[1].starts_with("idle/brigade"));
        assert!(
            lines[1].contains("500 µs") && lines[1].contains("990 µs"),
            "{table}"
        );
        assert!(
            lines[2].contains("STARVED") && lines[2].contains("0.990"),
            "{table}"
        );
        assert_eq!(format_micros(12_345), "12.3 ms");
    }

    #[test]
    fn relative_throughput_compares_with_the_same_runtimes_reference() {
        let outcomes = [
            outcome("brigade/yield_if_busy", &[100], false, 0.9),
            outcome("tokio/yield_now", &[100], false, 0.8),
            outcome("brigade/no_yield", &[], true, 1.0),
            outcome("idle/brigade", &[100], false, 0.0),
        ];
        let text = format_relative_throughput(&outcomes);
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(
            text.contains("brigade/yield_if_busy") && text.contains("0.900 of brigade/no_yield"),
            "{text}"
        );
    }

    #[test]
    fn rounds_pool_latencies_and_compare_each_round_with_its_own_reference() {
        let mut busy = outcome("brigade/yield_if_busy", &[100, 200], false, 0.90);
        busy.merge(outcome("brigade/yield_if_busy", &[300], false, 0.50));
        busy.merge(outcome("brigade/yield_if_busy", &[400], true, 0.97));
        assert_eq!(busy.foreground.sent, 4);
        assert_eq!(busy.foreground.latencies_us.len(), 4);
        assert!(busy.foreground.starved, "a starved round marks the variant");
        assert_eq!(busy.background_share(), 0.90, "the median round");

        let mut reference = outcome("brigade/no_yield", &[], true, 1.0);
        reference.merge(outcome("brigade/no_yield", &[], true, 0.5));
        reference.merge(outcome("brigade/no_yield", &[], true, 1.0));
        // Per round: 0.90, 1.00, 0.97; the middle one of the sorted ratios.
        let text = format_relative_throughput(&[busy, reference]);
        assert!(
            text.contains("0.970 of brigade/no_yield (median of 3 rounds, 0.900–1.000)"),
            "{text}"
        );
    }

    #[test]
    fn chart_is_an_svg_with_bars_and_labels() {
        let svg = render_svg(
            &[
                outcome("a<b", &[100, 200, 5000], false, 0.5),
                outcome("starving", &[], true, 0.9),
            ],
            "title & more",
        );
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(
            svg.matches("<rect x=").count(),
            3 + 3,
            "three bars and three legend swatches"
        );
        assert!(
            svg.contains("a&lt;b") && svg.contains("title &amp; more") && svg.contains("starved")
        );
    }

    #[test]
    fn calibration_yields_a_positive_iteration_count() {
        assert!(calibrate(10, 1) >= 1);
        assert!(calibrate(10, 2) >= 1);
    }

    #[test]
    fn smoke_runs_every_variant_end_to_end() {
        let config = Config {
            background_tasks: 2,
            unit_us: 10,
            duration: Duration::from_millis(200),
            workers: 2,
            only: None,
            driver_thread: false,
            period: Duration::from_millis(1),
            rounds: 1,
            out: std::env::temp_dir().join("brigade-mixed-load-smoke.svg"),
        };
        let outcomes = run(&config).unwrap();
        assert_eq!(outcomes.len(), VARIANTS.len());
        for outcome in &outcomes {
            assert!(outcome.foreground.sent > 0, "{} sent nothing", outcome.name);
        }
        // The variants that yield properly answer every request.
        for name in ["idle/brigade", "idle/tokio", "brigade/yield_if_busy"] {
            let outcome = outcomes
                .iter()
                .find(|outcome| outcome.name == name)
                .unwrap();
            assert!(!outcome.foreground.starved, "{name} starved");
            assert_eq!(
                outcome.foreground.latencies_us.len(),
                outcome.foreground.sent
            );
        }
    }
}
