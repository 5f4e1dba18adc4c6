//! brigade's `tracing` events, printed with `tracing-subscriber`.
//!
//! ```text
//! cargo run -p brigade-examples --example tracing
//! RUST_LOG=brigade=trace cargo run -p brigade-examples --example tracing
//! ```
//!
//! brigade reports what its scheduler does through the `tracing` crate and
//! installs no subscriber of its own: an application picks one, here
//! `tracing-subscriber`'s `fmt` layer behind an `EnvFilter`. The default
//! filter is [`DEFAULT_FILTER`]; `RUST_LOG` replaces it. The events, by
//! target (the module that emits them, so `brigade=debug` enables them all
//! but the trace-level ones):
//!
//! | target | level | message (fields) |
//! |---|---|---|
//! | `brigade::runtime::worker` | debug | `worker parking`, `worker unparked`, `worker started`, `worker stopped` (`worker`: its index) |
//! | `brigade::yield_queue` | trace | `task stepped aside into the yield queue`, `task left the yield queue` (`task`: its id) |
//! | `brigade::runtime::monitor` | debug | `elastic utilization limit changed` (`limit`, `previous`, `p99_us`, `waiting`), reported once it moved by at least 0.01 |
//! | `brigade::long_poll` | warn | a poll ran past `Builder::long_poll_threshold`, while it runs (`running=true`, at the threshold and past 10× and 100× it) and when it ends (`running=false`) (`worker`, `spawned_at`, `duration_ms`) |
//! | `brigade::compensation` | info, warn, debug | info: a stuck worker gets a spare (`worker`, `spawned_at`, `stuck_ms`); warn: no spare left; debug: a spare serves, `block_in_place`, a covered worker is back |
//! | `brigade::admission` | trace | `elastic task waits for admission` (`task`) |
//! | `brigade::runtime`, `brigade::driver::poll` | debug | runtime and fallback-driver start and shutdown |
//!
//! The scenario (about 3 s, on 2 workers) triggers each of the first five:
//! 1. a few pings on an idle runtime: workers unpark to run each, then park;
//! 2. one task per worker blocks it for 150 ms, and a ping is spawned
//!    meanwhile: long-poll warnings while the polls run and when they end,
//!    and a spare worker that runs the ping (compensation);
//! 3. 2 background tasks doing 50 µs units with `yield_if_busy()`, which
//!    keep both workers busy, and a foreground ping every 5 ms: each ping
//!    sends a background task through the yield queue;
//! 4. 2 elastic tasks (`spawn_elastic`) for 1.5 s: they use up their CPU
//!    grants and wait for admission, so the controller raises the limit.
//!
//! With the default [`ElasticConfig`](brigade::ElasticConfig)
//! (`adjustment_per_second` 0.03, `sample_period` 100 ms) the limit moves by
//! 0.003 per tick and an event is reported every 400 ms or so; this example uses
//! 0.2 per second and 250 ms ticks, so each tick moves it by 0.05 and is
//! reported, and 50 ms grants instead of 10 ms so that the few admissions
//! (each one unparks a worker) do not flood the output.
//!
//! The long-poll threshold is the default 10 ms; the background loops of
//! steps 3 and 4 call `yield_if_busy().await` after every unit, and each
//! call restarts the detector's stretch, so they are not reported. On a
//! machine busy with other processes, threads get preempted: a unit may
//! then pass the threshold, and the p99 may pass the 1 ms target so that
//! the limit falls instead of rising.
//!
//! At the end a small custom layer, [`Counter`], prints how many events of
//! each kind went through the filter.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use brigade_examples::busy::{calibrate, spin};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer, fmt};

/// The filter used when `RUST_LOG` is not set.
const DEFAULT_FILTER: &str = "brigade=debug,brigade::yield_queue=trace";

const WORKERS: usize = 2;

/// One unit of background work in steps 3 and 4, in µs.
const UNIT_US: u64 = 50;

