//! The long-poll detector: warns when a task runs too long without
//! returning to the scheduler, naming where it was spawned.
//!
//! Timing every poll would cost two clock reads per poll. Instead each
//! worker publishes what it is polling in a [`PollRecord`] (two plain stores
//! per poll, no clock), and the monitor thread samples every poll record every
//! `threshold / 2` (or every compensation threshold, if that is sooner). A
//! *stretch* (a poll, or the part of a poll between two yield points) seen
//! running across samples spanning at least the threshold is counted and
//! reported at once, while it still runs: a task stuck for good (a deadlock,
//! an endless loop) is reported too. It is reported again past 10× and
//! 100× the threshold, and once more with its total when it ends; its
//! duration is measured to within one sampling interval. The monitor also
//! reads the running stretches to decide on compensation
//! (`runtime/compensation/`).
//!
//! Yield points count because `yield_if_busy()` returns at once while a
//! worker is idle: a loop that calls it after every unit then runs as one
//! long poll, yet delays nobody and would step aside as soon as someone
//! waited. Each such call bumps the record ([`PollRecord::yield_point`]), so
//! only stretches without a yield point are reported.
//!
//! ## Protocol
//! `seq` is odd while a poll runs. The worker stores `location` (an
//! `AtomicCell`: a lock-free `Release` store of the pointer-sized
//! `Option<&'static Location>`), then `seq` (`Release`) at the start of a
//! poll, `seq + 2` at each yield point (still odd: a new stretch of the same
//! poll), and `seq + 1` at its end; the monitor loads `seq` (`Acquire`),
//! then `location` (`Acquire`). A location read just as
//! the next poll starts may belong to that poll; the report is a diagnostic,
//! so that rare mix-up is acceptable.
// Under loom: the detector runs on the monitor thread, which loom models
// leave out (the record itself is modelled).
#![cfg_attr(loom, allow(dead_code))]

use std::collections::HashMap;
use std::panic::Location;
use std::sync::atomic::{AtomicU64, Ordering};

use crossbeam_utils::atomic::AtomicCell;
use std::time::{Duration, Instant};

/// What one worker is polling.
pub(crate) struct PollRecord {
    seq: AtomicU64,
    /// The clock back-off of the worker's amortised idle check
    /// (`Core::recheck_idle`), an epoch gate's (`epoch.rs`), kept beside
    /// `seq` because the fast path already holds this record: fast-path
    /// calls left until the next clock read, the calls between the last
    /// read and the next, and the time of the last read. Only the owning
    /// worker touches them.
    gate_calls_left: AtomicU64,
    gate_stride: AtomicU64,
    gate_last_read_at: AtomicU64,
    location: AtomicCell<Option<&'static Location<'static>>>,
}

impl Default for PollRecord {
    fn default() -> Self {
        PollRecord {
            seq: AtomicU64::new(0),
            gate_calls_left: AtomicU64::new(1),
            gate_stride: AtomicU64::new(1),
            gate_last_read_at: AtomicU64::new(0),
            location: AtomicCell::new(None),
        }
    }
}

impl PollRecord {
    /// A poll of the task spawned at `location` starts (owning worker only).
    pub(crate) fn begin(&self, location: &'static Location<'static>) {
        self.location.store(Some(location));
        self.seq
            .store(self.seq.load(Ordering::Relaxed) + 1, Ordering::Release);
    }

    /// The running task reached a yield point and goes on: a new stretch
    /// begins (owning worker only).
    ///
    /// Relaxed is enough: `location` does not change within a poll, so the
    /// monitor has nothing to see through this store beyond `seq` itself; a
    /// late view of it only makes a stretch look longer by one sample.
    /// Two plain operations, no read-modify-write: only this worker writes.
    #[inline(always)]
    pub(crate) fn yield_point(&self) {
        self.seq
            .store(self.seq.load(Ordering::Relaxed) + 2, Ordering::Relaxed);
    }

    /// [`yield_point`](Self::yield_point) on `yield_if_busy()`'s fast path,
    /// which also counts the call for the worker's amortised idle check:
    /// returns `true` when the clock is due to be read (the gate's aim,
    /// `epoch::calls_until_next_read`), and the caller then reads it and
    /// re-arms the gate with [`gate_read`](Self::gate_read).
    #[inline(always)]
    pub(crate) fn fast_path_point(&self) -> bool {
        self.yield_point();
        // Saturating: a `true` not followed by `gate_read` (a yield point
        // polled outside a task's poll) asks again at the next call.
        let left = self
            .gate_calls_left
            .load(Ordering::Relaxed)
            .saturating_sub(1);
        self.gate_calls_left.store(left, Ordering::Relaxed);
        left == 0
    }

