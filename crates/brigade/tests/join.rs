//! Integration tests of `JoinHandle` and `JoinError`: completion,
//! detaching, aborting tasks in every state, and the error's conversions.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread;

use brigade::{Builder, JoinError, Runtime};
use common::{DropFlag, TIMEOUT, TIMEOUT_SECS, channel, wait_until, with_timeout};

fn runtime(workers: usize) -> Runtime {
    Builder::new().worker_threads(workers).build().unwrap()
}

#[test]
fn is_finished_turns_true_when_the_task_completes() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(2);
        let (gate, mut gate_rx) = channel::<()>();
        let task = rt.spawn(async move {
            gate_rx.recv().await;
            5u32
        });
        assert!(!task.is_finished());
        gate.send(());
        wait_until("the task finishes", || task.is_finished());
        assert!(task.is_finished());
        assert_eq!(rt.block_on(task).unwrap(), 5);
    });
}

#[test]
fn dropping_a_join_handle_detaches_the_task() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(2);
        let (gate, mut gate_rx) = channel::<()>();
        let (done_tx, done_rx) = mpsc::channel();
        let task = rt.spawn(async move {
            gate_rx.recv().await;
            done_tx.send("side effect").unwrap();
        });
        drop(task);
        // The task is still waiting; release it: it must still run.
        gate.send(());
        assert_eq!(done_rx.recv_timeout(TIMEOUT).unwrap(), "side effect");
    });
}

#[test]
fn handle_spawn_works_from_a_plain_thread() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(2);
        let handle = rt.handle().clone();
        let task = thread::spawn(move || handle.spawn(async { 6 * 7 }))
            .join()
            .unwrap();
        assert_eq!(rt.block_on(task).unwrap(), 42);

        // Also awaiting it with the handle's own block_on on that thread.
        let handle = rt.handle().clone();
        let answer = thread::spawn(move || handle.block_on(handle.spawn(async { 7u8 })))
            .join()
            .unwrap();
        assert_eq!(answer.unwrap(), 7);
    });
}

#[test]
fn aborting_a_pending_task_cancels_it_and_drops_its_future() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(2);
        let dropped = Arc::new(AtomicBool::new(false));
        let (started_tx, started_rx) = mpsc::channel();
        let task = rt.spawn({
            let guard = DropFlag(dropped.clone());
            async move {
                let _guard = guard;
                started_tx.send(()).unwrap();
                std::future::pending::<u32>().await
            }
        });
        started_rx.recv_timeout(TIMEOUT).unwrap();
        assert!(!dropped.load(Ordering::SeqCst));
        task.abort();
        let error = rt.block_on(task).unwrap_err();
        assert!(error.is_cancelled());
        assert!(!error.is_panic());
        // The handle resolves only once the future has been dropped.
        assert!(dropped.load(Ordering::SeqCst));
        wait_until("the aborted task leaves the registry", || {
            rt.metrics().num_alive_tasks() == 0
        });
    });
}

#[test]
fn aborting_a_queued_task_means_it_is_never_polled() {
    with_timeout(TIMEOUT_SECS, || {
        // One worker, kept busy so that the second task stays queued.
        let rt = runtime(1);
        let (started_tx, started_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let blocker = rt.spawn(async move {
            started_tx.send(()).unwrap();
            let _ = release_rx.recv_timeout(TIMEOUT);
        });
        started_rx.recv_timeout(TIMEOUT).unwrap();
        let polled = Arc::new(AtomicBool::new(false));
        let dropped = Arc::new(AtomicBool::new(false));
        let queued = rt.spawn({
            let polled = polled.clone();
            let guard = DropFlag(dropped.clone());
            async move {
                let _guard = guard;
                polled.store(true, Ordering::SeqCst);
            }
        });
        queued.abort();
        release_tx.send(()).unwrap();
        rt.block_on(blocker).unwrap();
        assert!(rt.block_on(queued).unwrap_err().is_cancelled());
        assert!(!polled.load(Ordering::SeqCst), "an aborted task was polled");
        assert!(dropped.load(Ordering::SeqCst));
    });
}

#[test]
fn aborting_a_running_task_cancels_it_after_its_current_poll() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(2);
        let polls = Arc::new(AtomicUsize::new(0));
        let dropped = Arc::new(AtomicBool::new(false));
        let task = rt.spawn({
            let polls = polls.clone();
            let guard = DropFlag(dropped.clone());
            async move {
                let _guard = guard;
                loop {
                    polls.fetch_add(1, Ordering::SeqCst);
                    brigade::yield_now().await;
                }
            }
        });
        wait_until("the task is running", || polls.load(Ordering::SeqCst) >= 10);
        task.abort();
        let error: JoinError = rt.block_on(task).unwrap_err();
        assert!(error.is_cancelled());
        assert!(dropped.load(Ordering::SeqCst));
        let after = polls.load(Ordering::SeqCst);
        // Nothing polls the future any more.
        for _ in 0..10 {
            rt.block_on(rt.spawn(brigade::yield_now())).unwrap();
        }
        assert_eq!(polls.load(Ordering::SeqCst), after);
    });
}

#[test]
fn aborting_a_finished_task_keeps_its_output() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(2);
        let task = rt.spawn(async { "done" });
        wait_until("the task finishes", || task.is_finished());
        task.abort();
        assert_eq!(rt.block_on(task).unwrap(), "done");
    });
}

#[test]
fn aborting_twice_or_from_another_thread_is_harmless() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(2);
        let task = Arc::new(rt.spawn(std::future::pending::<()>()));
        let aborter = {
            let task = task.clone();
            thread::spawn(move || task.abort())
        };
        aborter.join().unwrap();
        task.abort();
        let task = Arc::into_inner(task).unwrap();
        assert!(rt.block_on(task).unwrap_err().is_cancelled());
    });
}

