//! The stuck-worker experiment: what a blocking call made from async code
//! (`std::thread::sleep`, `std::fs`, a synchronous DNS lookup) does to the
//! other tasks, on brigade with compensation for stuck workers, on brigade
//! with it turned off (`compensation_threshold(None)`), and on tokio's
//! multi-thread runtime, which has no such thing.
//!
//! - **Part 1, a full stall** ([`measure_spawn_delay`]): W tasks each block
//!   their worker in `std::thread::sleep` for the stall (2.5 s), so every
//!   worker is stuck; meanwhile the calling thread, outside the runtime,
//!   spawns a small task every 2 ms through a runtime handle, and each task
//!   records how long after its spawn it started. Without compensation the
//!   tasks wait for the stall to end; with it, a spare worker starts once a
//!   worker has been stuck past the threshold while work waits, and runs
//!   them.
//! - **Part 2, blocking calls by mistake** ([`measure_echo`]): the
//!   foreground is `mixed_load`'s echo round trip (a client on a plain
//!   thread, a 1-byte request every millisecond, open loop), served by the
//!   runtime; meanwhile one task per worker blocks it for 200 ms every
//!   second, the same instant on every worker.
//!
//! [`run`] runs both parts on every runtime, in rounds whose order rotates
//! ([`Contender::order`]), and returns a summary per runtime and round;
//! [`format_tables`] turns them into markdown tables of the median round.

use std::future::Future;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use crate::harness::{Runtime, brigade_builder, tokio_builder};
use crate::mixed_load::{self, format_micros};

mod config;
mod report;
pub use config::{Config, HELP};
pub use report::{EchoSummary, Percentiles, Row, SpawnSummary, format_tables};

/// Bound on every wait for the runtime under test (the stall tasks to
/// start, the spawned tasks to run after the stall): only a hang reaches
/// it, and then the run reports what it has rather than hanging.
const PATIENCE: Duration = Duration::from_secs(10);

/// A runtime under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Contender {
    /// brigade with its default settings: compensation on, at
    /// [`brigade::DEFAULT_COMPENSATION_THRESHOLD`].
    Brigade,
    /// brigade with `compensation_threshold(None)`: a stuck worker stays
    /// stuck, as before compensation existed.
    BrigadeUncompensated,
    /// tokio's multi-thread runtime.
    Tokio,
}

impl Contender {
    /// Every runtime under test, in the tables' order.
    pub const ALL: [Contender; 3] = [
        Contender::Brigade,
        Contender::BrigadeUncompensated,
        Contender::Tokio,
    ];

    /// Name in the report.
    pub fn name(self) -> &'static str {
        match self {
            Contender::Brigade => "brigade (compensation on)",
            Contender::BrigadeUncompensated => "brigade (compensation off)",
            Contender::Tokio => "tokio",
        }
    }

    /// The order of round `round` (counted from 0): [`ALL`](Self::ALL)
    /// rotated by `round`, so each runtime runs first in turn.
    pub fn order(round: usize) -> [Contender; 3] {
        let mut order = Contender::ALL;
        order.rotate_left(round % Contender::ALL.len());
        order
    }

    fn build(self, config: &Config) -> io::Result<Runtime> {
        let brigade = || {
            let mut builder = brigade_builder(config.workers);
            builder.driver_thread(config.driver_thread);
            builder
        };
        Ok(match self {
            Contender::Brigade => {
                let mut builder = brigade();
                if let Some(threshold) = config.threshold {
                    builder.compensation_threshold(Some(threshold));
                }
                Runtime::Brigade(builder.build()?)
            }
            Contender::BrigadeUncompensated => {
                Runtime::Brigade(brigade().compensation_threshold(None).build()?)
            }
            Contender::Tokio => Runtime::Tokio(tokio_builder(config.workers).build()?),
        })
    }
}

