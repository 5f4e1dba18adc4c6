//! Integration tests of the blocking pool: `spawn_blocking` under its
//! thread limit, panics, runtime context on pool threads, cancellation of
//! queued closures and idle threads exiting.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use brigade::{Builder, Handle, JoinHandle};
use common::{DropFlag, TIMEOUT, TIMEOUT_SECS, panic_message, wait_until, with_timeout};

#[test]
fn more_closures_than_max_blocking_threads_all_complete() {
    const CLOSURES: usize = 20;
    with_timeout(TIMEOUT_SECS, || {
        let rt = Builder::new()
            .worker_threads(1)
            .max_blocking_threads(2)
            .build()
            .unwrap();
        let running = Arc::new(AtomicUsize::new(0));
        let max_running = Arc::new(AtomicUsize::new(0));
        let max_threads_seen_inside = Arc::new(AtomicUsize::new(0));
        let handles: Vec<JoinHandle<usize>> = (0..CLOSURES)
            .map(|n| {
                let running = running.clone();
                let max_running = max_running.clone();
                let max_threads_seen_inside = max_threads_seen_inside.clone();
                rt.spawn_blocking(move || {
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    max_running.fetch_max(now, Ordering::SeqCst);
                    let threads = Handle::current().metrics().num_blocking_threads();
                    max_threads_seen_inside.fetch_max(threads, Ordering::SeqCst);
                    thread::sleep(Duration::from_millis(5));
                    running.fetch_sub(1, Ordering::SeqCst);
                    n
                })
            })
            .collect();
        // Sample the pool from outside while the closures run.
        let metrics = rt.metrics();
        while !handles.iter().all(JoinHandle::is_finished) {
            let threads = metrics.num_blocking_threads();
            assert!(threads <= 2, "{threads} blocking threads, limit is 2");
            assert!(metrics.num_idle_blocking_threads() <= threads);
            thread::sleep(Duration::from_micros(500));
        }
        let sum: usize = rt.block_on(async {
            let mut sum = 0;
            for handle in handles {
                sum += handle.await.unwrap();
            }
            sum
        });
        assert_eq!(sum, CLOSURES * (CLOSURES - 1) / 2);
        let max_running = max_running.load(Ordering::SeqCst);
        assert!(
            (1..=2).contains(&max_running),
            "{max_running} closures ran at once"
        );
        assert!(max_threads_seen_inside.load(Ordering::SeqCst) <= 2);
        assert!(metrics.num_blocking_threads() <= 2);
        assert_eq!(metrics.blocking_queue_depth(), 0);
    });
}

#[test]
fn spawn_blocking_returns_the_closures_value() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = Builder::new().worker_threads(1).build().unwrap();
        let from_runtime = rt.block_on(rt.spawn_blocking(|| 40 + 2)).unwrap();
        assert_eq!(from_runtime, 42);
        let from_task = rt
            .block_on(rt.spawn(async { brigade::spawn_blocking(|| "hi").await.unwrap() }))
            .unwrap();
        assert_eq!(from_task, "hi");
        let from_block_on = rt.block_on(async { brigade::spawn_blocking(|| 7u8).await });
        assert_eq!(from_block_on.unwrap(), 7);
    });
}

#[test]
fn a_panicking_closure_yields_a_panic_join_error() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = Builder::new()
            .worker_threads(1)
            .max_blocking_threads(1)
            .build()
            .unwrap();
        let error = rt
            .block_on(rt.spawn_blocking(|| -> u32 { panic!("blocking boom") }))
            .unwrap_err();
        assert!(error.is_panic());
        assert_eq!(panic_message(&*error.into_panic()), "blocking boom");
        // The pool's only thread (or its replacement) still runs closures.
        assert_eq!(rt.block_on(rt.spawn_blocking(|| 3)).unwrap(), 3);
    });
}

#[test]
fn closures_run_inside_the_runtime_context() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = Builder::new()
            .worker_threads(1)
            .thread_name("ctx-test")
            .build()
            .unwrap();
        let (name, spawned) = rt
            .block_on(rt.spawn_blocking(|| {
                let name = thread::current().name().map(str::to_owned);
                assert!(Handle::try_current().is_ok());
                // `brigade::spawn` works on a pool thread, and so does
                // blocking on the handle (this is not a worker).
                let handle = Handle::current();
                let spawned = handle.block_on(brigade::spawn(async { 9u32 }));
                (name, spawned.unwrap())
            }))
            .unwrap();
        assert_eq!(name.as_deref(), Some("ctx-test"));
        assert_eq!(spawned, 9);
    });
}

