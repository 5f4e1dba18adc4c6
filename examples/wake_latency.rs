//! Remote-spawn latency under intermittent load, brigade and tokio side by
//! side: a reproducer for slow wake-ups of parked workers.
//!
//! On 2 workers, one task alternates a 5 ms CPU section with a 45 ms sleep
//! (≈ 10% of one core), while a plain thread spawns a tiny task every
//! millisecond and records the delay from spawn to first poll. One worker is
//! always free, so the delay should stay near the idle wake-up time. Each
//! run prints the delay's p50, p99 and maximum per runtime; docs/decisions.md#mixed-load
//! has measured figures.
//!
//! ```text
//! cargo run --release -p brigade-examples --example wake_latency -- --runs 3
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use brigade_examples::busy::{calibrate, spin};
use brigade_examples::harness::{Brigade, Rt, Tokio, brigade_builder, tokio_builder};

const WORKERS: usize = 2;
const SECTION_US: u64 = 5_000;
const SLEEP: Duration = Duration::from_millis(45);
const RUN: Duration = Duration::from_secs(3);

/// Spawns a task every millisecond with `spawn` for [`RUN`]; returns the
/// sorted spawn-to-poll delays.
fn measure(spawn: impl Fn(Box<dyn FnOnce() + Send>)) -> Vec<Duration> {
    let (delays_tx, delays_rx) = std::sync::mpsc::channel();
    let started = Instant::now();
    while started.elapsed() < RUN {
        std::thread::sleep(Duration::from_millis(1));
        let (spawned, delays_tx) = (Instant::now(), delays_tx.clone());
        spawn(Box::new(move || {
            let _ = delays_tx.send(spawned.elapsed());
        }));
    }
    drop(delays_tx);
    let mut delays: Vec<Duration> = delays_rx.iter().collect();
    delays.sort();
    delays
}

fn report(name: &str, delays: &[Duration]) {
    let at = |q: f64| delays[((delays.len() as f64 * q) as usize).min(delays.len() - 1)];
    println!(
        "{name:<8} n={:<5} p50={:>8.1?} p99={:>8.1?} max={:>8.1?}",
        delays.len(),
        at(0.5),
        at(0.99),
        at(1.0)
    );
}

/// One run on `rt`: the intermittent task, and a spawn every millisecond
/// from this thread; returns the sorted spawn-to-poll delays.
fn run<R: Rt>(rt: R, iterations: u64) -> Vec<Duration> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    drop(rt.spawn_remote(async move {
        while !flag.load(Ordering::Relaxed) {
            std::hint::black_box(spin(iterations));
            R::sleep(SLEEP).await;
        }
    }));
    let delays = measure(|record| drop(rt.spawn_remote(async move { record() })));
    stop.store(true, Ordering::Relaxed);
    delays
}

/// brigade with the long-poll detector off, as the reproducer was first
/// run.
fn brigade() -> Brigade {
    Brigade(
        brigade_builder(WORKERS)
            .long_poll_threshold(None)
            .build()
            .expect("runtime"),
    )
}

/// tokio with its I/O and time drivers, as an application has them.
fn tokio() -> Tokio {
    Tokio(tokio_builder(WORKERS).build().expect("runtime"))
}

fn main() {
    let runs = match std::env::args().skip(1).collect::<Vec<_>>().as_slice() {
        [] => 3,
        [flag, value] if flag == "--runs" => match value.parse::<u32>() {
            Ok(runs) if runs > 0 => runs,
            _ => {
                eprintln!("--runs needs a whole number of at least 1");
                std::process::exit(2);
            }
        },
        _ => {
            eprintln!("usage: wake_latency [--runs N]");
            std::process::exit(2);
        }
    };
    let iterations = calibrate(SECTION_US, 1);
    println!("spawn-to-poll delay, {WORKERS} workers, one task doing 5 ms sections every 50 ms");
    for _ in 0..runs {
        report("brigade", &run(brigade(), iterations));
        report("tokio", &run(tokio(), iterations));
    }
}
