//! Which workers are idle, which are searching for work, and how a worker
//! goes to sleep without missing a wake-up.
//!
//! ## The state word
//! `state` packs three counters into one `AtomicUsize` so that all of them
//! can be read with a single load (bit ranges for a 64-bit `usize`; a
//! quarter, a quarter and a half of the word in general):
//! - bits `0..16`: **searching** workers, those stealing from each other
//!   after their own deque and the injector came up empty;
//! - bits `16..32`: **idle** workers, those that committed to park (see
//!   below). While it is non-zero an idle worker will pick up anything that
//!   is waiting, so `yield_if_busy()` has nothing to yield to;
//! - bits `32..`: **attention** holds, owned by `attention.rs`
//!   ([`Idle::attention`]): reasons for a running task to look at its flags
//!   at its next yield point (shutdown, aborts).
//!
//! `yield_if_busy()`'s fast path returns at once iff `idle > 0` and
//! `attention == 0` ([`fast_path_may_continue`]: one subtraction and one
//! compare on the loaded word). Otherwise it takes its slow path (see
//! `attention.rs` for why a hold sends it there).
//!
//! A worker running a task is counted as neither searching nor idle.
//!
//! ## Who changes what
//! - A worker becomes *searching* with [`Idle::try_begin_search`] (at most
//!   half the workers search at once, so stealing does not turn into a
//!   stampede) and stops with [`Idle::end_search`] when it found a task. If
//!   it was the last searcher and more work is queued, it must call
//!   [`Idle::notify_one`]: nobody else is looking for that work. (It fences
//!   between `end_search` and its look at the queues, pairing with the
//!   pusher's fence as below.)
//! - A worker that found nothing calls [`Idle::wait_for_work`]. Under the `sleepers`
//!   lock it moves itself from searching (or running) to idle and pushes its
//!   index onto `sleepers`; then it re-checks every queue and, if they are
//!   all empty, sleeps (on its [`Parker`], or inside the driver's poll). When
//!   it wakes, for whatever reason, it takes itself back out of `sleepers`
//!   unless a notifier already did, moving idle to *running* if the sleep
//!   left tasks in its own deque (events it dispatched from the driver),
//!   else to searching.
//! - Whoever makes work runnable (a push to a deque, the injector or the
//!   yield queue) calls [`Idle::notify_one`] afterwards. If no worker is
//!   searching and one is idle, it pops a sleeper and, still under the lock,
//!   moves it from idle to searching and unparks it. The woken worker is
//!   therefore already counted as searching when it runs, and no longer as
//!   idle from the moment it is woken: `yield_if_busy()` does not trust a
//!   worker that has been handed work but may not yet have a CPU (Go's
//!   `wakep` takes a processor for a thread before it wakes it, likewise).
//!   A worker woken by the kernel out of the driver's poll is still counted
//!   idle until it runs; busy workers check that it serves (`yield_if_busy.rs`).
//!
//! ## The race this closes
//! The danger is a worker that checks the queues, finds them empty, and
//! parks just as another thread pushes work and sees nobody to wake. Both
//! sides issue a `SeqCst` fence between their write and their read:
//!
//! ```text
//! parker:   state += IDLE (under lock)   fence   re-check queues
//! pusher:   push to queue                fence   load state
//! ```
//!
//! In the single total order of the two fences, whichever comes second sees
//! the other side's write: either the re-check sees the pushed task (the
//! worker cancels its park), or the pusher sees the idle worker (and wakes
//! it). A pusher that sees a searching worker instead may skip the wake-up:
//! that searcher has not yet parked, and when it does its own re-check comes
//! after the push by the same argument.
//!
//! `leave_sleepers` and `notify_one` both take the sleeper out of `sleepers`
//! under the lock, so exactly one of them succeeds. `notify_one` unparks
//! while still holding the lock, so a worker whose cancel found itself
//! already removed knows its notification is already set and clears it.
//! Because every wake-up goes through `leave_sleepers`, a sleep that ends
//! without a notification (a driver park woken by I/O or a timer) keeps the
//! counts right.

use crate::driver::Parker;
use crate::runtime::scheduler::attention::{ATTENTION_ONE, ATTENTION_SHIFT, Attention};
use crate::sync::{AtomicUsize, Mutex, Ordering, fence, lock};

