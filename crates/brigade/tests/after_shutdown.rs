//! Timers whose runtime is gone, and runtimes inside runtimes: a `Sleep`
//! or `timeout` of a runtime that shut down completes instead of waiting
//! for ever (the waiter is woken at the shutdown), and a runtime built or
//! dropped inside a task of another one works. Every wait is bounded.

mod common;

use std::future::pending;
use std::time::Duration;

use brigade::time::{sleep, timeout};
use common::{TIMEOUT_SECS, bounded, local_block_on, poll_once, wait_until, with_timeout};

const AN_HOUR: Duration = Duration::from_secs(3600);

/// A sleep of an hour made in `rt`'s context, not yet polled.
fn unpolled_sleep(rt: &brigade::Runtime) -> brigade::time::Sleep {
    // `block_on` only to be in the runtime's context: the sleep is made
    // there and returned (in a `Result`, so that no lint takes it for a
    // future meant to be awaited).
    rt.block_on(async { Ok::<_, ()>(sleep(AN_HOUR)) }).unwrap()
}

fn runtime(workers: usize) -> brigade::Runtime {
    brigade::Builder::new()
        .worker_threads(workers)
        .build()
        .expect("runtime")
}

#[test]
fn a_sleep_registered_before_the_drop_completes_after_it() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(1);
        let (mut nap, mut deadline) = rt.block_on(async {
            let mut nap = sleep(AN_HOUR);
            let mut deadline = timeout(AN_HOUR, pending::<()>());
            assert!(poll_once(&mut nap).is_pending());
            assert!(poll_once(&mut Box::pin(&mut deadline)).is_pending());
            (nap, deadline)
        });
        assert_eq!(rt.metrics().num_timers(), 2, "both timers are registered");
        drop(rt);
        // Polled by a thread with no runtime: the runtime is gone.
        local_block_on(&mut nap);
        assert!(nap.is_elapsed());
        let outcome = local_block_on(async { Box::pin(&mut deadline).await });
        assert!(outcome.is_err(), "the timeout reports that it elapsed");
    });
}

#[test]
fn a_sleep_created_after_the_drop_completes() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(1);
        let handle = rt.handle().clone();
        drop(rt);
        handle.block_on(async {
            sleep(AN_HOUR).await;
            assert!(timeout(AN_HOUR, pending::<()>()).await.is_err());
        });
        // Created in a live runtime, first polled after its drop.
        let rt = runtime(1);
        let nap = unpolled_sleep(&rt);
        drop(rt);
        local_block_on(nap);
    });
}

#[test]
fn a_task_waiting_on_a_dropped_runtimes_timer_is_woken() {
    with_timeout(TIMEOUT_SECS, || {
        let outer = runtime(1);
        let inner = runtime(1);
        let nap = unpolled_sleep(&inner);
        let waiter = outer.spawn(nap);
        // The waiter's first poll registers the timer with `inner`.
        wait_until("the waiter registered its timer", || {
            inner.metrics().num_timers() == 1
        });
        drop(inner);
        outer
            .block_on(bounded(waiter))
            .expect("the waiter completes");
    });
}

#[test]
fn a_runtime_built_and_dropped_inside_a_task() {
    with_timeout(TIMEOUT_SECS, || {
        let outer = runtime(2);
        let answer = outer.block_on(bounded(outer.spawn(async {
            let inner = runtime(2);
            let quick = inner.spawn(async {
                sleep(Duration::from_millis(1)).await;
                6 * 7
            });
            let stuck = inner.spawn(async { sleep(AN_HOUR).await });
            // An inner task's result, awaited from an outer task.
            let answer = quick.await.expect("the inner task completes");
            // Dropped on the outer runtime's worker, with a task pending.
            drop(inner);
            let stuck = stuck.await.expect_err("its runtime is gone");
            assert!(stuck.is_cancelled());
            answer
        })));
        assert_eq!(answer.expect("the outer task completes"), 42);
    });
}

#[test]
fn block_on_of_another_runtime_inside_a_task_panics_with_a_message() {
    with_timeout(TIMEOUT_SECS, || {
        let outer = runtime(1);
        let inner = runtime(1);
        let inner_handle = inner.handle().clone();
        let joined = outer.block_on(bounded(outer.spawn(async move {
            inner_handle.block_on(async { 1 });
        })));
        let error = joined.expect_err("block_on on a worker panics");
        let message = common::panic_message(&*error.into_panic());
        assert!(message.contains("cannot call `block_on`"), "{message}");
        // Both runtimes still work.
        assert_eq!(outer.block_on(outer.spawn(async { 2 })).unwrap(), 2);
        assert_eq!(inner.block_on(async { 3 }), 3);
    });
}
