//! The real driver: `mio` readiness, the timer wheel and the signal
//! listener behind one poll lock, and the optional fallback thread. Who
//! polls when is in the module docs of `driver/mod.rs`.
//!
//! ## Fallback coordination
//! `worker_in_poll` (under its mutex) is `true` while a worker is blocked in
//! the poll; the fallback thread waits on `fallback_cv` while it is set, so
//! an idle runtime does not wake two threads per event. A worker clears it
//! and signals when it leaves the poll.

use std::io;
use std::sync::Arc;
// Picks the epoch poller; no protocol depends on it (see `poll_for_epoch`).
use std::sync::atomic::AtomicU64;
use std::thread;
use std::time::Duration;

use super::PollPark;
use super::park::Parker;
use super::reactor::{PollState, Reactor};
#[cfg(unix)]
use super::signal::{Listener, RuntimeSignals};
use super::time::TimeDriver;
use crate::sync::{AtomicBool, Condvar, Mutex, Ordering, lock, wait};

/// I/O, timers and signals of one runtime.
///
/// `poll` is the one driver lock: whoever holds it polls the `mio::Poll`
/// and fires due timers (see the module docs of `driver/mod.rs` for who
/// takes it when). `worker_in_poll` is set, under its own mutex, only by a
/// worker that holds `poll` and blocks in it; see "Fallback coordination"
/// above.
pub(crate) struct Driver {
    pub(crate) reactor: Reactor,
    pub(crate) time: TimeDriver,
    poll: Mutex<PollState>,
    worker_in_poll: Mutex<bool>,
    fallback_cv: Condvar,
    /// Set once at shutdown (Release) and read by the fallback thread
    /// (Acquire); the thread is then also woken through `fallback_cv` (under
    /// its mutex, so the wait cannot miss it) and the mio `Waker`.
    shutdown: AtomicBool,
    /// The last epoch of [`Driver::poll_for_epoch`] that was polled in.
    polled_epoch: AtomicU64,
    /// This runtime's signal listener, made by the first `signal()` call.
    #[cfg(unix)]
    signals: RuntimeSignals,
}

impl Driver {
    pub(crate) fn new() -> io::Result<Driver> {
        let (reactor, poll_state) = Reactor::new()?;
        Ok(Driver {
            reactor,
            time: TimeDriver::new(),
            poll: Mutex::new(poll_state),
            worker_in_poll: Mutex::new(false),
            fallback_cv: Condvar::new(),
            shutdown: AtomicBool::new(false),
            polled_epoch: AtomicU64::new(0),
            #[cfg(unix)]
            signals: RuntimeSignals::new(),
        })
    }

    /// Polls I/O (up to `timeout`) and fires due timers; returns how many
    /// tasks were woken.
    fn turn(&self, state: &mut PollState, timeout: Option<Duration>) -> usize {
        self.reactor.turn(state, timeout) + self.time.process()
    }

    /// A non-blocking poll of I/O and timers, if nobody else holds the
    /// driver. Returns how many tasks it woke (`0` if the driver was busy).
    pub(crate) fn poll_nonblocking(&self) -> usize {
        match self.poll.try_lock() {
            Ok(mut state) => self.turn(&mut state, Some(Duration::ZERO)),
            Err(_) => 0,
        }
    }

    /// The epoch poll (`epoch.rs`, `yield_queue/decide.rs`): one non-blocking
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

    /// Parks a worker inside the poll, unless another thread holds it.
    ///
    /// A busy worker's non-blocking poll holds the driver for about a
    /// microsecond; giving up then would leave nobody blocked in the poll
    /// while this worker sleeps, and I/O would wait for the next busy poll.
    /// So while no worker is parked in the driver, spin briefly for it, and
    /// if that fails report [`PollPark::Busy`]: the caller then sleeps on
    /// its condvar only briefly before trying again.
    pub(crate) fn park_in_poll(&self, parker: &Parker) -> PollPark {
        let mut spins = 0;
        let mut state = loop {
            match self.poll.try_lock() {
                Ok(state) => break state,
                Err(_) if *lock(&self.worker_in_poll) => return PollPark::Occupied,
                Err(_) if spins >= 100 => return PollPark::Busy,
                Err(_) => {
                    spins += 1;
                    crate::sync::spin_loop();
                }
            }
        };
        if !parker.begin_driver_park() {
            return PollPark::Parked; // already notified: do not block
        }
        *lock(&self.worker_in_poll) = true;
        let timeout = self.time.time_to_next();
        self.turn(&mut state, timeout);
        drop(state);
        *lock(&self.worker_in_poll) = false;
        self.fallback_cv.notify_one();
        parker.end_driver_park();
        PollPark::Parked
    }

    /// When the next timer is due, if one is registered.
    pub(crate) fn time_to_next(&self) -> Option<Duration> {
        self.time.time_to_next()
    }

    /// Timers (sleeps, timeouts, intervals) registered right now.
    pub(crate) fn num_timers(&self) -> usize {
        self.time.len()
    }

    /// Whether a worker sleeps in the driver's poll (then nobody else needs
    /// to poll: that worker notices I/O and timers at once).
    pub(crate) fn has_worker_in_poll(&self) -> bool {
        *lock(&self.worker_in_poll)
    }

    /// This runtime's signal listener, registered with the reactor on first
    /// use.
    #[cfg(unix)]
    pub(crate) fn signal_listener(&self) -> io::Result<Arc<Listener>> {
        self.signals.listener(&self.reactor)
    }

    /// Wakes whoever is blocked in the poll (worker or fallback thread).
    pub(crate) fn wake(&self) {
        self.reactor.wake();
    }

    /// Starts the fallback driver thread.
    pub(crate) fn start_fallback(
        self: &Arc<Self>,
        name: String,
    ) -> io::Result<thread::JoinHandle<()>> {
        let driver = self.clone();
        thread::Builder::new()
            .name(name)
            .spawn(move || driver.fallback_main())
    }

    fn fallback_main(&self) {
        tracing::debug!("fallback driver thread started");
        loop {
            {
                let mut worker_in_poll = lock(&self.worker_in_poll);
                while *worker_in_poll && !self.shutdown.load(Ordering::Acquire) {
                    worker_in_poll = wait(&self.fallback_cv, worker_in_poll);
                }
            }
            if self.shutdown.load(Ordering::Acquire) {
                break;
            }
            wait_readable(self.reactor.poll_fd(), self.time.time_to_next());
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

    /// Stops the fallback thread (if any) and fails all pending I/O.
    pub(crate) fn shutdown(&self) {
        self.shutdown.store(true, Ordering::Release);
        {
            let _worker_in_poll = lock(&self.worker_in_poll);
            self.fallback_cv.notify_all();
        }
        self.reactor.wake();
        self.reactor.shutdown();
    }
}

/// Waits until `fd` is readable or `timeout` passes.
fn wait_readable(fd: std::os::fd::RawFd, timeout: Option<Duration>) {
    let timeout_ms = match timeout {
        // Round up so the timer is due when we wake.
        Some(timeout) => timeout.as_micros().div_ceil(1000).min(i32::MAX as u128) as libc::c_int,
        None => -1,
    };
    let mut pollfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: `pollfd` is a valid, exclusively borrowed array of one entry
    // for the duration of the call; `fd` is the driver's open epoll fd,
    // which lives as long as the driver (and so as this thread's `&self`).
    let result = unsafe { libc::poll(&mut pollfd, 1, timeout_ms) };
    if result < 0 {
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            tracing::error!(%error, "fallback driver poll failed");
            // Avoid a hot loop on a persistent error.
            thread::sleep(Duration::from_millis(1));
        }
    }
}
