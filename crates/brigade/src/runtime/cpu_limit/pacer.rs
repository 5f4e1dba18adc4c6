//! Pacing background work to the CPU limit, so that the kernel never
//! throttles the runtime (rule E2 of the policy, `policy.rs`).
//!
//! ## Why
//! A CFS quota lets the cgroup run `quota` of CPU per `period` (100 ms by
//! default); once it has, every thread of the cgroup stops until the next
//! period. Background work at full CPU spends the period's quota early,
//! and a request arriving then waits for the next period, however well
//! the background yields. So the runtime spends the quota itself, finely:
//! time is cut into *windows* of a tenth of the period, and in each window
//! background work may run until the process has used `target × limit ×
//! window`, less a *reserve* for the requests; then it is *paced* until
//! the window ends: tasks that reach `yield_if_busy()` step aside into the
//! yield queue, and workers take nothing from the yield queue, nor elastic
//! idle grants, nor floor turns; a worker with nothing else to do parks
//! until the window ends (it never spins). Requests are never paced.
//!
//! Usage is front-loaded within each window, so any period, wherever the
//! kernel's boundaries fall, holds at most ten windows' budgets: at most
//! `target` of the quota, with the reserve on top.
//!
//! A window can still overrun its share: the background that runs while
//! paced without reaching a yield point (a task polled from a deque runs
//! its stretch before it can step aside: at start-up, every task's first
//! stretch), requests beyond the reserve, a read of the clock up to
//! [`READ_EVERY_NANOS`] late. What a window used beyond its share is a
//! *debt* the next windows' budgets repay ([`Window::debt`]), so a period
//! holds its windows' shares plus at most one window's overrun, not the
//! sum of them all. Unused share is not saved up: a debt is never
//! negative.
//!
//! ## What adapts
//! - The reserve: a window that ended paced tells how much CPU the
//!   requests took while the background waited; the next reserve is that
//!   much ([`next_reserve`]), between 2% and half of a window's quota (no
//!   margin on top: the target's headroom below the quota is the margin,
//!   and a margin in both left a tenth of a 0.5-CPU quota unused).
//! - The target: the monitor reads the cgroup's `nr_throttled` at each of
//!   its ticks; a period throttled anyway (another process in the cgroup,
//!   threads the process clock does not see) lowers the target by
//!   [`TARGET_BACKOFF_PERMILLE`], down to [`MIN_TARGET_PERMILLE`]; each
//!   second without throttling raises it by [`TARGET_RECOVERY_PERMILLE`],
//!   up to [`MAX_TARGET_PERMILLE`]. A throttle in the first periods after
//!   build or a change of the limit does not count (`LimitReader`'s
//!   grace, `limit_reader.rs`): that period's quota may have been spent
//!   before the pacer could see it.
//!
//! ## Protocol
//! The limit, the window length and the target are written by the monitor
//! and read by workers with `Relaxed` loads: a stale value paces one
//! window by the old numbers. The window's accounting is under `window`'s
//! lock, taken at most once per [`READ_EVERY_NANOS`] per process (a read
//! of the process's CPU clock) and at each window's end. `paced_until` is
//! the one word the workers' checks read: non-zero while paced. Whoever
//! sets it takes an attention hold (every `yield_if_busy()` then takes its
//! slow path, where pacing is checked), and whoever ends the window clears
//! it and gives the hold back, both under the lock, so holds and
//! `paced_until` stay paired.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::policy::{
    MAX_TARGET_PERMILLE, MIN_TARGET_PERMILLE, PACING_WINDOWS_PER_PERIOD, READ_EVERY_NANOS,
    TARGET_BACKOFF_PERMILLE, TARGET_RECOVERY_PERMILLE,
};

/// The pacing state of one runtime.
pub(crate) struct Pacer {
    /// The limit in force, in millionths of a CPU; 0: no limit (nothing is
    /// paced).
    limit_micro: AtomicU64,
    /// A window's length in nanoseconds (the period over
    /// [`PACING_WINDOWS_PER_PERIOD`]).
    window_nanos: AtomicU64,
    /// The share of the limit the process may use per window, in 1/1000.
    target_permille: AtomicU64,
    /// While paced: the runtime-clock time the window ends; 0 otherwise.
    paced_until: AtomicU64,
    /// The current window's index and when its budget is looked at next,
    /// copies of `window`'s for the check that takes no lock.
    window_index: AtomicU64,
    next_read: AtomicU64,
    /// Time background work was held back so far, in nanoseconds (a
    /// metric).
    paced_nanos: AtomicU64,
    window: Mutex<Window>,
}

