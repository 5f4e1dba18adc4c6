//! `task::JoinSet`'s task ids and collection traits, as tokio's:
//! `join_next_with_id`, `try_join_next_with_id`, the id in a `JoinError`,
//! and `FromIterator`/`Extend` of futures spawned on the current runtime.

mod common;

use std::collections::HashMap;

use brigade::task::{self, Id, JoinSet};
use brigade::{Builder, Runtime};
use common::{TIMEOUT_SECS, channel, expect_panic, wait_until, with_timeout};

fn runtime() -> Runtime {
    Builder::new().worker_threads(2).build().unwrap()
}

#[test]
fn join_next_with_id_pairs_each_output_with_its_task() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime();
        rt.block_on(async {
            let mut set = JoinSet::new();
            let mut gates = Vec::new();
            let mut spawned = HashMap::new();
            for n in 0..4u32 {
                let (gate, mut opened) = channel::<()>();
                // Each task returns its own id, as `task::id` sees it.
                let abort = set.spawn(async move {
                    opened.recv().await;
                    (n, task::id())
                });
                spawned.insert(abort.id(), n);
                gates.push(gate);
            }
            // Finish them in reverse order: ids follow the tasks, not the
            // order of spawning.
            for (expected, gate) in gates.into_iter().enumerate().rev() {
                gate.send(());
                let (id, (n, inside)) = set.join_next_with_id().await.unwrap().unwrap();
                assert_eq!(n as usize, expected);
                assert_eq!(id, inside, "the id is the task's own");
                assert_eq!(
                    spawned.remove(&id),
                    Some(n),
                    "the id of the task that was spawned"
                );
            }
            assert!(set.join_next_with_id().await.is_none());
        });
    });
}

#[test]
fn try_join_next_with_id_returns_only_finished_tasks() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime();
        let mut set: JoinSet<&str> = JoinSet::new();
        assert!(set.try_join_next_with_id().is_none());
        let (gate, mut opened) = channel::<()>();
        let id = set
            .spawn_on(
                async move {
                    opened.recv().await;
                    "done"
                },
                rt.handle(),
            )
            .id();
        assert!(set.try_join_next_with_id().is_none());
        gate.send(());
        let mut joined = None;
        wait_until("the finished task is joinable", || {
            joined = set.try_join_next_with_id();
            joined.is_some()
        });
        assert_eq!(joined.unwrap().unwrap(), (id, "done"));
        assert!(set.is_empty());
    });
}

#[test]
fn a_failed_task_s_error_carries_its_id() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime();
        rt.block_on(async {
            let mut set: JoinSet<()> = JoinSet::new();
            let panics = set.spawn(async { panic!("on purpose") }).id();
            let error = set.join_next_with_id().await.unwrap().unwrap_err();
            assert!(error.is_panic());
            assert_eq!(error.id(), panics);
            let cancelled = set.spawn(std::future::pending()).id();
            set.abort_all();
            let error = set.join_next_with_id().await.unwrap().unwrap_err();
            assert!(error.is_cancelled());
            assert_eq!(error.id(), cancelled);
        });
    });
}

#[test]
fn collecting_and_extending_spawn_every_future() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime();
        let mut outputs = rt.block_on(async {
            let mut set: JoinSet<u32> = (0..3u32).map(|n| async move { n }).collect();
            assert_eq!(set.len(), 3);
            set.extend((3..5u32).map(|n| async move { n }));
            assert_eq!(set.len(), 5);
            let mut ids: Vec<Id> = Vec::new();
            let mut outputs = Vec::new();
            while let Some(joined) = set.join_next_with_id().await {
                let (id, n) = joined.unwrap();
                ids.push(id);
                outputs.push(n);
            }
            ids.sort();
            ids.dedup();
            assert_eq!(ids.len(), 5, "five tasks, five ids");
            outputs
        });
        outputs.sort();
        assert_eq!(outputs, [0, 1, 2, 3, 4]);
    });
}

#[test]
fn collecting_outside_a_runtime_panics_saying_so() {
    let message = expect_panic(|| {
        let _set: JoinSet<()> = std::iter::once(async {}).collect();
    });
    assert!(message.contains("runtime"), "{message}");
}
