//! The real driver: `mio` readiness, the timer wheel and the signal
//! listener behind one poll lock, and the optional fallback thread. Who
//! polls when is in the module docs of `driver/mod.rs`.
//!
//! ## Watching without holding the poll: the crowded-host hand-off
//! A worker that watches is counted idle, so `yield_if_busy()` trusts it to
//! serve what arrives. On a host whose CPUs are all taken (clients on the
//! same machine, a CPU limit, neighbours) the kernel wakes it but runs it
//! late, up to a scheduler tick, while the busy worker that trusted it runs
//! on. Because the watcher does not hold the lock while it waits, a busy
//! worker can serve the work itself: at its amortised checks (once per
//! epoch at most) it asks [`Driver::harvest_if_unserved`], which harvests
//! only if events or a due timer have been pending, with nobody
//! harvesting, at its checks `UNSERVED_EPOCHS` epochs apart (about half a
//! millisecond; at the first sighting while it relieves the watcher,
//! below): a watcher that the kernel runs harvests within microseconds of
//! an event, so a poll left unharvested that long while work is pending is
//! one whose watcher has not run. (A watcher that is about to run may
//! still lose a race to the busy worker; either serves the work, and the
//! busy worker only sooner.)
//!
//! The protocol, and why nothing is lost or run twice:
//! - Harvesting (`epoll_wait`, then dispatching readiness and due timers)
//!   happens only under the `poll` lock, so two threads never own the poll
//!   at once. Edge-triggered readiness is reported to one `epoll_wait`
//!   only, and a task woken twice is scheduled once (`async-task`'s state),
//!   so whoever harvests first serves an event and the other finds nothing.
//! - Waiting needs no lock: `poll(2)` on the epoll descriptor consumes
//!   nothing. A watcher woken for events that a busy worker harvested in
//!   the meantime takes the lock, finds nothing, and its worker searches
//!   and parks again, as after any spurious wake-up.
//! - An unpark of the watcher writes to the wake pipe, which is not in the
//!   epoll set, so no harvester can consume it: the watcher's `poll(2)`
//!   returns at once if the byte is there before it waits. Only the watcher
//!   reads the pipe, after it wakes (a byte left by an unpark that came late
//!   costs its next watch one spurious wake-up).
//! - `harvests` counts every harvest; a busy worker compares it with what it
//!   saw at its previous check, so a watcher that keeps serving (a quiet
//!   host under load) costs the busy worker no syscall and is not
//!   second-guessed. A due timer counts as pending only once the watcher's
//!   own wait should have ended (`watch_deadline`).
//!
//! ## Relief: the busy worker serves until the watcher runs
//! Once a busy worker has served the poll for the watcher, the host is
//! crowded, and more events are likely to find the watcher still waiting
//! for a core. So the busy worker's harvest grants the watcher a *relief*
//! (`Relief` in `driver/mod.rs`, which has the protocol): while it lasts,
//! busy workers look every epoch and serve at the first sighting. It lasts
//! until the watcher's next wait begins (its length past the grant,
//! `RELIEF_NANOS`, is 0), so the watcher, once the kernel runs it,
//! watches the epoll descriptor again and takes the I/O back, with the CPU
//! it costs. (A longer relief, with the watcher waiting for an unpark or
//! its timer only, kept the busy worker serving the requests, and its
//! background task without the CPU, long after the watcher could have
//! served: docs/decisions.md#later-handoff. Tests still lengthen it, `test_hooks.rs`.) A worker
//! that goes to sleep ends the relief and unparks the watcher, so the poll
//! is watched again as soon as nobody busy serves it.
//!
//! ## Fallback coordination
//! The watch's mutex (`Watch::claimed`) holds `true` while a worker watches the
//! poll; the fallback thread waits on `fallback_cv` while it is set, so
//! an idle runtime does not wake two threads per event. A worker clears it
//! and signals when it leaves the poll.

use std::io;
use std::sync::Arc;
// Picks the epoch poller; no protocol depends on it (see `poll_for_epoch`).
use std::sync::atomic::AtomicU64;
use std::thread;
use std::time::{Duration, Instant};

use super::clock::Clock;
use super::park::Parker;
use super::reactor::{PollState, Reactor};
#[cfg(unix)]
use super::signal::{Listener, RuntimeSignals};
use super::timers::Timers;
use super::{PollPark, Relief, UnservedProbe, Watch, earliest};
use crate::sync::{AtomicBool, Condvar, Mutex, Ordering, lock, wait};
use wait::{WakePipe, Woken, is_readable_now, timeout_millis, wait_readable};

