//! Elastic admission at work: the utilization limit and the foreground
//! latency over time, in the two cases the controller exists for.
//!
//! 1. Elastic work that yields well (50 µs units with `yield_if_busy`) on an
//!    otherwise idle runtime: the limit climbs towards its maximum.
//! 2. Elastic work with 5 ms sections between yield points while a plain
//!    thread spawns a foreground task every millisecond: the foreground
//!    waits behind the sections, the p99 scheduling latency passes the 1 ms
//!    target, and the controller cuts the limit until it holds.
//!
//! ```text
//! cargo run --release -p brigade-examples --example admission -- --secs 20
//! ```
//!
//! Every half second it prints the limit, the CPU share elastic tasks used
//! in that half second, how many wait for admission, and (case 2) the p99
//! delay of the foreground tasks from spawn to first poll.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use brigade_examples::mixed_load::{calibrate, spin};
use hdrhistogram::Histogram;

struct Args {
    secs: u64,
    workers: usize,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        secs: 20,
        workers: std::thread::available_parallelism().map_or(2, |n| n.get()),
    };
    let mut iter = std::env::args().skip(1);
    while let Some(flag) = iter.next() {
        let mut value = |name: &str| {
            iter.next()
                .and_then(|value| value.parse::<u64>().ok())
                .filter(|&value| value > 0)
                .ok_or_else(|| format!("{name} needs a whole number of at least 1"))
        };
        match flag.as_str() {
            "--secs" => args.secs = value("--secs")?,
            "--workers" => args.workers = value("--workers")? as usize,
            _ => {
                return Err(format!(
                    "unknown flag {flag:?}; usage: admission [--secs S] [--workers W]"
                ));
            }
        }
    }
    Ok(args)
}

fn main() {
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(2);
        }
    };
    println!("case 1: elastic work that yields well (50 µs units), otherwise idle");
    run_case(&args, Duration::from_micros(50), false);
    println!("\ncase 2: elastic work with 5 ms sections, foreground task spawned every 1 ms");
    run_case(&args, Duration::from_millis(5), true);
}

fn run_case(args: &Args, section: Duration, foreground: bool) {
    let rt = brigade::Builder::new()
        .worker_threads(args.workers)
        .long_poll_threshold(None)
        .build()
        .expect("runtime");
    let iterations = calibrate(section.as_micros() as u64);
    let stop = Arc::new(AtomicBool::new(false));
    for _ in 0..2 * args.workers {
        let stop = stop.clone();
        rt.spawn_elastic(async move {
            while !stop.load(Ordering::Relaxed) {
                std::hint::black_box(spin(iterations));
                brigade::yield_if_busy().await;
            }
        });
    }
    let (delays_tx, delays_rx) = std::sync::mpsc::channel::<Duration>();
    let pinger = foreground.then(|| {
        let (handle, stop) = (rt.handle(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(1));
                let (spawned, delays_tx) = (Instant::now(), delays_tx.clone());
                handle.spawn(async move {
                    let _ = delays_tx.send(spawned.elapsed());
                });
            }
        })
    });
    println!(
        "{:>6} {:>7} {:>12} {:>8} {:>14}",
        "t (s)", "limit", "elastic cpu", "waiting", "foreground p99"
    );
    let started = Instant::now();
    let mut last_cpu = Duration::ZERO;
    let interval = Duration::from_millis(500);
    while started.elapsed() < Duration::from_secs(args.secs) {
        std::thread::sleep(interval);
        let metrics = rt.metrics();
        let cpu = metrics.elastic_cpu_time();
        let share = (cpu - last_cpu).as_secs_f64() / (interval.as_secs_f64() * args.workers as f64);
        last_cpu = cpu;
        let mut delays = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).expect("histogram");
        for delay in delays_rx.try_iter() {
            delays.saturating_record(delay.as_micros() as u64);
        }
        let p99 = if delays.is_empty() {
            "-".to_owned()
        } else {
            format!("{} µs", delays.value_at_quantile(0.99))
        };
        println!(
            "{:>6.1} {:>7.3} {:>12.3} {:>8} {:>14}",
            started.elapsed().as_secs_f64(),
            metrics.elastic_utilization_limit(),
            share,
            metrics.elastic_waiting(),
            p99
        );
    }
    stop.store(true, Ordering::Relaxed);
    if let Some(pinger) = pinger {
        let _ = pinger.join();
    }
    rt.shutdown_timeout(Duration::from_secs(5));
}