#[test]
fn join_error_display_debug_and_io_conversion() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(1);
        let task = rt.spawn(std::future::pending::<()>());
        task.abort();
        let cancelled = rt.block_on(task).unwrap_err();
        assert!(cancelled.to_string().contains("cancelled"), "{cancelled}");
        assert!(
            format!("{cancelled:?}").contains("Cancelled"),
            "{cancelled:?}"
        );
        // A cancelled error is not a panic.
        let cancelled = cancelled.try_into_panic().unwrap_err();
        assert!(cancelled.is_cancelled());
        let io = std::io::Error::from(cancelled);
        assert_eq!(io.kind(), std::io::ErrorKind::Other);
        assert!(io.to_string().contains("cancelled"), "{io}");

        let panicked = rt
            .block_on(rt.spawn(async {
                std::panic::panic_any(42u32);
            }))
            .unwrap_err();
        assert!(panicked.is_panic());
        assert!(panicked.to_string().contains("panicked"), "{panicked}");
        assert_eq!(panicked.into_panic().downcast_ref::<u32>(), Some(&42));
    });
}

#[test]
fn join_handle_debug_shows_its_state() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(1);
        let task = rt.spawn(std::future::pending::<()>());
        let debug = format!("{task:?}");
        assert!(debug.contains("JoinHandle"), "{debug}");
        assert!(debug.contains("finished: false"), "{debug}");
        task.abort();
    });
}

#[test]
fn awaiting_a_join_handle_from_another_task() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(2);
        let (gate, mut gate_rx) = channel::<()>();
        let inner = rt.spawn(async move {
            gate_rx.recv().await;
            3u64
        });
        let outer = rt.spawn(async move { inner.await.unwrap() * 2 });
        gate.send(());
        assert_eq!(rt.block_on(outer).unwrap(), 6);
    });
}

#[test]
fn aborting_many_busy_tasks_cancels_every_one() {
    const N: usize = 1_000;
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(2);
        let dropped = Arc::new(AtomicUsize::new(0));
        let polls = Arc::new(AtomicUsize::new(0));
        let tasks: Vec<_> = (0..N)
            .map(|_| {
                let guard = common::DropCounter(dropped.clone());
                let polls = polls.clone();
                rt.spawn(async move {
                    let _guard = guard;
                    loop {
                        polls.fetch_add(1, Ordering::Relaxed);
                        brigade::yield_now().await;
                    }
                })
            })
            .collect();
        wait_until("the tasks are running", || {
            polls.load(Ordering::Relaxed) >= 2 * N
        });
        // Abort from another thread while the workers keep waking them.
        let tasks = thread::spawn(move || {
            for task in &tasks {
                task.abort();
            }
            tasks
        })
        .join()
        .unwrap();
        for task in tasks {
            assert!(rt.block_on(task).unwrap_err().is_cancelled());
        }
        assert_eq!(dropped.load(Ordering::SeqCst), N);
        wait_until("the registry is empty", || {
            rt.metrics().num_alive_tasks() == 0
        });
    });
}

/// Counts its drop in the shared counter, then panics.
struct PanicOnDrop(Arc<AtomicUsize>);

impl Drop for PanicOnDrop {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
        panic!("destructor panic");
    }
}

#[brigade::test(worker_threads = 1)]
async fn a_destructor_panic_after_completion_is_the_tasks_panic() {
    common::bounded(async {
        let drops = Arc::new(AtomicUsize::new(0));
        let guard = PanicOnDrop(drops.clone());
        let result = brigade::spawn(async move {
            let _guard = guard;
            std::future::ready(()).await;
            5
        })
        .await;
        let error = result.unwrap_err();
        assert!(error.is_panic(), "{error}");
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        // The worker survived.
        assert_eq!(brigade::spawn(async { 1 }).await.unwrap(), 1);
    })
    .await;
}

/// The guards are built before the spawn and moved into the task, so each
/// future owns one from the start and the destructor panic happens in every
/// run, whether or not the task was ever polled.
#[test]
fn a_destructor_panic_on_abort_does_not_kill_the_runtime() {
    common::with_timeout(common::TIMEOUT_SECS, || {
        let rt = brigade::Builder::new().worker_threads(1).build().unwrap();
        let drops = Arc::new(AtomicUsize::new(0));
        let pending_with_guard = || {
            let guard = PanicOnDrop(drops.clone());
            async move {
                let _guard = guard;
                std::future::pending::<()>().await;
            }
        };
        let handle = rt.spawn(pending_with_guard());
        handle.abort();
        assert!(rt.block_on(handle).unwrap_err().is_cancelled());
        assert_eq!(drops.load(Ordering::SeqCst), 1, "the guard was dropped");
        assert_eq!(
            rt.block_on(async { brigade::spawn(async { 2 }).await.unwrap() }),
            2
        );
        // Shutdown with such a task pending does not abort the process
        // either, polled or not.
        let (polled, was_polled) = mpsc::channel();
        let guard = PanicOnDrop(drops.clone());
        rt.spawn(async move {
            let _guard = guard;
            polled.send(()).unwrap();
            std::future::pending::<()>().await;
        });
        was_polled
            .recv_timeout(TIMEOUT)
            .expect("the task was polled");
        rt.spawn(pending_with_guard());
        drop(rt);
        assert_eq!(drops.load(Ordering::SeqCst), 3, "every guard was dropped");
    });
}
