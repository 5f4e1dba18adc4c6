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

/// The mount point of the cgroup v1 hierarchy that has `controller`, from
/// `/proc/self/mountinfo`.
fn v1_mount(controller: &str) -> Option<PathBuf> {
    let mountinfo = fs::read_to_string("/proc/self/mountinfo").ok()?;
    mountinfo.lines().find_map(|line| {
        let (before, after) = line.split_once(" - ")?;
        let mut after = after.split(' ');
        let fstype = after.next()?;
        let _source = after.next()?;
        let options = after.next().unwrap_or("");
        let point = before.split(' ').nth(4)?;
        (fstype == "cgroup" && options.split(',').any(|option| option == controller))
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
        let Some(parent) = v1_mount("cpu") else {
            return Err(
                "no cgroup v1 `cpu` hierarchy is mounted (on cgroup v2 a process's threads \
                 share one cgroup, so the client could not stay outside it)"
                    .to_owned(),
            );
        };
        let leaf = format!("brigade-{name}-{}", std::process::id());
        let dir = parent.join(&leaf);
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

    /// [`run_inside`](Self::run_inside), with the calling thread's
    /// affinity set to `cpus` meanwhile (so the threads `f` starts inherit
    /// it) and then to `after`: a server on some CPUs, its client on others.
    pub fn run_inside_on<R>(
        &self,
        cpus: &[usize],
        after: &[usize],
        f: impl FnOnce() -> R,
    ) -> io::Result<R> {
        pin_current_thread(cpus)?;
        let result = self.run_inside(f);
        pin_current_thread(after)?;
        result
    }

    /// Runs `f` with the calling thread inside the cgroup: every thread it
    /// starts (a runtime's workers and helpers) stays inside; the calling
    /// thread leaves when `f` returns.
    pub fn run_inside<R>(&self, f: impl FnOnce() -> R) -> io::Result<R> {
        // SAFETY: `gettid` has no preconditions and cannot fail.
        let tid = unsafe { libc::gettid() };
        fs::write(self.dir.join("tasks"), tid.to_string())?;
        struct Leave<'a>(&'a QuotaCgroup, i32);
        impl Drop for Leave<'_> {
            fn drop(&mut self) {
                let _ = fs::write(self.0.parent.join("tasks"), self.1.to_string());
            }
        }
        let _leave = Leave(self, tid);
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
        remove(&self.dir, &self.parent);
    }
}

/// The value of `--cpu-limit C` in `args`, if given: `Err` with a message
/// for a value that is not a positive number of CPUs.
pub fn cpu_limit_flag(args: &[String]) -> Result<Option<f64>, String> {
    let Some(at) = args.iter().position(|arg| arg == "--cpu-limit") else {
        return Ok(None);
    };
    match args.get(at + 1).map(|value| value.parse::<f64>()) {
        Some(Ok(cpus)) if cpus.is_finite() && cpus > 0.0 => Ok(Some(cpus)),
        _ => Err("--cpu-limit takes a number of CPUs above 0".to_owned()),
    }
}

/// The help line of the `--cpu-limit` flag of a server with clients of its
/// own (`kv`, `axum_service`).
pub const CPU_LIMIT_HELP: &str =
    "  --cpu-limit C           run the server wholly inside a fresh cgroup with a quota of C
                          CPUs, its clients outside (root and a cgroup v1 `cpu` controller;
                          otherwise it says how to run under systemd-run or docker)";

/// The child a [`rerun_inside_limit`] parent waits on, for its signal
/// handler; 0 before it is started.
static CHILD: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// Passes SIGINT and SIGTERM on to the child (async-signal-safe: a load
/// and `kill`).
extern "C" fn forward_signal(signal: libc::c_int) {
    let child = CHILD.load(std::sync::atomic::Ordering::Relaxed);
    if child > 0 {
        // SAFETY: `kill` is async-signal-safe and takes any pid and signal.
        unsafe { libc::kill(child, signal) };
    }
}

