//! The monitor's reading of the limit: the throttling counters at each
//! tick, the limit itself again at most once per `LIMIT_REREAD` (a live
//! resize), and what follows a change (the pacer, the running workers,
//! elastic admission's capacity).

use std::time::{Duration, Instant};

use super::cgroup::Quota;
use super::{LimitSource, period_of, workers_for};
use crate::policy::{LIMIT_REREAD, TARGET_RECOVERY_AFTER, THROTTLING_GRACE_PERIODS};
use crate::runtime::Shared;
use crate::sync::Ordering;

/// The monitor's reading of the limit: again at most once per
/// `LIMIT_REREAD`, the throttling counters at each tick.
pub(crate) struct LimitReader {
    source: LimitSource,
    limit: Option<Quota>,
    next_read: Instant,
    /// The counters at build, and at the last tick.
    base: (u64, u64),
    last: (u64, u64),
    /// When the last throttled period was seen, or the last second without
    /// one was credited (the target's recovery).
    quiet_since: Instant,
    /// Until when throttled periods are not the pacer's to answer for: a
    /// few periods after build and after each change of the limit
    /// ([`THROTTLING_GRACE_PERIODS`]).
    grace_until: Instant,
    warned: bool,
}

impl LimitReader {
    /// The reader of `source`, whose limit read at build was `limit`.
    pub(crate) fn new(source: LimitSource, limit: Option<Quota>, warned: bool) -> Self {
        let counters = source.read_throttling();
        let now = Instant::now();
        LimitReader {
            source,
            limit,
            next_read: now + LIMIT_REREAD,
            base: counters,
            last: counters,
            quiet_since: now,
            grace_until: now + grace(limit),
            warned,
        }
    }

    /// The monitor's tick: the throttling counters, and the limit once
    /// `LIMIT_REREAD` has passed since the last reading.
    pub(crate) fn tick(&mut self, shared: &Shared, now: Instant) {
        if matches!(self.source, LimitSource::None) {
            return;
        }
        let state = &shared.cpu;
        let counters = self.source.read_throttling();
        let throttled = self.answerable(counters.0.saturating_sub(self.last.0), now);
        self.last = counters;
        state
            .throttled_periods
            .store(counters.0.saturating_sub(self.base.0), Ordering::Relaxed);
        state
            .throttled_nanos
            .store(counters.1.saturating_sub(self.base.1), Ordering::Relaxed);
        let quiet_second = throttled == 0 && now >= self.quiet_since + TARGET_RECOVERY_AFTER;
        if throttled > 0 || quiet_second {
            self.quiet_since = now;
        }
        state.pacer.note_throttling(throttled, quiet_second);
        if now >= self.next_read {
            self.next_read = now + LIMIT_REREAD;
            let limit = self.source.read_limit(&mut self.warned);
            if limit != self.limit {
                self.apply(shared, limit);
            }
        }
    }

    /// Of `throttled` periods seen at `now`, those that lower the pacer's
    /// target: none during the grace after build or a change of the limit.
    fn answerable(&self, throttled: u64, now: Instant) -> u64 {
        if now < self.grace_until { 0 } else { throttled }
    }

    /// A new limit is in force: the pacer, the running workers and
    /// elastic admission's capacity follow it.
    fn apply(&mut self, shared: &Shared, limit: Option<Quota>) {
        let previous = std::mem::replace(&mut self.limit, limit);
        self.grace_until = Instant::now() + grace(limit);
        let state = &shared.cpu;
        state
            .pacer
            .set_limit(limit.map(|q| q.cpus), period_of(limit), shared);
        let workers = shared.num_workers();
        let running = workers_for(limit.map(|q| q.cpus), workers);
        let before = state.running_workers.swap(running, Ordering::Relaxed);
        for index in before..running {
            // A worker parked by the limit runs again.
            shared.idle.unpark(index);
        }
        tracing::info!(
            target: "brigade::cpu_limit",
            limit = ?limit.map(|q| q.cpus),
            previous = ?previous.map(|q| q.cpus),
            running_workers = running,
            "CPU limit changed"
        );
    }

    /// The limit in force, in CPUs, as elastic admission's capacity: the
    /// limit, at most the workers.
    pub(crate) fn capacity(&self, workers: usize) -> f64 {
        self.limit
            .map_or(workers as f64, |quota| quota.cpus.min(workers as f64))
    }
}

/// How long throttling is not the pacer's to answer for once `limit` is in
/// force: [`THROTTLING_GRACE_PERIODS`] of its periods.
fn grace(limit: Option<Quota>) -> Duration {
    period_of(limit) * THROTTLING_GRACE_PERIODS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throttling_in_the_first_periods_of_a_limit_is_not_the_pacers() {
        let quota = Quota {
            cpus: 0.5,
            period: Duration::from_millis(100),
        };
        let reader = LimitReader::new(LimitSource::Fixed(0.5), Some(quota), false);
        assert_eq!(
            reader.grace_until - reader.quiet_since,
            Duration::from_millis(200),
            "two periods from build"
        );
        let ends = reader.grace_until;
        assert_eq!(reader.answerable(3, ends - Duration::from_millis(1)), 0);
        assert_eq!(reader.answerable(3, ends), 3);
    }
}
