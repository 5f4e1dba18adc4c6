//! The driver: the layer below the scheduler that turns I/O readiness,
//! timers and signals into task wake-ups, and the parker a worker sleeps
//! on.
//!
//! ## What it owns
//! - [`Driver`] (`poll/mod.rs`): one runtime's `mio::Poll` and event buffer
//!   behind the driver lock, its timers, its signal listener, and the
//!   optional fallback thread. Under `--cfg loom` it is the model driver of
//!   `model_driver.rs` instead: the same lock and wake-up structure, with no I/O and
//!   no timers. Both share [`EVENT_INTERVAL`](crate::policy::EVENT_INTERVAL) and [`PollPark`].
//! - The reactor (`reactor.rs`): source registration, the `mio::Waker`, and
//!   event dispatch to each source's readiness cell (`scheduled_io.rs`).
//! - The timers (`timers.rs`): a hierarchical timing wheel (`wheel.rs`) under
//!   a mutex, advanced by whoever polls.
//! - The signal listener (`signal.rs`, Unix): one socket per runtime,
//!   registered with the reactor, fed by signal-hook-registry's handlers.
//! - The [`Parker`] (`park.rs`): how one worker sleeps, on its condvar or
//!   inside the poll.
//! - The clock (`clock.rs`): the time timers follow, which tests may pause,
//!   and the holds that stop a paused clock's auto-advance.
//!
//! The resources users see stay in `io/`, `time/`, `signal/` and `net/`;
//! they reach the current runtime's driver only through
//! `runtime::context::current_driver()`.
//!
//! ## Who polls when
//! The `mio::Poll` sits behind one lock; whoever holds it polls.
//! - A worker with nothing to do **parks in the driver** if no other worker
//!   does ([`Driver::park_in_poll`]): it *watches* the poll, waiting in
//!   `poll(2)` until the epoll descriptor is readable (events pending), the
//!   nearest timer is due, or it is unparked (a byte on the driver's wake
//!   pipe), without holding the lock; then it takes the lock and harvests
//!   without blocking. Other idle workers sleep on their own condvar.
//! - **Busy workers** poll without blocking, if the lock is free and no
//!   worker watches, every [`EVENT_INTERVAL`](crate::policy::EVENT_INTERVAL) ticks, in `yield_if_busy()`'s
//!   once-per-epoch check, and before taking a task from the yield queue.
//!   While a worker watches, the same checks ask instead whether it serves
//!   (`poll/mod.rs`, "the crowded-host hand-off"): a busy worker harvests
//!   pending work when it stayed unharvested at checks
//!   `UNSERVED_EPOCHS` epochs apart (C1 of the policy).
//! - The optional **fallback thread** covers the gap when every worker is
//!   busy: whenever no worker is parked in the poll, it waits in `poll(2)` on
//!   the epoll descriptor itself (readable while events are pending; it does
//!   not hold the lock while waiting), with the nearest timer as timeout.
//!   When it wakes it takes the lock and polls without blocking, so readiness
//!   and timers are noticed at once and the woken tasks land in the injector,
//!   where busy tasks see them at their next `yield_if_busy()`.
//!
//! ## Invariants
//! - One lock: only the holder of the driver lock polls I/O and fires due
//!   timers, and every poll under it is non-blocking, so two threads never
//!   harvest at once and nobody holds the lock while it waits. At most one
//!   worker watches at a time (`worker_in_poll`).
//! - A worker watches only between `Parker::begin_driver_park` and
//!   `end_driver_park`, so an unpark in between writes the wake pipe instead
//!   of signalling the condvar, and an unpark that came first cancels the
//!   park. Only the watcher reads the wake pipe, and the pipe is outside the
//!   epoll set, so no harvest consumes an unpark.
//! - The fallback thread waits for events without the lock (it takes the
//!   lock only for a non-blocking poll), and does not wait at all while a
//!   worker is parked in the poll, so an idle runtime does not wake two
//!   threads per event.

