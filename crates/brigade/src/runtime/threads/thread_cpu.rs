//! A thread and the CPU, as the OS reports them: per-thread CPU clocks,
//! which compensation reads (`runtime/compensation/`). Linux only;
//! elsewhere every answer is unknown. What the kernel says a thread is
//! doing, from `/proc`, is `proc_file.rs`.
//!
//! - **Per-thread CPU time** ([`ThreadClock`], [`own_cpu_nanos`]), for
//!   charging elastic work that a spare worker covered: a thread blocked in
//!   a system call uses no CPU, so of a covered stretch only the CPU time
//!   it used is charged (`CoverEnded::uncharged`). Read with
//!   `pthread_getcpuclockid` and `clock_gettime`, which work on another
//!   thread's clock too. Where it is unknown, a covered stretch is charged
//!   in full, as it may have been a CPU loop.

/// A thread's CPU clock, readable from any thread while that thread lives,
/// and the thread's kernel id (for `ProcFile::thread_stat`, `proc_file.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ThreadClock {
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    clock: i32,
    /// The kernel thread id; 0 in [`NONE`](Self::NONE) (real ids are positive).
    tid: i32,
}

impl ThreadClock {
    /// No clock: every reading is `None`.
    pub(crate) const NONE: ThreadClock = ThreadClock { clock: 0, tid: 0 };

    /// The calling thread's CPU clock.
    pub(crate) fn current() -> ThreadClock {
        #[cfg(target_os = "linux")]
        {
            let mut clock: libc::clockid_t = 0;
            // SAFETY: `pthread_self` is always a valid thread of this
            // process, and `clock` is a valid place to write the result.
            let rc = unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut clock) };
            let tid = rustix::thread::gettid().as_raw_nonzero().get();
            if rc == 0 && tid > 0 {
                return ThreadClock { clock, tid };
            }
        }
        ThreadClock::NONE
    }

    /// As stored in an atomic.
    pub(crate) fn to_bits(self) -> i64 {
        (i64::from(self.tid) << 32) | i64::from(self.clock as u32)
    }

    #[cfg_attr(loom, allow(dead_code))] // The monitor thread uses it; loom models leave the monitor out.
    pub(crate) fn from_bits(bits: i64) -> ThreadClock {
        ThreadClock {
            clock: bits as u32 as i32,
            tid: (bits >> 32) as i32,
        }
    }

    /// The thread's kernel id (`gettid`), if known.
    #[cfg_attr(loom, allow(dead_code))] // The monitor thread uses it; loom models leave the monitor out.
    pub(crate) fn tid(self) -> Option<i32> {
        (self.tid > 0).then_some(self.tid)
    }

    /// CPU nanoseconds the thread has used, if known. `None` also when the
    /// thread has exited.
    #[cfg_attr(loom, allow(dead_code))] // The monitor thread uses it; loom models leave the monitor out.
    pub(crate) fn read(self) -> Option<u64> {
        #[cfg(target_os = "linux")]
        if self != ThreadClock::NONE {
            return read_clock(self.clock as libc::clockid_t);
        }
        None
    }
}

/// CPU nanoseconds this process has used, all its threads, if known (the
/// CPU limit's pacer: `cpu_limit/pacer.rs`).
pub(crate) fn process_cpu_nanos() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        Some(nanos(rustix::time::clock_gettime(
            rustix::time::ClockId::ProcessCPUTime,
        )))
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// CPU nanoseconds the calling thread has used, if known.
pub(crate) fn own_cpu_nanos() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        Some(nanos(rustix::time::clock_gettime(
            rustix::time::ClockId::ThreadCPUTime,
        )))
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// Reads another thread's CPU clock. rustix names only the calling
/// thread's and the process's clocks, so this one stays on libc.
#[cfg(target_os = "linux")]
fn read_clock(clock: libc::clockid_t) -> Option<u64> {
    let mut time = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `time` is a valid place to write; an invalid clock id (a
    // thread that exited) makes the call fail, which we report as `None`.
    let rc = unsafe { libc::clock_gettime(clock, &mut time) };
    (rc == 0).then(|| time.tv_sec as u64 * 1_000_000_000 + time.tv_nsec as u64)
}

#[cfg(target_os = "linux")]
fn nanos(time: rustix::time::Timespec) -> u64 {
    time.tv_sec as u64 * 1_000_000_000 + time.tv_nsec as u64
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::runtime::threads::proc_file::ThreadState;
    use crate::runtime::threads::proc_file::tests::eventually;
    use std::sync::mpsc;
    use std::time::Duration;

    #[cfg(target_os = "linux")]
    #[test]
    fn a_busy_thread_uses_cpu_and_a_sleeping_one_does_not() {
        let clock = ThreadClock::current();
        let before = clock.read().unwrap();
        let own_before = own_cpu_nanos().unwrap();
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = std::hint::black_box(x.wrapping_add(i));
        }
        assert!(clock.read().unwrap() > before);
        assert!(own_cpu_nanos().unwrap() > own_before);
        // Read from another thread, blocked until released (so it is alive
        // for both reads, however slowly this thread gets there).
        let (tx, rx) = mpsc::channel();
        let (release, released) = mpsc::channel::<()>();
        let sleeper = std::thread::spawn(move || {
            tx.send(ThreadClock::current()).unwrap();
            let _ = released.recv_timeout(Duration::from_secs(60));
        });
        let other = rx.recv_timeout(Duration::from_secs(60)).unwrap();
        assert_eq!(
            eventually(other.tid().unwrap(), ThreadState::Blocked),
            ThreadState::Blocked
        );
        let first = other.read().unwrap();
        // This thread uses 20 ms of CPU meanwhile: a read of the wrong
        // thread's clock would show it.
        let own_start = own_cpu_nanos().unwrap();
        while own_cpu_nanos().unwrap() - own_start < 20_000_000 {
            std::hint::spin_loop();
        }
        // Blocked: well under the 20 ms this thread used.
        assert!(other.read().unwrap() - first < 10_000_000);
        release.send(()).unwrap();
        sleeper.join().unwrap();
        assert_eq!(ThreadClock::NONE.read(), None);
        assert_eq!(ThreadClock::from_bits(other.to_bits()), other);
        assert!(other.tid().is_some() && ThreadClock::NONE.tid().is_none());
    }
}
