//! The long-poll detector: warns when a task runs too long without
//! returning to the scheduler, naming where it was spawned.
//!
//! Timing every poll would cost two clock reads per poll. Instead each
//! worker publishes what it is polling in a [`PollWatch`] (two plain stores
//! per poll, no clock), and the monitor thread samples every watch every
//! `threshold / 2`. A *stretch* (a poll, or the part of a poll between two
//! yield points) seen running across samples spanning at least the
//! threshold is reported when it ends, with its duration measured to within
//! one sampling interval.
//!
//! Yield points count because `yield_if_busy()` returns at once while a
//! worker is idle: a loop that calls it after every unit then runs as one
//! long poll, yet delays nobody and would step aside as soon as someone
//! waited. Each such call bumps the watch ([`PollWatch::yield_point`]), so
//! only stretches without a yield point are reported.
//!
//! ## Protocol
//! `seq` is odd while a poll runs. The worker stores `location`, then `seq`
//! (`Release`) at the start of a poll, `seq + 2` at each yield point (still
//! odd: a new stretch of the same poll), and `seq + 1` at its end; the
//! monitor loads `seq` (`Acquire`), then `location`. A location read just as
//! the next poll starts may belong to that poll; the report is a diagnostic,
//! so that rare mix-up is acceptable.

use std::collections::HashMap;
use std::panic::Location;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// What one worker is polling.
pub(crate) struct PollWatch {
    seq: AtomicU64,
    location: AtomicPtr<Location<'static>>,
}

impl Default for PollWatch {
    fn default() -> Self {
        PollWatch {
            seq: AtomicU64::new(0),
            location: AtomicPtr::new(std::ptr::null_mut()),
        }
    }
}

impl PollWatch {
    /// A poll of the task spawned at `location` starts (owning worker only).
    pub(crate) fn begin(&self, location: &'static Location<'static>) {
        self.location.store(
            (location as *const Location<'static>).cast_mut(),
            Ordering::Relaxed,
        );
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

    /// The poll ended (owning worker only).
    pub(crate) fn end(&self) {
        self.seq
            .store(self.seq.load(Ordering::Relaxed) + 1, Ordering::Release);
    }
}

#[derive(Clone, Copy)]
struct Observation {
    seq: u64,
    first_seen: Instant,
    location: *const Location<'static>,
}

/// The monitor thread's side: what it saw last time, and when it last
/// warned about each spawn location.
pub(crate) struct LongPollDetector {
    threshold: Duration,
    observed: Vec<Observation>,
    last_warned: HashMap<usize, Instant>,
}

// SAFETY: the raw pointers are `&'static Location`s, shareable anywhere.
unsafe impl Send for LongPollDetector {}

/// How often one spawn location may be warned about.
const WARN_EVERY: Duration = Duration::from_secs(1);

impl LongPollDetector {
    pub(crate) fn new(threshold: Duration, num_workers: usize) -> Self {
        let now = Instant::now();
        LongPollDetector {
            threshold,
            observed: vec![
                Observation {
                    seq: 0,
                    first_seen: now,
                    location: std::ptr::null(),
                };
                num_workers
            ],
            last_warned: HashMap::new(),
        }
    }

    /// How often [`check`](Self::check) should run.
    pub(crate) fn interval(&self) -> Duration {
        self.threshold / 2
    }

    /// Samples every worker's watch; returns how many long polls ended since
    /// the last check (each warned about unless its location was warned
    /// about less than a second ago).
    pub(crate) fn check<'a>(
        &mut self,
        watches: impl Iterator<Item = &'a PollWatch>,
        now: Instant,
    ) -> u64 {
        let mut ended = 0;
        for (worker, (watch, observed)) in watches.zip(self.observed.iter_mut()).enumerate() {
            let seq = watch.seq.load(Ordering::Acquire);
            if seq == observed.seq {
                continue;
            }
            let previous = *observed;
            *observed = Observation {
                seq,
                first_seen: now,
                location: watch.location.load(Ordering::Relaxed),
            };
            let ran_for = now.saturating_duration_since(previous.first_seen);
            if previous.seq % 2 == 1 && ran_for >= self.threshold && !previous.location.is_null() {
                ended += 1;
                // SAFETY: non-null locations in a watch are `&'static Location`s.
                let location = unsafe { &*previous.location };
                let last = self
                    .last_warned
                    .entry(previous.location as usize)
                    .or_insert(now - WARN_EVERY);
                if now.saturating_duration_since(*last) >= WARN_EVERY {
                    *last = now;
                    tracing::warn!(
                        target: "brigade::long_poll",
                        worker,
                        spawned_at = %location,
                        duration_ms = ran_for.as_millis() as u64,
                        "a task spawned at {location} ran for about {ran_for:.0?} without returning to the \
                         scheduler or reaching a yield point; add `brigade::yield_if_busy().await` \
                         between its units of work"
                    );
                }
            }
        }
        ended
    }
}
