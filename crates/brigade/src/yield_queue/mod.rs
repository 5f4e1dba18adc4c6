//! The yield queue: where a task that stepped aside waits until a worker
//! has nothing else to do, and what it keeps. The scheduler decides when a
//! task steps aside and carries it out (`runtime/scheduler/worker/step_aside.rs`),
//! and takes it back (`runtime/scheduler/worker/yielded.rs`); this module holds the
//! data: the queue's shards ([`YieldQueue`], each a [`StampedQueue`]), what
//! waits ([`Entry`]: a deferred wake-up or a background task), each task's
//! stepping-aside state (`task::YieldState`: at most one entry per task), and
//! the starvation bound's rate limiter and slice ([`rescue`]).
//!
//! ## Which entry a worker takes
//! A worker takes from the yield queue only after its own deque, the
//! injector and stealing all came up empty and I/O was polled in this epoch
//! (`Core::next_task`), and a worker about to sleep re-checks it
//! (`runtime/scheduler/idle.rs`). It takes the head of its own shard, unless another
//! shard's head has waited longer by more than an epoch (or its own shard
//! is empty): then the head that has waited longest in any shard
//! ([`YieldQueue::pop_for`]). So an entry waits only as long as other work
//! waits, no shard's entries starve behind a worker that keeps refilling
//! its own, and two yielders never yield to each other through it. The
//! one other way out: a background task that wakes itself, with nothing
//! but this shard's entries waiting, takes its turn behind them and the
//! shard's oldest background task comes out in its place
//! ([`YieldQueue::take_turns`], from `Core::take_turns`).
//!
//! One exception keeps a background task on its thread: a lone entry in
//! another worker's shard is left to that worker, which is about to take it
//! back, for a grace of about 0.26 ms ([`OWNER_GRACE_NANOS`]); a backlog is
//! shared at once. A worker that goes to sleep while such an entry waits
//! sleeps until its grace ends at the latest
//! ([`YieldQueue::owner_grace_ends_for`]), so an entry whose owner does
//! not come back (descheduled, stuck, departed) is still taken.
//!
//! ## Never for ever ([`rescue`])
//! Under a flood of foreground work the queue would never be served: an
//! *overdue* queue has its head rescued ahead of other work for a short
//! slice, within a cap on the workers' time.

mod entry;
pub(crate) mod rescue;
pub(crate) mod stamped;

use crossbeam_utils::CachePadded;
pub(crate) use entry::{DeferredWake, Entry, Waiting};
use stamped::StampedQueue;

use crate::epoch::epoch_start;
use crate::policy::OWNER_GRACE_NANOS;
use crate::task::Runnable;

/// The queue of tasks that stepped aside: one shard per worker slot.
///
/// A task steps aside into the shard of the worker it ran on, and that
/// worker, when it has nothing else to do, takes from its own shard first:
/// in the common case (a worker's background tasks stepping aside for the
/// foreground it then runs) the entries never leave the worker's core, and
/// workers do not contend on one lock and one cache line for every step
/// aside, which a single runtime-wide queue made them do. A worker takes
/// another shard's head instead when its own shard is empty or that head
/// has waited longer by more than an epoch, and the owner's grace allows
/// ([`pop_for`](Self::pop_for)); the starvation bound (`rescue.rs`) looks at
/// the oldest entry of all.
///
/// ## Protocol
/// Each shard is a [`StampedQueue`] (`stamped.rs`), whose head's stamp can
/// be read without its lock; the queue is empty when every shard's head
/// says so. Every push is followed by `Idle::notify_one` and a look at the
/// shutdown flag (`Shared::after_shared_push`), like every other push to a
/// shared queue: a worker may have gone idle, or shutdown may have drained
/// the queue, between the decision to step aside and the push (`stamped.rs`
/// says why the head's stamp needs no more than the sleep protocol's
/// fences). A waker or task left in the queue would keep its task, and with
/// it the runtime's shared state, alive: shutdown drains it
/// ([`drain`](Self::drain)).
///
/// An abort must reach a background task that waits here as an
/// [`Entry::Run`]: its wake-up does nothing to a task that is already
/// scheduled. So an abort sweeps every shard
/// ([`take_aborted`](Self::take_aborted), from `Shared::evict_aborted`),
/// and a push looks at the task's abort flag under its shard's lock; the
/// lock orders the two, so whichever comes second sees the other's write.
pub(crate) struct YieldQueue {
    shards: Box<[CachePadded<StampedQueue<Entry>>]>,
}

