//! Paused time: `pause`, `advance`, `resume`, `start_paused`, and the
//! auto-advance on runtimes with several workers, which must never fire
//! while a task is runnable, a `spawn_blocking` closure runs, or an elastic
//! task waits for admission.
//!
//! On a paused clock the tests assert exact virtual times (the clock moves
//! only to timer deadlines, in whole milliseconds from a paused start), and
//! orderings. Every body is bounded by a real-time thread timeout, never by
//! a brigade timer, which would follow the paused clock.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration as StdDuration;

use brigade::time::{self, Duration, Instant, MissedTickBehavior};
use common::{TIMEOUT, TIMEOUT_SECS, expect_panic, with_timeout};

/// Runs `body` on a runtime of `workers` workers started paused, bounded in
/// real time.
fn paused<T, F>(workers: usize, body: impl FnOnce() -> F + Send + 'static) -> T
where
    T: Send + 'static,
    F: std::future::Future<Output = T>,
{
    with_timeout(TIMEOUT_SECS, move || {
        let runtime = brigade::Builder::new()
            .worker_threads(workers)
            .start_paused(true)
            .build()
            .unwrap();
        runtime.block_on(body())
    })
}

/// Aborts the process if a macro-built test body (which cannot be wrapped in
/// `with_timeout`) is still running after [`TIMEOUT`]; disarmed when dropped.
struct Watchdog(#[allow(dead_code)] mpsc::Sender<()>);

fn watchdog() -> Watchdog {
    let (disarm, armed) = mpsc::channel::<()>();
    std::thread::spawn(move || {
        if armed.recv_timeout(TIMEOUT) == Err(mpsc::RecvTimeoutError::Timeout) {
            eprintln!("a paused-time test still runs after {TIMEOUT_SECS} s: aborting");
            std::process::abort();
        }
    });
    Watchdog(disarm)
}

#[test]
fn a_paused_clock_stands_still_until_advanced() {
    paused(2, || async {
        let start = Instant::now();
        std::thread::sleep(StdDuration::from_millis(5));
        assert_eq!(Instant::now(), start, "the paused clock moved by itself");
        time::advance(Duration::from_millis(1500)).await;
        assert_eq!(Instant::now() - start, Duration::from_millis(1500));
        assert_eq!(start.elapsed(), Duration::from_millis(1500));
    });
}

#[test]
fn advance_fires_the_timers_it_passes_and_no_others() {
    paused(2, || async {
        let start = Instant::now();
        let fired = Arc::new(AtomicUsize::new(0));
        let sleepers: Vec<_> = [10u64, 20, 30]
            .into_iter()
            .map(|secs| {
                let fired = fired.clone();
                brigade::spawn(async move {
                    time::sleep(Duration::from_secs(secs)).await;
                    fired.fetch_add(1, Ordering::SeqCst);
                    Instant::now() - start
                })
            })
            .collect();
        // Let the three register their timers: the test waits on a
        // timer-free condition, so the clock cannot auto-advance past them
        // while it waits (this thread holds it while it polls).
        while brigade::Handle::current().metrics().num_timers() < 3 {
            brigade::yield_now().await;
        }
        time::advance(Duration::from_secs(25)).await;
        let mut results = Vec::new();
        for sleeper in sleepers {
            results.push(sleeper.await.unwrap());
        }
        // The third ended by auto-advance at exactly 30 s; the first two
        // saw the clock at 25 s, where `advance` left it.
        assert_eq!(
            results,
            [25, 25, 30].map(Duration::from_secs),
            "each sleeper's view of the clock when it woke"
        );
        assert_eq!(fired.load(Ordering::SeqCst), 3);
    });
}

/// A test body runs on the `block_on` thread: `advance` must not return
/// before the tasks whose timers it fired have run (a key that expires, then
/// a read that must see it gone: mini-redis's `key_value_timeout`).
#[test]
fn advance_from_block_on_returns_after_the_woken_tasks_ran() {
    paused(1, || async {
        let expired = Arc::new(AtomicBool::new(false));
        let expiry = brigade::spawn({
            let expired = expired.clone();
            async move {
                time::sleep(Duration::from_secs(1)).await;
                expired.store(true, Ordering::SeqCst);
            }
        });
        while brigade::Handle::current().metrics().num_timers() < 1 {
            brigade::yield_now().await;
        }
        time::advance(Duration::from_secs(1)).await;
        assert!(
            expired.load(Ordering::SeqCst),
            "the task woken by the advance ran before it returned"
        );
        expiry.await.unwrap();
    });
}

/// A deadline set an odd fraction of a millisecond into the paused clock
/// fires on `advance` by exactly its distance, though the wheel rounds
/// deadlines up to whole milliseconds.
#[test]
fn advance_by_a_sleeps_duration_fires_it() {
    paused(1, || async {
        // Move the clock off a millisecond boundary.
        time::advance(Duration::from_micros(300)).await;
        let slept = brigade::spawn(time::sleep(Duration::from_secs(1)));
        while brigade::Handle::current().metrics().num_timers() < 1 {
            brigade::yield_now().await;
        }
        time::advance(Duration::from_secs(1)).await;
        assert_eq!(
            brigade::Handle::current().metrics().num_timers(),
            0,
            "the sleep fired on the advance"
        );
        slept.await.unwrap();
    });
}

#[test]
fn auto_advance_runs_sleeps_in_deadline_order_on_four_workers() {
    let order = paused(4, || async {
        let start = Instant::now();
        let (sender, receiver) = mpsc::channel();
        let tasks: Vec<_> = (1..=40u64)
            .rev()
            .map(|n| {
                let sender = sender.clone();
                brigade::spawn(async move {
                    // Deadlines 100 ms apart, spawned latest first.
                    time::sleep(Duration::from_millis(100 * n)).await;
                    assert_eq!(Instant::now() - start, Duration::from_millis(100 * n));
                    sender.send(n).unwrap();
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
        assert_eq!(Instant::now() - start, Duration::from_secs(4));
        receiver.try_iter().collect::<Vec<_>>()
    });
    assert_eq!(order, (1..=40).collect::<Vec<_>>());
}

#[test]
fn no_auto_advance_while_a_task_is_runnable() {
    paused(3, || async {
        let done = Arc::new(AtomicBool::new(false));
        // Always runnable until done: it only ever wakes itself, so it is
        // demoted to background and steps aside through the yield queue.
        let spinner = brigade::spawn({
            let done = done.clone();
            async move {
                for _ in 0..20_000 {
                    brigade::yield_now().await;
                }
                done.store(true, Ordering::SeqCst);
            }
        });
        // A task that keeps its worker busy without yielding, for real time.
        let hog = brigade::spawn(async {
            common::spin_for(StdDuration::from_millis(30));
            Instant::now()
        });
        let start = Instant::now();
        time::sleep(Duration::from_secs(1)).await;
        assert!(
            done.load(Ordering::SeqCst),
            "the clock advanced while a task was runnable"
        );
        assert_eq!(
            hog.await.unwrap(),
            start,
            "the clock advanced while a task ran"
        );
        spinner.await.unwrap();
    });
}

#[test]
fn no_auto_advance_while_a_blocking_closure_runs() {
    paused(2, || async {
        let done = Arc::new(AtomicBool::new(false));
        let closure = brigade::spawn_blocking({
            let done = done.clone();
            move || {
                std::thread::sleep(StdDuration::from_millis(50));
                done.store(true, Ordering::SeqCst);
            }
        });
        let start = Instant::now();
        time::sleep(Duration::from_secs(1)).await;
        assert!(
            done.load(Ordering::SeqCst),
            "the clock advanced while a spawn_blocking closure ran"
        );
        assert_eq!(Instant::now() - start, Duration::from_secs(1));
        closure.await.unwrap();
    });
}

#[test]
fn a_blocking_closure_that_wakes_a_task_wins_over_its_timeout() {
    paused(2, || async {
        // The closure finishes in real time; its result must arrive before
        // the (virtual) timeout, however long the closure takes.
        let answer = time::timeout(
            Duration::from_millis(10),
            brigade::spawn_blocking(|| {
                std::thread::sleep(StdDuration::from_millis(30));
                42
            }),
        )
        .await;
        assert_eq!(answer.expect("timed out").unwrap(), 42);
    });
}

#[test]
fn no_auto_advance_while_elastic_tasks_wait_for_admission() {
    paused(2, || async {
        let finished = Arc::new(AtomicUsize::new(0));
        for _ in 0..8 {
            let finished = finished.clone();
            brigade::spawn_elastic(async move {
                for _ in 0..200 {
                    common::spin_for(StdDuration::from_micros(50));
                    brigade::yield_if_busy().await;
                }
                finished.fetch_add(1, Ordering::SeqCst);
            });
        }
        time::sleep(Duration::from_secs(1)).await;
        assert_eq!(
            finished.load(Ordering::SeqCst),
            8,
            "the clock advanced while elastic tasks had work"
        );
    });
}

#[test]
fn timeouts_expire_at_their_deadline_under_pause() {
    paused(2, || async {
        let start = Instant::now();
        let never = std::future::pending::<()>();
        assert!(time::timeout(Duration::from_secs(30), never).await.is_err());
        assert_eq!(Instant::now() - start, Duration::from_secs(30));
        let soon = time::sleep(Duration::from_secs(10));
        assert_eq!(time::timeout(Duration::from_secs(30), soon).await, Ok(()));
        assert_eq!(Instant::now() - start, Duration::from_secs(40));
        let deadline = start + Duration::from_secs(45);
        let late = time::timeout_at(deadline, time::sleep(Duration::from_secs(60)));
        assert!(late.await.is_err());
        assert_eq!(Instant::now(), deadline);
    });
}

#[test]
fn intervals_tick_on_the_paused_clock() {
    paused(2, || async {
        let start = Instant::now();
        let mut ticker = time::interval(Duration::from_millis(10));
        for n in 0..5u32 {
            assert_eq!(ticker.tick().await - start, Duration::from_millis(10) * n);
        }
        // Fall behind by three and a half periods: Burst catches up at once.
        time::advance(Duration::from_millis(35)).await;
        let now = Instant::now();
        for n in 5..8u32 {
            assert_eq!(ticker.tick().await - start, Duration::from_millis(10) * n);
            assert_eq!(Instant::now(), now, "a missed tick waited");
        }
        // The next one is due: the clock auto-advances to it.
        assert_eq!(ticker.tick().await - start, Duration::from_millis(80));
        assert_eq!(Instant::now() - start, Duration::from_millis(80));
        // Delay: a late tick restarts the schedule from when it was taken.
        ticker.set_missed_tick_behavior(MissedTickBehavior::Delay);
        time::advance(Duration::from_millis(25)).await;
        assert_eq!(ticker.tick().await - start, Duration::from_millis(90));
        assert_eq!(ticker.tick().await - start, Duration::from_millis(115));
        let mut at = time::interval_at(start + Duration::from_secs(5), Duration::from_secs(1));
        assert_eq!(at.tick().await - start, Duration::from_secs(5));
        assert_eq!(at.tick().await - start, Duration::from_secs(6));
    });
}

#[test]
fn pause_and_resume_on_a_running_runtime() {
    with_timeout(TIMEOUT_SECS, || {
        let runtime = brigade::Builder::new().worker_threads(2).build().unwrap();
        runtime.block_on(async {
            time::pause();
            let paused_at = Instant::now();
            time::sleep(Duration::from_secs(3600)).await;
            assert!(Instant::now() - paused_at >= Duration::from_secs(3600));
            let message = expect_panic(time::pause);
            assert!(message.contains("already paused"), "{message}");
            time::resume();
            let resumed_at = Instant::now();
            // Runs on from the paused time, on the system's clock.
            assert!(resumed_at - paused_at >= Duration::from_secs(3600));
            time::sleep(Duration::from_millis(2)).await;
            assert!(Instant::now() - resumed_at >= Duration::from_millis(2));
            assert!(expect_panic(time::resume).contains("not paused"));
        });
    });
}

#[test]
fn misuse_panics_with_what_to_do() {
    let outside = expect_panic(time::pause);
    assert!(
        outside.contains("outside of a brigade runtime"),
        "{outside}"
    );
    assert!(expect_panic(time::resume).contains("outside of a brigade runtime"));
    let advance = expect_panic(|| common::local_block_on(time::advance(Duration::from_secs(1))));
    assert!(
        advance.contains("outside of a brigade runtime"),
        "{advance}"
    );
    let runtime = brigade::Builder::new().worker_threads(1).build().unwrap();
    let not_paused = expect_panic(|| runtime.block_on(time::advance(Duration::from_secs(1))));
    assert!(not_paused.contains("pause it first"), "{not_paused}");
    // Outside a runtime, `Instant::now` is the system's clock.
    let before = std::time::Instant::now();
    assert!(Instant::now().into_std() >= before);
}

#[brigade::test(start_paused = true)]
async fn start_paused_on_the_test_attribute() {
    let _watchdog = watchdog();
    let start = Instant::now();
    assert_eq!(brigade::Handle::current().metrics().num_workers(), 1);
    time::sleep(Duration::from_secs(86_400)).await;
    assert_eq!(Instant::now() - start, Duration::from_secs(86_400));
}

#[brigade::test(flavor = "multi_thread", worker_threads = 3, start_paused = true)]
async fn start_paused_on_a_multi_thread_test() {
    let _watchdog = watchdog();
    assert_eq!(brigade::Handle::current().metrics().num_workers(), 3);
    let start = Instant::now();
    let sleeps: Vec<_> = (1..=6u64)
        .map(|n| brigade::spawn(time::sleep(Duration::from_secs(n))))
        .collect();
    for sleep in sleeps {
        sleep.await.unwrap();
    }
    assert_eq!(Instant::now() - start, Duration::from_secs(6));
}