#[test]
fn aborting_a_queued_closure_means_it_never_runs() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = Builder::new()
            .worker_threads(1)
            .max_blocking_threads(1)
            .build()
            .unwrap();
        let (started_tx, started_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let first = rt.spawn_blocking(move || {
            started_tx.send(()).unwrap();
            let _ = release_rx.recv_timeout(TIMEOUT);
        });
        started_rx.recv_timeout(TIMEOUT).unwrap();
        let ran = Arc::new(AtomicBool::new(false));
        let second = rt.spawn_blocking({
            let ran = ran.clone();
            move || ran.store(true, Ordering::SeqCst)
        });
        assert_eq!(rt.metrics().blocking_queue_depth(), 1);
        second.abort();
        release_tx.send(()).unwrap();
        rt.block_on(first).unwrap();
        assert!(rt.block_on(second).unwrap_err().is_cancelled());
        assert!(!ran.load(Ordering::SeqCst));
    });
}

#[test]
fn shutdown_cancels_queued_closures() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = Builder::new()
            .worker_threads(1)
            .max_blocking_threads(1)
            .build()
            .unwrap();
        let (started_tx, started_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        // Occupies the pool's only thread until the queued closure is dropped.
        let running = rt.spawn_blocking(move || {
            started_tx.send(()).unwrap();
            let _ = release_rx.recv_timeout(TIMEOUT);
        });
        started_rx.recv_timeout(TIMEOUT).unwrap();
        let ran = Arc::new(AtomicBool::new(false));
        let dropped = Arc::new(AtomicBool::new(false));
        let queued = rt.spawn_blocking({
            let ran = ran.clone();
            let guard = DropFlag(dropped.clone());
            // Dropping the closure unblocks the running one.
            let release = ReleaseOnDrop(release_tx);
            move || {
                let _guard = guard;
                let _release = release;
                ran.store(true, Ordering::SeqCst);
            }
        });
        drop(rt);
        assert!(
            !ran.load(Ordering::SeqCst),
            "a queued closure ran at shutdown"
        );
        assert!(dropped.load(Ordering::SeqCst));
        assert!(common::local_block_on(queued).unwrap_err().is_cancelled());
        common::local_block_on(running).unwrap();
    });
}

/// Sends `()` when dropped.
struct ReleaseOnDrop(mpsc::Sender<()>);

impl Drop for ReleaseOnDrop {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

#[test]
fn idle_blocking_threads_exit_after_keep_alive() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = Builder::new()
            .worker_threads(1)
            .thread_keep_alive(Duration::from_millis(20))
            .build()
            .unwrap();
        let metrics = rt.metrics();
        assert_eq!(metrics.num_blocking_threads(), 0);
        rt.block_on(rt.spawn_blocking(|| ())).unwrap();
        wait_until("the idle blocking thread exits", || {
            metrics.num_blocking_threads() == 0
        });
        assert_eq!(metrics.num_idle_blocking_threads(), 0);
        // A new closure starts a new thread.
        assert_eq!(rt.block_on(rt.spawn_blocking(|| 5)).unwrap(), 5);
    });
}

#[test]
fn many_blocking_closures_from_many_threads() {
    const THREADS: usize = 4;
    const PER_THREAD: usize = 250;
    with_timeout(TIMEOUT_SECS, || {
        let rt = Builder::new()
            .worker_threads(1)
            .max_blocking_threads(4)
            .build()
            .unwrap();
        let counter = Arc::new(AtomicUsize::new(0));
        let spawners: Vec<_> = (0..THREADS)
            .map(|_| {
                let handle = rt.handle().clone();
                let counter = counter.clone();
                thread::spawn(move || {
                    let tasks: Vec<_> = (0..PER_THREAD)
                        .map(|_| {
                            let counter = counter.clone();
                            handle.spawn_blocking(move || {
                                counter.fetch_add(1, Ordering::SeqCst);
                            })
                        })
                        .collect();
                    for task in tasks {
                        handle.block_on(task).unwrap();
                    }
                })
            })
            .collect();
        for spawner in spawners {
            spawner.join().unwrap();
        }
        assert_eq!(counter.load(Ordering::SeqCst), THREADS * PER_THREAD);
        assert!(rt.metrics().num_blocking_threads() <= 4);
    });
}

#[test]
fn aborting_a_running_closure_does_not_stop_it() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = Builder::new().worker_threads(1).build().unwrap();
        let (started_tx, started_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let task = rt.spawn_blocking(move || {
            started_tx.send(()).unwrap();
            let _ = release_rx.recv_timeout(TIMEOUT);
            "finished anyway"
        });
        started_rx.recv_timeout(TIMEOUT).unwrap();
        task.abort();
        release_tx.send(()).unwrap();
        // Already started: it cannot be cancelled, so its output arrives.
        assert_eq!(rt.block_on(task).unwrap(), "finished anyway");
    });
}
