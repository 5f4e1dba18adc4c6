//! The kernel's view of a thread ([`ProcFile::thread_state`],
//! [`ProcFile::runnable_on_host`]), for telling a blocked worker from one
//! that waits for a CPU (`compensation/decide.rs`), and of where it runs
//! ([`ThreadPlace`], for `spread.rs`): whether a thread is blocked
//! (sleeping in a system call or a wait) or runnable (running, or waiting
//! for a CPU), the CPU it last ran on, and how many threads on the host
//! are runnable. Linux only; elsewhere every answer is unknown.
//!
//! Read from `/proc/self/task/TID/stat`, `/proc/stat` and `/proc/loadavg`
//! through [`ProcFile`]s: each file is opened once (`/proc/loadavg` as the
//! runtime is built, a thread's stat file as the thread starts, see
//! `compensation/stat_files.rs`) and read again in place with `pread`, so
//! that reading takes no file descriptor: a program that has used up its
//! descriptors never sees one taken and given back behind its back. When a
//! file could not be opened or read the answers are unknown, and callers
//! fall back to judging by wall time alone. The monitor thread is the only
//! reader, so the module is left out under loom.

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

/// A file of `/proc`, opened once and read again from its start at each
/// reading (`pread` at offset 0, into the caller's buffer): the kernel
/// writes the file's text anew for each read from offset 0, so a reading
/// opens nothing. A thread's stat file stays bound to its thread: once the
/// thread has exited, reading fails (`ESRCH`), even if the kernel has
/// given its id to a new thread since.
#[derive(Debug)]
pub(crate) struct ProcFile {
    #[cfg(target_os = "linux")]
    file: std::fs::File,
}

/// The buffer a [`ProcFile`] is read into: a thread's stat line is about
/// 300 bytes (its state letter within the first 40 or so: `pid (comm) S`,
/// with a command name of at most 15 bytes; the CPU it last ran on in its
/// 39th field), and `/proc/loadavg` is about 30 bytes long.
pub(crate) type ProcBuf = [u8; 512];

/// What the kernel says a thread is doing, and the CPU it last ran on
/// (`runtime/threads/spread.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ThreadPlace {
    pub(crate) state: ThreadState,
    /// `None` where the state is unknown or the line is cut short.
    pub(crate) cpu: Option<usize>,
}

impl ProcFile {
    /// Opens `/proc/loadavg`.
    pub(crate) fn loadavg() -> std::io::Result<ProcFile> {
        ProcFile::open("/proc/loadavg")
    }

    /// Opens `/proc/stat`, for [`cpu_idle`](Self::cpu_idle).
    pub(crate) fn host_stat() -> std::io::Result<ProcFile> {
        ProcFile::open("/proc/stat")
    }

    /// Opens the stat file of thread `tid` of this process (a kernel
    /// thread id, as `gettid` returns it).
    pub(crate) fn thread_stat(tid: i32) -> std::io::Result<ProcFile> {
        ProcFile::open(&format!("/proc/self/task/{tid}/stat"))
    }

    #[cfg(target_os = "linux")]
    fn open(path: &str) -> std::io::Result<ProcFile> {
        Ok(ProcFile {
            file: std::fs::File::open(path)?,
        })
    }

    #[cfg(not(target_os = "linux"))]
    fn open(_path: &str) -> std::io::Result<ProcFile> {
        Err(std::io::ErrorKind::Unsupported.into())
    }

