//! Integration tests of the runtime context: what `spawn`,
//! `spawn_blocking`, `Handle::current` and `block_on` do outside a runtime,
//! inside one, and in the places where blocking is forbidden.

mod common;

use brigade::{Builder, Handle};
use common::{TIMEOUT_SECS, expect_panic, panic_message, with_timeout};

const OUTSIDE: &str = "outside of a brigade runtime";

#[test]
fn spawn_outside_a_runtime_panics_with_a_clear_message() {
    let message = expect_panic(|| brigade::spawn(async {}));
    assert!(message.contains(OUTSIDE), "{message}");
    assert!(message.contains("brigade::spawn"), "{message}");
}

#[test]
fn spawn_blocking_outside_a_runtime_panics_with_a_clear_message() {
    let message = expect_panic(|| brigade::spawn_blocking(|| ()));
    assert!(message.contains(OUTSIDE), "{message}");
    assert!(message.contains("spawn_blocking"), "{message}");
}

#[test]
fn handle_current_outside_a_runtime_panics_with_a_clear_message() {
    let message = expect_panic(Handle::current);
    assert!(message.contains(OUTSIDE), "{message}");
    assert!(message.contains("Handle::current"), "{message}");
    assert!(Handle::try_current().is_err());
}

#[test]
fn the_context_is_set_in_block_on_and_in_tasks_and_restored_after() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = Builder::new().worker_threads(1).build().unwrap();
        assert!(Handle::try_current().is_err());
        let in_task = rt.block_on(async {
            assert!(Handle::try_current().is_ok());
            let current = Handle::current();
            assert_eq!(current.metrics().num_workers(), 1);
            brigade::spawn(async { Handle::try_current().is_ok() })
                .await
                .unwrap()
        });
        assert!(in_task);
        // Leaving block_on restores "no runtime".
        assert!(Handle::try_current().is_err());
        let message = expect_panic(|| brigade::spawn(async {}));
        assert!(message.contains(OUTSIDE), "{message}");
    });
}

#[test]
fn block_on_inside_a_task_panics_and_the_worker_survives() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = Builder::new().worker_threads(1).build().unwrap();
        let handle = rt.handle().clone();
        let task = rt.spawn(async move { handle.block_on(async { 1u32 }) });
        let error = rt.block_on(task).unwrap_err();
        assert!(error.is_panic());
        let message = panic_message(&*error.into_panic());
        assert!(message.contains("block_on"), "{message}");
        // The single worker still runs tasks.
        assert_eq!(rt.block_on(rt.spawn(async { 2u32 })).unwrap(), 2);
    });
}

#[test]
fn nested_block_on_panics_and_leaves_the_outer_one_usable() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = Builder::new().worker_threads(1).build().unwrap();
        let other = Builder::new().worker_threads(1).build().unwrap();
        let message = expect_panic(|| rt.block_on(async { rt.block_on(async {}) }));
        assert!(message.contains("block_on"), "{message}");
        // Another runtime's block_on is just as forbidden.
        let message = expect_panic(|| rt.block_on(async { other.block_on(async {}) }));
        assert!(message.contains("block_on"), "{message}");
        // The unwinding restored the thread's context.
        assert!(Handle::try_current().is_err());
        assert_eq!(rt.block_on(async { 5 }), 5);
        assert_eq!(
            rt.block_on(async { brigade::spawn(async { 6 }).await.unwrap() }),
            6
        );
    });
}

#[test]
fn a_task_spawns_onto_its_own_runtime() {
    with_timeout(TIMEOUT_SECS, || {
        let first = Builder::new().worker_threads(1).build().unwrap();
        let second = Builder::new().worker_threads(2).build().unwrap();
        let workers_seen = second
            .block_on(first.spawn(async {
                // The task runs on `first`'s worker: `spawn` and
                // `Handle::current` refer to `first`.
                brigade::spawn(async { Handle::current().metrics().num_workers() })
                    .await
                    .unwrap()
            }))
            .unwrap();
        assert_eq!(workers_seen, 1);
        let in_second = second.block_on(async { Handle::current().metrics().num_workers() });
        assert_eq!(in_second, 2);
    });
}
