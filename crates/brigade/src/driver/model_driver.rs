//! The driver for loom models of the real scheduler: no I/O and no timers,
//! the same locking, watching and wake-up structure.
//!
//! A model must not block in `poll(2)`, which loom cannot see. So this
//! driver keeps the real one's skeleton (`poll/mod.rs`): the watcher claims
//! the watch (`Watch`), waits between `Parker::begin_driver_park` and
//! `end_driver_park` *without* the poll lock until events are pending or it
//! is unparked (the wake pipe: a flag that only the watcher clears, so no
//! harvest consumes it), then takes the lock and harvests; busy workers
//! harvest under the same lock. Events are a count that models add
//! ([`Driver::make_ready`]) and harvests take, as `epoll_wait` takes the
//! ready list: the models check that every event is harvested exactly once
//! and that no unpark is lost. The watcher's relief (`Relief`) is the real
//! one, with the clock stopped at 0: a relieved watcher waits for an unpark
//! only, so a model in which nobody ends the relief deadlocks. The fallback
//! thread is not modelled.

use std::io;
use std::time::Duration;

use super::clock::Clock;
use super::park::Parker;
use super::{PollPark, Relief, UnservedProbe, Watch};
use crate::sync::{AtomicUsize, Condvar, Mutex, Ordering, lock, wait};

/// I/O and timers of one runtime, without I/O or timers.
pub(crate) struct Driver {
    /// The poll lock: whoever holds it harvests.
    poll: Mutex<()>,
    /// Whether a worker watches the poll.
    watch: Watch,
    /// What the watcher waits for: events pending (the epoll ready list)
    /// and the wake pipe.
    waiting: Mutex<Waiting>,
    changed: Condvar,
    /// Harvests so far.
    harvests: AtomicUsize,
    /// Whether busy workers serve the poll for the watcher.
    relief: Relief,
    /// Events harvested so far.
    harvested: AtomicUsize,
    /// The clock, for its holds (`block_on`, `spawn_blocking`); a model
    /// has no timers, so nothing reads its time.
    clock: Clock,
}

#[derive(Default)]
struct Waiting {
    /// Events ready and not yet harvested.
    ready: usize,
    /// A byte in the wake pipe.
    unparked: bool,
}

impl Driver {
    /// The model never starts a fallback thread.
    pub(crate) fn new(_has_fallback: bool) -> io::Result<Driver> {
        Ok(Driver {
            poll: Mutex::new(()),
            watch: Watch::default(),
            waiting: Mutex::new(Waiting::default()),
            changed: Condvar::new(),
            harvests: AtomicUsize::new(0),
            relief: Relief::default(),
            harvested: AtomicUsize::new(0),
            clock: Clock::new(std::time::Instant::now()),
        })
    }

    /// Makes `count` events ready, as a socket becoming readable would
    /// (models only).
    #[cfg(test)]
    pub(crate) fn make_ready(&self, count: usize) {
        lock(&self.waiting).ready += count;
        self.changed.notify_all();
    }

    /// Events harvested so far (models only).
    #[cfg(test)]
    pub(crate) fn harvested(&self) -> usize {
        self.harvested.load(Ordering::SeqCst)
    }

    /// Takes every ready event, under the poll lock the caller holds.
    fn turn(&self, _poll: &mut ()) -> usize {
        let taken = std::mem::take(&mut lock(&self.waiting).ready);
        self.harvested.fetch_add(taken, Ordering::SeqCst);
        self.harvests.fetch_add(1, Ordering::Relaxed);
        taken
    }

    /// A non-blocking harvest, if nobody holds the lock.
    fn harvest(&self) -> usize {
        match self.poll.try_lock() {
            Ok(mut poll) => self.turn(&mut poll),
            Err(_) => 0,
        }
    }

    /// A non-blocking poll, unless a worker watches.
    pub(crate) fn poll_nonblocking(&self) -> usize {
        if self.watch.is_watched() {
            return 0;
        }
        self.harvest()
    }

    /// The epoch poll: as [`poll_nonblocking`](Self::poll_nonblocking)
    /// (every call starts a new epoch under loom's clock).
    pub(crate) fn poll_for_epoch(&self, _epoch: u64) -> usize {
        self.poll_nonblocking()
    }

