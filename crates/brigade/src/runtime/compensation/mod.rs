//! Compensation for stuck workers: the bookkeeping that decides when a
//! spare worker takes the place of a stuck one, and when it steps down.
//! The mechanism is three files: this one (slots, covers, the protocol),
//! `spare_slots.rs` (the spare slots' states, starting a spare, stepping down,
//! resting, and the spare threads) and `decide.rs` (the monitor's decision
//! to cover a stuck worker, and the judge that tells a blocked worker from
//! a descheduled one), plus `stat_files.rs` (each slot's thread's stat
//! file, opened as the thread starts). It reads the OS through
//! `runtime/threads/thread_cpu.rs`; the monitor thread (`runtime/threads/monitor.rs`) and
//! `Core::block_in_place` (`runtime/scheduler/worker/mod.rs`) call it.
//!
//! ## Slots
//! A runtime has `workers + max_spares` worker *slots*. Each slot has a
//! deque (its stealer is in `Shared::stealers`), a parker in `Idle`, and a
//! metrics cell with its poll record. Slots `0..workers` are the primaries,
//! each run by its own thread for the runtime's whole life. The others are
//! spare slots. A spare slot is *vacant* (no thread; its deque is kept
//! here), *serving* (its thread runs the worker loop) or *resting* (its
//! thread waits, for at most the keep-alive, to serve again).
//!
//! A spare slot is a worker like any other while it serves: it takes from
//! its own deque, the injector and the yield queue, steals from every slot
//! (the stuck one's deque included; while no spare serves, workers skip the
//! spare slots' empty deques: `Shared::active_stealers`), and counts as idle
//! while it sleeps.
//! That is how it takes a stuck worker's place: its queue and its share of
//! the work. The stuck thread keeps its slot and its deque; nothing moves
//! between threads but tasks, through the deques' stealers, so a stuck poll
//! that returns while the spare runs simply carries on.
//!
//! ## Covering
//! The rules are F1 to F10 of the policy (`policy.rs`, with each constant
//! and its reason). A slot is *covered* while a spare has been asked to
//! serve in its place:
//! - the monitor covers a slot whose current stretch (a poll, or the part of
//!   one between two yield points) has run past the compensation threshold
//!   while work waits and no worker is idle, unless its thread is runnable
//!   rather than blocked and a spare cannot help (`decide.rs`);
//! - `block_in_place` covers its own slot for the length of its closure.
//!
//! The cover ends when the stretch does. The monitor ends a cover it made
//! once the slot's poll record shows the stretch has ended, at its next sample
//! (`end_stale_covers`: the poll returned, or went past a yield point), and
//! takes back a late cover (below). The slot's own thread ends any cover
//! before it parks, after an elastic poll and at an elastic task's yield
//! point (where the task's CPU charge depends on it), and at the end of
//! `block_in_place`. Plain polls and `yield_if_busy()`'s fast path do not
//! look: they stay as cheap as without compensation, and a spare serves at
//! most one sampling interval longer than needed.
//!
//! `wanted` counts covered slots and `serving` counts serving spare slots.
//! Spares start while `serving < min(wanted, max_spares)` and a spare steps
//! down, between two tasks, while `serving > wanted`. So once every stuck
//! poll has returned, `serving` falls back to 0 and the runtime runs its
//! configured number of workers again.
//!
//! ## Protocol
//! - A slot's cover is one atomic word, its *owner*: 0 when uncovered,
//!   else the tag of whoever holds it (the monitor: the poll sequence
//!   number of the stretch it covered; or `block_in_place`). It is set by a
//!   compare-exchange from 0, so one coverer wins; `block_in_place` takes
//!   over a monitor's cover by a swap. The slot's own thread clears any
//!   owner by a swap; the monitor clears only its own tag, by a
//!   compare-exchange, so it never ends a `block_in_place` cover. `wanted`
//!   follows: +1 after a won cover, −1 after a won clear, so it never
//!   counts a slot twice.
//! - Slot states, `serving` and `wanted` change only under the `spares`
//!   lock, and the decisions to start a spare or to step down are taken
//!   under it, so a spare stepping down as another slot is covered cannot
//!   leave that slot without a spare. Both counts are mirrored in atomics
//!   for the lock-free pre-check ([`is_surplus`](Compensation::is_surplus)).
//! - The monitor's cover can come late: it saw a stretch running, but the
//!   poll ended before the owner word was set. The monitor then re-reads the
//!   slot's poll record and takes the cover back, and a worker that parks checks
//!   for a cover after its park fence
//!   ([`cover_running`](Compensation::cover_running) says how the two
//!   fences pair). A late cover the re-read misses is ended by the next
//!   sample's sweep, as the stretch it names has ended.
//! - A spare that sleeps in `Idle::wait_for_work` must not miss that it became
//!   surplus. Whoever ends a cover (the slot's thread, or the monitor)
//!   decrements `wanted` and then wakes a sleeping spare under the sleepers
//!   lock (`Idle::notify_spare`);
//!   a parking spare adds itself to the sleepers under that lock and then
//!   re-checks [`is_surplus`](Compensation::is_surplus) as part of its
//!   `has_work`. Whichever takes the lock second sees the other.
//! - A spare steps down in this order: it stops counting as serving (under
//!   the lock), leaves the searching count, moves every task in its deque
//!   to the injector (each push notifies, so nothing waits unseen), and
//!   only then rests. Its deque never leaves its thread while the thread
//!   lives; at shutdown, or when the keep-alive runs out, the deque is kept
//!   in the vacant slot for the next thread.

