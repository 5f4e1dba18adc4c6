//! tokio's `task_local!` in brigade tasks: it is a future wrapper that sets
//! its value around each poll, so it works on any executor. Checked here
//! across workers, yields and `LocalSet`s, with tokio's scoping rules.

mod common;

use std::time::Duration;

use brigade::runtime::Builder;
use brigade::task::LocalSet;
use common::{TIMEOUT_SECS, with_timeout};

tokio::task_local! {
    static REQUEST_ID: u64;
}

#[test]
fn each_task_sees_its_own_value_across_yields_and_workers() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .unwrap();
        let mismatches = rt.block_on(async {
            let tasks: Vec<_> = (0..16u64)
                .map(|id| {
                    brigade::spawn(REQUEST_ID.scope(id, async move {
                        let mut mismatches = 0;
                        for round in 0..50 {
                            if round % 10 == 0 {
                                brigade::time::sleep(Duration::from_micros(50)).await;
                            } else {
                                brigade::yield_now().await;
                            }
                            if REQUEST_ID.get() != id {
                                mismatches += 1;
                            }
                        }
                        mismatches
                    }))
                })
                .collect();
            let mut total = 0;
            for task in tasks {
                total += task.await.unwrap();
            }
            total
        });
        assert_eq!(mismatches, 0);
    });
}

#[test]
fn a_value_is_not_inherited_by_spawned_tasks_or_seen_outside_its_scope() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = Builder::new_current_thread().build().unwrap();
        let (in_scope, in_child, after) = rt.block_on(async {
            let (in_scope, in_child) = REQUEST_ID
                .scope(7, async {
                    let child = brigade::spawn(async { REQUEST_ID.try_with(|id| *id).ok() });
                    (REQUEST_ID.get(), child.await.unwrap())
                })
                .await;
            (in_scope, in_child, REQUEST_ID.try_with(|id| *id).ok())
        });
        assert_eq!(in_scope, 7);
        // As under tokio: a spawned task starts without the value.
        assert_eq!(in_child, None);
        assert_eq!(after, None);
    });
}

#[test]
fn it_works_in_local_tasks_too() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = Builder::new_current_thread().build().unwrap();
        let local = LocalSet::new();
        let seen = local.block_on(&rt, async {
            let tasks: Vec<_> = (0..4u64)
                .map(|id| {
                    brigade::task::spawn_local(REQUEST_ID.scope(id, async move {
                        brigade::yield_now().await;
                        REQUEST_ID.get()
                    }))
                })
                .collect();
            let mut seen = Vec::new();
            for task in tasks {
                seen.push(task.await.unwrap());
            }
            seen
        });
        assert_eq!(seen, vec![0, 1, 2, 3]);
    });
}