use std::cell::Cell;
use std::time::Duration;

use crate::sync::{AtomicBool, AtomicU64, AtomicUsize, Mutex, Ordering, lock};

pub(crate) mod clock;
#[cfg(loom)]
mod model_driver;
pub(crate) mod park;
#[cfg(not(loom))]
mod poll;
#[cfg(not(loom))]
pub(crate) mod reactor;
#[cfg(not(loom))]
pub(crate) mod scheduled_io;
#[cfg(all(unix, not(loom)))]
pub(crate) mod signal;
#[cfg(not(loom))]
pub(crate) mod timers;
#[cfg(not(loom))]
pub(crate) mod wheel;

#[cfg(loom)]
pub(crate) use model_driver::Driver;
pub(crate) use park::Parker;

#[cfg(not(loom))]
pub(crate) use poll::Driver;
#[cfg(all(test, not(loom)))]
pub(crate) use poll::test_hooks;

/// What [`Driver::park_in_poll`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PollPark {
    /// The worker watched the poll and harvested it (or did not need to
    /// wait).
    Parked,
    /// Another worker watches the poll: sleep on the condvar.
    Occupied,
}

/// Who watches the poll: at most one worker at a time (`poll/mod.rs`, "the
/// crowded-host hand-off"). Shared by the real and the loom driver.
///
/// `claimed` is set and cleared under its mutex, with the parker's
/// `begin_driver_park` in the same critical section, so an unpark either
/// comes first (the claim is refused) or finds the worker in the driver;
/// the fallback thread waits on its own condvar under the same mutex.
/// `watched` mirrors it for lock-free readers (busy workers' polls, the
/// fast path's checks): a hint, where a stale read costs one poll more or
/// less.
#[derive(Default)]
pub(crate) struct Watch {
    claimed: Mutex<bool>,
    watched: AtomicBool,
}

impl Watch {
    /// Claims the watch for a worker about to park in the driver. Else
    /// says what `park_in_poll` returns instead: [`PollPark::Occupied`] if
    /// another worker watches, [`PollPark::Parked`] if `parker` was already
    /// notified (the worker must not wait).
    pub(crate) fn claim(&self, parker: &Parker) -> Result<(), PollPark> {
        let mut claimed = lock(&self.claimed);
        if *claimed {
            return Err(PollPark::Occupied);
        }
        if !parker.begin_driver_park() {
            return Err(PollPark::Parked);
        }
        *claimed = true;
        self.watched.store(true, Ordering::Relaxed);
        Ok(())
    }

    /// [`claim`](Self::claim) for `worker`, which first ends `relief` if
    /// it granted it ([`Relief::end_if_server`]), and then calls
    /// `unpark_watcher` if the watch is held by another worker (the
    /// relieved watcher). Ended before the claim: a watcher that claims
    /// after this attempt reads the relief after the end (this mutex orders
    /// them), and one that claimed before it is unparked.
    pub(crate) fn claim_ending_relief(
        &self,
        parker: &Parker,
        relief: &Relief,
        worker: usize,
        unpark_watcher: impl FnOnce(),
    ) -> Result<(), PollPark> {
        let ended_relief = relief.end_if_server(worker);
        let claimed = self.claim(parker);
        if ended_relief && claimed == Err(PollPark::Occupied) {
            unpark_watcher();
        }
        claimed
    }

    /// Gives the watch back (its holder only).
    pub(crate) fn release(&self) {
        let mut claimed = lock(&self.claimed);
        *claimed = false;
        self.watched.store(false, Ordering::Relaxed);
    }

    /// Whether a worker watches (lock-free; a hint).
    pub(crate) fn is_watched(&self) -> bool {
        self.watched.load(Ordering::Relaxed)
    }

    /// Whether a worker watches, read under the mutex.
    #[cfg_attr(loom, allow(dead_code))] // The monitor uses it; loom models leave it out.
    pub(crate) fn is_claimed(&self) -> bool {
        *lock(&self.claimed)
    }