/// Width of the searching and of the idle field of the state word.
const FIELD_BITS: u32 = usize::BITS / 4;
/// One idle worker in the packed state word.
pub(crate) const IDLE_ONE: usize = 1 << FIELD_BITS;
// The searching and idle fields fill the word below the attention field.
const _: () = assert!(ATTENTION_SHIFT == 2 * FIELD_BITS);
/// Mask for the searching count in the packed state word.
const SEARCHING_MASK: usize = IDLE_ONE - 1;
/// Mask for the idle count in the packed state word.
const IDLE_MASK: usize = ATTENTION_ONE - IDLE_ONE;
/// The largest worker count the packed state word can represent.
pub(crate) const MAX_WORKERS: usize = SEARCHING_MASK;

/// Idle and searching worker counts, the list of sleeping workers, and one
/// [`Parker`] per worker. See the module docs for the protocol. The state
/// word also holds the attention field, which [`Attention`] handles.
pub(crate) struct Idle {
    state: AtomicUsize,
    /// At most this many workers search at once: half the primaries (of
    /// at least two), rounded up. Derived from the worker count, which only
    /// `Shared::num_workers` keeps (`parkers` also has one per spare slot,
    /// see `runtime/compensation/`).
    max_searching: usize,
    sleepers: Mutex<Vec<usize>>,
    parkers: Box<[Parker]>,
    /// Interrupts the driver's poll, for a worker parked inside it.
    wake_driver: Box<dyn Fn() + Send + Sync>,
}

fn searching(state: usize) -> usize {
    state & SEARCHING_MASK
}

fn idle(state: usize) -> usize {
    (state & IDLE_MASK) / IDLE_ONE
}

/// `yield_if_busy()`'s fast-path test on a loaded state word: at least one
/// worker is idle and nothing holds attention. One subtraction and one
/// unsigned compare: `IDLE_ONE <= state < ATTENTION_ONE`.
#[inline(always)]
pub(crate) fn fast_path_may_continue(state: usize) -> bool {
    state.wrapping_sub(IDLE_ONE) < ATTENTION_ONE - IDLE_ONE
}

impl Idle {
    /// Counts for `num_workers` primaries and `num_slots - num_workers`
    /// spare slots.
    pub(crate) fn new(
        num_workers: usize,
        num_slots: usize,
        wake_driver: Box<dyn Fn() + Send + Sync>,
    ) -> Self {
        assert!(num_workers <= num_slots && num_slots <= MAX_WORKERS);
        Idle {
            state: AtomicUsize::new(0),
            max_searching: crate::policy::max_searching(num_workers),
            sleepers: Mutex::new(Vec::with_capacity(num_slots)),
            parkers: (0..num_slots).map(|_| Parker::new()).collect(),
            wake_driver,
        }
    }

    /// The packed state word, for `yield_if_busy()`'s fast path, which tests
    /// it with [`fast_path_may_continue`] after one load.
    pub(crate) fn state_word(&self) -> &AtomicUsize {
        &self.state
    }

    /// Number of workers committed to parking (or parked).
    pub(crate) fn num_idle(&self) -> usize {
        idle(self.state.load(Ordering::Relaxed))
    }

