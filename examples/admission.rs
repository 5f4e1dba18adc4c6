//! Elastic admission at work: the utilization limit and the foreground
//! latency over time, in the two cases the controller exists for.
//!
//! 1. Elastic work that yields well (50 µs units with `yield_if_busy`) on an
//!    otherwise idle runtime: it uses all the CPU from the start, on idle
//!    workers' grants (`ElasticConfig::use_idle_workers`), while the limit,
//!    what it would get beside a busy foreground, climbs towards its
//!    maximum.
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
//! delay of the foreground tasks from spawn to first poll over the last
//! 2.5 s (the controller's window). Case 2 ends with a summary of its second
//! half, taken as the steady state: the foreground p99 and p99.9, the worst
//! 2.5 s window's p99, and the range the limit moved in.
//!
//! Flags: `--secs S` per case (default 20), `--workers W`, `--case 1|2`
//! (default both), `--adjust A` (`ElasticConfig::adjustment_per_second`)
//! and `--sample-every N` (`Builder::latency_sample_every`), to compare
//! settings.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use brigade_examples::busy::{calibrate, spin};
use hdrhistogram::Histogram;

struct Args {
    secs: u64,
    workers: usize,
    case: Option<u64>,
    adjust: Option<f64>,
    sample_every: Option<u32>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        secs: 20,
        workers: brigade_examples::harness::available_cores(),
        case: None,
        adjust: None,
        sample_every: None,
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
            "--case" => args.case = Some(value("--case")?),
            "--sample-every" => args.sample_every = Some(value("--sample-every")? as u32),
            "--adjust" => {
                args.adjust = Some(
                    iter.next()
                        .and_then(|value| value.parse::<f64>().ok())
                        .ok_or("--adjust needs a number")?,
                )
            }
            _ => {
                return Err(format!(
                    "unknown flag {flag:?}; usage: admission [--secs S] [--workers W] [--case 1|2] [--adjust A] [--sample-every N]"
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
    if args.case.is_none_or(|case| case == 1) {
        println!("case 1: elastic work that yields well (50 µs units), otherwise idle");
        run_case(&args, Duration::from_micros(50), false);
    }
    if args.case.is_none_or(|case| case == 2) {
        println!("\ncase 2: elastic work with 5 ms sections, foreground task spawned every 1 ms");
        run_case(&args, Duration::from_millis(5), true);
    }
}

/// How often a row is printed.
const REPORT_EVERY: Duration = Duration::from_millis(500);
/// The foreground p99 is taken over this many rows: the controller's window.
const WINDOW_ROWS: usize = 5;

fn build_runtime(args: &Args) -> brigade::Runtime {
    let mut elastic = brigade::ElasticConfig::default();
    if let Some(adjust) = args.adjust {
        elastic.adjustment_per_second = adjust;
    }
    let mut builder = brigade::Builder::new();
    builder
        .worker_threads(args.workers)
        .long_poll_threshold(None)
        .elastic(elastic);
    if let Some(every) = args.sample_every {
        builder.latency_sample_every(every);
    }
    builder.build().unwrap_or_else(|error| {
        eprintln!("{error}");
        std::process::exit(2);
    })
}

fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000, 3).expect("histogram bounds are valid")
}

fn run_case(args: &Args, section: Duration, foreground: bool) {
    let rt = build_runtime(args);
    let iterations = calibrate(section.as_micros() as u64, args.workers);
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
        let (handle, stop) = (rt.handle().clone(), stop.clone());
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
        "{:>6} {:>7} {:>12} {:>8} {:>16}",
        "t (s)", "limit", "elastic cpu", "waiting", "foreground p99*"
    );
    let started = Instant::now();
    let mut last_cpu = Duration::ZERO;
    let mut rows: std::collections::VecDeque<Histogram<u64>> = Default::default();
    // The second half of the run, taken as the steady state.
    let mut steady = new_histogram();
    let mut steady_limits = Vec::new();
    let mut steady_worst_window = 0;
    let half = Duration::from_secs(args.secs) / 2;
    while started.elapsed() < Duration::from_secs(args.secs) {
        std::thread::sleep(REPORT_EVERY);
        let metrics = rt.metrics();
        let cpu = metrics.elastic_cpu_time();
        let share =
            (cpu - last_cpu).as_secs_f64() / (REPORT_EVERY.as_secs_f64() * args.workers as f64);
        last_cpu = cpu;
        let mut row = new_histogram();
        for delay in delays_rx.try_iter() {
            row.saturating_record(delay.as_micros() as u64);
        }
        rows.push_back(row);
        if rows.len() > WINDOW_ROWS {
            rows.pop_front();
        }
        let mut window = new_histogram();
        for row in &rows {
            window.add(row).expect("same bounds");
        }
        let limit = metrics.elastic_utilization_limit();
        let p99 = if window.is_empty() {
            "-".to_owned()
        } else {
            format!("{} µs", window.value_at_quantile(0.99))
        };
        if started.elapsed() >= half && foreground {
            steady
                .add(rows.back().expect("just pushed"))
                .expect("same bounds");
            steady_limits.push(limit);
            steady_worst_window = steady_worst_window.max(window.value_at_quantile(0.99));
        }
        println!(
            "{:>6.1} {:>7.3} {:>12.3} {:>8} {:>16}",
            started.elapsed().as_secs_f64(),
            limit,
            share,
            metrics.elastic_waiting(),
            p99
        );
    }
    println!("* over the last {WINDOW_ROWS} rows, the controller's 2.5 s window");
    if foreground && !steady.is_empty() {
        let (low, high) = steady_limits
            .iter()
            .fold((f64::MAX, f64::MIN), |(low, high), &limit| {
                (low.min(limit), high.max(limit))
            });
        println!(
            "steady state (second half): foreground p99 {} µs, p99.9 {} µs, \
             worst window p99 {} µs, limit {low:.3}..{high:.3}",
            steady.value_at_quantile(0.99),
            steady.value_at_quantile(0.999),
            steady_worst_window,
        );
    }
    stop.store(true, Ordering::Relaxed);
    if let Some(pinger) = pinger {
        let _ = pinger.join();
    }
    rt.shutdown_timeout(Duration::from_secs(5));
}
