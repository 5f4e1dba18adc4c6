//! Task classes: a task that only wakes itself is demoted to background and
//! steps aside for tasks woken after it; its next wake by anything else
//! promotes it; fixed classes never change. Every wait is bounded and
//! nothing here measures time.
//!
//! The ordering tests run one worker and no starvation bound
//! (`max_yield_delay(None)`), so the order in which tasks run is fixed: a
//! chain of tasks, each spawning the next, records how many turns a
//! `yield_now()` loop had when each link ran. A foreground loop takes a turn
//! at least every [`LINKS_IN_A_ROW`] links (each link goes to the worker's
//! run-next slot, which runs a few tasks in a row ahead of the deque, as
//! tokio's LIFO slot does, then lets the deque's front run); a background
//! one takes at most one, the turn it was already queued for when the
//! first link spawned the second, until the chain is done.

mod common;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use brigade::task::{Builder as TaskBuilder, TaskClass};
use brigade::{Builder, JoinHandle, Runtime};
use common::{TIMEOUT, TIMEOUT_SECS, expect_panic, wait_until, with_timeout};

/// How many links each chain has.
const LINKS: usize = 20;

/// The most links that run between two turns of a foreground loop: the
/// link taken from the deque, then the run-next slot's bound of 3 in a row
/// (`MAX_RUN_NEXT_STREAK` in `runtime/scheduler/worker/run_next.rs`).
const LINKS_IN_A_ROW: u64 = 4;

/// The fewest turns a foreground loop takes while a chain runs.
const FOREGROUND_TURNS: u64 = (LINKS as u64 - 1) / LINKS_IN_A_ROW;

fn one_worker(demote: bool) -> Runtime {
    Builder::new()
        .worker_threads(1)
        .demote_background(demote)
        .max_yield_delay(None)
        // A worker the OS takes off its CPU for a while would get a
        // spare, which would run the queues in another order.
        .compensation_threshold(None)
        .build()
        .unwrap()
}

/// A `yield_now()` loop: one turn per yield, until `stop`.
#[derive(Clone, Default)]
struct YieldLoop {
    turns: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
}

impl YieldLoop {
    fn spawn(&self, rt: &Runtime, class: TaskClass) -> JoinHandle<()> {
        let this = self.clone();
        TaskBuilder::new().class(class).spawn_on(
            async move {
                while !this.stop.load(Ordering::Relaxed) {
                    this.turns.fetch_add(1, Ordering::Relaxed);
                    brigade::yield_now().await;
                }
            },
            rt.handle(),
        )
    }

    fn turns(&self) -> u64 {
        self.turns.load(Ordering::Relaxed)
    }

    fn stop(&self, rt: &Runtime, task: JoinHandle<()>) {
        self.stop.store(true, Ordering::Relaxed);
        rt.block_on(task).unwrap();
    }
}

/// Runs a chain of [`LINKS`] tasks, started by a task spawned from outside
/// the runtime; returns the loop's turns as each link saw them.
fn chain(rt: &Runtime, yield_loop: &YieldLoop) -> Vec<u64> {
    struct Chain {
        turns: Arc<AtomicU64>,
        seen: Mutex<Vec<u64>>,
        done: Mutex<mpsc::Sender<()>>,
    }
    fn link(chain: Arc<Chain>) -> std::pin::Pin<Box<dyn Future<Output = ()> + Send>> {
        Box::pin(async move {
            let mut seen = chain.seen.lock().unwrap();
            seen.push(chain.turns.load(Ordering::Relaxed));
            let last = seen.len() == LINKS;
            drop(seen);
            if last {
                chain.done.lock().unwrap().send(()).unwrap();
            } else {
                brigade::spawn(link(chain));
            }
        })
    }
    let (done, finished) = mpsc::channel();
    let chain = Arc::new(Chain {
        turns: yield_loop.turns.clone(),
        seen: Mutex::new(Vec::new()),
        done: Mutex::new(done),
    });
    rt.spawn(link(chain.clone()));
    finished
        .recv_timeout(TIMEOUT)
        .expect("the chain never finished");
    chain.seen.lock().unwrap().clone()
}

/// How many turns the loop took while the chain ran.
fn turns_during(seen: &[u64]) -> u64 {
    seen.last().unwrap() - seen.first().unwrap()
}

#[test]
fn a_yield_now_loop_is_demoted_and_steps_aside_for_tasks_woken_after_it() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = one_worker(true);
        let yield_loop = YieldLoop::default();
        let task = yield_loop.spawn(&rt, TaskClass::Auto);
        let metrics = rt.metrics();
        wait_until("the loop is demoted", || metrics.demotions() == 1);
        let seen = chain(&rt, &yield_loop);
        assert!(
            turns_during(&seen) <= 1,
            "the loop ran between links: {seen:?}"
        );
        assert!(metrics.yield_queue_entries() >= 1);
        yield_loop.stop(&rt, task);
        assert_eq!((metrics.demotions(), metrics.promotions()), (1, 0));
    });
}

#[test]
fn without_demotion_the_loop_takes_turns_with_every_task_as_in_tokio() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = one_worker(false);
        let yield_loop = YieldLoop::default();
        let task = yield_loop.spawn(&rt, TaskClass::Auto);
        wait_until("the loop runs", || yield_loop.turns() > 100);
        let seen = chain(&rt, &yield_loop);
        assert!(turns_during(&seen) >= FOREGROUND_TURNS, "{seen:?}");
        yield_loop.stop(&rt, task);
        assert_eq!(rt.metrics().demotions(), 0);
    });
}