    /// The mutex, for the fallback thread's wait (`poll/mod.rs`).
    #[cfg_attr(loom, allow(dead_code))]
    pub(crate) fn claimed(&self) -> &Mutex<bool> {
        &self.claimed
    }
}

/// C1 of the policy (`policy.rs`): the crowded host's constants.
pub(crate) use crate::policy::{MAX_QUIET_SHIFT, RELIEF_NANOS, UNSERVED_EPOCHS};

/// The watcher's relief: a busy worker that served the poll for a watcher
/// that the kernel does not run (a crowded host) goes on serving it, at
/// every epoch and at the first sighting, until the relief ends. It ends
/// [`RELIEF_NANOS`] after it was granted: by default 0, so the watcher's
/// next wait finds it over, clears it and watches the epoll descriptor
/// again; the relief lasts until the kernel runs the watcher. A longer one
/// (tests set one) also takes the watcher off the descriptor meanwhile: it
/// waits only for an unpark (its wake pipe) or its timer, so the kernel
/// stops waking it for events that the busy worker harvests anyway.
/// docs/decisions.md#later-handoff has the figures of both.
///
/// `until` is the end of the relief, in the driver's own nanoseconds
/// (`0`: none). The protocol:
/// - A busy worker **grants** it ([`Relief::grant`]) each time its check
///   harvests work that the watcher left unserved; while it is granted the
///   busy worker checks every epoch, without the probe's back-off.
/// - The watcher reads it when it starts a wait: while granted and not
///   over, it waits on the wake pipe only, with the relief's end as its
///   timeout at the latest. Once over, the watcher clears it and watches the
///   epoll descriptor again.
/// - The busy worker that granted it last (`server`) **ends** it when it
///   goes to sleep ([`Relief::end_if_server`]), before it tries to claim
///   the watch, and unparks the watcher if that claim finds one: nobody
///   else serves the poll. A watcher that claims after that attempt reads
///   the relief after the end (the watch's mutex orders the two), so it
///   watches the descriptor; one that claimed before it, and may have read
///   the relief as granted, finds the pipe's byte when it waits.
/// - So the poll is never unwatched by everyone for longer than
///   [`RELIEF_NANOS`] (by default not at all: the watcher watches the
///   descriptor at every wait): a busy worker that stops serving without
///   parking (a poll without yield points) leaves it to the watcher at the
///   relief's end.
///
/// Relaxed throughout: the value orders nothing; a stale read costs one
/// wait on the descriptor more (the watcher) or one epoch's check fewer
/// (the busy worker), and the pipe's byte is what closes the race above.
#[derive(Default)]
pub(crate) struct Relief {
    until: AtomicU64,
    /// The worker that granted it last: the one that serves the poll.
    server: AtomicUsize,
}

impl Relief {
    /// A busy worker served the poll at `now`: relieve the watcher until
    /// `now + length` ([`RELIEF_NANOS`]; tests lengthen it).
    /// `server` is the busy worker's index.
    pub(crate) fn grant(&self, now: u64, length: u64, server: usize) {
        self.server.store(server, Ordering::Relaxed);
        self.until
            .store(now.saturating_add(length).max(1), Ordering::Relaxed);
    }

    /// Whether a relief is granted (it may be over: no clock read).
    pub(crate) fn is_granted(&self) -> bool {
        self.until.load(Ordering::Relaxed) != 0
    }

    /// The watcher's read at `now`: how long it stays relieved, or `None`
    /// (it clears a relief that is over).
    pub(crate) fn remaining(&self, now: u64) -> Option<u64> {
        let until = self.until.load(Ordering::Relaxed);
        if until == 0 {
            return None;
        }
        if now >= until {
            // A busy worker may grant a new one meanwhile: keep that.
            let _ = self
                .until
                .compare_exchange(until, 0, Ordering::Relaxed, Ordering::Relaxed);
            return None;
        }
        Some(until - now)
    }

