//! Remote-spawn latency under intermittent load, brigade and tokio side by
//! side: a known weak spot, kept as a reproducer.
//!
//! On 2 workers, one task alternates a 5 ms CPU section with a 45 ms sleep
//! (≈ 10% of one core), while a plain thread spawns a tiny task every
//! millisecond and records the delay from spawn to first poll. One worker is
//! always free, so the delay should stay near the idle wake-up time.
//!
//! ```text
//! cargo run --release -p brigade-examples --example wake_latency -- --runs 3
//! ```
//!
//! Measured 2026-11-22 (2-core VM): brigade p99 1.7–1.9 ms, tokio 0.1–1.4 ms.
//! Instrumenting brigade showed that when a spawn finds no idle worker, the
//! other worker is asleep but already notified (counted as searching): the
//! delay is the OS taking that long to run the woken thread, which happens to
//! brigade's workers more consistently than to tokio's.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use brigade_examples::busy::{calibrate, spin};

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

fn run_brigade(iterations: u64) -> Vec<Duration> {
    let rt = brigade::Builder::new()
        .worker_threads(2)
        .long_poll_threshold(None)
        .build()
        .expect("runtime");
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    rt.spawn(async move {
        while !flag.load(Ordering::Relaxed) {
            std::hint::black_box(spin(iterations));
            brigade::time::sleep(SLEEP).await;
        }
    });
    let handle = rt.handle();
    let delays = measure(|record| {
        handle.spawn(async move { record() });
    });
    stop.store(true, Ordering::Relaxed);
    delays
}

fn run_tokio(iterations: u64) -> Vec<Duration> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    rt.spawn(async move {
        while !flag.load(Ordering::Relaxed) {
            std::hint::black_box(spin(iterations));
            tokio::time::sleep(SLEEP).await;
        }
    });
    let handle = rt.handle().clone();
    let delays = measure(|record| {
        handle.spawn(async move { record() });
    });
    stop.store(true, Ordering::Relaxed);
    delays
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
    println!("spawn-to-poll delay, 2 workers, one task doing 5 ms sections every 50 ms");
    for _ in 0..runs {
        report("brigade", &run_brigade(iterations));
        report("tokio", &run_tokio(iterations));
    }
}