    /// Watches the poll, then harvests (see the module docs); `worker` as
    /// in the real driver.
    /// `cap` is ignored: loom's waits never time out.
    pub(crate) fn park_in_poll(
        &self,
        parker: &Parker,
        worker: usize,
        _cap: Option<Duration>,
    ) -> PollPark {
        let claimed = self
            .watch
            .claim_ending_relief(parker, &self.relief, worker, || self.unpark_watcher());
        if let Err(park) = claimed {
            return park;
        }
        let relieved = self.relief.remaining(0).is_some();
        {
            let mut waiting = lock(&self.waiting);
            while (relieved || waiting.ready == 0) && !waiting.unparked {
                waiting = wait(&self.changed, waiting);
            }
            waiting.unparked = false; // drains the wake pipe
        }
        let mut poll = lock(&self.poll);
        self.turn(&mut poll);
        drop(poll);
        self.watch.release();
        parker.end_driver_park();
        PollPark::Parked
    }

    /// The paused clock's park (`poll/mod.rs`): a model's clock never pauses,
    /// so it is the plain park.
    pub(crate) fn park_paused(
        &self,
        parker: &Parker,
        worker: usize,
        _may_advance: impl Fn() -> bool,
        cap: Option<Duration>,
    ) -> PollPark {
        self.park_in_poll(parker, worker, cap)
    }

    /// The busy worker's check that the watcher serves (`poll/mod.rs`).
    pub(crate) fn harvest_if_unserved(
        &self,
        probe: &UnservedProbe,
        epoch: u64,
        worker: usize,
    ) -> usize {
        let harvests = self.harvests.load(Ordering::Relaxed) as u64;
        let relieving = self.relief.is_granted();
        if !probe.should_harvest(epoch, harvests, relieving, || lock(&self.waiting).ready > 0) {
            return 0;
        }
        let woken = self.harvest();
        probe.harvested(self.harvests.load(Ordering::Relaxed) as u64);
        if woken > 0 {
            self.relief.grant(0, super::RELIEF_NANOS, worker);
        }
        woken
    }

    /// Whether a worker watches the poll.
    pub(crate) fn is_watched(&self) -> bool {
        self.watch.is_watched()
    }

    /// Whether a worker sleeps in the driver's poll.
    #[cfg_attr(loom, allow(dead_code))] // The monitor thread uses it; loom models leave the monitor out.
    pub(crate) fn has_worker_in_poll(&self) -> bool {
        self.watch.is_claimed()
    }

    /// Wakes whoever waits on the poll.
    pub(crate) fn wake(&self) {
        self.unpark_watcher();
    }

    /// Unparks the watcher: a byte in the wake pipe.
    pub(crate) fn unpark_watcher(&self) {
        lock(&self.waiting).unparked = true;
        self.changed.notify_all();
    }

    /// The runtime's clock.
    pub(crate) fn clock(&self) -> &Clock {
        &self.clock
    }

    /// Releases a hold on the clock (`driver/clock.rs`), waking the
    /// watcher if it was the last one of a paused clock.
    pub(crate) fn release_hold(&self) {
        if self.clock.release_hold() {
            self.unpark_watcher();
        }
    }

    /// When the next timer is due: there are none.
    pub(crate) fn time_to_next(&self) -> Option<Duration> {
        None
    }

    /// Timers registered: none.
    pub(crate) fn num_timers(&self) -> usize {
        0
    }

    /// Nothing to stop.
    pub(crate) fn shutdown(&self) {
        self.wake();
    }
}

#[cfg(test)]
mod models {
    //! The crowded-host hand-off (`poll/mod.rs`), model-checked: run with
    //! `RUSTFLAGS="--cfg loom" cargo test -p brigade --lib --release`.
    use super::*;
    use loom::sync::Arc;
    use loom::thread;

    /// A worker parks on its condvar while another thread unparks it: the
    /// condvar is signalled only while the worker waits (`park.rs`, the
    /// `waiting` flag), and the park still always returns, whichever
    /// comes first. Likewise for the monitor's nudge.
    #[test]
    fn an_unpark_racing_a_park_is_never_lost() {
        for nudge in [false, true] {
            loom::model(move || {
                let parker = Arc::new(Parker::new());
                let waker = {
                    let parker = parker.clone();
                    thread::spawn(move || {
                        if nudge {
                            assert!(parker.nudge());
                        } else {
                            assert!(!parker.unpark());
                        }
                    })
                };
                parker.park();
                waker.join().unwrap();
            });
        }
    }