    /// Ends the relief if `worker` granted it: whether one was granted
    /// (the caller then unparks the watcher).
    pub(crate) fn end_if_server(&self, worker: usize) -> bool {
        self.until.load(Ordering::Relaxed) != 0
            && self.server.load(Ordering::Relaxed) == worker
            && self.until.swap(0, Ordering::Relaxed) != 0
    }
}

/// What a busy worker saw at its previous check that the watching worker
/// serves (`Driver::harvest_if_unserved`; "the crowded-host hand-off" in
/// `poll/mod.rs`). Only that worker's thread touches it.
#[derive(Default)]
pub(crate) struct UnservedProbe {
    /// The first epoch in which to check again.
    next_epoch: Cell<u64>,
    /// The harvest count seen at the previous check.
    harvests: Cell<u64>,
    /// log2 of the epochs between checks while nothing is pending.
    quiet: Cell<u32>,
    /// The epoch of the first check that found work pending with nobody
    /// harvesting since, while that lasts.
    pending_since: Cell<Option<u64>>,
}

impl UnservedProbe {
    /// The check at `epoch`, given the driver's harvest count now and a
    /// look at whether work is pending (taken only when needed): `true`
    /// when work has been pending, with nobody harvesting, at checks
    /// [`UNSERVED_EPOCHS`] epochs apart. A watcher that the kernel runs
    /// harvests within microseconds of being woken, so a poll left
    /// unharvested that long is one whose watcher has not run.
    ///
    /// The first sighting alone is not enough: the work it sees may have
    /// arrived a microsecond ago, for a watcher the kernel is about to run.
    /// Serving on the first sighting took work from healthy watchers often
    /// enough to give the snapshot's worker in `kv` the requests as well,
    /// and the snapshot the CPU they cost (docs/decisions.md#second-sighting;
    /// why the wait is [`UNSERVED_EPOCHS`] long is on the constant). While
    /// `relieving` (this runtime's watcher has not run since a busy worker
    /// served for it, [`Relief`]) it serves at the first sighting, and
    /// looks every epoch, without backing off.
    ///
    /// While nothing is pending it looks again after 1, 2, 4, then every 8
    /// epochs, so an idle host's busy worker pays about one look per 8
    /// epochs; a harvest by anyone else (a watcher that serves) costs it no
    /// look at all.
    pub(crate) fn should_harvest(
        &self,
        epoch: u64,
        harvests: u64,
        relieving: bool,
        pending: impl FnOnce() -> bool,
    ) -> bool {
        if epoch < self.next_epoch.get() {
            return false; // checked in this epoch already, or backing off
        }
        self.next_epoch.set(epoch + 1);
        if self.harvests.replace(harvests) != harvests {
            // Someone harvested since the previous check: served.
            self.quiet.set(0);
            self.pending_since.set(None);
            return false;
        }
        if pending() {
            self.quiet.set(0);
            let since = self.pending_since.get().unwrap_or(epoch);
            self.pending_since.set(Some(since));
            return relieving || epoch >= since + UNSERVED_EPOCHS;
        }
        self.pending_since.set(None);
        if relieving {
            return false;
        }
        let quiet = (self.quiet.get() + 1).min(MAX_QUIET_SHIFT);
        self.quiet.set(quiet);
        self.next_epoch.set(epoch + (1 << quiet));
        false
    }

    /// This worker harvested; `harvests` is the count after it.
    pub(crate) fn harvested(&self, harvests: u64) {
        self.harvests.set(harvests);
        self.pending_since.set(None);
    }
}

