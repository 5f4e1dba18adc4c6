//! `LocalSet` and `task::spawn_local`: `!Send` tasks on the thread that
//! drives the set, with tokio's API.

mod common;

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use brigade::runtime::{Builder, Runtime};
use brigade::task::{self, LocalSet};
use common::{DropCounter, TIMEOUT_SECS, expect_panic, with_timeout};

fn runtime() -> Runtime {
    Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap()
}

#[test]
fn spawn_local_outside_a_local_set_panics_with_a_clear_message() {
    let message = expect_panic(|| task::spawn_local(async {}));
    assert!(message.contains("outside of a `LocalSet`"), "{message}");
    assert!(message.contains("run_until"), "{message}");
    // Inside `block_on` but outside a set: the same.
    let rt = runtime();
    let message = expect_panic(|| rt.block_on(async { drop(task::spawn_local(async {})) }));
    assert!(message.contains("outside of a `LocalSet`"), "{message}");
}

#[test]
fn run_until_runs_not_send_tasks_on_the_calling_thread() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime();
        let local = LocalSet::new();
        let log = Rc::new(RefCell::new(Vec::new()));
        let caller = std::thread::current().id();
        let on_caller = rt.block_on(local.run_until(async {
            let mut tasks = Vec::new();
            for n in 0..5 {
                let log = log.clone();
                tasks.push(task::spawn_local(async move {
                    brigade::yield_now().await;
                    log.borrow_mut().push(n);
                    std::thread::current().id()
                }));
            }
            let mut threads = Vec::new();
            for task in tasks {
                threads.push(task.await.unwrap());
            }
            threads
        }));
        assert!(on_caller.iter().all(|thread| *thread == caller));
        let mut seen = log.borrow().clone();
        seen.sort_unstable();
        assert_eq!(seen, vec![0, 1, 2, 3, 4]);
    });
}

#[test]
fn awaiting_the_set_runs_every_task_to_completion() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime();
        let local = LocalSet::new();
        let done = Rc::new(Cell::new(0));
        for _ in 0..3 {
            let done = done.clone();
            // Spawned before the set runs; each spawns another from inside.
            local.spawn_local(async move {
                let inner = done.clone();
                task::spawn_local(async move {
                    brigade::time::sleep(Duration::from_millis(1)).await;
                    inner.set(inner.get() + 1);
                });
                done.set(done.get() + 1);
            });
        }
        rt.block_on(local);
        assert_eq!(done.get(), 6);
    });
}

#[test]
fn local_tasks_are_woken_from_other_threads() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime();
        let local = LocalSet::new();
        let total = local.block_on(&rt, async {
            let (tx, mut rx) = common::channel::<u32>();
            // A worker task wakes the local one through the channel.
            brigade::spawn(async move {
                for n in 1..=10 {
                    brigade::time::sleep(Duration::from_micros(100)).await;
                    tx.send(n);
                }
            });
            let not_send = Rc::new(Cell::new(0));
            let sum = not_send.clone();
            task::spawn_local(async move {
                while let Some(n) = rx.recv().await {
                    sum.set(sum.get() + n);
                }
            })
            .await
            .unwrap();
            not_send.get()
        });
        assert_eq!(total, 55);
    });
}

#[test]
fn dropping_the_set_drops_unfinished_tasks_on_its_thread() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime();
        let dropped = Arc::new(AtomicUsize::new(0));
        let local = LocalSet::new();
        let handles: Vec<_> = (0..3)
            .map(|_| {
                let counter = DropCounter(dropped.clone());
                let not_send = Rc::new(());
                local.spawn_local(async move {
                    let _keep = (counter, not_send);
                    std::future::pending::<()>().await
                })
            })
            .collect();
        // Let them start, then leave them pending.
        rt.block_on(local.run_until(brigade::yield_now()));
        assert_eq!(dropped.load(Ordering::SeqCst), 0);
        drop(local);
        assert_eq!(dropped.load(Ordering::SeqCst), 3);
        for handle in handles {
            assert!(rt.block_on(handle).unwrap_err().is_cancelled());
        }
    });
}

#[test]
fn abort_panics_and_ids_work_for_local_tasks() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime();
        let local = LocalSet::new();
        local.block_on(&rt, async {
            let stuck = task::spawn_local(std::future::pending::<()>());
            stuck.abort();
            assert!(stuck.await.unwrap_err().is_cancelled());

            let boom = task::spawn_local(async { panic!("local boom") });
            let error = boom.await.unwrap_err();
            assert!(error.is_panic());

            let identified = task::spawn_local(async { task::id() });
            let id = identified.id();
            assert_eq!(identified.await.unwrap(), id);
        });
    });
}

#[test]
fn yield_if_busy_in_a_local_task_completes_at_once() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime();
        let local = LocalSet::new();
        // Documented: the driving thread is not a worker, so nothing waits
        // for it and the call never gives way, even with workers busy.
        let pending_polls = local.block_on(&rt, async {
            task::spawn_local(async {
                let mut pending = 0;
                for _ in 0..1_000 {
                    let mut call = std::pin::pin!(brigade::yield_if_busy());
                    if common::poll_once(&mut call).is_pending() {
                        pending += 1;
                        call.await;
                    }
                }
                pending
            })
            .await
            .unwrap()
        });
        assert_eq!(pending_polls, 0);
    });
}
