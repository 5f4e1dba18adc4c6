//! [`Builder::build`]'s checks: every setting validated into a
//! [`BuildError`] that names it, and the worker count resolved from the
//! setting, `BRIGADE_WORKER_THREADS` or the host.

use std::time::Duration;

use super::{Builder, WORKER_THREADS_ENV};
use crate::runtime::BuildError;
use crate::runtime::cpu_limit::cgroup::Quota;
use crate::runtime::cpu_limit::{self, CpuLimit, LimitAtBuild};
use crate::runtime::scheduler::idle::MAX_WORKERS;

impl Builder {
    /// Validates the settings: the worker count (from the setting, the
    /// environment or the host) and the spare count, or the `BuildError`
    /// that names the first invalid setting.
    pub(super) fn checked(&self, limit: Option<Quota>) -> Result<(usize, usize), BuildError> {
        let workers = self.resolved_worker_threads(limit)?;
        // A current-thread runtime has no spare workers: nothing runs its
        // tasks but the thread in `block_on` (`Builder::new_current_thread`).
        let spares = if self.current_thread {
            0
        } else {
            self.max_spare_workers.unwrap_or(workers)
        };
        if self.current_thread && self.driver_thread {
            return Err(BuildError::setting(
                "driver_thread",
                "is not available on a current-thread runtime, whose thread in `block_on` \
                 polls I/O and timers itself; use `Builder::new_multi_thread()`",
            ));
        }
        if spares > MAX_WORKERS - workers {
            return Err(BuildError::setting(
                "max_spare_workers",
                format!(
                    "must be at most {} with {workers} workers, got {spares}",
                    MAX_WORKERS - workers
                ),
            ));
        }
        if let Some(threshold) = self.compensation_threshold
            && threshold < Duration::from_millis(1)
        {
            return Err(BuildError::setting(
                "compensation_threshold",
                format!("must be at least 1 ms (or None), got {threshold:?}"),
            ));
        }
        if let Some(delay) = self.max_yield_delay
            && delay < Duration::from_millis(1)
        {
            return Err(BuildError::setting(
                "max_yield_delay",
                format!("must be at least 1 ms (or None), got {delay:?}"),
            ));
        }
        if self.max_blocking_threads == 0 {
            return Err(BuildError::setting(
                "max_blocking_threads",
                "must be at least 1, got 0",
            ));
        }
        if self.thread_keep_alive.is_zero() {
            return Err(BuildError::setting("thread_keep_alive", "must be non-zero"));
        }
        if self.thread_stack_size == Some(0) {
            return Err(BuildError::setting("thread_stack_size", "must be non-zero"));
        }
        if let Some(threshold) = self.long_poll_threshold
            && threshold < Duration::from_millis(1)
        {
            return Err(BuildError::setting(
                "long_poll_threshold",
                format!("must be at least 1 ms (or None), got {threshold:?}"),
            ));
        }
        #[cfg(feature = "tokio-compat")]
        if self.tokio_compat_threads == 0 {
            return Err(BuildError::setting(
                "tokio_compat_threads",
                "must be at least 1, got 0",
            ));
        }
        if let Err((field, problem)) = self.elastic.validate() {
            return Err(BuildError::setting(&format!("elastic.{field}"), problem));
        }
        self.validate_floor()?;
        Ok((workers, spares))
    }

    fn validate_floor(&self) -> Result<(), BuildError> {
        let floor = self.background_floor;
        crate::runtime::scheduler::worker::floor::validate(floor)
            .map_err(|problem| BuildError::setting("background_floor", problem))?;
        if floor > self.elastic.max_utilization {
            return Err(BuildError::setting(
                "background_floor",
                format!(
                    "must be at most elastic.max_utilization ({}), got {floor}",
                    self.elastic.max_utilization
                ),
            ));
        }
        Ok(())
    }

    /// The CPU limit setting, validated, and the limit it reads now (E1 of
    /// the policy).
    pub(super) fn checked_cpu_limit(&self) -> Result<LimitAtBuild, BuildError> {
        if let CpuLimit::Fixed(cpus) = self.cpu_limit
            && !(cpus.is_finite() && cpus > 0.0)
        {
            return Err(BuildError::setting(
                "cpu_limit",
                format!("a fixed limit must be a finite number of CPUs above 0, got {cpus}"),
            ));
        }
        Ok(LimitAtBuild::read(self.cpu_limit))
    }

    /// The worker count: the setting, the environment, or (E2 of the
    /// policy) the CPU limit rounded up within the affinity mask's CPUs,
    /// or the CPUs available.
    fn resolved_worker_threads(&self, limit: Option<Quota>) -> Result<usize, BuildError> {
        let count = match self.worker_threads {
            _ if self.current_thread => 1,
            Some(count) => count,
            None => match std::env::var(WORKER_THREADS_ENV) {
                Ok(value) => parse_worker_threads_env(&value)?,
                Err(std::env::VarError::NotPresent) => match limit {
                    Some(quota) => {
                        cpu_limit::workers_for(Some(quota.cpus), cpu_limit::allowed_cpus())
                    }
                    None => std::thread::available_parallelism().map_or(1, |count| count.get()),
                },
                Err(std::env::VarError::NotUnicode(value)) => {
                    return Err(BuildError::env(format!(
                        "environment variable {WORKER_THREADS_ENV} is not valid Unicode: {value:?}"
                    )));
                }
            },
        };
        if count == 0 {
            return Err(BuildError::setting(
                "worker_threads",
                "must be at least 1, got 0",
            ));
        }
        if count > MAX_WORKERS {
            return Err(BuildError::setting(
                "worker_threads",
                format!("must be at most {MAX_WORKERS}, got {count}"),
            ));
        }
        Ok(count)
    }
}

fn parse_worker_threads_env(value: &str) -> Result<usize, BuildError> {
    match value.trim().parse::<usize>() {
        Ok(count) if count > 0 => Ok(count),
        _ => Err(BuildError::env(format!(
            "environment variable {WORKER_THREADS_ENV}={value:?} is not a worker count \
             (expected a whole number of at least 1)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_values_are_validated() {
        assert_eq!(parse_worker_threads_env("3").unwrap(), 3);
        assert_eq!(parse_worker_threads_env(" 8\n").unwrap(), 8);
        for bad in ["0", "-1", "two", ""] {
            let error = parse_worker_threads_env(bad).unwrap_err().to_string();
            assert!(error.contains(WORKER_THREADS_ENV), "{error}");
            assert!(error.contains(&format!("{bad:?}")), "{error}");
        }
    }
}