use std::sync::atomic::AtomicI64;

use crossbeam_utils::CachePadded;

use crate::runtime::threads::thread_cpu::ThreadClock;
use spare_slots::Spares;

use crate::sync::{AtomicU64, AtomicUsize, Condvar, Mutex, Ordering, fence, lock};

/// One slot's cover.
///
/// `owner` is the whole protocol state of the cover: [`UNCOVERED`], or the
/// tag of whoever holds it: the poll sequence number of the stretch the
/// monitor covered (odd, so never 0), or [`BLOCK_IN_PLACE`]. Covering is a
/// compare-exchange from `UNCOVERED`; the monitor only ever clears its own
/// tag (a compare-exchange), so it cannot end a `block_in_place` cover.
///
/// `at_nanos` and `cpu_at_nanos` are stored before the owner is set and
/// read after it is cleared (`AcqRel` both), so the uncovering thread sees
/// them. They only feed elastic CPU accounting; the rare overwrite by a
/// cover that then finds the slot taken is harmless, hence `std` atomics.
struct SlotCover {
    owner: AtomicU64,
    /// When the cover began (runtime clock, ns).
    at_nanos: std::sync::atomic::AtomicU64,
    /// The slot thread's CPU time then (ns), or `u64::MAX` if unknown.
    cpu_at_nanos: std::sync::atomic::AtomicU64,
    /// The CPU clock of the thread running the slot (`ThreadClock` bits).
    clock: AtomicI64,
}

/// `SlotCover::owner` of a slot nobody covers.
const UNCOVERED: u64 = 0;

/// `SlotCover::owner` of a cover taken by `block_in_place`.
pub(crate) const BLOCK_IN_PLACE: u64 = u64::MAX;

/// What an ended cover tells the slot's thread (see [`Compensation::uncover`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct CoverEnded {
    /// When the cover began (runtime clock, ns).
    pub(crate) at_nanos: u64,
    /// The thread's CPU time then (ns), if known.
    pub(crate) cpu_at_nanos: Option<u64>,
}

impl CoverEnded {
    /// F8 of the policy (`policy.rs`): how much of the wall time between
    /// `from` (the cover's start, or the poll's if later) and `now` the
    /// thread did not spend on a CPU: the
    /// part of a poll that elastic admission does not charge. Nothing when
    /// the CPU time is unknown: a covered stretch is then charged in full,
    /// as it may have been a CPU loop.
    pub(crate) fn uncharged(&self, from: u64, now: u64, cpu_now: Option<u64>) -> u64 {
        let wall = now.saturating_sub(from.max(self.at_nanos));
        match (self.cpu_at_nanos, cpu_now) {
            (Some(before), Some(after)) => wall.saturating_sub(after.saturating_sub(before)),
            _ => 0,
        }
    }
}

/// How [`Compensation::cover_running`] went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(loom, allow(dead_code))] // The monitor thread uses it; loom models leave the monitor out.
pub(crate) enum MonitorCover {
    /// The slot is covered: start spares.
    Covered,
    /// Someone else covers the slot already.
    Taken,
    /// The stretch ended as the cover landed and the cover was taken back:
    /// wake a sleeping spare (`Idle::notify_spare`), which may be surplus.
    TakenBack,
}