    /// After a clock read of the idle check, at `now`: aims the next read
    /// at the start of the next epoch. Plain loads and stores, no
    /// read-modify-write: only the owning worker touches the gate.
    pub(crate) fn gate_read(&self, now: u64) {
        let last_read_at = self.gate_last_read_at.load(Ordering::Relaxed);
        self.gate_last_read_at.store(now, Ordering::Relaxed);
        let calls = self.gate_stride.load(Ordering::Relaxed);
        let stride = crate::epoch::calls_until_next_read(now, last_read_at, calls);
        self.gate_stride.store(stride, Ordering::Relaxed);
        self.gate_calls_left.store(stride, Ordering::Relaxed);
    }

    /// The poll ended (owning worker only).
    pub(crate) fn end(&self) {
        self.seq
            .store(self.seq.load(Ordering::Relaxed) + 1, Ordering::Release);
    }

    /// Where the task last polled was spawned, if a poll ever ran.
    fn location(&self) -> Option<&'static Location<'static>> {
        self.location.load()
    }

    /// The sequence number: odd while a stretch runs, changed by every
    /// stretch that begins or ends.
    pub(crate) fn seq(&self) -> u64 {
        self.seq.load(Ordering::Acquire)
    }

    /// Flips the running poll between "in a stretch" and "ended" without
    /// changing `location` (owning worker only): `block_in_place` flips it
    /// on entry, so the poll looks ended to the monitor while it blocks (a
    /// declared blocking is not a long poll), and again on leaving, when a
    /// new stretch of the same poll begins. The same step as [`end`](Self::end).
    pub(crate) fn flip(&self) {
        self.end();
    }
}

/// What the monitor saw of one slot at its last check.
#[derive(Clone, Copy)]
struct Observation {
    seq: u64,
    first_seen: Instant,
    location: Option<&'static Location<'static>>,
    /// How far the stretch's reports got: 0 none yet, 1 past the threshold,
    /// 2 past ten times it, 3 past a hundred times it.
    level: u8,
    /// Whether this stretch was warned about (first reports are limited
    /// per spawn location; the follow-ups of an unwarned stretch are
    /// skipped too).
    warned: bool,
}

/// A stretch seen running at the last check.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Running {
    /// The worker slot running it.
    pub(crate) slot: usize,
    /// How long it has run, as seen (at least this long, at most one
    /// sampling interval more).
    pub(crate) ran_for: Duration,
    /// Where its task was spawned.
    pub(crate) location: &'static Location<'static>,
    /// Its poll sequence number (see [`PollRecord::seq`]).
    pub(crate) seq: u64,
}

/// The monitor thread's side: what it saw last time, and when it last
/// warned about each spawn location.
///
/// A stretch past the threshold is reported while it still runs: once at
/// the threshold (and counted then, once), again past ten and a hundred
/// times the threshold, and a last time, with its total, when it ends.
pub(crate) struct LongPollDetector {
    /// The reporting threshold; `None` when only compensation needs the
    /// samples (nothing is reported or counted).
    threshold: Option<Duration>,
    interval: Duration,
    observed: Vec<Observation>,
    last_warned: HashMap<usize, Instant>,
    running: Vec<Running>,
}

/// How often one spawn location may be warned about.
const WARN_EVERY: Duration = Duration::from_secs(1);

impl LongPollDetector {
    /// A detector for `num_slots` worker slots that reports stretches past
    /// `threshold` (if any) and samples every `interval`.
    pub(crate) fn new(threshold: Option<Duration>, interval: Duration, num_slots: usize) -> Self {
        let now = Instant::now();
        LongPollDetector {
            threshold,
            interval,
            observed: vec![
                Observation {
                    seq: 0,
                    first_seen: now,
                    location: None,
                    level: 0,
                    warned: false,
                };
                num_slots
            ],
            last_warned: HashMap::new(),
            running: Vec::with_capacity(num_slots),
        }
    }

    /// How often [`check`](Self::check) should run.
    pub(crate) fn interval(&self) -> Duration {
        self.interval
    }

    /// The stretches seen running at the last check, oldest first (those
    /// that began at that check are not listed).
    pub(crate) fn running(&self) -> &[Running] {
        &self.running
    }