fn main() -> Result<(), brigade::BuildError> {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER));
    let counter = Counter::default();
    tracing_subscriber::registry()
        .with(filter)
        .with(fmt::layer().with_timer(fmt::time::Uptime::default()))
        .with(counter.clone())
        .init();
    println!(
        "brigade's tracing events, filter {:?} (set RUST_LOG to change it).\n\
         Four steps: worker park/unpark (debug), long-poll warnings (warn) and \
         compensation (info), yield-queue traffic (trace), elastic limit changes (debug).",
        std::env::var("RUST_LOG").unwrap_or_else(|_| DEFAULT_FILTER.to_owned())
    );

    // Calibrated before the runtime starts, so that no worker competes.
    let unit = calibrate(UNIT_US, WORKERS);
    let rt = brigade::Builder::new()
        .worker_threads(WORKERS)
        .elastic(brigade::ElasticConfig {
            adjustment_per_second: 0.2,
            sample_period: Duration::from_millis(250),
            grant: Duration::from_millis(50),
            ..Default::default()
        })
        .build()?;

    println!("\n== 1. pings on an idle runtime: workers unpark, run them, park again");
    for _ in 0..3 {
        std::thread::sleep(Duration::from_millis(20));
        rt.block_on(rt.spawn(async {})).expect("ping");
    }
    std::thread::sleep(Duration::from_millis(20));

    println!("\n== 2. every worker blocked for 150 ms, a ping meanwhile: long polls, compensation");
    let blockers: Vec<_> = (0..WORKERS)
        .map(|_| {
            rt.spawn(async {
                // Blocking in a task: exactly what the detector is there to
                // catch, and what a spare worker stands in for.
                std::thread::sleep(Duration::from_millis(150));
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(20));
    rt.block_on(rt.spawn(async {}))
        .expect("ping served by a spare");
    for blocker in blockers {
        rt.block_on(blocker).expect("long poll");
    }
    // The monitor reports the end of a long poll at its first check after
    // it (it checks every threshold / 2), and the spares step down.
    std::thread::sleep(Duration::from_millis(60));

    println!("\n== 3. saturated by background work, a foreground ping every 5 ms");
    let stop = Arc::new(AtomicBool::new(false));
    let background: Vec<_> = (0..WORKERS)
        .map(|_| {
            let stop = stop.clone();
            rt.spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    std::hint::black_box(spin(unit)); // one unit of background work
                    brigade::yield_if_busy().await;
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(20));
    let mut worst = Duration::ZERO;
    for _ in 0..10 {
        std::thread::sleep(Duration::from_millis(5));
        let spawned = Instant::now();
        let waited = rt.block_on(rt.spawn(async move { spawned.elapsed() }));
        worst = worst.max(waited.expect("ping"));
    }
    stop.store(true, Ordering::Relaxed);
    for task in background {
        rt.block_on(task).expect("background task");
    }
    println!(
        "   slowest ping waited {worst:?} for a worker; yield_if_busy gave way {} times",
        rt.metrics().yields()
    );

    println!("\n== 4. elastic tasks for 1.5 s: they wait for admission, the limit rises");
    let stop = Arc::new(AtomicBool::new(false));
    let elastic: Vec<_> = (0..WORKERS)
        .map(|_| {
            let stop = stop.clone();
            rt.spawn_elastic(async move {
                while !stop.load(Ordering::Relaxed) {
                    std::hint::black_box(spin(unit));
                    brigade::yield_if_busy().await;
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(1500));
    stop.store(true, Ordering::Relaxed);
    for task in elastic {
        rt.block_on(task).expect("elastic task");
    }
    let metrics = rt.metrics();
    println!(
        "   limit now {:.2}; elastic tasks used {:?} of CPU",
        metrics.elastic_utilization_limit(),
        metrics.elastic_cpu_time()
    );

    println!("\n== shutting down");
    drop(rt);
    counter.print();
    Ok(())
}

/// A `tracing-subscriber` layer that counts brigade's events by kind.
#[derive(Clone, Default)]
struct Counter {
    counts: Arc<[AtomicU64; 4]>,
}

const KINDS: [&str; 4] = [
    "worker park/unpark (brigade::runtime::worker, debug)",
    "yield queue (brigade::yield_queue, trace)",
    "elastic limit changed (brigade::runtime::monitor, debug)",
    "long poll (brigade::long_poll, warn)",
];

impl Counter {
    fn print(&self) {
        println!("\nevents that passed the filter:");
        for (kind, count) in KINDS.iter().zip(self.counts.iter()) {
            println!("  {:>5}  {kind}", count.load(Ordering::Relaxed));
        }
    }
}

impl<S: tracing::Subscriber> Layer<S> for Counter {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        let mut message = Message(String::new());
        event.record(&mut message);
        let kind = match (event.metadata().target(), message.0.as_str()) {
            ("brigade::runtime::worker", "worker parking" | "worker unparked") => 0,
            ("brigade::yield_queue", _) => 1,
            ("brigade::runtime::monitor", "elastic utilization limit changed") => 2,
            ("brigade::long_poll", _) => 3,
            _ => return,
        };
        self.counts[kind].fetch_add(1, Ordering::Relaxed);
    }
}

/// Extracts an event's message.
struct Message(String);

impl tracing::field::Visit for Message {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
}