/// I/O, timers and signals of one runtime.
///
/// `poll` is the one driver lock: whoever holds it polls the `mio::Poll`
/// and fires due timers (see the module docs of `driver/mod.rs` for who
/// takes it when). The watch (`Watch`) is claimed, under its own mutex, only by the
/// worker that watches the poll (it does not hold `poll` while it waits);
/// see "Fallback coordination" above.
pub(crate) struct Driver {
    pub(crate) reactor: Reactor,
    pub(crate) timers: Timers,
    poll: Mutex<PollState>,
    /// Who watches the poll (see the module docs).
    watch: Watch,
    /// Harvests so far (statistics-style: compared, never waited on).
    harvests: AtomicU64,
    /// Whether busy workers serve the poll for the watcher (`Relief`).
    relief: Relief,
    /// When the watcher's wait times out at the latest (nanoseconds since
    /// `started`; `u64::MAX`: no timeout; 0: nobody watches). A due timer is
    /// unserved only once this has passed: the watcher's timeout is rounded
    /// up to a millisecond, so a busy worker would otherwise fire timers
    /// that the watcher is about to fire. A hint, like `watched`.
    watch_deadline: AtomicU64,
    /// Time zero of `watch_deadline`.
    started: Instant,
    /// Unparks the watcher (see the module docs).
    wake_pipe: WakePipe,
    /// Whether a fallback thread is to be started (`Builder::driver_thread`,
    /// fixed at construction): without one nobody waits on `fallback_cv`,
    /// and a worker leaving the poll skips its `notify_one`, which costs a
    /// `futex` call whether anyone waits or not (10,000 a second in
    /// `http_import` at 20,000 requests/s).
    has_fallback: bool,
    fallback_cv: Condvar,
    /// Set once at shutdown (Release) and read by the fallback thread
    /// (Acquire); the thread is then also woken through `fallback_cv` (under
    /// its mutex, so the wait cannot miss it) and the mio `Waker`.
    shutdown: AtomicBool,
    /// The last epoch of [`Driver::poll_for_epoch`] that was polled in.
    polled_epoch: AtomicU64,
    /// Unit tests hold the watcher off the CPU with these.
    #[cfg(test)]
    pub(crate) test_hooks: test_hooks::TestHooks,
    /// This runtime's signal listener, made by the first `signal()` call.
    #[cfg(unix)]
    signals: RuntimeSignals,
}

impl Driver {
    /// A driver; `has_fallback`: whether [`start_fallback`](Self::start_fallback)
    /// will be called.
    pub(crate) fn new(has_fallback: bool) -> io::Result<Driver> {
        let (reactor, poll_state) = Reactor::new()?;
        Ok(Driver {
            reactor,
            timers: Timers::new(),
            poll: Mutex::new(poll_state),
            watch: Watch::default(),
            harvests: AtomicU64::new(0),
            relief: Relief::default(),
            watch_deadline: AtomicU64::new(0),
            started: Instant::now(),
            wake_pipe: WakePipe::new()?,
            has_fallback,
            fallback_cv: Condvar::new(),
            shutdown: AtomicBool::new(false),
            polled_epoch: AtomicU64::new(0),
            #[cfg(test)]
            test_hooks: test_hooks::TestHooks::default(),
            #[cfg(unix)]
            signals: RuntimeSignals::new(),
        })
    }

    /// Polls I/O (up to `timeout`) and fires due timers; returns how many
    /// tasks were woken.
    fn turn(&self, state: &mut PollState, timeout: Option<Duration>) -> usize {
        let woken = self.reactor.turn(state, timeout);
        self.harvests.fetch_add(1, Ordering::Relaxed);
        woken + self.timers.process()
    }

    /// A non-blocking poll of I/O and timers, if nobody else holds the
    /// driver and no worker watches it (the watcher serves it). Returns how
    /// many tasks it woke (`0` if the driver was busy or watched).
    pub(crate) fn poll_nonblocking(&self) -> usize {
        if self.watch.is_watched() {
            return 0;
        }
        self.harvest()
    }

