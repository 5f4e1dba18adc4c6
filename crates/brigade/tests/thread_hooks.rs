//! `Builder::on_thread_start` / `on_thread_stop`: called once on every
//! thread the runtime starts to run tasks (workers, spares, blocking-pool
//! threads), in the runtime's context, and the stop hook before the
//! runtime's drop returns. `on_thread_park` / `on_thread_unpark`: called in
//! pairs by workers around each wait for work.

mod common;

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::Duration;

use brigade::runtime::{Builder, Handle};
use common::{TIMEOUT, TIMEOUT_SECS, with_timeout};

/// Counts hook calls and records on which threads they ran.
#[derive(Default)]
struct Calls {
    starts: AtomicUsize,
    stops: AtomicUsize,
    /// Names of the threads the start hook ran on, and whether the
    /// runtime's context was entered there.
    started_on: Mutex<Vec<(String, bool)>>,
    stopped_on: Mutex<HashSet<std::thread::ThreadId>>,
}

fn hooked(builder: &mut Builder, calls: &Arc<Calls>) {
    let on_start = calls.clone();
    let on_stop = calls.clone();
    builder
        .thread_name("hooked")
        .on_thread_start(move || {
            on_start.starts.fetch_add(1, Ordering::SeqCst);
            let name = std::thread::current().name().unwrap_or("").to_owned();
            let in_context = Handle::try_current().is_ok();
            on_start.started_on.lock().unwrap().push((name, in_context));
        })
        .on_thread_stop(move || {
            on_stop.stops.fetch_add(1, Ordering::SeqCst);
            on_stop
                .stopped_on
                .lock()
                .unwrap()
                .insert(std::thread::current().id());
        });
}

#[test]
fn every_worker_calls_each_hook_once_in_the_runtime_context() {
    with_timeout(TIMEOUT_SECS, || {
        let calls = Arc::new(Calls::default());
        let mut builder = Builder::new_multi_thread();
        builder.worker_threads(3).max_spare_workers(0);
        hooked(&mut builder, &calls);
        let rt = builder.build().unwrap();
        assert_eq!(rt.block_on(rt.spawn(async { 1 })).unwrap(), 1);
        drop(rt);
        // The drop waited for every worker, stop hook included.
        assert_eq!(calls.starts.load(Ordering::SeqCst), 3);
        assert_eq!(calls.stops.load(Ordering::SeqCst), 3);
        assert_eq!(calls.stopped_on.lock().unwrap().len(), 3);
        for (name, in_context) in calls.started_on.lock().unwrap().iter() {
            assert_eq!(name, "hooked");
            assert!(
                in_context,
                "the start hook ran outside the runtime's context"
            );
        }
    });
}

#[test]
fn blocking_pool_threads_call_the_hooks_too() {
    with_timeout(TIMEOUT_SECS, || {
        let calls = Arc::new(Calls::default());
        let mut builder = Builder::new_multi_thread();
        builder.worker_threads(1).max_spare_workers(0);
        hooked(&mut builder, &calls);
        let rt = builder.build().unwrap();
        // Four closures that wait for each other need four pool threads.
        let barrier = Arc::new(Barrier::new(4));
        let closures: Vec<_> = (0..4)
            .map(|_| {
                let barrier = barrier.clone();
                rt.spawn_blocking(move || {
                    barrier.wait();
                })
            })
            .collect();
        for closure in closures {
            rt.block_on(closure).unwrap();
        }
        drop(rt);
        // One worker and four blocking threads; shutdown waited for their
        // stop hooks.
        assert_eq!(calls.starts.load(Ordering::SeqCst), 5);
        assert_eq!(calls.stops.load(Ordering::SeqCst), 5);
    });
}

#[test]
fn a_spare_worker_calls_the_hooks_too() {
    with_timeout(TIMEOUT_SECS, || {
        let calls = Arc::new(Calls::default());
        let mut builder = Builder::new_multi_thread();
        builder.worker_threads(1).compensation_threshold(None);
        hooked(&mut builder, &calls);
        let rt = builder.build().unwrap();
        // `block_in_place` hands the worker's place to a spare at once.
        let spare_ran = rt
            .block_on(rt.spawn(async {
                brigade::task::block_in_place(|| {
                    std::thread::sleep(Duration::from_millis(1));
                });
                true
            }))
            .unwrap();
        assert!(spare_ran);
        drop(rt);
        assert_eq!(
            calls.starts.load(Ordering::SeqCst),
            2,
            "the worker and one spare"
        );
        assert_eq!(calls.stops.load(Ordering::SeqCst), 2);
    });
}