/// The current window's accounting.
#[derive(Debug, Default)]
struct Window {
    /// Its index (runtime-clock time over the window length); `u64::MAX`
    /// before the first.
    index: u64,
    /// The process's CPU time when it began.
    cpu_at_start: u64,
    /// When pacing began in it, and the CPU time then.
    paced_from: Option<(u64, u64)>,
    /// The CPU kept for requests this window, in nanoseconds.
    reserve: u64,
    /// What the windows before used beyond their share (target × a
    /// window's quota), not yet repaid, in CPU nanoseconds: this window's
    /// budget is that much smaller.
    debt: u64,
    /// When the process clock may be read next.
    next_read: u64,
}

/// What a pacing check needs from the runtime: its clock and the
/// process's CPU clock, and the attention hold that sends every
/// `yield_if_busy()` to its slow path while paced.
pub(crate) trait PaceHost {
    /// The process's CPU time, all threads, in nanoseconds.
    fn process_cpu_nanos(&self) -> u64;
    /// Takes one attention hold.
    fn hold_attention(&self);
    /// Gives back the hold [`hold_attention`](Self::hold_attention) took.
    fn release_attention(&self);
}

impl Pacer {
    /// A pacer for `limit` CPUs (`None`: nothing is paced) over periods of
    /// `period`.
    pub(crate) fn new(limit: Option<f64>, period: Duration) -> Self {
        Pacer {
            limit_micro: AtomicU64::new(limit_micro(limit)),
            window_nanos: AtomicU64::new(window_nanos(period)),
            target_permille: AtomicU64::new(MAX_TARGET_PERMILLE),
            paced_until: AtomicU64::new(0),
            window_index: AtomicU64::new(u64::MAX),
            next_read: AtomicU64::new(0),
            paced_nanos: AtomicU64::new(0),
            window: Mutex::new(Window {
                index: u64::MAX,
                ..Window::default()
            }),
        }
    }

    /// Sets the limit in force (`None`: no limit) and the kernel's period
    /// (the monitor, at build and when the limit changes). Ends pacing at
    /// once if the limit went.
    pub(crate) fn set_limit(&self, limit: Option<f64>, period: Duration, host: &dyn PaceHost) {
        let micro = limit_micro(limit);
        self.window_nanos
            .store(window_nanos(period), Ordering::Relaxed);
        self.limit_micro.store(micro, Ordering::Relaxed);
        if micro == 0 {
            let mut window = self.lock();
            self.end_pacing(&mut window, u64::MAX, host);
            window.index = u64::MAX;
            window.debt = 0;
            self.window_index.store(u64::MAX, Ordering::Relaxed);
        }
    }

    /// Whether a limit is in force: one load, the pacer's cost where none
    /// is.
    #[inline]
    pub(crate) fn has_limit(&self) -> bool {
        self.limit_micro.load(Ordering::Relaxed) != 0
    }

    /// The limit in force, in CPUs.
    pub(crate) fn limit(&self) -> Option<f64> {
        match self.limit_micro.load(Ordering::Relaxed) {
            0 => None,
            micro => Some(micro as f64 / 1e6),
        }
    }

    /// Time background work was held back so far.
    pub(crate) fn paced(&self) -> Duration {
        Duration::from_nanos(self.paced_nanos.load(Ordering::Relaxed))
    }

    /// Whether background work is paced at `now` (runtime-clock ns): one
    /// load while nothing is paced. Ends the window's pacing once it is
    /// over.
    #[inline]
    pub(crate) fn is_paced(&self, now: impl FnOnce() -> u64, host: &dyn PaceHost) -> bool {
        let until = self.paced_until.load(Ordering::Relaxed);
        if until == 0 {
            return false;
        }
        let now = now();
        if now < until {
            return true;
        }
        let mut window = self.lock();
        self.end_pacing(&mut window, now, host);
        false
    }

