//! The yield-heavy workload: every worker busy with background work, and
//! foreground work waiting at every background yield point, so that
//! brigade's `yield_if_busy()` steps aside on (nearly) every call and its
//! yield queue takes and hands back a task each time.
//!
//! 2 × workers background tasks each run a fixed number of units of
//! calibrated busy work ([`crate::busy`], about 2 µs in `benches/scaling.rs`).
//! After each unit a task spawns one tiny foreground task (it counts
//! itself done) and then reaches its yield point, [`Rt::background_yield`]:
//! brigade's `yield_if_busy()`, tokio's `yield_now()`. The foreground task
//! it just spawned is waiting, so brigade's task gives way: into the yield
//! queue, or every other time first to the back of its worker's queue
//! (brigade's rule when the work waiting is in the worker's own queue).
//!
//! The foreground comes from the background tasks rather than from
//! free-running feeder tasks because the yield queue runs only when no
//! other work waits: feeders that never let up would starve it, and the run
//! would be paced by the starvation bound (`Builder::max_yield_delay`, see
//! `examples/flood.rs`) rather than by the yield queue. Here the foreground
//! is bounded by the background's pace, so the workers run out of other
//! work between units and the yield queue turns over at full speed.
//!
//! The run ends when every background task has done its units: [`run`]
//! reports the time that took, the foreground tasks done meanwhile and, on
//! brigade, how often tasks gave way and how many of those times they went
//! through the yield queue.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::busy::spin;
use crate::harness::Rt;

/// What one run did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Report {
    /// From the first spawn to the last background task's end.
    pub elapsed: Duration,
    /// Background units done (all of them).
    pub units: u64,
    /// Foreground tasks done by the end.
    pub foreground: u64,
    /// brigade's counts of the run; `None` on tokio.
    pub yields: Option<YieldCounts>,
}

/// How brigade's background tasks gave way during a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct YieldCounts {
    /// Times a task gave way (`RuntimeMetrics::yields`): to the back of
    /// its worker's queue or into the yield queue.
    pub gave_way: u64,
    /// Times a task stepped aside into the yield queue
    /// (`RuntimeMetrics::yield_queue_entries`): the yield queue's traffic.
    pub entered: u64,
}

impl YieldCounts {
    /// The counts of `rt` so far.
    fn of(rt: &brigade::Runtime) -> YieldCounts {
        let metrics = rt.metrics();
        YieldCounts {
            gave_way: metrics.yields(),
            entered: metrics.yield_queue_entries(),
        }
    }

    /// The counts since `before`.
    fn since(self, before: YieldCounts) -> YieldCounts {
        YieldCounts {
            gave_way: self.gave_way - before.gave_way,
            entered: self.entered - before.entered,
        }
    }
}

impl Report {
    /// Background units per second.
    pub fn units_per_sec(&self) -> f64 {
        self.units as f64 / self.elapsed.as_secs_f64()
    }

    /// Foreground tasks per second.
    pub fn foreground_per_sec(&self) -> f64 {
        self.foreground as f64 / self.elapsed.as_secs_f64()
    }

    /// Times a task gave way per second; `None` on tokio.
    pub fn gave_way_per_sec(&self) -> Option<f64> {
        self.yields
            .map(|yields| yields.gave_way as f64 / self.elapsed.as_secs_f64())
    }

    /// Tasks that stepped aside into the yield queue, per second; `None` on tokio.
    pub fn entered_per_sec(&self) -> Option<f64> {
        self.yields
            .map(|yields| yields.entered as f64 / self.elapsed.as_secs_f64())
    }
}

/// A count of one background task's foreground tasks, on a cache line of
/// its own, so that the tasks of different workers do not share one.
#[repr(align(128))]
#[derive(Default)]
struct Done(AtomicU64);

/// Runs the workload on `rt`, which has `workers` worker threads: 2 ×
/// `workers` background tasks of `units_per_task` units of
/// `unit_iterations` [`spin`] iterations each.
pub fn run<R: Rt>(rt: &R, workers: usize, units_per_task: u64, unit_iterations: u64) -> Report {
    let tasks = 2 * workers;
    let done: Vec<Arc<Done>> = (0..tasks).map(|_| Arc::default()).collect();
    let yields_before = rt.as_brigade().map(YieldCounts::of);
    let started = Instant::now();
    let background: Vec<_> = done
        .iter()
        .map(|done| {
            rt.spawn_remote(background_task::<R>(
                done.clone(),
                units_per_task,
                unit_iterations,
            ))
        })
        .collect();
    rt.block_on(async {
        for task in background {
            task.await.expect("background task failed");
        }
    });
    let elapsed = started.elapsed();
    let yields = rt
        .as_brigade()
        .zip(yields_before)
        .map(|(rt, before)| YieldCounts::of(rt).since(before));
    Report {
        elapsed,
        units: tasks as u64 * units_per_task,
        foreground: done.iter().map(|done| done.0.load(Ordering::Relaxed)).sum(),
        yields,
    }
}

/// `units` units of busy work, each followed by a tiny foreground task
/// and the background yield point.
async fn background_task<R: Rt>(done: Arc<Done>, units: u64, unit_iterations: u64) {
    for _ in 0..units {
        std::hint::black_box(spin(unit_iterations));
        let done = done.clone();
        drop(R::spawn(async move {
            done.0.fetch_add(1, Ordering::Relaxed);
        }));
        R::background_yield().await;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use super::*;
    use crate::harness::{Brigade, Tokio};

    /// A small run on a runtime of its own thread (a hang fails the test
    /// after 20 s); every unit is done.
    fn small_run<R: Rt>() -> Report {
        let (report_tx, report_rx) = mpsc::channel();
        std::thread::spawn(move || {
            let rt = R::build(2);
            let _ = report_tx.send(run(&rt, 2, 200, 100));
        });
        let report = report_rx
            .recv_timeout(Duration::from_secs(20))
            .unwrap_or_else(|error| panic!("{}: no report: {error}", R::KIND));
        assert_eq!(report.units, 4 * 200);
        assert!(report.foreground <= report.units);
        assert!(report.units_per_sec() > 0.0);
        report
    }

    #[test]
    fn brigade_does_every_unit_and_counts_its_yields() {
        let report = small_run::<Brigade>();
        let yields = report.yields.expect("brigade counts its yields");
        assert!(yields.entered <= yields.gave_way, "{yields:?}");
        assert!(report.gave_way_per_sec().is_some());
        assert!(report.entered_per_sec().is_some());
    }

    #[test]
    fn tokio_does_every_unit() {
        let report = small_run::<Tokio>();
        assert_eq!(report.yields, None);
        assert_eq!(report.gave_way_per_sec(), None);
        assert_eq!(report.entered_per_sec(), None);
    }
}