#[test]
fn a_panicking_hook_leaves_the_runtime_working() {
    with_timeout(TIMEOUT_SECS, || {
        // No spare could stand in for a worker that the hook took down.
        let rt = Builder::new_multi_thread()
            .worker_threads(1)
            .max_spare_workers(0)
            .on_thread_start(|| panic!("start hook"))
            .on_thread_stop(|| panic!("stop hook"))
            .build()
            .unwrap();
        let answer = rt.block_on(async {
            let task = brigade::spawn(async { 40 });
            let blocking = brigade::spawn_blocking(|| 2);
            task.await.unwrap() + blocking.await.unwrap()
        });
        assert_eq!(answer, 42);
        // Shutdown does not hang on the stop hook's panic either.
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            drop(rt);
            let _ = done_tx.send(());
        });
        done_rx
            .recv_timeout(TIMEOUT)
            .expect("the runtime's drop hung");
    });
}

#[test]
fn dropping_the_runtime_waits_for_slow_stop_hooks() {
    with_timeout(TIMEOUT_SECS, || {
        let stops = Arc::new(AtomicUsize::new(0));
        let counter = stops.clone();
        let rt = Builder::new_multi_thread()
            .worker_threads(1)
            .on_thread_stop(move || {
                // Slow, so that a drop that did not wait would return first.
                std::thread::sleep(Duration::from_millis(50));
                counter.fetch_add(1, Ordering::SeqCst);
            })
            .build()
            .unwrap();
        rt.block_on(rt.spawn_blocking(|| ())).unwrap();
        drop(rt);
        // The worker and the blocking thread.
        assert_eq!(stops.load(Ordering::SeqCst), 2);
    });
}

/// Counts the park hooks' calls, and those that broke the pairing (an
/// unpark with no park before it on that thread, or a second park).
#[derive(Default)]
struct Parks {
    parks: AtomicUsize,
    unparks: AtomicUsize,
    unpaired: AtomicUsize,
    outside_context: AtomicUsize,
    threads: Mutex<HashSet<std::thread::ThreadId>>,
}

std::thread_local! {
    static PARKED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn park_hooked(builder: &mut Builder, parks: &Arc<Parks>) {
    let on_park = parks.clone();
    let on_unpark = parks.clone();
    builder
        .on_thread_park(move || {
            if PARKED.with(|parked| parked.replace(true)) {
                on_park.unpaired.fetch_add(1, Ordering::SeqCst);
            }
            if Handle::try_current().is_err() {
                on_park.outside_context.fetch_add(1, Ordering::SeqCst);
            }
            let thread = std::thread::current().id();
            on_park.threads.lock().unwrap().insert(thread);
            on_park.parks.fetch_add(1, Ordering::SeqCst);
        })
        .on_thread_unpark(move || {
            if !PARKED.with(|parked| parked.replace(false)) {
                on_unpark.unpaired.fetch_add(1, Ordering::SeqCst);
            }
            on_unpark.unparks.fetch_add(1, Ordering::SeqCst);
        });
}

/// What a task sees once its worker woke from waiting on a timer: the
/// parks and unparks so far, which a worker that runs must have paired.
fn counts(parks: &Parks) -> (usize, usize) {
    (
        parks.parks.load(Ordering::SeqCst),
        parks.unparks.load(Ordering::SeqCst),
    )
}

#[test]
fn a_worker_calls_the_park_hooks_in_pairs_around_its_wait() {
    with_timeout(TIMEOUT_SECS, || {
        let parks = Arc::new(Parks::default());
        let mut builder = Builder::new_multi_thread();
        park_hooked(builder.worker_threads(1), &parks);
        let rt = builder.build().unwrap();
        let seen = parks.clone();
        let (worker, (parked, unparked)) = rt
            .block_on(rt.spawn(async move {
                // The one worker has nothing else to do: it parks until the
                // timer fires.
                brigade::time::sleep(Duration::from_millis(5)).await;
                (std::thread::current().id(), counts(&seen))
            }))
            .unwrap();
        assert!(parked >= 1, "the worker parked for the timer");
        assert_eq!(parked, unparked, "a running worker has unparked");
        assert_eq!(parks.unpaired.load(Ordering::SeqCst), 0);
        assert_eq!(parks.outside_context.load(Ordering::SeqCst), 0);
        assert!(parks.threads.lock().unwrap().contains(&worker));
        drop(rt);
        let (parked, unparked) = counts(&parks);
        assert_eq!(parked, unparked, "every park was followed by an unpark");
    });
}

#[test]
fn a_current_thread_runtime_calls_the_park_hooks_on_its_block_on_thread() {
    with_timeout(TIMEOUT_SECS, || {
        let parks = Arc::new(Parks::default());
        let mut builder = Builder::new_current_thread();
        park_hooked(&mut builder, &parks);
        let rt = builder.build().unwrap();
        let (parked, unparked) = rt.block_on(async {
            brigade::time::sleep(Duration::from_millis(5)).await;
            counts(&parks)
        });
        assert!(parked >= 1, "the block_on thread parked for the timer");
        assert_eq!(parked, unparked);
        assert_eq!(parks.unpaired.load(Ordering::SeqCst), 0);
        assert_eq!(parks.outside_context.load(Ordering::SeqCst), 0);
        let threads = parks.threads.lock().unwrap();
        assert_eq!(threads.len(), 1);
        assert!(threads.contains(&std::thread::current().id()));
    });
}