/// `--cpu-limit C` for a server whose clients are other processes (`kv`,
/// `axum_service`): runs this program again, without the flag, as a child
/// wholly inside a fresh cgroup with a quota of `cpus` (it enters before it
/// execs, so every thread it starts is inside), passes SIGINT and SIGTERM
/// on to it, removes the cgroup once it has exited, and exits with its
/// status. Where no cgroup can be made it says how to run under a limit
/// and exits 1. Call it before starting any thread.
pub fn rerun_inside_limit(cpus: f64, program: &str) -> ! {
    use std::os::unix::process::CommandExt;
    let cgroup = QuotaCgroup::create(program, cpus).unwrap_or_else(|reason| {
        let how = how_to_run_limited(
            cpus,
            &format!("cargo run --release -p brigade-examples --example {program}"),
        );
        eprintln!("{program} --cpu-limit {cpus}: {reason}; {how}");
        std::process::exit(1);
    });
    let mut args = std::env::args().skip(1);
    let mut kept = Vec::new();
    while let Some(arg) = args.next() {
        if arg == "--cpu-limit" {
            args.next();
        } else {
            kept.push(arg);
        }
    }
    let procs = fs::OpenOptions::new()
        .write(true)
        .open(cgroup.dir().join("cgroup.procs"))
        .unwrap_or_else(|error| {
            eprintln!("{program}: cannot open the cgroup's process list: {error}");
            std::process::exit(1);
        });
    let mut command = std::process::Command::new(
        std::env::current_exe().unwrap_or_else(|_| PathBuf::from(program)),
    );
    command.args(kept);
    let fd = std::os::fd::AsRawFd::as_raw_fd(&procs);
    // SAFETY: the closure runs in the child between fork and exec, where
    // only async-signal-safe calls are allowed: `getpid`, formatting into
    // a stack buffer, and `write` to a descriptor opened before the fork.
    unsafe {
        command.pre_exec(move || {
            let mut digits = [0u8; 20];
            let mut pid = libc::getpid() as u64;
            let mut at = digits.len();
            loop {
                at -= 1;
                digits[at] = b'0' + (pid % 10) as u8;
                pid /= 10;
                if pid == 0 {
                    break;
                }
            }
            let text = &digits[at..];
            if libc::write(fd, text.as_ptr().cast(), text.len()) < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = command.spawn().unwrap_or_else(|error| {
        eprintln!("{program}: cannot start the limited server: {error}");
        std::process::exit(1);
    });
    CHILD.store(child.id() as i32, std::sync::atomic::Ordering::Relaxed);
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: `forward_signal` is an `extern "C" fn(c_int)` that only
        // makes async-signal-safe calls.
        unsafe {
            libc::signal(
                signal,
                forward_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
            )
        };
    }
    let status = child.wait();
    drop(procs);
    drop(cgroup);
    std::process::exit(status.ok().and_then(|status| status.code()).unwrap_or(1));
}

/// The CPUs online, whatever the calling thread's affinity.
pub fn online_cpus() -> usize {
    // SAFETY: `sysconf` has no preconditions.
    let count = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    usize::try_from(count).unwrap_or(1).max(1)
}

/// Sets the calling thread's CPU affinity to `cpus` (every CPU where empty).
pub fn pin_current_thread(cpus: &[usize]) -> io::Result<()> {
    // SAFETY: `cpu_set_t` is a plain bit array, valid when zeroed.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let all: Vec<usize> = (0..online_cpus()).collect();
    for &cpu in if cpus.is_empty() { &all[..] } else { cpus } {
        if cpu < libc::CPU_SETSIZE as usize {
            // SAFETY: `cpu` is below the set's size, checked just above.
            unsafe { libc::CPU_SET(cpu, &mut set) };
        }
    }
    // SAFETY: `set` is a valid `cpu_set_t` of the size passed; 0 is the
    // calling thread.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Moves every thread still in `dir` to `parent`, then removes `dir`
/// (retrying briefly while the kernel lets it go).
fn remove(dir: &Path, parent: &Path) {
    if let Ok(tasks) = fs::read_to_string(dir.join("tasks")) {
        for tid in tasks.lines() {
            let _ = fs::write(parent.join("tasks"), tid);
        }
    }
    for _ in 0..50 {
        if fs::remove_dir(dir).is_ok() || !dir.exists() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    eprintln!("could not remove the cgroup {}", dir.display());
}