    /// Samples every slot's poll record and reports as the type says. Returns how
    /// many stretches passed the threshold since the last check.
    pub(crate) fn check<'a>(
        &mut self,
        records: impl Iterator<Item = &'a PollRecord>,
        now: Instant,
    ) -> u64 {
        let mut detected = 0;
        self.running.clear();
        for (slot, record) in records.enumerate() {
            let seq = record.seq.load(Ordering::Acquire);
            let observed = self.observed[slot];
            let ran_for = now.saturating_duration_since(observed.first_seen);
            if seq == observed.seq {
                if seq % 2 == 1
                    && let Some(location) = observed.location
                {
                    self.running.push(Running {
                        slot,
                        ran_for,
                        location,
                        seq,
                    });
                    detected += u64::from(self.still_running(slot, ran_for, location, now));
                }
                continue;
            }
            if observed.level > 0
                && observed.warned
                && let Some(location) = observed.location
            {
                warn_ended(slot, location, ran_for);
            }
            self.observed[slot] = Observation {
                seq,
                first_seen: now,
                location: record.location(),
                level: 0,
                warned: false,
            };
        }
        self.running
            .sort_by_key(|stretch| std::cmp::Reverse(stretch.ran_for));
        detected
    }

    /// Reports a stretch that is still running, if it passed its next
    /// level. Returns whether it just passed the threshold.
    fn still_running(
        &mut self,
        slot: usize,
        ran_for: Duration,
        location: &'static Location<'static>,
        now: Instant,
    ) -> bool {
        let Some(threshold) = self.threshold else {
            return false;
        };
        let observed = &mut self.observed[slot];
        let level = match ran_for {
            d if d >= threshold * 100 => 3,
            d if d >= threshold * 10 => 2,
            d if d >= threshold => 1,
            _ => 0,
        };
        if level <= observed.level {
            return false;
        }
        let first = observed.level == 0;
        observed.level = level;
        if first {
            let last = self
                .last_warned
                .entry(location as *const Location<'static> as usize)
                .or_insert(now - WARN_EVERY);
            if now.saturating_duration_since(*last) >= WARN_EVERY {
                *last = now;
                observed.warned = true;
            }
        }
        if observed.warned {
            tracing::warn!(
                target: "brigade::long_poll",
                worker = slot,
                spawned_at = %location,
                duration_ms = ran_for.as_millis() as u64,
                running = true,
                "a task spawned at {location} has been running for {ran_for:.0?} without returning \
                 to the scheduler or reaching a yield point, and still is; add \
                 `brigade::yield_if_busy().await` between its units of work, or move blocking \
                 calls to `brigade::spawn_blocking`"
            );
        }
        first
    }
}

fn warn_ended(slot: usize, location: &Location<'static>, ran_for: Duration) {
    tracing::warn!(
        target: "brigade::long_poll",
        worker = slot,
        spawned_at = %location,
        duration_ms = ran_for.as_millis() as u64,
        running = false,
        "a long poll of a task spawned at {location} ended after about {ran_for:.0?}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_location_cell_is_a_plain_atomic_word() {
        // `begin` runs at every poll: the cell must be lock-free (one store).
        assert!(AtomicCell::<Option<&'static Location<'static>>>::is_lock_free());
        let record = PollRecord::default();
        assert!(record.location().is_none());
        let here = Location::caller();
        record.begin(here);
        assert_eq!(record.location(), Some(here));
        assert_eq!(record.seq() % 2, 1, "a stretch runs");
        record.end();
        assert_eq!(record.seq() % 2, 0);
    }

    // Under loom the gate reads the clock at every call.
    #[cfg(not(loom))]
    #[test]
    fn the_fast_path_reads_the_clock_where_each_epoch_begins() {
        use crate::epoch::{epoch_of, epoch_start};
        // A yield point every 10 µs (three an epoch): after the first
        // reads have measured the rate, every epoch is seen at its first
        // call (the clock read at the call after each epoch begins), and
        // the clock is read about once per epoch.
        let record = PollRecord::default();
        let per_call = 10_000;
        let (mut reads, mut sightings) = (0, Vec::new());
        let mut last_epoch = u64::MAX;
        for call in 1..=3_000u64 {
            let now = 1_000_000 + call * per_call;
            if record.fast_path_point() {
                record.gate_read(now);
                reads += 1;
                if epoch_of(now) != last_epoch {
                    last_epoch = epoch_of(now);
                    sightings.push(now);
                }
            }
        }
        let epochs = epoch_of(sightings[sightings.len() - 1]) - epoch_of(sightings[0]) + 1;
        assert_eq!(sightings.len() as u64, epochs, "an epoch went unseen");
        for at in &sightings[2..] {
            assert!(at - epoch_start(epoch_of(*at)) <= per_call);
        }
        assert!(
            reads <= epochs + epochs / 4,
            "{reads} reads, {epochs} epochs"
        );
    }
}
