//! Elastic work on idle grants: a task that waits for admission is taken
//! by a worker with nothing else to run (`admission/mod.rs`), never left
//! waiting while a worker sleeps.
//!
//! The monitor thread, which admits tasks by tokens, is left out of the
//! models, and the bucket is set to hold next to nothing: once the task has
//! used its first grant it can only run again on an idle worker's grant. A
//! lost wake-up shows as a deadlock (every thread blocked), which loom
//! reports.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::check;
use crate::{ElasticConfig, Runtime};

/// `workers` workers, nothing that needs the monitor (`super::builder`),
/// and a bucket that refills at a thousandth of a nanosecond per second:
/// the grant of 1 µs is used up by the first poll (the loom clock moves on
/// by an epoch at each read), and the debt it leaves is never repaid.
fn runtime_with_empty_bucket(workers: usize) -> Runtime {
    super::builder(workers)
        .elastic(ElasticConfig {
            min_utilization: 1e-12,
            max_utilization: 1e-12,
            grant: Duration::from_micros(1),
            // No stretch comes near it, so the task never turns coarse
            // (coarse tasks get no idle grants).
            target: Duration::from_secs(3600),
            ..Default::default()
        })
        .build()
        .expect("build a runtime for a loom model")
}

/// Two workers. The elastic task's grant runs out at its first yield
/// point, so it goes back through admission and waits in the admission
/// queue, while the other worker may be going to sleep: the enqueuer's
/// `notify_one` and the sleeper's re-check (`has_work_for_idle_worker`)
/// close the race (`runtime/scheduler/idle.rs`), and a worker takes the task on an
/// idle grant. It completes, having run on at least one idle grant.
#[test]
fn an_elastic_task_waiting_for_tokens_is_taken_by_an_idle_worker() {
    check(2, || {
        let rt = runtime_with_empty_bucket(2);
        let units = Arc::new(AtomicUsize::new(0));
        let task = {
            let units = units.clone();
            rt.spawn_elastic(async move {
                for _ in 0..2 {
                    units.fetch_add(1, Ordering::SeqCst);
                    crate::yield_if_busy().await;
                }
            })
        };
        rt.block_on(task).unwrap();

        assert_eq!(units.load(Ordering::SeqCst), 2);
        assert!(rt.metrics().elastic_idle_grants() > 0);
    });
}