/// The compensation bookkeeping of one runtime. `D` is a slot's deque
/// (`sync::LocalQueue<Runnable>`; a unit in the loom models).
pub(crate) struct Compensation<D> {
    /// The first spare slot: slots below it are the primaries, so this is
    /// the runtime's worker count, stored nowhere else
    /// (`Shared::num_workers`).
    first_spare: usize,
    max_spares: usize,
    covered: Box<[CachePadded<SlotCover>]>,
    /// Covered slots. Changed only under the `spares` lock (so the start
    /// and step-down decisions, taken under it, never both miss a change);
    /// read without it by [`is_surplus`](Self::is_surplus).
    wanted: AtomicUsize,
    /// Mirror of `Spares::serving`, written under the lock.
    serving: AtomicUsize,
    spares: Mutex<Spares<D>>,
    /// Resting threads wait here; notified when one is woken to serve, and
    /// at shutdown. Threads exiting notify it too, for `wait_exited`.
    changed: Condvar,
    /// Spares started so far (statistics: no protocol reads it).
    started: std::sync::atomic::AtomicU64,
    /// Each slot's thread's stat file, for the monitor's judge.
    #[cfg(not(loom))]
    stat_files: stat_files::StatFiles,
}

impl<D> Compensation<D> {
    /// Bookkeeping for `workers` primaries and one spare slot per deque in
    /// `spare_locals`.
    pub(crate) fn new(workers: usize, spare_locals: Vec<D>) -> Self {
        let max_spares = spare_locals.len();
        Compensation {
            first_spare: workers,
            max_spares,
            covered: (0..workers + max_spares)
                .map(|_| {
                    CachePadded::new(SlotCover {
                        owner: AtomicU64::new(UNCOVERED),
                        at_nanos: std::sync::atomic::AtomicU64::new(0),
                        cpu_at_nanos: std::sync::atomic::AtomicU64::new(u64::MAX),
                        clock: AtomicI64::new(ThreadClock::NONE.to_bits()),
                    })
                })
                .collect(),
            wanted: AtomicUsize::new(0),
            serving: AtomicUsize::new(0),
            spares: Mutex::new(Spares::new(spare_locals)),
            changed: Condvar::new(),
            started: std::sync::atomic::AtomicU64::new(0),
            #[cfg(not(loom))]
            stat_files: stat_files::StatFiles::new(workers, max_spares),
        }
    }

    /// Each slot's thread's stat file (`stat_files.rs`).
    #[cfg(not(loom))]
    pub(crate) fn stat_files(&self) -> &stat_files::StatFiles {
        &self.stat_files
    }

    /// The index of the first spare slot (= the number of primaries).
    pub(crate) fn first_spare(&self) -> usize {
        self.first_spare
    }

    /// The bound on spare slots serving at once.
    pub(crate) fn max_spares(&self) -> usize {
        self.max_spares
    }

    /// Whether `slot` is a spare slot.
    pub(crate) fn is_spare(&self, slot: usize) -> bool {
        slot >= self.first_spare
    }

    /// Records the CPU clock of the thread that now runs `slot`.
    ///
    /// Relaxed, here and in [`clock`](Self::clock): the clock only feeds
    /// elastic accounting; a stale one (the slot's previous thread) reads as
    /// unknown or as another thread's time, never as anything unsafe.
    pub(crate) fn set_clock(&self, slot: usize, clock: ThreadClock) {
        self.covered[slot]
            .clock
            .store(clock.to_bits(), std::sync::atomic::Ordering::Relaxed);
    }

    /// The CPU clock of the thread that runs `slot`.
    #[cfg_attr(loom, allow(dead_code))] // The monitor thread uses it; loom models leave the monitor out.
    pub(crate) fn clock(&self, slot: usize) -> ThreadClock {
        ThreadClock::from_bits(
            self.covered[slot]
                .clock
                .load(std::sync::atomic::Ordering::Relaxed),
        )
    }