/// Spawns `count` tasks on `rt` that each follow `plan`, sleeping between
/// the blocking calls with the runtime's own timer.
fn spawn_blockers(rt: &Runtime, count: usize, plan: &BlockPlan) {
    for _ in 0..count {
        match rt {
            Runtime::Brigade(rt) => drop(rt.spawn(plan.clone().run(brigade::time::sleep))),
            Runtime::Tokio(rt) => drop(rt.spawn(plan.clone().run(tokio::time::sleep))),
        }
    }
}

/// brigade's count of spare workers started; `None` on tokio.
fn compensations(rt: &Runtime) -> Option<u64> {
    rt.as_brigade().map(|rt| rt.metrics().compensations())
}

/// Part 2's blocking tasks: each makes a blocking call of `block` at
/// `first`, `first + every`, `first + 2 × every`, … until `stop`.
#[derive(Clone)]
struct BlockPlan {
    first: Instant,
    every: Duration,
    block: Duration,
    stop: Arc<AtomicBool>,
    calls: Arc<AtomicU64>,
}

impl BlockPlan {
    async fn run<S: Future<Output = ()>>(self, sleep: impl Fn(Duration) -> S) {
        // On a common schedule, rather than a sleep of `every − block`
        // after each call, so that the blocking calls of all the tasks
        // start together and every worker is stuck at once, every time.
        let mut next = self.first;
        loop {
            sleep(next.saturating_duration_since(Instant::now())).await;
            if self.stop.load(Ordering::Relaxed) {
                return;
            }
            // The blocking call by mistake (a synchronous file read, DNS
            // lookup, ...): the worker can do nothing else meanwhile.
            std::thread::sleep(self.block);
            self.calls.fetch_add(1, Ordering::Relaxed);
            next += self.every;
        }
    }
}