    /// A non-blocking poll of I/O and timers, if nobody else holds the lock.
    /// The I/O poll is skipped when it could find nothing (no source
    /// registered: see "Polls with nothing to find" in `reactor.rs`).
    fn harvest(&self) -> usize {
        match self.poll.try_lock() {
            Ok(mut state) => {
                let woken = self.reactor.turn_if_may_have_events(&mut state);
                self.harvests.fetch_add(1, Ordering::Relaxed);
                woken + self.timers.process()
            }
            Err(_) => 0,
        }
    }

    /// The epoch poll (`epoch.rs`, `worker/step_aside.rs`): one non-blocking
    /// poll per epoch for the whole runtime, by whichever busy worker starts
    /// the epoch first. Returns how many tasks it woke (`0` if another worker
    /// already polled in this epoch, or holds the driver).
    ///
    /// One poll per runtime rather than per worker: a poll finds everything
    /// that became ready, whoever runs it, so per-worker polls would add
    /// syscalls (one `epoll_wait` per epoch per busy worker) without noticing
    /// I/O sooner than the epoch allows. `polled_epoch` only grows; the
    /// `compare_exchange` picks one poller per epoch. Relaxed: it orders
    /// nothing else (the driver lock does).
    pub(crate) fn poll_for_epoch(&self, epoch: u64) -> usize {
        let polled = self.polled_epoch.load(Ordering::Relaxed);
        if polled >= epoch
            || self
                .polled_epoch
                .compare_exchange(polled, epoch, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return 0;
        }
        self.poll_nonblocking()
    }

    /// Parks a worker in the driver: it watches the poll (see the module
    /// docs) until events are pending, the nearest timer is due or it is
    /// unparked, then harvests. [`PollPark::Occupied`] if another worker
    /// watches.
    ///
    /// `worker`: the parking worker's index. If it is the busy worker that
    /// relieved the watcher (`Relief`), nobody serves the poll once it
    /// sleeps: it ends the relief, and unparks the relieved watcher unless
    /// it watches itself now. `cap`: the longest it may watch (the
    /// scheduler's own deadline: `YieldQueue::owner_grace_ends_for`).
    pub(crate) fn park_in_poll(
        &self,
        parker: &Parker,
        worker: usize,
        cap: Option<Duration>,
    ) -> PollPark {
        let claimed = self
            .watch
            .claim_ending_relief(parker, &self.relief, worker, || self.unpark_watcher());
        if let Err(park) = claimed {
            return park;
        }
        #[cfg_attr(not(test), allow(unused_variables))]
        let (woken, deadline) = self.watch_wait(cap);
        #[cfg(test)]
        self.test_hooks
            .hold_watcher(woken.by_fd || !woken.by_also || self.nanos_since_start() >= deadline);
        // A busy worker may hold the lock for one non-blocking harvest.
        let mut state = lock(&self.poll);
        self.turn(&mut state, Some(Duration::ZERO));
        drop(state);
        self.leave_watch(parker)
    }

    /// Gives the watch back, tells the fallback thread (if any), and ends
    /// `parker`'s driver park.
    fn leave_watch(&self, parker: &Parker) -> PollPark {
        self.watch.release();
        if self.has_fallback {
            self.fallback_cv.notify_one();
        }
        parker.end_driver_park();
        PollPark::Parked
    }

    /// The watcher's wait, without the poll lock: until the epoll
    /// descriptor is readable (not while relieved: `Relief`), the nearest
    /// timer is due, the relief ends, `cap` passes, or it is unparked.
    /// Returns what woke it and when its wait would have timed out at the
    /// latest.
    fn watch_wait(&self, cap: Option<Duration>) -> (Woken, u64) {
        let mut timeout = earliest(self.timers.time_to_next(), cap);
        let relieved = self.relief.remaining(self.nanos_since_start());
        if let Some(left) = relieved {
            let left = Duration::from_nanos(left);
            timeout = Some(timeout.map_or(left, |timer| timer.min(left)));
        }
        let deadline = self.publish_watch_deadline(timeout_millis(timeout));
        let pipe = self.wake_pipe.read_fd();
        let woken = match relieved {
            None => wait_readable(self.reactor.poll_fd(), Some(pipe), timeout),
            Some(_) => {
                #[cfg(test)]
                self.test_hooks.count_relieved_wait();
                let woken = wait_readable(pipe, None, timeout);
                Woken {
                    by_fd: false,
                    by_also: woken.by_fd,
                }
            }
        };
        self.watch_deadline.store(0, Ordering::Relaxed);
        if woken.by_also {
            self.wake_pipe.drain();
        }
        (woken, deadline)
    }