    /// How long a worker with only paced work may sleep: until the window
    /// ends; `None` while nothing is paced.
    pub(crate) fn sleep_cap(&self, now: u64) -> Option<Duration> {
        match self.paced_until.load(Ordering::Relaxed) {
            0 => None,
            until => Some(Duration::from_nanos(until.saturating_sub(now))),
        }
    }

    /// A background task is about to run on (at a yield point): whether
    /// it must step aside instead, the window's budget being spent. Reads
    /// the process's CPU clock at most once per [`READ_EVERY_NANOS`].
    pub(crate) fn over_budget(&self, now: u64, host: &dyn PaceHost) -> bool {
        let limit = self.limit_micro.load(Ordering::Relaxed);
        if limit == 0 {
            return false;
        }
        if self.is_paced(|| now, host) {
            return true;
        }
        let window_nanos = self.window_nanos.load(Ordering::Relaxed);
        let index = now / window_nanos;
        if index == self.window_index.load(Ordering::Relaxed)
            && now < self.next_read.load(Ordering::Relaxed)
        {
            return false; // Looked at less than READ_EVERY_NANOS ago.
        }
        let quota = window_quota(limit, window_nanos);
        let share = quota * self.target_permille.load(Ordering::Relaxed) / 1000;
        let mut window = self.lock();
        if window.index != index {
            self.begin_window(&mut window, index, quota, share, host.process_cpu_nanos());
        } else if now < window.next_read || window.paced_from.is_some() {
            return window.paced_from.is_some();
        }
        window.next_read = now + READ_EVERY_NANOS;
        self.window_index.store(window.index, Ordering::Relaxed);
        self.next_read.store(window.next_read, Ordering::Relaxed);
        let cpu = host.process_cpu_nanos();
        let budget = share.saturating_sub(window.reserve + window.debt);
        if cpu.saturating_sub(window.cpu_at_start) < budget {
            return false;
        }
        window.paced_from = Some((now, cpu));
        self.paced_until
            .store((index + 1) * window_nanos, Ordering::Relaxed);
        host.hold_attention();
        true
    }

    /// The monitor's tick: `throttled` periods since its last one (the
    /// cgroup's `nr_throttled` moved) lower the target; `quiet_second`, a
    /// second gone by without one, raises it back a step.
    pub(crate) fn note_throttling(&self, throttled: u64, quiet_second: bool) {
        let target = self.target_permille.load(Ordering::Relaxed);
        let next = if throttled > 0 {
            target
                .saturating_sub(TARGET_BACKOFF_PERMILLE * throttled.min(4))
                .max(MIN_TARGET_PERMILLE)
        } else if quiet_second {
            (target + TARGET_RECOVERY_PERMILLE).min(MAX_TARGET_PERMILLE)
        } else {
            target
        };
        self.target_permille.store(next, Ordering::Relaxed);
    }