/// The sooner of two optional timeouts (`None`: no timeout).
pub(crate) fn earliest(a: Option<Duration>, b: Option<Duration>) -> Option<Duration> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::{RELIEF_NANOS, Relief, UNSERVED_EPOCHS, UnservedProbe};

    #[test]
    fn harvests_work_left_pending_for_unserved_epochs_with_nobody_harvesting() {
        let probe = UnservedProbe::default();
        // First look: someone harvested since time zero (count 1 != 0).
        assert!(!probe.should_harvest(1, 1, false, || panic!("no look needed")));
        // Pending, nobody harvested: first sighting, which may be fresh.
        assert!(!probe.should_harvest(2, 1, false, || true));
        assert!(!probe.should_harvest(3, 1, false, || true));
        // Still pending UNSERVED_EPOCHS later: serve it.
        let served = 2 + UNSERVED_EPOCHS;
        assert!(probe.should_harvest(served, 1, false, || true));
        probe.harvested(2);
        // Someone else harvested meanwhile: the watcher serves.
        assert!(!probe.should_harvest(served + 1, 3, false, || panic!("no look needed")));
        // A harvest in between starts the count again.
        assert!(!probe.should_harvest(served + 2, 3, false, || true));
        assert!(!probe.should_harvest(served + 3, 4, false, || panic!("no look needed")));
        let seen = served + 4;
        assert!(!probe.should_harvest(seen, 4, false, || true));
        // Once per epoch at most.
        assert!(!probe.should_harvest(seen, 4, false, || panic!("checked in this epoch")));
        // Not before UNSERVED_EPOCHS have passed.
        assert!(!probe.should_harvest(seen + UNSERVED_EPOCHS - 1, 4, false, || true));
        assert!(probe.should_harvest(seen + UNSERVED_EPOCHS, 4, false, || true));
    }

    #[test]
    fn serves_at_the_first_sighting_while_relieving_the_watcher() {
        let probe = UnservedProbe::default();
        assert!(!probe.should_harvest(1, 1, true, || panic!("no look needed")));
        assert!(probe.should_harvest(2, 1, true, || true));
    }

    #[test]
    fn backs_off_to_every_eighth_epoch_while_nothing_is_pending() {
        let probe = UnservedProbe::default();
        let mut looked_at = Vec::new();
        for epoch in 1..=40 {
            probe.should_harvest(epoch, 0, false, || {
                looked_at.push(epoch);
                false
            });
        }
        assert_eq!(looked_at, [1, 3, 7, 15, 23, 31, 39]);
    }

    #[test]
    fn looks_every_epoch_while_relieving_the_watcher() {
        let probe = UnservedProbe::default();
        let mut looked_at = Vec::new();
        for epoch in 1..=5 {
            probe.should_harvest(epoch, 0, true, || {
                looked_at.push(epoch);
                false
            });
        }
        assert_eq!(looked_at, [1, 2, 3, 4, 5]);
    }

    #[test]
    fn a_relief_lasts_until_its_end_or_until_ended() {
        const LENGTH: u64 = 1_000; // as tests lengthen it
        let relief = Relief::default();
        assert_eq!(relief.remaining(10), None);
        relief.grant(10, LENGTH, 1);
        assert!(relief.is_granted());
        assert_eq!(relief.remaining(10), Some(LENGTH));
        // Over: the watcher's read clears it.
        assert_eq!(relief.remaining(10 + LENGTH), None);
        assert!(!relief.is_granted());
        relief.grant(20, LENGTH, 1);
        assert!(!relief.end_if_server(0), "only its server ends it");
        assert!(relief.end_if_server(1), "ended while granted");
        assert!(!relief.end_if_server(1), "nothing left to end");
        assert_eq!(relief.remaining(20), None);
    }

    #[test]
    fn the_default_relief_lasts_until_the_watchers_next_wait() {
        let relief = Relief::default();
        relief.grant(10, RELIEF_NANOS, 1);
        // Busy workers serve at every epoch meanwhile.
        assert!(relief.is_granted());
        // The watcher's next wait, however soon, finds it over and watches
        // the descriptor.
        assert_eq!(relief.remaining(10), None);
        assert!(!relief.is_granted());
    }
}