    /// [`park_in_poll`](Self::park_in_poll) while the clock is paused:
    /// under the poll lock, harvests without blocking and, if that woke
    /// nothing and `may_advance` (the scheduler's check that it has nothing
    /// to do, `runtime/scheduler/auto_advance.rs`) agrees, moves the clock to the
    /// next timer and fires it. Otherwise it watches the poll for I/O and
    /// unparks only, with no timeout: a paused clock moves only when told.
    /// `worker` and `cap` as in [`park_in_poll`](Self::park_in_poll) (`cap`
    /// is real time, which runs while the runtime's clock is paused).
    pub(crate) fn park_paused(
        &self,
        parker: &Parker,
        worker: usize,
        may_advance: impl Fn() -> bool,
        cap: Option<Duration>,
    ) -> PollPark {
        let claimed = self
            .watch
            .claim_ending_relief(parker, &self.relief, worker, || self.unpark_watcher());
        if let Err(park) = claimed {
            return park;
        }
        if !self.harvest_or_advance(may_advance) {
            self.watch_deadline.store(u64::MAX, Ordering::Relaxed);
            let pipe = Some(self.wake_pipe.read_fd());
            let woken = wait_readable(self.reactor.poll_fd(), pipe, cap);
            self.watch_deadline.store(0, Ordering::Relaxed);
            if woken.by_also {
                self.wake_pipe.drain();
            }
            let mut state = lock(&self.poll);
            self.turn(&mut state, Some(Duration::ZERO));
        }
        self.leave_watch(parker)
    }

    /// The auto-advance, under the poll lock so no other thread harvests
    /// in between: returns whether it woke anything (I/O or timers). A
    /// slot of the wheel may hold only cancelled timers, or timers that
    /// cascade to a lower level: then the advance fires nothing and it
    /// looks again, never past the earliest live deadline.
    fn harvest_or_advance(&self, may_advance: impl Fn() -> bool) -> bool {
        let mut state = lock(&self.poll);
        if self.turn(&mut state, Some(Duration::ZERO)) > 0 {
            return true;
        }
        loop {
            let Some(due) = self.timers.next_due().filter(|_| self.timers.len() > 0) else {
                return false;
            };
            if !self.timers.clock.is_paused() || !may_advance() {
                return false;
            }
            self.timers.clock.advance_to(due);
            if self.timers.process() > 0 {
                return true;
            }
        }
    }

    /// The runtime's clock.
    pub(crate) fn clock(&self) -> &Clock {
        &self.timers.clock
    }

    /// Releases a hold on the clock (`driver/clock.rs`), waking the
    /// watcher if it was the last one of a paused clock: it may now
    /// auto-advance.
    pub(crate) fn release_hold(&self) {
        if self.timers.clock.release_hold() {
            self.unpark_watcher();
        }
    }

    /// A busy worker's check, at most once per epoch (`epoch.rs`), that the
    /// poll is served: harvests, and returns how many tasks it woke, only
    /// when work (events or a due timer) has been pending, with nobody
    /// harvesting, for `UNSERVED_EPOCHS` (`UnservedProbe::should_harvest`). See
    /// "the crowded-host hand-off" in the module docs. `probe` is the
    /// worker's own record of its previous check; `worker` its index (it
    /// relieves the watcher, `Relief`, when it harvested work).
    pub(crate) fn harvest_if_unserved(
        &self,
        probe: &UnservedProbe,
        epoch: u64,
        worker: usize,
    ) -> usize {
        let harvests = self.harvests.load(Ordering::Relaxed);
        let relieving = self.relief.is_granted();
        if !probe.should_harvest(epoch, harvests, relieving, || self.has_pending_work()) {
            return 0;
        }
        let woken = self.harvest();
        probe.harvested(self.harvests.load(Ordering::Relaxed));
        if woken > 0 {
            let now = self.nanos_since_start();
            self.relief.grant(now, self.relief_length(), worker);
        }
        woken
    }

    /// Whether events wait to be harvested (one zero-timeout `poll(2)` of
    /// the epoll descriptor, which consumes nothing) or a timer is due that
    /// the watcher, if any, should have woken for already.
    fn has_pending_work(&self) -> bool {
        let timer_due = self.timers.time_to_next() == Some(Duration::ZERO)
            && self.nanos_since_start() >= self.watch_deadline.load(Ordering::Relaxed);
        timer_due || is_readable_now(self.reactor.poll_fd())
    }

