//! The auto-advance of a paused clock, on a runtime with any number of
//! workers: when the runtime has nothing to do, the clock moves to the
//! next timer (`brigade::time::pause`).
//!
//! ## Who decides
//! The worker that watches the driver's poll, and only it: a worker that
//! parks while the clock is paused goes through
//! [`Core::park_in_driver`], which parks in the driver with
//! `Driver::park_paused`. Under the poll lock (so no other thread harvests
//! meanwhile) that harvests I/O without blocking and, if it woke nothing,
//! asks [`Shared::may_auto_advance`]; on a yes it moves the clock to the
//! next timer and fires it, under the same lock. On a no it waits, with no
//! timeout, for I/O or an unpark. Whatever may turn the no into a yes
//! unparks it, so it asks again:
//! - a worker that parks while another watches (the last one to go idle
//!   is one of those, or the watcher itself);
//! - the release of the last hold on the clock (`driver/clock.rs`): a
//!   `spawn_blocking` closure done, a `block_on` thread parking;
//! - `pause`, `resume`, and a new earliest timer (as for a running clock).
//!
//! ## What it reads, and the race it closes
//! The danger is an advance while something is runnable: a task woken by
//! another thread between the look and the advance, which would then see
//! its timeout fire before it ran. `may_auto_advance` makes its look one
//! consistent snapshot:
//! 1. It takes the `sleepers` lock ([`Idle::with_all_idle`]) and checks
//!    that every live worker (primaries and serving spares) is counted
//!    idle. The idle count changes only under that lock, so while it is
//!    held no worker leaves idle: none runs a task, takes one from a
//!    queue, or wakes anything. Everything a worker did before it went
//!    idle (a spawn, a wake, a `spawn_blocking`, an elastic task queued
//!    for admission) happened before its `count_idle` under the same lock,
//!    so the look below sees it.
//! 2. It reads the clock's hold word, then whether elastic admission holds
//!    a task (queued, or admitted by the monitor and not yet in the
//!    injector, under the admission lock), then every deque, the injector
//!    and the yield queue, then the hold word again. The threads that are
//!    not frozen by 1 and can make work runnable all take a hold first and
//!    release it only once that work is queued: a `block_on` thread (a
//!    hold while it polls or a wake-up is pending for it), a
//!    `spawn_blocking` closure (from its queueing until its `JoinHandle`
//!    was woken), a spare worker handing its deque back as it steps down.
//!    So either the first read sees the hold, or the second read differs
//!    (a hold was taken in between, even if released again), or the hold
//!    came after both and its work was visible in a queue at the look. The
//!    monitor's admissions go from the admission queue to the injector,
//!    and are read in that order.
//!
//! Only threads the runtime cannot see escape this: a plain thread, or
//! another runtime, that wakes a task of this one. The module docs of
//! `brigade::time` say so to users.
//!
//! All of it runs only while the clock is paused: a running clock costs
//! the park path one relaxed load.

use std::time::Duration;

use crate::driver::clock::holds_unchanged_and_free;
use crate::driver::{Parker, PollPark};
use crate::runtime::Shared;
use crate::runtime::scheduler::worker::Core;

impl Shared {
    /// Whether the runtime has nothing to do, so a paused clock may move to
    /// the next timer. Called by the worker watching the driver, under the
    /// poll lock; see the module docs.
    pub(crate) fn may_auto_advance(&self) -> bool {
        let live = || self.num_workers() + self.compensation.serving();
        self.idle
            .with_all_idle(live, || {
                let clock = self.driver.clock();
                let holds = clock.holds_word();
                let quiet = !self.admission.is_holding()
                    && self.stealers.iter().all(|stealer| stealer.is_empty())
                    && self.run_next.iter().all(|slot| !slot.is_full())
                    && self.injector.is_empty()
                    && self.yield_queue.is_empty();
                quiet && holds_unchanged_and_free(holds, clock.holds_word())
            })
            .unwrap_or(false)
    }
}

impl Core {
    /// Parks this idle worker in the driver: as usual while the clock
    /// runs, else deciding on the auto-advance (see the module docs); for
    /// `cap` at most.
    pub(crate) fn park_in_driver(&self, parker: &Parker, cap: Option<Duration>) -> PollPark {
        let shared = self.shared();
        if !shared.driver.clock().is_paused() {
            return shared.driver.park_in_poll(parker, self.index(), cap);
        }
        shared
            .driver
            .park_paused(parker, self.index(), || shared.may_auto_advance(), cap)
    }
}
