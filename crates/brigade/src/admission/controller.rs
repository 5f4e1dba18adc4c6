//! The elastic utilization controller: a pure function of its state and the
//! p99s it is fed, so it can be tested with synthetic sequences.
//!
//! It is CockroachDB's controller (see [`ElasticConfig`]) with one guard:
//! within one window of a cut, the limit is cut again only if the p99 of
//! the *recent* part of the window (its last fifth, 0.5 s by default) is
//! above the target too; otherwise it holds (neither falls nor rises).
//! The window remembers a latency spike for its whole length, so without
//! the guard the controller kept cutting for up to 2.5 s after a cut had
//! already worked. CockroachDB's step (0.0001 a tick) is too small for that
//! to matter, but with a step fast enough to reach the maximum within 30 s
//! it became a limit cycle: measured with `examples/admission.rs` (case 2),
//! the limit swung between 0.05 and 0.3 and the foreground p99 per window
//! between 0.1 and 3.7 ms. Once a whole window has passed since the last
//! cut, the window's own p99 decides again, so the limit cannot rest where
//! the p99 stays above the target.
// Under loom: the elastic controller runs on the monitor thread, which loom models leave out.
#![cfg_attr(loom, allow(dead_code))]

use std::time::Duration;

use super::ElasticConfig;

/// Turns p99 scheduling latencies into an elastic CPU utilization limit.
#[derive(Debug, Clone)]
pub(crate) struct Controller {
    config: ElasticConfig,
    limit: f64,
    /// Ticks since the limit was last cut (saturating).
    ticks_since_cut: u32,
    /// Ticks per window.
    window_ticks: u32,
}

impl Controller {
    pub(crate) fn new(config: ElasticConfig) -> Self {
        let limit = config.min_utilization;
        let window_ticks =
            (config.window.as_secs_f64() / config.sample_period.as_secs_f64()).round() as u32;
        Controller {
            config,
            limit,
            ticks_since_cut: u32::MAX,
            window_ticks,
        }
    }

    #[cfg(test)]
    pub(crate) fn limit(&self) -> f64 {
        self.limit
    }

    fn delta(&self) -> f64 {
        self.config.adjustment_per_second * self.config.sample_period.as_secs_f64()
    }

    /// One tick: `p99` over the last window, `recent_p99` over its last
    /// fifth, and whether elastic tasks are waiting for admission. Returns
    /// the new limit.
    pub(crate) fn tick(&mut self, p99: Duration, recent_p99: Duration, waiting: bool) -> f64 {
        let config = &self.config;
        let delta = self.delta();
        let inactive = config.min_utilization
            + config.inactive_point * (config.max_utilization - config.min_utilization);
        self.ticks_since_cut = self.ticks_since_cut.saturating_add(1);
        if p99 > config.target {
            if recent_p99 > config.target || self.ticks_since_cut > self.window_ticks {
                self.limit -= config.decrease_factor * delta;
                self.ticks_since_cut = 0;
            }
        } else if waiting {
            self.limit += delta;
        } else if self.limit > inactive {
            self.limit = (self.limit - config.inactive_decrease * delta).max(inactive);
        }
        self.limit = self
            .limit
            .clamp(config.min_utilization, config.max_utilization);
        self.limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOW: Duration = Duration::from_micros(100);
    const HIGH: Duration = Duration::from_millis(5);

    fn controller() -> Controller {
        Controller::new(ElasticConfig {
            adjustment_per_second: 0.1, // delta = 0.01 per tick
            ..Default::default()
        })
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn starts_at_min_and_rises_only_while_work_waits() {
        let mut c = controller();
        assert!(close(c.limit(), 0.05));
        assert!(close(c.tick(LOW, LOW, true), 0.06));
        assert!(close(c.tick(LOW, LOW, true), 0.07));
        // Nobody waiting, below the inactive point (0.05 + 0.1 × 0.95): stays.
        assert!(close(c.tick(LOW, LOW, false), 0.07));
    }

    #[test]
    fn decreases_twice_as_fast_as_it_increases() {
        let mut c = controller();
        for _ in 0..50 {
            c.tick(LOW, LOW, true);
        }
        assert!(close(c.limit(), 0.55));
        assert!(close(c.tick(HIGH, HIGH, true), 0.53));
        assert!(close(c.tick(HIGH, HIGH, false), 0.51));
    }

    #[test]
    fn holds_for_a_window_while_only_the_old_part_of_it_is_slow() {
        let mut c = controller();
        for _ in 0..50 {
            c.tick(LOW, LOW, true);
        }
        // The window is 25 ticks.
        assert!(close(c.tick(HIGH, LOW, true), 0.53));
        // The cut worked: recent samples are fast again, the window still
        // remembers the slow ones. Neither cut further nor raise.
        for _ in 0..25 {
            assert!(close(c.tick(HIGH, LOW, true), 0.53));
        }
        // A whole window after the cut, and still slow: cut.
        assert!(close(c.tick(HIGH, LOW, false), 0.51));
        // Recent samples slow: cut at once.
        assert!(close(c.tick(HIGH, HIGH, true), 0.49));
        assert!(close(c.tick(HIGH, LOW, true), 0.49));
        // The window is fast again: rise.
        assert!(close(c.tick(LOW, LOW, true), 0.50));
    }

    #[test]
    fn idles_down_to_the_inactive_point_by_a_quarter_step() {
        let mut c = controller();
        for _ in 0..50 {
            c.tick(LOW, LOW, true);
        }
        assert!(close(c.tick(LOW, LOW, false), 0.5475));
        for _ in 0..1000 {
            c.tick(LOW, LOW, false);
        }
        assert!(close(c.limit(), 0.05 + 0.1 * 0.95));
    }

    #[test]
    fn clamps_to_min_and_max() {
        let mut c = controller();
        for _ in 0..10 {
            c.tick(HIGH, HIGH, true);
        }
        assert!(close(c.limit(), 0.05));
        for _ in 0..1000 {
            c.tick(LOW, LOW, true);
        }
        assert!(close(c.limit(), 1.0));
    }

    #[test]
    fn the_default_rate_reaches_ninety_percent_of_max_within_thirty_seconds() {
        let config = ElasticConfig::default();
        let ticks =
            (Duration::from_secs(30).as_secs_f64() / config.sample_period.as_secs_f64()) as usize;
        let mut c = Controller::new(config.clone());
        for _ in 0..ticks {
            c.tick(LOW, LOW, true);
        }
        assert!(c.limit() >= 0.9 * config.max_utilization, "{}", c.limit());
    }
}
