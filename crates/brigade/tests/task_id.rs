//! `task::Id`: what `JoinHandle::id`, `AbortHandle::id`, `JoinError::id`,
//! `task::id()` and `task::try_id()` return, and that ids are unique.

mod common;

use std::collections::HashSet;

use brigade::task::{self, Id, JoinSet};
use brigade::{Builder, Runtime};
use common::{TIMEOUT_SECS, expect_panic, with_timeout};

fn runtime() -> Runtime {
    Builder::new().worker_threads(2).build().unwrap()
}

#[test]
fn a_task_sees_the_id_its_handles_report() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime();
        let task = rt.spawn(async { task::id() });
        let id = task.id();
        assert_eq!(task.abort_handle().id(), id);
        assert_eq!(rt.block_on(task).unwrap(), id);
        // A blocking closure is a task too.
        let blocking = rt.spawn_blocking(task::try_id);
        let blocking_id = blocking.id();
        assert_eq!(rt.block_on(blocking).unwrap(), Some(blocking_id));
    });
}

#[test]
fn ids_are_unique_across_tasks_and_runtimes() {
    with_timeout(TIMEOUT_SECS, || {
        let first = runtime();
        let second = runtime();
        let mut seen = HashSet::new();
        for rt in [&first, &second] {
            let ids = rt.block_on(async {
                let mut set = JoinSet::new();
                for _ in 0..200 {
                    set.spawn(async { task::id() });
                }
                let mut ids = Vec::new();
                while let Some(id) = set.join_next().await {
                    ids.push(id.unwrap());
                }
                ids
            });
            assert_eq!(ids.len(), 200);
            for id in ids {
                assert!(seen.insert(id), "id {id} handed out twice");
            }
        }
    });
}

#[test]
fn an_abort_handle_keeps_the_id_after_the_task_is_gone() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime();
        let task = rt.spawn(std::future::pending::<()>());
        let id = task.id();
        let abort = task.abort_handle();
        abort.abort();
        let error = rt.block_on(task).unwrap_err();
        assert!(error.is_cancelled());
        assert_eq!(error.id(), id);
        assert_eq!(abort.id(), id);
        assert!(format!("{abort:?}").contains(&id.to_string()));
    });
}

#[test]
fn a_panicked_task_reports_its_id() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime();
        let task = rt.spawn(async { panic!("boom") });
        let id = task.id();
        let error = rt.block_on(task).unwrap_err();
        assert!(error.is_panic());
        assert_eq!(error.id(), id);
        assert!(error.to_string().contains(&id.to_string()), "{error}");
    });
}

#[test]
fn outside_a_task_there_is_no_id() {
    with_timeout(TIMEOUT_SECS, || {
        assert_eq!(task::try_id(), None);
        let message = expect_panic(task::id);
        assert!(message.contains("outside of a task"), "{message}");
        let rt = runtime();
        // `block_on`'s own future is not a task, as under tokio.
        assert_eq!(rt.block_on(async { task::try_id() }), None);
    });
}

#[test]
fn ids_print_as_their_number_and_work_as_keys() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime();
        let task = rt.spawn(async {});
        let id: Id = task.id();
        let copy = id;
        assert_eq!(id, copy);
        let number: u64 = id.to_string().parse().expect("Display prints the number");
        assert!(number > 0);
        assert!(format!("{id:?}").contains(&number.to_string()));
        rt.block_on(task).unwrap();
    });
}

#[test]
fn tokio_task_paths_port_by_renaming() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime();
        let answer = rt.block_on(async {
            task::yield_now().await;
            let blocking = task::spawn_blocking(|| 40);
            task::spawn(async { 2 }).await.unwrap() + blocking.await.unwrap()
        });
        assert_eq!(answer, 42);
    });
}