    /// The attention field of the state word (`attention.rs`).
    pub(crate) fn attention(&self) -> Attention<'_> {
        Attention::new(&self.state)
    }

    /// Number of workers currently stealing.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn num_searching(&self) -> usize {
        searching(self.state.load(Ordering::Relaxed))
    }

    /// Counts the caller as searching, unless half the workers already are.
    pub(crate) fn try_begin_search(&self) -> bool {
        let state = self.state.load(Ordering::SeqCst);
        if searching(state) >= self.max_searching {
            return false;
        }
        self.state.fetch_add(1, Ordering::SeqCst);
        true
    }

    /// Stops counting the caller as searching. Returns `true` if it was the
    /// last searcher, in which case the caller must [`notify_one`](Self::notify_one).
    pub(crate) fn end_search(&self) -> bool {
        let previous = self.state.fetch_sub(1, Ordering::SeqCst);
        debug_assert!(searching(previous) > 0);
        searching(previous) == 1
    }

    /// Puts worker `worker` to sleep with `sleep` unless `has_work` finds
    /// something after it was counted idle. `was_searching` says whether the
    /// worker is currently counted as searching. `sleep` may return early
    /// (spuriously); `has_local_work` tells, after it returns, whether it
    /// left tasks in the worker's own deque.
    ///
    /// Returns whether the worker is now counted as **searching** (it must
    /// look for work and then call [`end_search`](Self::end_search) or park
    /// again). It is not when it woke by itself with tasks in its own deque:
    /// it then runs them without waking anyone.
    pub(crate) fn wait_for_work(
        &self,
        worker: usize,
        was_searching: bool,
        has_work: impl Fn() -> bool,
        sleep: impl FnOnce(&Parker),
        has_local_work: impl Fn() -> bool,
    ) -> bool {
        self.count_idle(worker, was_searching);
        // Pairs with the fence in `notify_one` (see "The race this closes").
        fence(Ordering::SeqCst);
        let slept = !has_work();
        if slept {
            sleep(&self.parkers[worker]);
        }
        let to_running = slept && has_local_work();
        if self.leave_sleepers(worker, to_running) {
            return !to_running;
        }
        // A notifier claimed us first (counting us as searching); its unpark
        // already happened.
        self.parkers[worker].clear();
        true
    }

    fn count_idle(&self, worker: usize, was_searching: bool) {
        let mut sleepers = lock(&self.sleepers);
        let delta = IDLE_ONE - usize::from(was_searching);
        self.state.fetch_add(delta, Ordering::SeqCst);
        sleepers.push(worker);
    }

    /// Takes `worker` back out of the sleepers, counting it as running or
    /// searching. Returns `false` if a notifier already took it (and counted
    /// it as searching).
    fn leave_sleepers(&self, worker: usize, to_running: bool) -> bool {
        let mut sleepers = lock(&self.sleepers);
        let Some(position) = sleepers.iter().position(|&w| w == worker) else {
            return false;
        };
        sleepers.swap_remove(position);
        let delta = if to_running { IDLE_ONE } else { IDLE_ONE - 1 };
        self.state.fetch_sub(delta, Ordering::SeqCst);
        true
    }

    /// Runs `f` if every one of the `live()` workers is counted idle (none
    /// searching), with the `sleepers` lock held: no worker leaves idle
    /// until `f` returns, since the idle count changes only under that
    /// lock. The paused clock's auto-advance looks at the queues this way
    /// (`auto_advance.rs`). `None` if a worker is not idle.
    pub(crate) fn with_all_idle<R>(
        &self,
        live: impl FnOnce() -> usize,
        f: impl FnOnce() -> R,
    ) -> Option<R> {
        let _sleepers = lock(&self.sleepers);
        let state = self.state.load(Ordering::SeqCst);
        (searching(state) == 0 && idle(state) >= live()).then(f)
    }

    /// Wakes one sleeping worker if work was just made runnable and nobody
    /// is already searching for it. Call after every push.
    pub(crate) fn notify_one(&self) {
        // Pairs with the fence in `wait_for_work` (see "The race this closes").
        fence(Ordering::SeqCst);
        let state = self.state.load(Ordering::SeqCst);
        if searching(state) > 0 || idle(state) == 0 {
            return;
        }
        let mut sleepers = lock(&self.sleepers);
        // Another notifier may have woken a worker since our first look.
        if searching(self.state.load(Ordering::SeqCst)) > 0 {
            return;
        }
        if let Some(worker) = sleepers.pop() {
            self.state.fetch_sub(IDLE_ONE - 1, Ordering::SeqCst);
            self.unpark(worker);
        }
    }

    /// Unparks `worker` without claiming it: it takes itself out of the
    /// sleepers as after any spurious wake-up (`leave_sleepers`). Also the
    /// wake of a current-thread `block_on` future (`current_thread.rs`).
    pub(crate) fn unpark(&self, worker: usize) {
        if self.parkers[worker].unpark() {
            (self.wake_driver)();
        }
    }

    /// Parks `worker` on its own parker for at most `timeout`, uncounted:
    /// it is not a sleeper, so no notification picks it and
    /// `yield_if_busy()` does not count it idle (a worker parked by the CPU
    /// limit: `worker/park_by_limit.rs`). [`unpark`](Self::unpark) ends it.
    #[cfg_attr(loom, allow(dead_code))] // Loom models run no CPU limit.
    pub(crate) fn park_uncounted(&self, worker: usize, timeout: std::time::Duration) {
        self.parkers[worker].park_timeout(Some(timeout));
    }

    /// Hands the driver on: wakes one sleeping worker, unless the one picked
    /// already sleeps in the driver, *without* claiming it. Called by the
    /// monitor thread when workers sleep but none in the driver: idle
    /// workers that found the driver occupied sleep on their condvars, and
    /// when its occupant leaves to run a task that never returns, nobody
    /// would poll I/O and timers, while `yield_if_busy()` loops on the busy
    /// workers, seeing a worker idle, never poll them either. The woken worker takes itself out of the
    /// sleepers as after any spurious wake-up (`leave_sleepers`), searches,
    /// and, finding nothing, parks again, in the driver.
    #[cfg_attr(loom, allow(dead_code))] // The monitor thread uses it; loom models leave the monitor out.
    pub(crate) fn hand_off_driver(&self) {
        let sleepers = lock(&self.sleepers);
        if let Some(&worker) = sleepers.last() {
            self.parkers[worker].nudge();
        }
    }

    /// Wakes one sleeping spare (a slot at `first_spare` or above),
    /// counting it as searching, as [`notify_one`](Self::notify_one) would:
    /// called after a cover ended, so a spare that became surplus while it
    /// slept wakes to step down (see `runtime/compensation/`). A spare that is
    /// not surplus searches and parks again.
    pub(crate) fn notify_spare(&self, first_spare: usize) {
        let mut sleepers = lock(&self.sleepers);
        if let Some(position) = sleepers.iter().position(|&w| w >= first_spare) {
            let worker = sleepers.swap_remove(position);
            self.state.fetch_sub(IDLE_ONE - 1, Ordering::SeqCst);
            self.unpark(worker);
        }
    }

    /// Wakes every sleeping worker (shutdown). Each is counted as searching.
    pub(crate) fn notify_all(&self) {
        let mut sleepers = lock(&self.sleepers);
        for worker in sleepers.drain(..) {
            self.state.fetch_sub(IDLE_ONE - 1, Ordering::SeqCst);
            self.unpark(worker);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn counters_follow_the_protocol() {
        let idle = Idle::new(4, 4, Box::new(|| {}));
        assert!(idle.try_begin_search());
        assert!(idle.try_begin_search());
        // At most half of four workers search at once.
        assert!(!idle.try_begin_search());
        assert_eq!(idle.num_searching(), 2);
        assert!(!idle.end_search());
        // Park with work available: cancelled, counted as searching again.
        assert!(idle.wait_for_work(0, true, || true, |_| unreachable!("has work"), || true));
        assert_eq!((idle.num_idle(), idle.num_searching()), (0, 1));
        assert!(idle.end_search());
        assert_eq!(idle.state.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn notify_one_wakes_a_parked_worker() {
        // Bounded: a lost wake-up fails the test instead of hanging it.
        let bound = std::time::Duration::from_secs(60);
        let idle = std::sync::Arc::new(Idle::new(2, 2, Box::new(|| {})));
        let (woken, was_woken) = std::sync::mpsc::channel();
        let sleeper = {
            let idle = idle.clone();
            std::thread::spawn(move || {
                idle.wait_for_work(1, false, || false, Parker::park, || false);
                woken.send(()).unwrap();
            })
        };
        let deadline = std::time::Instant::now() + bound;
        while idle.num_idle() == 0 {
            assert!(std::time::Instant::now() < deadline, "never parked");
            std::thread::yield_now();
        }
        idle.notify_one();
        was_woken
            .recv_timeout(bound)
            .expect("notify_one did not wake the parked worker");
        sleeper.join().unwrap();
        assert_eq!((idle.num_idle(), idle.num_searching()), (0, 1));
    }
}

#[cfg(all(test, loom))]
mod loom_models;
