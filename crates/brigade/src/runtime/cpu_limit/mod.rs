//! The CPU limit (section E of the policy, `policy.rs`): which limit is in
//! force ([`CpuLimit`]; the cgroup's quota: `cgroup.rs`), how many workers
//! it runs (E2), and the pacing that keeps the runtime inside it
//! (`pacer.rs`, E3).
//!
//! The limit is read at `Builder::build`, from files opened then, and again
//! by the monitor ([`LimitReader`]) at most once per `LIMIT_REREAD`, so a
//! live resize is in force within about a second: the pacer's budget
//! follows it, elastic admission's capacity too, and so does the number of
//! workers that run (the others park, uncounted as idle:
//! `worker/park_by_limit.rs`). The monitor also reads the cgroup's
//! throttling counters at each of its ticks, for the pacer's back-off and
//! the metrics.

pub(crate) mod cgroup;
#[cfg(not(loom))]
mod limit_reader;
pub(crate) mod pacer;

#[cfg(not(loom))]
pub(crate) use limit_reader::LimitReader;

use std::path::Path;
// Statistics: the throttling counters order nothing.
use std::sync::atomic::AtomicU64;
use std::time::Duration;

// The running-worker count takes part in the park protocol of
// `worker/park_by_limit.rs`: loom's, under its models.
use crate::sync::{AtomicUsize, Ordering};

use crate::runtime::Shared;
use cgroup::{CgroupFiles, Quota};
use pacer::{PaceHost, Pacer};

/// Where the runtime's CPU limit comes from
/// ([`Builder::cpu_limit`](crate::Builder::cpu_limit)).
///
/// A container's CPU limit (Kubernetes `resources.limits.cpu`, `docker
/// --cpus`, systemd's `CPUQuota=`) is a CFS quota: once the process has
/// used it in a period (100 ms by default), the kernel stops every thread
/// until the next period. Under a limit, brigade runs as many workers as
/// the limit rounded up, and paces background work (what steps aside at
/// `yield_if_busy()`, elastic tasks, the background floor) so that no
/// period's quota runs out: a request arriving at any time finds CPU left.
///
/// # Examples
///
/// ```
/// use brigade::runtime::CpuLimit;
///
/// // Size and pace as for 1.5 CPUs, whatever the cgroup says.
/// let rt = brigade::Builder::new().cpu_limit(CpuLimit::Fixed(1.5)).build()?;
/// assert_eq!(rt.metrics().cpu_limit(), Some(1.5));
/// # Ok::<(), brigade::BuildError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum CpuLimit {
    /// The cgroup's quota (v2 `cpu.max`, v1 `cpu.cfs_quota_us`), the
    /// tightest over the cgroup of the thread that builds the runtime and
    /// its ancestors, read at build and again about once a second; no
    /// limit where there is none. The default.
    #[default]
    Auto,
    /// This many CPUs, for a machine without cgroups or a limit known
    /// otherwise, over the kernel's default period (100 ms). Must be finite
    /// and positive.
    Fixed(f64),
    /// No limit: nothing is sized or paced for one.
    Off,
}

/// The kernel's default CFS period, for a [`CpuLimit::Fixed`] limit.
pub(crate) const DEFAULT_PERIOD: Duration = Duration::from_millis(100);

/// What the limit is read from: the cgroup's files, or a fixed value.
#[derive(Debug)]
pub(crate) enum LimitSource {
    Cgroup(CgroupFiles),
    Fixed(f64),
    None,
}

impl LimitSource {
    /// The source `setting` names, with its files opened now (at build,
    /// on the building thread). A cgroup whose files cannot be found is no
    /// limit.
    pub(crate) fn open(setting: CpuLimit) -> LimitSource {
        match setting {
            CpuLimit::Off => LimitSource::None,
            CpuLimit::Fixed(cpus) => LimitSource::Fixed(cpus),
            CpuLimit::Auto if cfg!(loom) => LimitSource::None,
            CpuLimit::Auto => match CgroupFiles::open(Path::new("/proc/thread-self")) {
                Ok(Some(files)) => LimitSource::Cgroup(files),
                Ok(None) | Err(_) => LimitSource::None,
            },
        }
    }

    /// The limit now. A cgroup file that cannot be parsed is no limit,
    /// with one warning naming it (`warned` is set once warned).
    pub(crate) fn read_limit(&self, warned: &mut bool) -> Option<Quota> {
        match self {
            LimitSource::None => None,
            LimitSource::Fixed(cpus) => Some(Quota {
                cpus: *cpus,
                period: DEFAULT_PERIOD,
            }),
            LimitSource::Cgroup(files) => {
                let (quota, unparsable) = files.read_limit();
                if !unparsable.is_empty() && !std::mem::replace(warned, true) {
                    for file in unparsable {
                        tracing::warn!(
                            target: "brigade::cpu_limit",
                            cgroup = %file.0.display(),
                            "the CPU limit of this cgroup could not be parsed: taken as no limit"
                        );
                    }
                }
                quota
            }
        }
    }

    /// The cgroup's throttled periods and time (nanoseconds) so far.
    #[cfg(not(loom))]
    fn read_throttling(&self) -> (u64, u64) {
        match self {
            LimitSource::Cgroup(files) => files.read_throttling(),
            LimitSource::Fixed(_) | LimitSource::None => (0, 0),
        }
    }
}

