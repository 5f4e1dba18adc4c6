//! The task burst: one task spawns N small tasks, each of which waits on a
//! shared `tokio::sync::watch` channel (runtime-agnostic, so both runtimes
//! run the very same future), so that all N are alive at once; then one
//! send releases them and they finish.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::rt::{BurstRt, Latch, wait_until};
use super::{Memory, Row};
use crate::memory::{mib, peak_rss_bytes, trim};

/// What a task burst measured.
#[derive(Debug)]
pub struct TasksOutcome {
    /// Tasks spawned.
    pub tasks: usize,
    /// Tasks that ran to their wait.
    pub started: usize,
    /// Tasks that ran to completion.
    pub completed: usize,
    /// The runtime's live-task count once they had completed.
    pub alive_after: usize,
    /// Before the burst, the runtime started.
    pub before: Memory,
    /// With every task alive and waiting.
    pub alive: Memory,
    /// The peak of resident memory (`VmHWM`), in bytes.
    pub peak_rss: u64,
    /// Once every task has completed.
    pub after: Memory,
    /// Resident memory after that, and after `malloc_trim(0)`.
    pub after_trim_rss: u64,
    /// Time to spawn them all (rough: the host is shared).
    pub spawn_time: Duration,
    /// Time from the release to the last completion (rough).
    pub finish_time: Duration,
}

impl TasksOutcome {
    /// Peak resident memory above the start, per task.
    pub fn peak_bytes_per_task(&self) -> u64 {
        self.peak_rss.saturating_sub(self.before.rss) / self.tasks.max(1) as u64
    }

    /// A row of the table printed by `bursts`.
    pub fn row(&self, runtime: &str) -> Row {
        vec![
            runtime.to_owned(),
            self.tasks.to_string(),
            format!("{}/{}", self.completed, self.alive_after),
            self.before.text(),
            mib(self.peak_rss),
            self.peak_bytes_per_task().to_string(),
            self.after.text(),
            mib(self.after_trim_rss),
            format!(
                "{:.1} / {:.1}",
                self.spawn_time.as_secs_f64(),
                self.finish_time.as_secs_f64()
            ),
        ]
    }
}

/// The table's header, matching [`TasksOutcome::row`].
pub const HEADER: [&str; 9] = [
    "runtime",
    "tasks",
    "completed / alive after",
    "RSS / heap before",
    "peak RSS",
    "peak bytes/task",
    "RSS / heap after",
    "RSS after trim",
    "spawn / finish s (rough)",
];

/// Spawns `tasks` tasks on a fresh `R` with `workers` workers, all alive at
/// once, then releases them; every wait bounded by `limit`.
pub fn run<R: BurstRt>(workers: usize, tasks: usize, limit: Duration) -> TasksOutcome {
    let rt = R::build(workers);
    // Start the workers before the baseline.
    let _ = rt.block_on(rt.spawn_remote(async {}));
    let before = Memory::now();
    let (release, gate) = tokio::sync::watch::channel(());
    let latches = Arc::new((Latch::new(tasks), Latch::new(tasks)));
    let spawn_started = Instant::now();
    let spawner_latches = latches.clone();
    let spawner = rt.spawn_remote(async move {
        for _ in 0..tasks {
            let mut gate = gate.clone();
            let latches = spawner_latches.clone();
            drop(R::spawn(async move {
                latches.0.arrive();
                // An error means the sender is gone, which also releases.
                let _ = gate.changed().await;
                latches.1.arrive();
            }));
        }
    });
    let _ = rt.block_on(spawner);
    let spawn_time = spawn_started.elapsed();
    latches.0.wait(limit);
    let alive = Memory::now();
    let finish_started = Instant::now();
    release.send_replace(());
    latches.1.wait(limit);
    let finish_time = finish_started.elapsed();
    wait_until(limit, || rt.alive_tasks() == 0);
    let after = Memory::now();
    trim();
    TasksOutcome {
        tasks,
        started: latches.0.count(),
        completed: latches.1.count(),
        alive_after: rt.alive_tasks(),
        before,
        alive,
        peak_rss: peak_rss_bytes().unwrap_or(0),
        after,
        after_trim_rss: Memory::now().rss,
        spawn_time,
        finish_time,
    }
}