    /// The file's text now, as much of it as fits in `buf`; `None` if it
    /// cannot be read (the thread has exited, say).
    #[cfg(target_os = "linux")]
    fn read<'b>(&self, buf: &'b mut [u8]) -> Option<&'b [u8]> {
        use std::os::unix::fs::FileExt;
        let mut len = 0;
        while len < buf.len() {
            match self.file.read_at(&mut buf[len..], len as u64) {
                Ok(0) => break,
                Ok(read) => len += read,
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return None,
            }
        }
        (len > 0).then_some(&buf[..len])
    }

    #[cfg(not(target_os = "linux"))]
    fn read<'b>(&self, _buf: &'b mut [u8]) -> Option<&'b [u8]> {
        None
    }

    /// What the kernel says the thread of this stat file is doing.
    pub(crate) fn thread_state(&self, buf: &mut ProcBuf) -> ThreadState {
        self.read(buf).map_or(ThreadState::Unknown, parse_stat)
    }

    /// The thread's state and the CPU it last ran on.
    pub(crate) fn thread_place(&self, buf: &mut ProcBuf) -> ThreadPlace {
        self.read(buf).map_or(ThreadPlace::UNKNOWN, parse_place)
    }

    /// Each CPU's idle time so far (idle and iowait), in clock ticks
    /// (`sysconf(_SC_CLK_TCK)` a second), into `out` as `(cpu, ticks)`:
    /// the `cpuN` lines at the start of `/proc/stat`, read into `buf`
    /// (large enough for them: about 100 bytes a CPU). For the file of
    /// [`host_stat`](Self::host_stat); `false` if it could not be read.
    pub(crate) fn cpu_idle(&self, buf: &mut [u8], out: &mut Vec<(usize, u64)>) -> bool {
        out.clear();
        let len = buf.len();
        let Some(mut text) = self.read(buf) else {
            return false;
        };
        if text.len() == len {
            // Filled: the last line may be cut short.
            let end = text.iter().rposition(|&byte| byte == b'\n').unwrap_or(0);
            text = &text[..end];
        }
        parse_cpu_idle(text, out);
        !out.is_empty()
    }

    /// Threads runnable on the whole host right now (running or waiting
    /// for a CPU, the caller included), if known: the fourth field of
    /// `/proc/loadavg`, `runnable/total`. For the file of
    /// [`loadavg`](Self::loadavg).
    pub(crate) fn runnable_on_host(&self, buf: &mut ProcBuf) -> Option<usize> {
        let text = self.read(buf)?;
        parse_loadavg(std::str::from_utf8(text).ok()?)
    }
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

impl ThreadPlace {
    pub(crate) const UNKNOWN: ThreadPlace = ThreadPlace {
        state: ThreadState::Unknown,
        cpu: None,
    };
}

/// The state and the `processor` field (the 39th; the 37th after the
/// command name's `)`) of a `/proc/.../stat` line.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn parse_place(stat: &[u8]) -> ThreadPlace {
    let state = parse_stat(stat);
    let Some(name_end) = stat.iter().rposition(|&byte| byte == b')') else {
        return ThreadPlace::UNKNOWN;
    };
    // Field 40 must follow: a line cut short inside field 39 would parse
    // a prefix of it.
    let cpu = std::str::from_utf8(&stat[name_end + 1..])
        .ok()
        .and_then(|fields| {
            let mut from_39 = fields.split_ascii_whitespace().skip(36);
            from_39.next().filter(|_| from_39.next().is_some())
        })
        .and_then(|field| field.parse().ok());
    ThreadPlace { state, cpu }
}

/// The `cpuN user nice system idle iowait ...` lines of `/proc/stat`: for
/// each, `(N, idle + iowait)`. Stops at the first other line after them
/// (and at a line cut short by the end of the buffer).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn parse_cpu_idle(text: &[u8], out: &mut Vec<(usize, u64)>) {
    for line in text.split(|&byte| byte == b'\n') {
        let Ok(line) = std::str::from_utf8(line) else {
            return;
        };
        let mut fields = line.split_ascii_whitespace();
        let Some(name) = fields.next() else { return };
        let Some(cpu) = name.strip_prefix("cpu") else {
            return;
        };
        if cpu.is_empty() {
            continue; // the host's total line
        }
        let numbers: Vec<u64> = fields
            .take(5)
            .filter_map(|field| field.parse().ok())
            .collect();
        let (Ok(cpu), [_user, _nice, _system, idle, iowait]) = (cpu.parse(), numbers.as_slice())
        else {
            return;
        };
        out.push((cpu, idle.saturating_add(*iowait)));
    }
}

