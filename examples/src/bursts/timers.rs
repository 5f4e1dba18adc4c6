//! The timer burst: N tasks each wait in an hour-long sleep of their
//! runtime; once every sleep is registered, all N tasks are aborted at once.
//! What matters is that the tasks, the timers and the memory go away.

use std::future::{Future, poll_fn};
use std::pin::pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::rt::{BurstRt, Latch, wait_until};
use super::{Memory, Row};
use crate::memory::{mib, trim};

const SLEEP: Duration = Duration::from_secs(3600);

/// What a timer burst measured.
#[derive(Debug)]
pub struct TimersOutcome {
    /// Sleeping tasks spawned.
    pub timers: usize,
    /// Sleeps that had been polled once (so registered) before the abort.
    pub pending: usize,
    /// The runtime's timer count with every sleep pending (brigade only).
    pub registered: Option<usize>,
    /// Join handles that resolved to a cancelled error (of tasks finished
    /// by the end of the wait).
    pub cancelled: usize,
    /// The runtime's live-task count after the abort.
    pub alive_after: usize,
    /// The runtime's timer count after the abort (brigade only).
    pub timers_after: Option<usize>,
    /// Before the burst, the runtime started.
    pub before: Memory,
    /// With every sleep pending.
    pub pending_memory: Memory,
    /// Once the tasks are gone and their handles dropped.
    pub after: Memory,
    /// Resident memory after that, and after `malloc_trim(0)`.
    pub after_trim_rss: u64,
    /// From the first abort to no task alive (rough: the host is shared).
    pub cancel_time: Duration,
}

impl TimersOutcome {
    /// A row of the table printed by `bursts`.
    pub fn row(&self, runtime: &str) -> Row {
        let count = |count: Option<usize>| count.map_or("n/a".to_owned(), |n| n.to_string());
        vec![
            runtime.to_owned(),
            self.timers.to_string(),
            format!("{} / {}", count(self.registered), count(self.timers_after)),
            format!("{}/{}", self.cancelled, self.alive_after),
            self.before.text(),
            mib(self.pending_memory.rss),
            self.after.text(),
            mib(self.after_trim_rss),
            format!("{:.2}", self.cancel_time.as_secs_f64()),
        ]
    }
}

/// The table's header, matching [`TimersOutcome::row`].
pub const HEADER: [&str; 9] = [
    "runtime",
    "sleeps",
    "timers pending / after",
    "cancelled / alive after",
    "RSS / heap before",
    "RSS pending",
    "RSS / heap after",
    "RSS after trim",
    "cancel s (rough)",
];

/// Spawns `timers` sleeping tasks on a fresh `R` with `workers` workers and
/// aborts them all once every sleep is pending; every wait bounded by
/// `limit`.
pub fn run<R: BurstRt>(workers: usize, timers: usize, limit: Duration) -> TimersOutcome {
    let rt = R::build(workers);
    let _ = rt.block_on(rt.spawn_remote(async {}));
    let before = Memory::now();
    let pending = Arc::new(Latch::new(timers));
    let spawner_pending = pending.clone();
    let handles = rt.block_on(async move {
        (0..timers)
            .map(|_| {
                R::spawn(count_first_pending(
                    R::sleep(SLEEP),
                    spawner_pending.clone(),
                ))
            })
            .collect::<Vec<_>>()
    });
    pending.wait(limit);
    let registered = rt.timers();
    let pending_memory = Memory::now();
    let cancel_started = Instant::now();
    for handle in &handles {
        R::abort(handle);
    }
    wait_until(limit, || rt.alive_tasks() == 0);
    let cancel_time = cancel_started.elapsed();
    wait_until(limit, || rt.timers().unwrap_or(0) == 0);
    let cancelled = rt.block_on(async move {
        let mut cancelled = 0;
        // Only finished tasks are awaited: one that the abort missed would
        // sleep for an hour. It is counted as not cancelled.
        for handle in handles.into_iter().filter(R::is_finished) {
            if handle.await.as_ref().is_err_and(R::is_cancelled) {
                cancelled += 1;
            }
        }
        cancelled
    });
    let after = Memory::now();
    trim();
    TimersOutcome {
        timers,
        pending: pending.count(),
        registered,
        cancelled,
        alive_after: rt.alive_tasks(),
        timers_after: rt.timers(),
        before,
        pending_memory,
        after,
        after_trim_rss: Memory::now().rss,
        cancel_time,
    }
}

/// Runs `future`, counting an arrival at `latch` the first time it is
/// pending (a sleep is registered with its timer by then).
async fn count_first_pending<F: Future>(future: F, latch: Arc<Latch>) -> F::Output {
    let mut future = pin!(future);
    let mut counted = false;
    poll_fn(|cx| {
        let poll = future.as_mut().poll(cx);
        if poll.is_pending() && !counted {
            counted = true;
            latch.arrive();
        }
        poll
    })
    .await
}