/// The limit as `Builder::build` found it: its source (kept for the
/// monitor), the quota in force then, and whether a warning about an
/// unparsable file was given.
#[derive(Debug)]
// Under loom no monitor takes the source over.
#[cfg_attr(loom, allow(dead_code))]
pub(crate) struct LimitAtBuild {
    pub(crate) source: LimitSource,
    pub(crate) quota: Option<Quota>,
    pub(crate) warned: bool,
}

impl LimitAtBuild {
    /// Opens `setting`'s source and reads it (on the building thread).
    pub(crate) fn read(setting: CpuLimit) -> LimitAtBuild {
        let source = LimitSource::open(setting);
        let mut warned = false;
        let quota = source.read_limit(&mut warned);
        LimitAtBuild {
            source,
            quota,
            warned,
        }
    }
}

/// How many workers a limit of `cpus` runs: the limit rounded up, at
/// least one and at most `workers` (the runtime's threads).
pub(crate) fn workers_for(limit: Option<f64>, workers: usize) -> usize {
    match limit {
        None => workers,
        Some(cpus) => (cpus.ceil() as usize).clamp(1, workers),
    }
}

/// The CPUs the building thread's affinity mask allows (the cap of E2).
pub(crate) fn allowed_cpus() -> usize {
    #[cfg(all(target_os = "linux", not(loom)))]
    if let Some(mask) = crate::runtime::threads::spread::affinity::get(0) {
        let count = crate::runtime::threads::spread::affinity::cpus(&mask).len();
        if count > 0 {
            return count;
        }
    }
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// The runtime's CPU-limit state, in `Shared`.
pub(crate) struct CpuLimitState {
    pub(crate) pacer: Pacer,
    /// How many primary workers run; those past it park (E2). Written by
    /// the monitor; a worker reads it between tasks (`Relaxed`: a stale
    /// value parks or unparks a worker one task late).
    running_workers: AtomicUsize,
    /// Throttled periods and time since the runtime started.
    throttled_periods: AtomicU64,
    throttled_nanos: AtomicU64,
}

impl CpuLimitState {
    /// The state for `workers` primaries under `limit`.
    pub(crate) fn new(limit: Option<Quota>, workers: usize) -> Self {
        CpuLimitState {
            pacer: Pacer::new(limit.map(|q| q.cpus), period_of(limit)),
            running_workers: AtomicUsize::new(workers_for(limit.map(|q| q.cpus), workers)),
            throttled_periods: AtomicU64::new(0),
            throttled_nanos: AtomicU64::new(0),
        }
    }

    /// Whether primary `index` runs under the limit now (E2).
    #[inline]
    pub(crate) fn runs(&self, index: usize) -> bool {
        index < self.running_workers.load(Ordering::Relaxed)
    }

    /// How many primary workers run under the limit now.
    pub(crate) fn running_workers(&self) -> usize {
        self.running_workers.load(Ordering::Relaxed)
    }

    /// The cgroup's throttled periods since the runtime started.
    pub(crate) fn throttled_periods(&self) -> u64 {
        self.throttled_periods.load(Ordering::Relaxed)
    }

    /// The time the cgroup's threads were throttled since the runtime
    /// started.
    pub(crate) fn throttled_time(&self) -> Duration {
        Duration::from_nanos(self.throttled_nanos.load(Ordering::Relaxed))
    }
}

fn period_of(limit: Option<Quota>) -> Duration {
    limit.map_or(DEFAULT_PERIOD, |quota| quota.period)
}

/// The runtime as the pacer sees it.
impl PaceHost for Shared {
    /// The process's CPU clock, not the cgroup's usage counter (`cpu.stat`,
    /// `cpuacct.usage`): the kernel brings those up to date in steps, so a
    /// pacer reading them saw a window's spending late and overran the
    /// quota; the clock counts every thread of the process, as the quota does.
    fn process_cpu_nanos(&self) -> u64 {
        crate::runtime::threads::thread_cpu::process_cpu_nanos().unwrap_or(0)
    }

    fn hold_attention(&self) {
        self.idle.attention().hold();
    }

    fn release_attention(&self) {
        self.idle.attention().release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limit_runs_its_cpus_rounded_up_within_the_threads() {
        assert_eq!(workers_for(None, 4), 4);
        assert_eq!(workers_for(Some(0.5), 4), 1);
        assert_eq!(workers_for(Some(1.0), 4), 1);
        assert_eq!(workers_for(Some(1.5), 4), 2);
        assert_eq!(workers_for(Some(7.2), 4), 4);
        assert_eq!(workers_for(Some(0.01), 1), 1);
    }

    #[test]
    fn a_fixed_limit_reads_as_itself_and_off_as_none() {
        let mut warned = false;
        let fixed = LimitSource::open(CpuLimit::Fixed(0.5)).read_limit(&mut warned);
        assert_eq!(
            fixed,
            Some(Quota {
                cpus: 0.5,
                period: DEFAULT_PERIOD
            })
        );
        assert_eq!(
            LimitSource::open(CpuLimit::Off).read_limit(&mut warned),
            None
        );
        assert!(!warned);
    }
}
