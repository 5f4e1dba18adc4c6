//! A fresh child cgroup with a CPU quota, for running a server inside a
//! CPU limit while its load client stays outside it (`mixed_load
//! --cpu-limit`, `kv --cpu-limit`, `axum_service --cpu-limit`, the CPU
//! limit tests and `scripts/cpu_limit_bench.sh`).
//!
//! It needs root and a cgroup v1 `cpu` hierarchy, where a *thread* can be
//! moved on its own (its id written to the cgroup's `tasks`): the thread
//! that builds the runtime enters the cgroup, every thread the runtime
//! starts inherits it, and the building thread leaves again. (On cgroup
//! v2 the threads of a process share one cgroup, so the client could not
//! stay outside: [`QuotaCgroup::create`] says how to run the server under
//! `systemd-run` or `docker` instead.) The cgroup is removed when the
//! value is dropped: every thread still in it is moved back to its parent
//! first, so a failed run leaves nothing behind.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A child cgroup of the v1 `cpu` hierarchy with a CFS quota.
#[derive(Debug)]
pub struct QuotaCgroup {
    dir: PathBuf,
    parent: PathBuf,
}

/// The mount point of the cgroup v1 hierarchy that has the `cpu`
/// controller, from `/proc/self/mountinfo`.
fn v1_cpu_mount() -> Option<PathBuf> {
    let mountinfo = fs::read_to_string("/proc/self/mountinfo").ok()?;
    mountinfo.lines().find_map(|line| {
        let (before, after) = line.split_once(" - ")?;
        let mut after = after.split(' ');
        let fstype = after.next()?;
        let _source = after.next()?;
        let options = after.next().unwrap_or("");
        let point = before.split(' ').nth(4)?;
        (fstype == "cgroup" && options.split(',').any(|option| option == "cpu"))
            .then(|| PathBuf::from(point))
    })
}

/// How to run under a CPU limit where this process cannot make one.
pub fn how_to_run_limited(cpus: f64, command: &str) -> String {
    let percent = (cpus * 100.0).round();
    format!(
        "run it as root on a host with a writable cgroup v1 `cpu` controller, or put the \
         whole process under a limit yourself, with no --cpu-limit flag:\n  \
         systemd-run --scope -p CPUQuota={percent}% {command}\n  \
         docker run --cpus {cpus} ... {command}\n\
         (then the load client shares the limit: run it from another process to keep it \
         outside)"
    )
}

impl QuotaCgroup {
    /// Creates `brigade-NAME-PID` under the v1 `cpu` hierarchy's root with
    /// a quota of `cpus` CPUs over 100 ms periods. The error says why it
    /// cannot (not root, no v1 `cpu` controller, not writable).
    pub fn create(name: &str, cpus: f64) -> Result<QuotaCgroup, String> {
        // SAFETY: `geteuid` has no preconditions and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            return Err("creating a cgroup needs root".to_owned());
        }
        let Some(parent) = v1_cpu_mount() else {
            return Err(
                "no cgroup v1 `cpu` hierarchy is mounted (on cgroup v2 a process's threads \
                 share one cgroup, so the client could not stay outside it)"
                    .to_owned(),
            );
        };
        let dir = parent.join(format!("brigade-{name}-{}", std::process::id()));
        fs::create_dir_all(&dir)
            .map_err(|error| format!("cannot create {}: {error}", dir.display()))?;
        let cgroup = QuotaCgroup { dir, parent };
        cgroup.set_quota(cpus).map_err(|error| {
            format!("cannot set the quota of {}: {error}", cgroup.dir.display())
        })?;
        Ok(cgroup)
    }

    /// The cgroup's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Sets the quota to `cpus` CPUs per 100 ms period (a live resize).
    pub fn set_quota(&self, cpus: f64) -> io::Result<()> {
        let period = 100_000u64;
        fs::write(self.dir.join("cpu.cfs_period_us"), period.to_string())?;
        let quota = (cpus * period as f64).round() as u64;
        fs::write(
            self.dir.join("cpu.cfs_quota_us"),
            quota.max(1_000).to_string(),
        )
    }

    /// Removes the quota (`-1`): the cgroup limits nothing.
    pub fn remove_quota(&self) -> io::Result<()> {
        fs::write(self.dir.join("cpu.cfs_quota_us"), "-1")
    }

    /// Runs `f` with the calling thread inside the cgroup: every thread it
    /// starts (a runtime's workers and helpers) stays inside; the calling
    /// thread leaves when `f` returns.
    pub fn run_inside<R>(&self, f: impl FnOnce() -> R) -> io::Result<R> {
        // SAFETY: `gettid` has no preconditions and cannot fail.
        let tid = unsafe { libc::gettid() };
        fs::write(self.dir.join("tasks"), tid.to_string())?;
        struct Leave<'a>(&'a Path, i32);
        impl Drop for Leave<'_> {
            fn drop(&mut self) {
                let _ = fs::write(self.0.join("tasks"), self.1.to_string());
            }
        }
        let _leave = Leave(&self.parent, tid);
        Ok(f())
    }

    /// The cgroup's throttled periods and throttled time so far
    /// (`cpu.stat`).
    pub fn throttling(&self) -> (u64, Duration) {
        let stat = fs::read_to_string(self.dir.join("cpu.stat")).unwrap_or_default();
        let field = |name: &str| {
            stat.lines()
                .find_map(|line| line.strip_prefix(name)?.trim().parse::<u64>().ok())
                .unwrap_or(0)
        };
        (
            field("nr_throttled "),
            Duration::from_nanos(field("throttled_time ")),
        )
    }

    /// The cgroup's periods so far (`cpu.stat` `nr_periods`).
    pub fn periods(&self) -> u64 {
        let stat = fs::read_to_string(self.dir.join("cpu.stat")).unwrap_or_default();
        stat.lines()
            .find_map(|line| line.strip_prefix("nr_periods ")?.trim().parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for QuotaCgroup {
    /// Moves every thread still inside back to the parent, then removes
    /// the cgroup (retrying briefly while the kernel lets it go).
    fn drop(&mut self) {
        if let Ok(tasks) = fs::read_to_string(self.dir.join("tasks")) {
            for tid in tasks.lines() {
                let _ = fs::write(self.parent.join("tasks"), tid);
            }
        }
        for _ in 0..50 {
            if fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        eprintln!("could not remove the cgroup {}", self.dir.display());
    }
}