/// Waits, polling, until `done` or [`PATIENCE`] has passed; returns `done`.
fn wait_until(mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + PATIENCE;
    while !done() {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    true
}

/// Part 1 on one runtime: every worker stuck for `config.stall` while the
/// calling thread spawns a task every `config.spawn_period`.
pub fn measure_spawn_delay(contender: Contender, config: &Config) -> io::Result<SpawnSummary> {
    let rt = contender.build(config)?;
    let spawner = rt.handle();
    let started = Arc::new(AtomicUsize::new(0));
    let finished = Arc::new(AtomicUsize::new(0));
    for _ in 0..config.workers {
        let (started, finished, stall) = (started.clone(), finished.clone(), config.stall);
        spawner.spawn_detached(async move {
            started.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(stall);
            finished.fetch_add(1, Ordering::SeqCst);
        });
    }
    // Spawn only once every worker is stuck, so that every spawn meets the
    // full stall.
    if !wait_until(|| started.load(Ordering::SeqCst) == config.workers) {
        rt.shutdown(config.stall);
        return Err(io::Error::other(format!(
            "{}: the stall tasks did not all start",
            contender.name()
        )));
    }
    let (delays_tx, delays_rx) = mpsc::channel::<Duration>();
    let begun = Instant::now();
    let mut spawned = 0u64;
    // Spawn until the stall is over: the tasks spawned after it would
    // measure an idle runtime.
    while finished.load(Ordering::SeqCst) < config.workers && begun.elapsed() < PATIENCE {
        let due = begun + config.spawn_period * spawned as u32;
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        let (spawned_at, delays_tx) = (Instant::now(), delays_tx.clone());
        spawner.spawn_detached(async move {
            let _ = delays_tx.send(spawned_at.elapsed());
        });
        spawned += 1;
    }
    let mut delays_us = Histogram::new_with_bounds(1, 60_000_000, 3).map_err(io::Error::other)?;
    let deadline = Instant::now() + PATIENCE;
    while delays_us.len() < spawned {
        let Ok(delay) = delays_rx.recv_timeout(deadline.saturating_duration_since(Instant::now()))
        else {
            break;
        };
        delays_us.saturating_record((delay.as_micros() as u64).max(1));
    }
    let compensations = compensations(&rt);
    rt.shutdown(Duration::from_secs(1));
    Ok(SpawnSummary {
        delay: Percentiles::of(&delays_us),
        measured: delays_us.len(),
        spawned,
        compensations,
    })
}

/// Part 2 on one runtime: `mixed_load`'s open-loop echo client for
/// `config.echo_duration` while one task per worker blocks it now and then.
pub fn measure_echo(contender: Contender, config: &Config) -> io::Result<EchoSummary> {
    let rt = contender.build(config)?;
    let addr = mixed_load::start_echo_server(&rt)?;
    let plan = BlockPlan {
        // Half a period in, so that a run of whole periods holds as many
        // blocking calls as periods, none of them cut off by the end.
        first: Instant::now() + config.block_every / 2,
        every: config.block_every,
        block: config.block,
        stop: Arc::new(AtomicBool::new(false)),
        calls: Arc::new(AtomicU64::new(0)),
    };
    spawn_blockers(&rt, config.workers, &plan);
    let foreground =
        mixed_load::measure_open_loop(addr, config.echo_duration, config.request_period);
    plan.stop.store(true, Ordering::Relaxed);
    let compensations = compensations(&rt);
    rt.shutdown(config.block + Duration::from_secs(1));
    let foreground = foreground?;
    Ok(EchoSummary::of(
        &foreground.latencies_us,
        config.request_period,
        plan.calls.load(Ordering::Relaxed),
        compensations,
    ))
}

/// Runs the demo: both parts on every runtime, `config.rounds` times over,
/// printing a line per run as it goes. Returns a row per runtime, in
/// [`Contender::ALL`]'s order.
pub fn run(config: &Config) -> io::Result<Vec<Row>> {
    println!(
        "stuck_worker: {} worker{}; brigade's default compensation threshold is {:?}{}",
        config.workers,
        if config.workers == 1 { "" } else { "s" },
        brigade::DEFAULT_COMPENSATION_THRESHOLD,
        if config.driver_thread {
            "; brigade with its fallback driver thread"
        } else {
            ""
        },
    );
    let mut rows: Vec<Row> = Contender::ALL
        .iter()
        .map(|&contender| Row {
            contender,
            spawn: Vec::new(),
            echo: Vec::new(),
        })
        .collect();
    for round in 0..config.rounds {
        if config.rounds > 1 {
            println!("round {} of {}", round + 1, config.rounds);
        }
        for contender in Contender::order(round) {
            let row = &mut rows[contender as usize];
            let spawn = measure_spawn_delay(contender, config)?;
            println!(
                "  {:<27} spawn delay p50 {:>9} p99 {:>9} max {:>9}  tasks {:>5} of {:<5} compensations {}",
                contender.name(),
                format_micros(spawn.delay.p50),
                format_micros(spawn.delay.p99),
                format_micros(spawn.delay.max),
                spawn.measured,
                spawn.spawned,
                spawn
                    .compensations
                    .map_or("-".to_owned(), |c| c.to_string()),
            );
            row.spawn.push(spawn);
            let echo = measure_echo(contender, config)?;
            println!(
                "  {:<27} echo p50 {:>9} p99 {:>9} p99.9 {:>9} max {:>9}  served {:>5}  blocking calls {}  compensations {}",
                contender.name(),
                format_micros(echo.latency.p50),
                format_micros(echo.latency.p99),
                format_micros(echo.latency.p999),
                format_micros(echo.latency.max),
                echo.served,
                echo.blocking_calls,
                echo.compensations.map_or("-".to_owned(), |c| c.to_string()),
            );
            row.echo.push(echo);
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_runtime_runs_first_in_turn() {
        let firsts: Vec<Contender> = (0..3).map(|round| Contender::order(round)[0]).collect();
        assert_eq!(firsts, Contender::ALL);
        assert_eq!(Contender::order(3), Contender::ALL);
        for round in 0..3 {
            let mut order = Contender::order(round).map(|c| c as usize);
            order.sort();
            assert_eq!(order, [0, 1, 2], "round {round} runs each runtime once");
        }
        // `run` indexes the rows by the discriminant.
        for (index, contender) in Contender::ALL.into_iter().enumerate() {
            assert_eq!(contender as usize, index);
        }
    }
}
