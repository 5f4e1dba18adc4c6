//! The kernel's view of a thread, for telling a blocked worker from one
//! that waits for a CPU (`compensation/judge.rs`): whether a thread is
//! blocked (sleeping in a system call or a wait) or runnable (running, or
//! waiting for a CPU), and how many threads on the host are runnable.
//!
//! Linux only: `/proc/self/task/TID/stat` and `/proc/loadavg`. Elsewhere,
//! or when a file cannot be read, the answers are unknown, and callers
//! fall back to judging by wall time alone. Each reading opens and reads a
//! small file (a few microseconds), so the monitor reads only for a worker
//! already stuck past the compensation threshold.

/// What the kernel says a thread is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ThreadState {
    /// Running on a CPU, or runnable and waiting for one (`R`): Linux does
    /// not tell the two apart here; the thread's CPU clock does.
    Runnable,
    /// Off the CPU until something wakes it: sleeping (`S`), in an
    /// uninterruptible wait (`D`), stopped (`T`, `t`) or parked.
    Blocked,
    /// Not known: not Linux, the thread has exited, or `/proc` could not be
    /// read.
    Unknown,
}

/// The state of thread `tid` of this process (a kernel thread id, as
/// `gettid` returns it).
pub(crate) fn read(tid: i32) -> ThreadState {
    #[cfg(target_os = "linux")]
    if let Ok(stat) = std::fs::read(format!("/proc/self/task/{tid}/stat")) {
        return parse_stat(&stat);
    }
    let _ = tid;
    ThreadState::Unknown
}

/// The state in a `/proc/.../stat` line: `pid (comm) S ...`. The command
/// name may hold spaces and parentheses, so the state is the first field
/// after the last `)`.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn parse_stat(stat: &[u8]) -> ThreadState {
    let Some(name_end) = stat.iter().rposition(|&byte| byte == b')') else {
        return ThreadState::Unknown;
    };
    let state = stat[name_end + 1..]
        .iter()
        .find(|byte| !byte.is_ascii_whitespace());
    match state {
        // `W` (waking) existed in Linux 2.6.33 to 3.13.
        Some(b'R' | b'W') => ThreadState::Runnable,
        Some(b'S' | b'D' | b'T' | b't' | b'P' | b'I' | b'K') => ThreadState::Blocked,
        // Dead (`X`, `Z`) or unknown letters.
        _ => ThreadState::Unknown,
    }
}

/// Threads runnable on the whole host right now (running or waiting for a
/// CPU, the caller included), if known: the fourth field of
/// `/proc/loadavg`, `runnable/total`.
pub(crate) fn runnable_on_host() -> Option<usize> {
    #[cfg(target_os = "linux")]
    if let Ok(loadavg) = std::fs::read_to_string("/proc/loadavg") {
        return parse_loadavg(&loadavg);
    }
    None
}

#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn parse_loadavg(loadavg: &str) -> Option<usize> {
    let (runnable, _total) = loadavg.split_whitespace().nth(3)?.split_once('/')?;
    runnable.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    #[test]
    fn the_state_letter_follows_the_last_parenthesis() {
        assert_eq!(parse_stat(b"12 (worker) S 1 2"), ThreadState::Blocked);
        assert_eq!(parse_stat(b"12 (a) R (b)) R 1"), ThreadState::Runnable);
        assert_eq!(parse_stat(b"12 (odd name) D 1"), ThreadState::Blocked);
        assert_eq!(parse_stat(b"12 (gone) Z 1"), ThreadState::Unknown);
        assert_eq!(parse_stat(b"garbage"), ThreadState::Unknown);
        assert_eq!(parse_loadavg("0.20 0.18 0.12 3/80 11206\n"), Some(3));
        assert_eq!(parse_loadavg("0.20 0.18"), None);
    }

    /// Reads `tid`'s state until it is `expected`, for at most 10 s (a
    /// thread reaches its wait or its loop a moment after it says so).
    #[cfg(target_os = "linux")]
    fn eventually(tid: i32, expected: ThreadState) -> ThreadState {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let state = read(tid);
            if state == expected || Instant::now() > deadline {
                return state;
            }
            std::thread::yield_now();
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_thread_blocked_on_a_channel_is_blocked_and_a_spinning_one_runnable() {
        use crate::runtime::thread_cpu::ThreadClock;
        let own = ThreadClock::current().tid().unwrap();
        assert_eq!(read(own), ThreadState::Runnable, "reading, so running");

        let (tids, tid) = mpsc::channel();
        let (release, blocked_on) = mpsc::channel::<()>();
        let blocked = std::thread::spawn(move || {
            tids.send(ThreadClock::current().tid().unwrap()).unwrap();
            let _ = blocked_on.recv_timeout(Duration::from_secs(60));
        });
        let blocked_tid = tid.recv().unwrap();

        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let (tids, tid) = mpsc::channel();
        let spinner = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                tids.send(ThreadClock::current().tid().unwrap()).unwrap();
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        };
        let spinning_tid = tid.recv().unwrap();

        assert_eq!(
            eventually(blocked_tid, ThreadState::Blocked),
            ThreadState::Blocked
        );
        assert_eq!(
            eventually(spinning_tid, ThreadState::Runnable),
            ThreadState::Runnable
        );
        stop.store(true, Ordering::Relaxed);
        release.send(()).unwrap();
        blocked.join().unwrap();
        spinner.join().unwrap();
        assert!(runnable_on_host().is_some_and(|runnable| runnable >= 1));
    }
}