    /// How long a relief lasts (`Relief`).
    fn relief_length(&self) -> u64 {
        #[cfg(test)]
        if let Some(length) = self.test_hooks.relief_length() {
            return length;
        }
        super::RELIEF_NANOS
    }

    /// Whether the watcher is relieved (tests).
    #[cfg(test)]
    pub(crate) fn is_relief_granted(&self) -> bool {
        self.relief.is_granted()
    }

    /// Records, and returns, when the watcher's wait of `timeout_ms` ends at
    /// the latest.
    fn publish_watch_deadline(&self, timeout_ms: libc::c_int) -> u64 {
        let deadline = match u64::try_from(timeout_ms) {
            Ok(ms) => self.nanos_since_start().saturating_add(ms * 1_000_000),
            Err(_) => u64::MAX, // no timeout
        };
        self.watch_deadline.store(deadline, Ordering::Relaxed);
        deadline
    }

    fn nanos_since_start(&self) -> u64 {
        self.started.elapsed().as_nanos() as u64
    }

    /// When the next timer is due, if one is registered.
    pub(crate) fn time_to_next(&self) -> Option<Duration> {
        self.timers.time_to_next()
    }

    /// Timers (sleeps, timeouts, intervals) registered right now.
    pub(crate) fn num_timers(&self) -> usize {
        self.timers.len()
    }

    /// Whether a worker watches the driver's poll (then nobody else needs
    /// to poll while it serves: it notices I/O and timers at once).
    pub(crate) fn has_worker_in_poll(&self) -> bool {
        self.watch.is_claimed()
    }

    /// This runtime's signal listener, registered with the reactor on first
    /// use.
    #[cfg(unix)]
    pub(crate) fn signal_listener(&self) -> io::Result<Arc<Listener>> {
        self.signals.listener(&self.reactor)
    }

    /// Whether a worker watches the poll (lock-free; a hint).
    pub(crate) fn is_watched(&self) -> bool {
        self.watch.is_watched()
    }

    /// Wakes whoever waits on the poll (the watching worker and the
    /// fallback thread): a new earliest timer, shutdown.
    ///
    /// The pipe is written only while a worker watches: a watcher sets
    /// `watched` before it reads the next timer under the wheel's lock, and
    /// a timer registers under the same lock before it wakes, so either the
    /// watcher's timeout covers the new timer or this sees `watched`.
    pub(crate) fn wake(&self) {
        if self.is_watched() {
            self.wake_pipe.wake();
        }
        self.reactor.wake();
    }

    /// Unparks the watching worker (`Idle`'s notifications).
    pub(crate) fn unpark_watcher(&self) {
        self.wake_pipe.wake();
    }

    /// Starts the fallback driver thread.
    pub(crate) fn start_fallback(
        self: &Arc<Self>,
        name: String,
    ) -> io::Result<thread::JoinHandle<()>> {
        assert!(self.has_fallback, "a driver made without a fallback thread");
        let driver = self.clone();
        thread::Builder::new()
            .name(name)
            .spawn(move || driver.fallback_main())
    }

    fn fallback_main(&self) {
        tracing::debug!("fallback driver thread started");
        loop {
            {
                let mut worker_in_poll = lock(self.watch.claimed());
                while *worker_in_poll && !self.shutdown.load(Ordering::Acquire) {
                    worker_in_poll = wait(&self.fallback_cv, worker_in_poll);
                }
            }
            if self.shutdown.load(Ordering::Acquire) {
                break;
            }
            wait_readable(self.reactor.poll_fd(), None, self.timers.time_to_next());
            if self.shutdown.load(Ordering::Acquire) {
                break;
            }
            // Blocks only while another thread is polling; a worker parked in
            // the poll is woken by the same event, so this wait is short.
            let mut state = lock(&self.poll);
            self.turn(&mut state, Some(Duration::ZERO));
        }
        tracing::debug!("fallback driver thread stopped");
    }

    /// Stops the fallback thread (if any), fails all pending I/O and fires
    /// every timer (`Timers::shutdown`).
    pub(crate) fn shutdown(&self) {
        self.shutdown.store(true, Ordering::Release);
        {
            let _worker_in_poll = lock(self.watch.claimed());
            self.fallback_cv.notify_all();
        }
        self.reactor.wake();
        self.reactor.shutdown();
        self.timers.shutdown();
    }
}

mod wait;

#[cfg(test)]
pub(crate) mod test_hooks;
