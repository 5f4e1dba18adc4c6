//! The elastic utilization controller: a pure function of its state and the
//! p99 it is fed, so it can be tested with synthetic sequences.

use std::time::Duration;

use super::ElasticConfig;

/// Turns p99 scheduling latencies into an elastic CPU utilization limit.
#[derive(Debug, Clone)]
pub(crate) struct Controller {
    config: ElasticConfig,
    limit: f64,
}

impl Controller {
    pub(crate) fn new(config: ElasticConfig) -> Self {
        let limit = config.min_utilization;
        Controller { config, limit }
    }

    #[cfg(test)]
    pub(crate) fn limit(&self) -> f64 {
        self.limit
    }

    fn delta(&self) -> f64 {
        self.config.adjustment_per_second * self.config.sample_period.as_secs_f64()
    }

    /// One tick: `p99` over the last window, and whether elastic tasks are
    /// waiting for admission. Returns the new limit.
    pub(crate) fn tick(&mut self, p99: Duration, waiting: bool) -> f64 {
        let config = &self.config;
        let delta = self.delta();
        let inactive = config.min_utilization
            + config.inactive_point * (config.max_utilization - config.min_utilization);
        if p99 > config.target {
            self.limit -= config.decrease_factor * delta;
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
        assert!(close(c.tick(LOW, true), 0.06));
        assert!(close(c.tick(LOW, true), 0.07));
        // Nobody waiting, below the inactive point (0.05 + 0.1 × 0.95): stays.
        assert!(close(c.tick(LOW, false), 0.07));
    }

    #[test]
    fn decreases_twice_as_fast_as_it_increases() {
        let mut c = controller();
        for _ in 0..50 {
            c.tick(LOW, true);
        }
        assert!(close(c.limit(), 0.55));
        assert!(close(c.tick(HIGH, true), 0.53));
        assert!(close(c.tick(HIGH, false), 0.51));
    }

    #[test]
    fn idles_down_to_the_inactive_point_by_a_quarter_step() {
        let mut c = controller();
        for _ in 0..50 {
            c.tick(LOW, true);
        }
        assert!(close(c.tick(LOW, false), 0.5475));
        for _ in 0..1000 {
            c.tick(LOW, false);
        }
        assert!(close(c.limit(), 0.05 + 0.1 * 0.95));
    }

    #[test]
    fn clamps_to_min_and_max() {
        let mut c = controller();
        for _ in 0..10 {
            c.tick(HIGH, true);
        }
        assert!(close(c.limit(), 0.05));
        for _ in 0..1000 {
            c.tick(LOW, true);
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
            c.tick(LOW, true);
        }
        assert!(c.limit() >= 0.9 * config.max_utilization, "{}", c.limit());
    }
}