impl YieldQueue {
    /// A queue with one shard per worker slot.
    pub(crate) fn new(num_slots: usize) -> Self {
        YieldQueue {
            shards: (0..num_slots.max(1))
                .map(|_| CachePadded::new(StampedQueue::new()))
                .collect(),
        }
    }

    /// Puts an entry in worker `slot`'s shard at `at`. The caller must
    /// `notify_one` and check for shutdown afterwards (see the protocol).
    /// Returns whether the entry is a background task that was aborted: its
    /// abort may have swept the shard before the push. The flag is read
    /// under the shard's lock, after the push in the lock's order, so either
    /// this read or the sweep sees the other side's write.
    #[must_use = "an aborted task must be evicted"]
    pub(crate) fn push(&self, slot: usize, entry: Entry, at: u64) -> bool {
        tracing::trace!(
            task = entry.task_id(),
            "task stepped aside into the yield queue"
        );
        self.shards[slot].push(entry, at, Entry::is_aborted_task)
    }

    /// A background task's turn through worker `slot`'s shard, at `at`:
    /// if the shard's oldest entry is a background task too, takes it out
    /// and puts `runnable` at the back, in one hold of the shard's lock.
    /// Returns the task taken, when it went in, and whether `runnable` was
    /// aborted (as [`push`](Self::push) does); or, if the oldest entry is
    /// not a background task (or there is none), `runnable`'s entry, not
    /// pushed. A push all the same: the caller follows it with
    /// `Shared::after_shared_push`, as the protocol above asks.
    pub(crate) fn take_turns(
        &self,
        slot: usize,
        runnable: Runnable,
        at: u64,
    ) -> Result<(Runnable, u64, bool), Entry> {
        let take_task = |head| match head {
            Entry::Run(next) => Ok(next),
            wake @ Entry::Wake(_) => Err(wake),
        };
        let ((next, since), aborted) = self.shards[slot].rotate(
            Entry::Run(runnable),
            at,
            Entry::is_aborted_task,
            take_task,
        )?;
        tracing::trace!(
            task = next.metadata().id(),
            "task took its turn out of the yield queue"
        );
        Ok((next, since, aborted))
    }

    /// Takes an entry for worker `slot` to run at `now`: the oldest of its
    /// own shard, unless another shard's head has waited longer by more
    /// than an epoch (or its own shard is empty), then that one; another
    /// shard's entries only while [`may_take`](Self::may_take) allows.
    ///
    /// Own shard first keeps entries on their worker's core; the age test
    /// keeps the shards fair. Without it a worker whose background task
    /// steps aside whenever the queue holds anything (a demoted loop takes
    /// turns) would take that task straight back from its own shard, for
    /// ever, while an entry in a busy or departed worker's shard waited;
    /// and since that counts as serving the queue, the starvation bound
    /// would not step in either.
    ///
    /// `look_elsewhere`: whether to compare with the other shards' heads at
    /// all. A worker does so once per epoch (`Core::take_back_yielded`):
    /// the rule is about heads older by more than an epoch, so looking more
    /// often changes little, and each look reads every shard's head, a cache
    /// line its own worker writes at each push and pop: at every turn
    /// through the queue, that read would stop the queue scaling with the
    /// workers (docs/decisions.md#scaling-4-8-16). Without it, the
    /// own shard's head goes first, and the oldest elsewhere only when the
    /// own shard is empty.
    pub(crate) fn pop_for(&self, slot: usize, look_elsewhere: bool, now: u64) -> Option<Waiting> {
        let own = &self.shards[slot];
        if look_elsewhere
            && let Some((oldest, at)) = self.oldest_head_for(slot, now)
            && oldest != slot
            && own
                .head_at()
                .is_none_or(|own_at| at.saturating_add(epoch_start(1)) < own_at)
        {
            return Self::pop_shard(&self.shards[oldest])
                .or_else(|| self.pop_oldest_for(slot, now));
        }
        Self::pop_shard(own).or_else(|| self.pop_oldest_for(slot, now))
    }