#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn parse_loadavg(loadavg: &str) -> Option<usize> {
    let (runnable, _total) = loadavg.split_whitespace().nth(3)?.split_once('/')?;
    runnable.parse().ok()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::runtime::threads::thread_cpu::ThreadClock;
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
        // A worker's line (Linux 6.x), processor 1 in the 39th field.
        let line = b"4242 (kv-brigade (0)) R 4200 4200 4180 34816 4200 4194368 \
            310 0 0 0 2263 97 0 0 20 0 4 0 3456 1234567890 9876 18446744073709551615 \
            94000000000000 94000000100000 140700000000000 0 0 0 0 4096 17024 0 0 0 \
            -1 1 0 0 0 0 0";
        assert_eq!(
            parse_place(line),
            ThreadPlace {
                state: ThreadState::Runnable,
                cpu: Some(1)
            }
        );
        assert_eq!(parse_place(b"12 (cut) S 1 2 3").cpu, None);
        // Cut right after field 39: not trusted.
        let cut = &line[..line.len() - b" 0 0 0 0 0".len()];
        assert_eq!(parse_place(cut).cpu, None);
        assert_eq!(parse_place(b"garbage"), ThreadPlace::UNKNOWN);
        let mut idle = Vec::new();
        parse_cpu_idle(
            b"cpu  10 0 5 900 3 0 0 0 0 0\ncpu0 5 0 2 450 1 0 0 0 0 0\n\
              cpu1 5 0 3 450 2 0 0 0 0 0\nintr 1 2 3\ncpu7 9 9 9 9 9",
            &mut idle,
        );
        assert_eq!(idle, [(0, 451), (1, 452)]);
        idle.clear();
        parse_cpu_idle(b"cpu0 5 0 2 450 1\ncpu1 5 0", &mut idle);
        assert_eq!(idle, [(0, 451)], "a line cut short ends the list");
        assert_eq!(parse_loadavg("0.20 0.18"), None);
    }

    /// Reads `tid`'s state until it is `expected`, for at most 10 s (a
    /// thread reaches its wait or its loop a moment after it says so),
    /// through one stat file read again and again.
    #[cfg(target_os = "linux")]
    pub(crate) fn eventually(tid: i32, expected: ThreadState) -> ThreadState {
        let stat = ProcFile::thread_stat(tid).unwrap();
        let mut buf = [0; 512];
        read_until(|| stat.thread_state(&mut buf), expected)
    }

    /// Reads with `read` until it gives `expected`, for at most 10 s;
    /// returns the last read. A thread's state changes a little after what
    /// the test waited for: `join` returns once the kernel clears the
    /// thread's id, early in its exit, and its stat file reads a state until
    /// the exit ends.
    pub(crate) fn read_until(
        mut read: impl FnMut() -> ThreadState,
        expected: ThreadState,
    ) -> ThreadState {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let state = read();
            if state == expected || Instant::now() > deadline {
                return state;
            }
            std::thread::yield_now();
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_thread_blocked_on_a_channel_is_blocked_and_a_spinning_one_runnable() {
        let own = ThreadClock::current().tid().unwrap();
        let mut buf = [0; 512];
        assert_eq!(
            ProcFile::thread_stat(own).unwrap().thread_state(&mut buf),
            ThreadState::Runnable,
            "reading, so running"
        );

        let (tids, tid) = mpsc::channel();
        let (release, blocked_on) = mpsc::channel::<()>();
        let blocked = std::thread::spawn(move || {
            tids.send(ThreadClock::current().tid().unwrap()).unwrap();
            let _ = blocked_on.recv_timeout(Duration::from_secs(60));
        });
        let blocked_tid = tid.recv_timeout(Duration::from_secs(60)).unwrap();

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
        let spinning_tid = tid.recv_timeout(Duration::from_secs(60)).unwrap();

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
        let loadavg = ProcFile::loadavg().unwrap();
        assert!(
            loadavg
                .runnable_on_host(&mut buf)
                .is_some_and(|runnable| runnable >= 1)
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_stat_file_reads_its_own_thread_until_it_exits() {
        let (tids, tid) = mpsc::channel();
        let (release, released) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            tids.send(ThreadClock::current().tid().unwrap()).unwrap();
            let _ = released.recv_timeout(Duration::from_secs(60));
        });
        let tid = tid.recv_timeout(Duration::from_secs(60)).unwrap();
        let stat = ProcFile::thread_stat(tid).unwrap();
        let mut buf = [0; 512];
        assert_ne!(stat.thread_state(&mut buf), ThreadState::Unknown);
        release.send(()).unwrap();
        thread.join().unwrap();
        // Joined: the thread is gone, and its open file says so (it never
        // reads another thread that got the same id).
        assert_eq!(
            read_until(|| stat.thread_state(&mut buf), ThreadState::Unknown),
            ThreadState::Unknown
        );
    }
}