    /// An event becomes ready while a worker watches and a busy worker,
    /// whose checks say the watcher has not served it, harvests it; the
    /// watcher is then unparked. The event is harvested exactly once, never
    /// by two holders of the lock at once, and the watcher always returns:
    /// no unpark is lost to a harvest.
    #[test]
    fn a_busy_harvest_races_with_the_watcher() {
        loom::model(|| {
            let driver = Arc::new(Driver::new(false).unwrap());
            let parker = Arc::new(Parker::new());
            let watcher = {
                let (driver, parker) = (driver.clone(), parker.clone());
                thread::spawn(move || driver.park_in_poll(&parker, 0, None))
            };
            let busy = {
                let driver = driver.clone();
                thread::spawn(move || {
                    let probe = UnservedProbe::default();
                    driver.make_ready(1);
                    // Checks `UNSERVED_EPOCHS` apart that see the event
                    // pending with no harvest between them harvest it.
                    (1..=1 + crate::driver::UNSERVED_EPOCHS)
                        .map(|epoch| driver.harvest_if_unserved(&probe, epoch, 1))
                        .sum::<usize>()
                })
            };
            let by_busy = busy.join().unwrap();
            if parker.unpark() {
                driver.unpark_watcher();
            }
            assert_eq!(watcher.join().unwrap(), PollPark::Parked);
            assert_eq!(driver.harvested(), 1);
            assert!(by_busy <= 1);
            assert!(!driver.is_watched());
        });
    }

    /// Two workers race to watch: one watches, the other is told the poll
    /// is occupied; an unpark of the watcher is never lost.
    #[test]
    fn one_watcher_at_a_time() {
        loom::model(|| {
            let driver = Arc::new(Driver::new(false).unwrap());
            let parkers = [Arc::new(Parker::new()), Arc::new(Parker::new())];
            let workers: Vec<_> = parkers
                .iter()
                .map(|parker| {
                    let (driver, parker) = (driver.clone(), parker.clone());
                    thread::spawn(move || driver.park_in_poll(&parker, 0, None))
                })
                .collect();
            // Wake both, as a notify of each would.
            for parker in &parkers {
                if parker.unpark() {
                    driver.unpark_watcher();
                }
            }
            let parks: Vec<_> = workers.into_iter().map(|w| w.join().unwrap()).collect();
            assert!(parks.contains(&PollPark::Parked));
            assert!(!driver.is_watched());
        });
    }

    /// A busy worker serves an event for the watcher, which relieves the
    /// watcher, and then goes to sleep itself while a second event is on
    /// its way. The watcher keeps parking (as a worker that finds nothing
    /// does). Once the busy worker sleeps, a third event comes, and the
    /// watcher harvests it: the sleeping busy worker ended the relief, and
    /// unparked the watcher if it was relieved already. (Without that, the
    /// relieved watcher waits for an unpark that never comes and the model
    /// deadlocks.)
    #[test]
    fn a_busy_worker_that_sleeps_ends_the_relief() {
        // Three threads of several steps each: bounded as the scheduler's
        // models are (`LOOM_MAX_PREEMPTIONS` overrides it).
        let mut builder = loom::model::Builder::new();
        if builder.preemption_bound.is_none() {
            builder.preemption_bound = Some(3);
        }
        builder.check(|| {
            let driver = Arc::new(Driver::new(false).unwrap());
            let watcher = {
                let driver = driver.clone();
                thread::spawn(move || {
                    let parker = Parker::new();
                    while driver.harvested() < 3 {
                        driver.park_in_poll(&parker, 0, None);
                    }
                })
            };
            let busy = {
                let driver = driver.clone();
                thread::spawn(move || {
                    let probe = UnservedProbe::default();
                    driver.make_ready(1);
                    for epoch in 1..=1 + crate::driver::UNSERVED_EPOCHS {
                        driver.harvest_if_unserved(&probe, epoch, 1);
                    }
                    // It goes to sleep; an earlier notification means it
                    // does not wait in the model (nothing would wake it).
                    let parker = Parker::new();
                    parker.unpark();
                    driver.park_in_poll(&parker, 1, None)
                })
            };
            driver.make_ready(1);
            let busy_parked = busy.join().unwrap();
            driver.make_ready(1);
            watcher.join().unwrap();
            assert_eq!(driver.harvested(), 3);
            assert!(busy_parked == PollPark::Occupied || !driver.relief.is_granted());
        });
    }
}