    /// Whether worker `taker` may take the entries of worker `slot`'s
    /// shard at `now`: its own always; another's once the shard holds a
    /// backlog (two entries or more) or its head has waited for
    /// [`OWNER_GRACE_NANOS`].
    ///
    /// A lone entry in another worker's shard is, nearly always, that
    /// worker's background task, which stepped aside for a moment to let a
    /// request run and which its worker takes back as soon as the request
    /// is done. Taking it from another worker moves the background task
    /// between threads, and with it the roles the OS has settled: the
    /// thread that ran the background job without sleeping and the one that
    /// slept and woke for each request: both threads then stay runnable,
    /// and on a host with a client of its own on the same cores the
    /// background job loses much of its throughput
    /// (docs/decisions.md#owner-grace has the figures). A backlog is more than its owner
    /// takes back at once, and an entry that waited for the grace has an
    /// owner that is not coming back soon (descheduled, stuck in a long
    /// poll, or a spare that stepped down): those any worker takes.
    fn may_take(&self, slot: usize, taker: usize, now: u64) -> bool {
        let shard = &self.shards[slot];
        slot == taker
            || shard.has_backlog()
            || shard
                .head_at()
                .is_some_and(|at| at.saturating_add(OWNER_GRACE_NANOS) <= now)
    }

    /// Whether worker `slot` may take an entry at `now()` (see
    /// [`may_take`](Self::may_take)): the check of a worker about to sleep.
    /// The clock is read only if a lone entry of another shard needs it.
    pub(crate) fn has_entries_for(&self, slot: usize, now: impl FnOnce() -> u64) -> bool {
        let own_or_backlog = self
            .shards
            .iter()
            .enumerate()
            .any(|(shard, queue)| !queue.is_empty() && (shard == slot || queue.has_backlog()));
        own_or_backlog
            || self
                .owner_grace_ends_for(slot)
                .is_some_and(|ends| ends <= now())
    }

    /// When the first lone entry that worker `slot` may not take yet (see
    /// [`may_take`](Self::may_take)) becomes one it may take, if there is
    /// one: a worker that goes to sleep wakes by then, so that an entry
    /// whose owner does not come back is taken after the grace.
    pub(crate) fn owner_grace_ends_for(&self, slot: usize) -> Option<u64> {
        self.shards
            .iter()
            .enumerate()
            .filter(|&(shard, queue)| shard != slot && !queue.has_backlog())
            .filter_map(|(_, queue)| queue.head_at())
            .map(|at| at.saturating_add(OWNER_GRACE_NANOS))
            .min()
    }

    /// The entry that has waited longest among the shards worker `slot`
    /// may take from at `now`.
    fn pop_oldest_for(&self, slot: usize, now: u64) -> Option<Waiting> {
        self.pop_oldest_where(|shard| self.may_take(shard, slot, now))
    }

    /// The shard, among those worker `slot` may take from at `now`, whose
    /// head has waited longest, and when that head went in.
    fn oldest_head_for(&self, slot: usize, now: u64) -> Option<(usize, u64)> {
        self.oldest_head_where(|shard| self.may_take(shard, slot, now))
    }

    /// Takes the entry that has waited longest in any shard (the rescue of
    /// an overdue queue, shutdown). Another worker may take the head picked
    /// first, so it looks again, as many times as there are shards: a
    /// `None` after that is a lost race, which the caller survives as it
    /// does any empty look (a worker that then goes to sleep re-checks).
    pub(crate) fn pop_oldest(&self) -> Option<Waiting> {
        self.pop_oldest_where(|_| true)
    }

    /// The oldest head among the shards `eligible` accepts, looking again
    /// if another worker took the one picked first (see `pop_oldest`).
    fn pop_oldest_where(&self, eligible: impl Fn(usize) -> bool) -> Option<Waiting> {
        for _ in 0..self.shards.len() {
            let (oldest, _) = self.oldest_head_where(&eligible)?;
            if let Some(waiting) = Self::pop_shard(&self.shards[oldest]) {
                return Some(waiting);
            }
        }
        None
    }