    /// The target now, in 1/1000 of the limit.
    #[cfg(test)]
    pub(crate) fn target_permille(&self) -> u64 {
        self.target_permille.load(Ordering::Relaxed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Window> {
        self.window
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// Starts window `index` with the process at `cpu`, settling the last
    /// one's reserve and debt (`share`: a window's target share of
    /// `quota`).
    fn begin_window(&self, window: &mut Window, index: u64, quota: u64, share: u64, cpu: u64) {
        let now = index * self.window_nanos.load(Ordering::Relaxed);
        if window.index != u64::MAX {
            let used = cpu.saturating_sub(window.cpu_at_start);
            let windows = index.saturating_sub(window.index).max(1);
            window.debt = next_debt(window.debt, used, share.saturating_mul(windows));
        }
        if let Some((from, cpu_then)) = window.paced_from {
            let paced_for = now.saturating_sub(from);
            let used = cpu.saturating_sub(cpu_then);
            window.reserve = next_reserve(used, paced_for, quota);
        } else {
            window.reserve = next_reserve(0, 0, quota).max(window.reserve * 9 / 10);
        }
        window.index = index;
        window.cpu_at_start = cpu;
        window.paced_from = None;
        window.next_read = 0;
    }

    /// Ends the window's pacing, if it is paced, at `now`.
    fn end_pacing(&self, window: &mut Window, now: u64, host: &dyn PaceHost) {
        let until = self.paced_until.swap(0, Ordering::Relaxed);
        if until == 0 {
            return;
        }
        host.release_attention();
        if let Some((from, _)) = window.paced_from {
            let paced = until.min(now).saturating_sub(from);
            self.paced_nanos.fetch_add(paced, Ordering::Relaxed);
        }
    }
}

/// `limit` in millionths of a CPU; 0 for none.
fn limit_micro(limit: Option<f64>) -> u64 {
    limit.map_or(0, |cpus| ((cpus * 1e6) as u64).max(1))
}

/// A pacing window's length for a kernel period: a tenth of it, at least
/// a millisecond.
fn window_nanos(period: Duration) -> u64 {
    (period.as_nanos() as u64 / PACING_WINDOWS_PER_PERIOD).max(1_000_000)
}

/// A window's share of the quota, in CPU nanoseconds.
fn window_quota(limit_micro: u64, window_nanos: u64) -> u64 {
    (u128::from(limit_micro) * u128::from(window_nanos) / 1_000_000) as u64
}

/// The debt after windows whose shares add up to `shares` used `used`
/// with `debt` owed before them: what they used beyond their shares, never
/// below zero (unused share is not saved up).
fn next_debt(debt: u64, used: u64, shares: u64) -> u64 {
    (debt + used).saturating_sub(shares)
}

/// The reserve for the next window, from the CPU `used` in the `paced_for`
/// nanoseconds the last window was paced (the requests' share of a window
/// then), between 2% and half of a window's `quota`.
pub(crate) fn next_reserve(used: u64, paced_for: u64, quota: u64) -> u64 {
    let floor = quota / 50;
    let ceiling = quota / 2;
    if paced_for == 0 {
        return floor;
    }
    used.clamp(floor, ceiling)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A process whose CPU clock the test moves, and its attention holds.
    #[derive(Default)]
    struct Host {
        cpu: Cell<u64>,
        holds: Cell<i64>,
    }

    impl PaceHost for Host {
        fn process_cpu_nanos(&self) -> u64 {
            self.cpu.get()
        }
        fn hold_attention(&self) {
            self.holds.set(self.holds.get() + 1);
        }
        fn release_attention(&self) {
            self.holds.set(self.holds.get() - 1);
        }
    }

    const MS: u64 = 1_000_000;

    #[test]
    fn without_a_limit_nothing_is_paced() {
        let pacer = Pacer::new(None, Duration::from_millis(100));
        let host = Host::default();
        host.cpu.set(u64::MAX / 2);
        assert!(!pacer.over_budget(5 * MS, &host));
        assert_eq!(host.holds.get(), 0);
    }

    #[test]
    fn background_is_paced_once_the_window_budget_is_spent_until_the_window_ends() {
        let pacer = Pacer::new(None, Duration::from_millis(100));
        let host = Host::default();
        // 0.5 CPU, 100 ms periods: 10 ms windows of 5 ms quota each.
        pacer.set_limit(Some(0.5), Duration::from_millis(100), &host);
        assert!(!pacer.over_budget(0, &host), "a fresh window");
        // 4 ms of CPU: under 95% of 5 ms less the 2% reserve.
        host.cpu.set(4 * MS);
        assert!(!pacer.over_budget(MS, &host));
        host.cpu.set(5 * MS);
        assert!(pacer.over_budget(2 * MS, &host), "the budget is spent");
        assert_eq!(host.holds.get(), 1, "pacing holds attention");
        assert!(pacer.is_paced(|| 9 * MS, &host));
        assert_eq!(pacer.sleep_cap(9 * MS), Some(Duration::from_millis(1)));
        // The window ends: pacing ends, the hold is given back.
        assert!(!pacer.is_paced(|| 10 * MS, &host));
        assert_eq!(host.holds.get(), 0);
        assert_eq!(pacer.paced(), Duration::from_millis(8));
        assert!(
            !pacer.over_budget(10 * MS, &host),
            "the next window's budget"
        );
    }

    #[test]
    fn the_clock_is_read_at_most_once_per_interval() {
        let pacer = Pacer::new(None, Duration::from_millis(100));
        let host = Host::default();
        pacer.set_limit(Some(1.0), Duration::from_millis(100), &host);
        assert!(!pacer.over_budget(0, &host));
        // Spent, but seen only at the next read.
        host.cpu.set(10 * MS);
        assert!(!pacer.over_budget(READ_EVERY_NANOS / 2, &host));
        assert!(pacer.over_budget(READ_EVERY_NANOS, &host));
    }

    #[test]
    fn what_a_window_used_beyond_its_share_the_next_one_repays() {
        let pacer = Pacer::new(None, Duration::from_millis(100));
        let host = Host::default();
        // 0.5 CPU: 5 ms of quota a window, a share of 4.75 ms at 95%.
        pacer.set_limit(Some(0.5), Duration::from_millis(100), &host);
        assert!(!pacer.over_budget(0, &host));
        // Stretches that no yield point cut short: 7 ms in window 0.
        host.cpu.set(7 * MS);
        assert!(pacer.over_budget(MS, &host));
        assert!(!pacer.is_paced(|| 10 * MS, &host));
        // Window 1 owes 2.25 ms: its budget is 4.75 - 0.1 (reserve) - 2.25.
        assert!(!pacer.over_budget(10 * MS, &host));
        host.cpu.set(7 * MS + 2_500_000);
        assert!(pacer.over_budget(11 * MS, &host), "the debt was not repaid");
        // Window 2 owes nothing more (2.5 of 4.75 used): its full budget.
        assert!(!pacer.is_paced(|| 20 * MS, &host));
        assert!(!pacer.over_budget(20 * MS, &host));
        host.cpu.set(7 * MS + 2_500_000 + 4 * MS);
        assert!(!pacer.over_budget(21 * MS, &host));
    }

    #[test]
    fn debt_is_never_negative_nor_kept_past_idle_windows() {
        assert_eq!(next_debt(0, 3, 5), 0, "unused share is not saved up");
        assert_eq!(next_debt(0, 7, 5), 2);
        assert_eq!(next_debt(2, 4, 5), 1);
        assert_eq!(next_debt(2, 7, 3 * 5), 0, "three windows' shares");
    }

    #[test]
    fn the_reserve_follows_what_requests_used_while_paced() {
        assert_eq!(next_reserve(0, 0, 100), 2);
        assert_eq!(next_reserve(20, 5, 100), 20);
        assert_eq!(next_reserve(1_000, 5, 100), 50);
        assert_eq!(next_reserve(0, 5, 100), 2);
    }

    #[test]
    fn throttling_lowers_the_target_and_quiet_seconds_raise_it() {
        let pacer = Pacer::new(None, Duration::from_millis(100));
        assert_eq!(pacer.target_permille(), MAX_TARGET_PERMILLE);
        pacer.note_throttling(1, false);
        assert_eq!(
            pacer.target_permille(),
            MAX_TARGET_PERMILLE - TARGET_BACKOFF_PERMILLE
        );
        for _ in 0..100 {
            pacer.note_throttling(4, false);
        }
        assert_eq!(pacer.target_permille(), MIN_TARGET_PERMILLE);
        pacer.note_throttling(0, false);
        assert_eq!(pacer.target_permille(), MIN_TARGET_PERMILLE);
        pacer.note_throttling(0, true);
        assert_eq!(
            pacer.target_permille(),
            MIN_TARGET_PERMILLE + TARGET_RECOVERY_PERMILLE
        );
    }

    #[test]
    fn removing_the_limit_ends_pacing_and_gives_the_hold_back() {
        let pacer = Pacer::new(None, Duration::from_millis(100));
        let host = Host::default();
        pacer.set_limit(Some(0.5), Duration::from_millis(100), &host);
        assert!(!pacer.over_budget(0, &host));
        host.cpu.set(6 * MS);
        assert!(pacer.over_budget(MS, &host));
        pacer.set_limit(None, Duration::from_millis(100), &host);
        assert_eq!(host.holds.get(), 0);
        assert!(!pacer.is_paced(|| 2 * MS, &host));
        assert!(!pacer.over_budget(2 * MS, &host));
    }
}