    /// Covers `slot` for `owner` (a stretch's poll sequence number, or
    /// [`BLOCK_IN_PLACE`]) from `at_nanos` (runtime clock), when its thread
    /// had used `cpu_nanos` of CPU: asks for a spare to serve in its place.
    /// Returns `false` if it was covered already. Follow with
    /// [`start_spare`](Self::start_spare).
    #[cfg_attr(loom, allow(dead_code))] // The monitor thread uses it; loom models leave the monitor out.
    pub(crate) fn cover(
        &self,
        slot: usize,
        owner: u64,
        at_nanos: u64,
        cpu_nanos: Option<u64>,
    ) -> bool {
        debug_assert_ne!(owner, UNCOVERED);
        let cover = &self.covered[slot];
        self.note_start(cover, at_nanos, cpu_nanos);
        if cover
            .owner
            .compare_exchange(UNCOVERED, owner, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return false;
        }
        self.add_wanted(true);
        true
    }

    /// `block_in_place`'s cover of its own slot: covers it, or takes over
    /// the monitor's cover if there is one (so the monitor's sweep cannot
    /// end it while the closure blocks). Returns whether this call added a
    /// cover (`false`: it took one over, and no spare needs to start). Either
    /// way the caller ends it with [`uncover`](Self::uncover).
    pub(crate) fn cover_for_block_in_place(
        &self,
        slot: usize,
        at_nanos: u64,
        cpu_nanos: Option<u64>,
    ) -> bool {
        let cover = &self.covered[slot];
        self.note_start(cover, at_nanos, cpu_nanos);
        let previous = cover.owner.swap(BLOCK_IN_PLACE, Ordering::AcqRel);
        if previous == UNCOVERED {
            self.add_wanted(true);
        }
        previous == UNCOVERED
    }

    fn note_start(&self, cover: &SlotCover, at_nanos: u64, cpu_nanos: Option<u64>) {
        use std::sync::atomic::Ordering::Relaxed;
        cover.at_nanos.store(at_nanos, Relaxed);
        cover
            .cpu_at_nanos
            .store(cpu_nanos.unwrap_or(u64::MAX), Relaxed);
    }

    /// F4 of the policy (`policy.rs`): the monitor's cover of a slot whose
    /// stretch it saw running at poll sequence `seen`: covers it, then
    /// checks with `seq_now` that the stretch still runs, and takes the
    /// cover back if it ended meanwhile.
    ///
    /// The slot's thread stores its poll sequence when the poll ends, and
    /// later, if it parks, issues a `SeqCst` fence (in `Idle::wait_for_work`) before
    /// it checks `is_covered` (in its `has_work`). Here the cover's
    /// compare-exchange is followed by a `SeqCst` fence and then the load of
    /// the sequence. Whichever fence comes second sees the other side's
    /// store, so a cover that lands after the poll ended is taken back here,
    /// or seen and ended there: a worker that parks never keeps a cover. (A
    /// worker that goes on to another poll ends the cover when that one
    /// ends.)
    #[cfg_attr(loom, allow(dead_code))] // The monitor thread uses it; loom models leave the monitor out.
    pub(crate) fn cover_running(
        &self,
        slot: usize,
        seen: u64,
        seq_now: impl FnOnce() -> u64,
        at_nanos: u64,
        cpu_nanos: Option<u64>,
    ) -> MonitorCover {
        if !self.cover(slot, seen, at_nanos, cpu_nanos) {
            return MonitorCover::Taken;
        }
        fence(Ordering::SeqCst);
        if seq_now() == seen {
            return MonitorCover::Covered;
        }
        if self.clear(slot, seen) {
            MonitorCover::TakenBack
        } else {
            // The slot's thread ended it (or `block_in_place` took it over).
            MonitorCover::Taken
        }
    }

    /// F7 of the policy (`policy.rs`), the monitor's part: its sweep ends
    /// every cover it holds whose stretch has
    /// ended (`seq_of(slot)` moved on) while the poll goes on, as it does
    /// past a yield point that took `yield_if_busy()`'s fast path. Returns
    /// how many it ended: the caller wakes as many sleeping spares.
    #[cfg_attr(loom, allow(dead_code))] // The monitor thread uses it; loom models leave the monitor out.
    pub(crate) fn end_stale_covers(&self, seq_of: impl Fn(usize) -> u64) -> usize {
        // Relaxed pre-check: a cover this misses is swept at the next sample.
        if self.wanted.load(Ordering::Relaxed) == 0 {
            return 0;
        }
        let mut ended = 0;
        for (slot, cover) in self.covered.iter().enumerate() {
            let owner = cover.owner.load(Ordering::Acquire);
            if owner != UNCOVERED
                && owner != BLOCK_IN_PLACE
                && seq_of(slot) != owner
                && self.clear(slot, owner)
            {
                ended += 1;
            }
        }
        ended
    }