#[test]
fn a_foreground_task_is_never_demoted_and_a_background_one_always_steps_aside() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = one_worker(true);
        let foreground = YieldLoop::default();
        let task = foreground.spawn(&rt, TaskClass::Foreground);
        wait_until("the loop runs", || foreground.turns() > 100);
        let seen = chain(&rt, &foreground);
        assert!(turns_during(&seen) >= FOREGROUND_TURNS, "{seen:?}");
        foreground.stop(&rt, task);

        let background = YieldLoop::default();
        let task = background.spawn(&rt, TaskClass::Background);
        // No run of self-wakes needed: it is background from the start.
        wait_until("the loop runs", || background.turns() > 0);
        let seen = chain(&rt, &background);
        assert!(turns_during(&seen) <= 1, "{seen:?}");
        background.stop(&rt, task);
        assert_eq!(rt.metrics().demotions(), 0, "fixed classes do not change");
    });
}

#[test]
fn a_wake_by_a_timer_promotes_a_demoted_task() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = Builder::new().worker_threads(2).build().unwrap();
        rt.block_on(rt.spawn(async {
            for _ in 0..20 {
                brigade::yield_now().await;
            }
            brigade::time::sleep(Duration::from_millis(1)).await;
            // Foreground again: a few self-wakes do not demote it again.
            brigade::yield_now().await;
        }))
        .unwrap();
        let metrics = rt.metrics();
        assert_eq!((metrics.demotions(), metrics.promotions()), (1, 1));
    });
}

#[test]
fn a_task_builder_spawns_outside_a_runtime_only_through_a_handle() {
    let message = expect_panic(|| TaskBuilder::new().spawn(async {}));
    assert!(
        message.contains("brigade::task::Builder::spawn"),
        "unhelpful message: {message}"
    );
    with_timeout(TIMEOUT_SECS, || {
        let rt = Builder::new().worker_threads(1).build().unwrap();
        let handle = rt.handle();
        let answer = TaskBuilder::new()
            .class(TaskClass::Elastic)
            .spawn_on(async { 6 * 7 }, handle);
        assert_eq!(rt.block_on(answer).unwrap(), 42);
    });
}

#[test]
fn demoted_tasks_on_one_worker_take_turns() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = one_worker(true);
        let loops: Vec<YieldLoop> = (0..3).map(|_| YieldLoop::default()).collect();
        let tasks: Vec<_> = loops
            .iter()
            .map(|yield_loop| yield_loop.spawn(&rt, TaskClass::Auto))
            .collect();
        wait_until("every loop makes progress", || {
            loops.iter().all(|yield_loop| yield_loop.turns() > 10_000)
        });
        assert_eq!(rt.metrics().demotions(), 3);
        for (yield_loop, task) in loops.iter().zip(tasks) {
            yield_loop.stop(&rt, task);
        }
    });
}

/// The most turns in a row that a demoted loop takes while other demoted
/// loops wait on the same worker: the poll it was taken back for, then one
/// per self-wake let run on (`TURN_AFTER_SELF_WAKES`, 64, in
/// `runtime/scheduler/worker/step_aside.rs`). An epoch may end a turn sooner.
const BACKGROUND_TURNS_IN_A_ROW: usize = 65;

/// How many turns `demoted_tasks_take_turns_every_few_yields` logs. In a
/// debug build a poll is slow enough that the epoch (≈ 33 µs) ends most
/// turns before the count does; `.ci/run` runs this file in a release
/// build too, where a turn ended by the epoch alone ran to 511 polls.
const LOGGED_TURNS: usize = 20_000;

#[test]
fn demoted_tasks_take_turns_every_few_yields() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = one_worker(true);
        let log = Arc::new(Mutex::new(Vec::with_capacity(LOGGED_TURNS)));
        let logging = Arc::new(AtomicBool::new(false));
        let stop = Arc::new(AtomicBool::new(false));
        let tasks: Vec<_> = (0..3u8)
            .map(|id| {
                let (log, logging, stop) = (log.clone(), logging.clone(), stop.clone());
                rt.spawn(async move {
                    while !stop.load(Ordering::Relaxed) {
                        if logging.load(Ordering::Relaxed) {
                            let mut log = log.lock().unwrap();
                            if log.len() < LOGGED_TURNS {
                                log.push(id);
                            }
                        }
                        brigade::yield_now().await;
                    }
                })
            })
            .collect();
        let metrics = rt.metrics();
        wait_until("every loop is demoted", || metrics.demotions() == 3);
        logging.store(true, Ordering::Relaxed);
        wait_until("the log is full", || {
            log.lock().unwrap().len() == LOGGED_TURNS
        });
        stop.store(true, Ordering::Relaxed);
        for task in tasks {
            rt.block_on(task).unwrap();
        }
        let log = log.lock().unwrap();
        let longest = log.chunk_by(|a, b| a == b).map(<[u8]>::len).max();
        assert!(
            longest <= Some(BACKGROUND_TURNS_IN_A_ROW),
            "a demoted loop took {longest:?} turns in a row"
        );
        assert!((0..3).all(|id| log.contains(&id)), "a loop never ran");
    });
}