    fn pop_shard(shard: &StampedQueue<Entry>) -> Option<Waiting> {
        let (entry, since) = shard.pop()?;
        tracing::trace!(task = entry.task_id(), "task left the yield queue");
        Some(Waiting { entry, since })
    }

    /// Among the shards `eligible` accepts, the one whose head has waited
    /// longest, and when that head went in.
    fn oldest_head_where(&self, eligible: impl Fn(usize) -> bool) -> Option<(usize, u64)> {
        self.shards
            .iter()
            .enumerate()
            .filter(|&(slot, _)| eligible(slot))
            .filter_map(|(slot, shard)| Some((slot, shard.head_at()?)))
            .min_by_key(|&(_, at)| at)
    }

    /// Takes out every background task (`Entry::Run`) that was aborted,
    /// wherever it waits (for `Shared::evict_aborted`).
    pub(crate) fn take_aborted(&self) -> Vec<Runnable> {
        self.shards
            .iter()
            .flat_map(|shard| {
                shard.take_where(|entry| match entry {
                    Entry::Run(runnable) if runnable.metadata().is_cancelled() => Ok(runnable),
                    other => Err(other),
                })
            })
            .collect()
    }

    /// Empties the queue (shutdown): deferred wake-ups are woken (their
    /// tasks are then set aside by the schedule hook, which sees the
    /// shutdown flag), background tasks go to `set_aside`.
    pub(crate) fn drain(&self, set_aside: impl Fn(Runnable)) {
        for shard in self.shards.iter() {
            while let Some(waiting) = Self::pop_shard(shard) {
                match waiting.entry {
                    Entry::Wake(wake) => wake.wake(),
                    Entry::Run(runnable) => set_aside(runnable),
                }
            }
        }
    }

    /// Whether worker `slot`'s own shard holds an entry (one relaxed load).
    pub(crate) fn has_entries_in(&self, slot: usize) -> bool {
        !self.shards[slot].is_empty()
    }

    /// Whether every shard is empty: one relaxed load per shard (see
    /// `stamped.rs` for why the sleep protocol's fences are enough).
    pub(crate) fn is_empty(&self) -> bool {
        self.shards.iter().all(|shard| shard.is_empty())
    }

    /// When the entry that has waited longest went in, if there is one.
    pub(crate) fn head_at(&self) -> Option<u64> {
        self.oldest_head_where(|_| true).map(|(_, at)| at)
    }

    pub(crate) fn len(&self) -> usize {
        self.shards.iter().map(|shard| shard.len()).sum()
    }