    /// Ends `slot`'s cover if `owner` still holds it.
    #[cfg_attr(loom, allow(dead_code))] // The monitor thread uses it; loom models leave the monitor out.
    fn clear(&self, slot: usize, owner: u64) -> bool {
        let cleared = self.covered[slot]
            .owner
            .compare_exchange(owner, UNCOVERED, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok();
        if cleared {
            self.add_wanted(false);
        }
        cleared
    }

    /// Whether `slot` is covered. Relaxed: a hint for the monitor; and for
    /// a parking worker, which reads it after the park fence that pairs with
    /// the one in [`cover_running`](Self::cover_running).
    pub(crate) fn is_covered(&self, slot: usize) -> bool {
        self.covered[slot].owner.load(Ordering::Relaxed) != UNCOVERED
    }

    /// Ends `slot`'s cover, whoever holds it (the slot's own thread only).
    /// Returns the cover if this call ended it: the caller must then wake a
    /// sleeping spare (`Idle::notify_spare`), which may now be surplus.
    ///
    /// One relaxed load when the slot is not covered: a cover it misses is
    /// ended by the monitor's sweep or at the slot's next park; the swap
    /// (`AcqRel`, pairing with the coverer's) decides and publishes
    /// `at_nanos` and `cpu_at_nanos`.
    #[inline]
    pub(crate) fn uncover(&self, slot: usize) -> Option<CoverEnded> {
        if self.covered[slot].owner.load(Ordering::Relaxed) == UNCOVERED {
            return None;
        }
        self.uncover_slow(slot)
    }

    #[cold]
    fn uncover_slow(&self, slot: usize) -> Option<CoverEnded> {
        use std::sync::atomic::Ordering::Relaxed;
        let cover = &self.covered[slot];
        if cover.owner.swap(UNCOVERED, Ordering::AcqRel) == UNCOVERED {
            return None;
        }
        self.add_wanted(false);
        let cpu = cover.cpu_at_nanos.load(Relaxed);
        Some(CoverEnded {
            at_nanos: cover.at_nanos.load(Relaxed),
            cpu_at_nanos: (cpu != u64::MAX).then_some(cpu),
        })
    }

    /// Counts a cover in or out of `wanted`, under the `spares` lock.
    fn add_wanted(&self, up: bool) {
        let _spares = lock(&self.spares);
        if up {
            self.wanted.fetch_add(1, Ordering::SeqCst);
        } else {
            self.wanted.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Whether fewer spares serve than covered slots ask for, within the
    /// bound (a lock-free hint; [`start_spare`](Self::start_spare) decides).
    /// Relaxed: the monitor asks again at its next sample.
    #[cfg_attr(loom, allow(dead_code))] // The monitor thread uses it; loom models leave the monitor out.
    pub(crate) fn lacks_spares(&self) -> bool {
        self.serving.load(Ordering::Relaxed)
            < self.wanted.load(Ordering::Relaxed).min(self.max_spares)
    }

    /// Whether more spares serve than covered slots ask for (a lock-free
    /// hint; [`try_step_down`](Self::try_step_down) decides). A parking
    /// spare reads it in its `has_work`, after its park fence: both counts
    /// are written with `SeqCst` under the `spares` lock before the writer
    /// takes the sleepers lock, so either it sees the new counts or the
    /// writer finds it among the sleepers (module docs).
    #[inline]
    pub(crate) fn is_surplus(&self) -> bool {
        self.serving.load(Ordering::SeqCst) > self.wanted.load(Ordering::SeqCst)
    }

    /// Covered slots.
    #[cfg(all(test, loom))]
    pub(crate) fn wanted(&self) -> usize {
        self.wanted.load(Ordering::SeqCst)
    }

    /// Spare slots serving now. Relaxed: a statistic, and for
    /// `Shared::active_stealers` a hint (see there).
    pub(crate) fn serving(&self) -> usize {
        self.serving.load(Ordering::Relaxed)
    }
}

#[cfg(not(loom))]
pub(crate) mod decide;
pub(crate) mod spare_slots;
#[cfg(not(loom))]
pub(crate) mod stat_files;

#[cfg(all(test, not(loom)))]
mod tests;

#[cfg(all(test, loom))]
mod loom_models;
