//! The background floor (`Builder::background_floor`): under foreground
//! work that never lets up, background work (tasks that step aside in
//! `yield_if_busy()`, elastic tasks) keeps making progress with a floor,
//! and makes none without one. The starvation bound (`max_yield_delay`) is
//! off throughout, so only the floor can move yielded work. Bad values are
//! a `BuildError` naming the setting. Every wait is bounded and nothing
//! here measures time.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use brigade::{Builder, ElasticConfig, JoinHandle, Runtime};
use common::{TIMEOUT_SECS, wait_until, with_timeout};

/// How many units of background work count as progress.
const UNITS: u64 = 2_000;

fn runtime(workers: usize, floor: f64) -> Runtime {
    Builder::new()
        .worker_threads(workers)
        .background_floor(floor)
        .max_yield_delay(None)
        // A worker the OS takes off its CPU for a while would get a spare,
        // which would take yielded work off the queue with nothing else
        // to do.
        .compensation_threshold(None)
        .build()
        .unwrap()
}

/// Foreground work that keeps every deque from ever emptying: per worker,
/// two tasks that spawn and await a child, in a loop, until `stop`.
struct Flood {
    stop: Arc<AtomicBool>,
    rounds: Arc<AtomicU64>,
    tasks: Vec<JoinHandle<()>>,
}

impl Flood {
    fn start(rt: &Runtime, workers: usize) -> Flood {
        let stop = Arc::new(AtomicBool::new(false));
        let rounds = Arc::new(AtomicU64::new(0));
        let tasks = (0..2 * workers)
            .map(|_| {
                let (stop, rounds) = (stop.clone(), rounds.clone());
                rt.spawn(async move {
                    while !stop.load(Ordering::Relaxed) {
                        brigade::spawn(async {}).await.unwrap();
                        rounds.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        wait_until("the flood runs", || rounds.load(Ordering::Relaxed) > 1000);
        Flood {
            stop,
            rounds,
            tasks,
        }
    }

    fn rounds(&self) -> u64 {
        self.rounds.load(Ordering::Relaxed)
    }

    fn stop(self, rt: &Runtime) {
        self.stop.store(true, Ordering::Relaxed);
        rt.block_on(async {
            for task in self.tasks {
                task.await.unwrap();
            }
        });
    }
}

/// Background work: a unit, then `yield_if_busy()`, until `stop`.
#[derive(Clone, Default)]
struct Background {
    units: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
}

impl Background {
    fn spawn(&self, rt: &Runtime, elastic: bool) -> JoinHandle<()> {
        let this = self.clone();
        let work = async move {
            while !this.stop.load(Ordering::Relaxed) {
                this.units.fetch_add(1, Ordering::Relaxed);
                brigade::yield_if_busy().await;
            }
        };
        if elastic {
            rt.spawn_elastic(work)
        } else {
            rt.spawn(work)
        }
    }

    fn units(&self) -> u64 {
        self.units.load(Ordering::Relaxed)
    }

    fn stop(&self, rt: &Runtime, task: JoinHandle<()>) {
        self.stop.store(true, Ordering::Relaxed);
        rt.block_on(task).unwrap();
    }
}

/// With a floor, background tasks started under a flood complete
/// [`UNITS`] units, and the flood keeps going too.
fn progresses_under_a_flood(workers: usize, floor: f64, elastic: bool) {
    let rt = runtime(workers, floor);
    let flood = Flood::start(&rt, workers);
    let background: Vec<Background> = (0..workers).map(|_| Background::default()).collect();
    let tasks: Vec<_> = background.iter().map(|b| b.spawn(&rt, elastic)).collect();
    wait_until("the background steps aside", || {
        rt.metrics().yield_queue_depth() > 0
    });
    let rounds = flood.rounds();
    wait_until("every background task completes its units", || {
        background.iter().all(|b| b.units() >= UNITS)
    });
    // The floor is a share, not a handover: the foreground goes on too.
    wait_until("the flood goes on", || flood.rounds() > rounds + 1000);
    assert_eq!(rt.metrics().yield_queue_rescues(), 0);
    for (b, task) in background.iter().zip(tasks) {
        b.stop(&rt, task);
    }
    flood.stop(&rt);
}

#[test]
fn with_a_floor_yielded_work_progresses_under_a_flood() {
    with_timeout(2 * TIMEOUT_SECS, || {
        progresses_under_a_flood(1, 0.25, false)
    });
}

#[test]
fn with_a_floor_yielded_work_progresses_on_every_worker() {
    with_timeout(2 * TIMEOUT_SECS, || progresses_under_a_flood(2, 0.5, false));
}

#[test]
fn with_a_floor_elastic_work_progresses_under_a_flood() {
    with_timeout(2 * TIMEOUT_SECS, || progresses_under_a_flood(2, 0.5, true));
}

/// The default, and a floor of 0: yielded work waits for as long as the
/// flood goes on (today's foreground-first behaviour), then runs.
#[test]
fn without_a_floor_yielded_work_waits_for_the_flood_to_end() {
    for floor in [None, Some(0.0)] {
        with_timeout(TIMEOUT_SECS, move || {
            let mut builder = Builder::new();
            builder
                .worker_threads(1)
                .max_yield_delay(None)
                .compensation_threshold(None);
            if let Some(floor) = floor {
                builder.background_floor(floor);
            }
            let rt = builder.build().unwrap();
            let flood = Flood::start(&rt, 1);
            let background = Background::default();
            let task = background.spawn(&rt, false);
            wait_until("the background task steps aside", || {
                rt.metrics().yield_queue_depth() == 1
            });
            let parked_at = background.units();
            let rounds = flood.rounds();
            wait_until("the flood goes on", || flood.rounds() > rounds + 20_000);
            assert_eq!(background.units(), parked_at, "floor {floor:?}");
            flood.stop(&rt);
            wait_until("the background task runs once the flood ends", || {
                background.units() > parked_at
            });
            background.stop(&rt, task);
        });
    }
}

#[test]
fn a_bad_floor_is_a_build_error_naming_the_setting() {
    for bad in [f64::NAN, -0.01, 1.01, f64::INFINITY] {
        let error = Builder::new()
            .background_floor(bad)
            .build()
            .err()
            .unwrap_or_else(|| panic!("{bad} was accepted"));
        let message = error.to_string();
        assert!(message.contains("`background_floor`"), "{message}");
    }
    // Above the elastic limit's maximum: elastic work could not get it.
    let error = Builder::new()
        .elastic(ElasticConfig {
            max_utilization: 0.3,
            ..Default::default()
        })
        .background_floor(0.5)
        .build()
        .expect_err("a floor above elastic.max_utilization was accepted");
    assert!(error.to_string().contains("elastic.max_utilization"));
    for good in [0.0, 0.5, 1.0] {
        Builder::new()
            .worker_threads(1)
            .background_floor(good)
            .build()
            .unwrap();
    }
}