    /// How many times a task stepped aside into the queue since the runtime
    /// started: the sum of the shards' counts, each kept under its shard's
    /// lock (a runtime-wide counter would be one more cache line that every
    /// worker writes at every step aside).
    pub(crate) fn entered_total(&self) -> u64 {
        self.shards.iter().map(|shard| shard.pushed()).sum()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// An entry holding a task of `rt`'s that is never run.
    fn entry(rt: &crate::Runtime) -> Entry {
        let (runnable, task) = async_task::Builder::new()
            .metadata(crate::task::TaskMeta::for_tests(&rt.handle().shared))
            .spawn(|_| async {}, |_runnable| {});
        task.detach();
        Entry::Run(runnable)
    }

    /// A time at which every entry of these tests is past its grace.
    const LATE: u64 = 1 << 40;

    fn id(waiting: Option<Waiting>) -> Option<u64> {
        waiting.map(|waiting| waiting.entry.task_id())
    }

    #[test]
    fn a_worker_takes_from_its_own_shard_first_then_the_oldest_elsewhere() {
        let rt = crate::Builder::new().worker_threads(1).build().unwrap();
        let queue = YieldQueue::new(3);
        let entries: Vec<Entry> = (0..4).map(|_| entry(&rt)).collect();
        let ids: Vec<u64> = entries.iter().map(Entry::task_id).collect();
        let mut entries = entries.into_iter();
        // Shard 2 holds the oldest entry, shard 0 two younger ones, shard
        // 1 the youngest.
        let _ = queue.push(2, entries.next().unwrap(), 10);
        let _ = queue.push(0, entries.next().unwrap(), 20);
        let _ = queue.push(0, entries.next().unwrap(), 30);
        let _ = queue.push(1, entries.next().unwrap(), 40);
        assert_eq!((queue.len(), queue.head_at()), (4, Some(10)));
        // Stamps within an epoch of each other: worker 1 takes its own
        // entry first, though it is the youngest.
        assert_eq!(id(queue.pop_for(1, true, LATE)), Some(ids[3]));
        // Then, its shard empty, the oldest anywhere: shard 2's, then
        // shard 0's in order.
        assert_eq!(id(queue.pop_for(1, false, LATE)), Some(ids[0]));
        assert_eq!(id(queue.pop_for(1, true, LATE)), Some(ids[1]));
        assert_eq!(queue.head_at(), Some(30));
        assert_eq!(id(queue.pop_oldest()), Some(ids[2]));
        assert!(queue.is_empty() && queue.pop_for(0, true, LATE).is_none());
        assert_eq!(queue.entered_total(), 4);
    }

    #[test]
    fn an_entry_older_by_more_than_an_epoch_goes_before_the_own_shard() {
        let rt = crate::Builder::new().worker_threads(1).build().unwrap();
        let queue = YieldQueue::new(2);
        let (old, recent) = (entry(&rt), entry(&rt));
        let (old_id, recent_id) = (old.task_id(), recent.task_id());
        let epoch = epoch_start(1);
        let _ = queue.push(1, old, 1_000);
        let _ = queue.push(0, recent, 1_000 + epoch + 1);
        assert_eq!(id(queue.pop_for(0, true, LATE)), Some(old_id));
        assert_eq!(id(queue.pop_for(0, true, LATE)), Some(recent_id));
    }

    #[test]
    fn between_looks_elsewhere_a_worker_takes_its_own_shard_first() {
        let rt = crate::Builder::new().worker_threads(1).build().unwrap();
        let queue = YieldQueue::new(2);
        let (old, recent) = (entry(&rt), entry(&rt));
        let (old_id, recent_id) = (old.task_id(), recent.task_id());
        let _ = queue.push(1, old, 1_000);
        let _ = queue.push(0, recent, 1_000 + epoch_start(1) + 1);
        assert_eq!(id(queue.pop_for(0, false, LATE)), Some(recent_id));
        assert_eq!(id(queue.pop_for(0, false, LATE)), Some(old_id));
    }

    #[test]
    fn a_lone_entry_is_left_to_its_worker_for_the_grace_and_a_backlog_is_shared() {
        let rt = crate::Builder::new().worker_threads(1).build().unwrap();
        let queue = YieldQueue::new(2);
        let (first, second) = (entry(&rt), entry(&rt));
        let (first_id, second_id) = (first.task_id(), second.task_id());
        let _ = queue.push(1, first, 1_000);
        // Worker 0 leaves worker 1's lone entry alone during the grace,
        // and knows when the grace ends; worker 1 takes it any time.
        let early = 1_000 + OWNER_GRACE_NANOS - 1;
        assert!(queue.pop_for(0, true, early).is_none());
        assert!(queue.pop_for(0, false, early).is_none());
        assert!(!queue.has_entries_for(0, || early) && queue.has_entries_for(1, || 1_000));
        assert_eq!(
            queue.owner_grace_ends_for(0),
            Some(1_000 + OWNER_GRACE_NANOS)
        );
        assert_eq!(queue.owner_grace_ends_for(1), None);
        // A backlog is shared at once.
        let _ = queue.push(1, second, 2_000);
        assert!(queue.has_entries_for(0, || 2_000) && queue.owner_grace_ends_for(0).is_none());
        assert_eq!(id(queue.pop_for(0, true, 2_000)), Some(first_id));
        // Lone again: left to its worker until its own grace ends.
        assert!(queue.pop_for(0, false, early + 1).is_none());
        assert_eq!(
            id(queue.pop_for(0, false, 2_000 + OWNER_GRACE_NANOS)),
            Some(second_id)
        );
        assert!(queue.is_empty());
    }
}
