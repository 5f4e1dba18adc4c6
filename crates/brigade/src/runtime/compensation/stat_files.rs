//! The stat file of each slot's thread (`/proc/self/task/TID/stat`), from
//! which the monitor's judge reads whether a stuck worker is blocked or
//! runnable (`decide.rs`), and the monitor's spreading where each worker
//! runs (`runtime/threads/spread.rs`).
//!
//! Each thread opens its own file as it starts, since only it knows its
//! kernel id, and the file is then read in place (`ProcFile`, `pread`) for
//! as long as the thread lives, so reading opens no descriptor. A
//! primary's file is opened before `build` returns: `Runtime::start_workers`
//! waits for every primary to have tried ([`StatFiles::wait_primaries`]).
//! A spare thread, started later when a worker gets stuck, opens its file
//! as it starts and closes it as it exits: one descriptor per spare thread
//! alive, held for the thread's life (at most `max_spare_workers`), never
//! one per reading.
//!
//! A file that cannot be opened (no descriptor left: `EMFILE`; no `/proc`)
//! leaves its slot without one: the judge then sees the thread's state as
//! unknown and judges it by wall time alone, as a blocked thread, which is
//! what compensation did before it read the kernel's view. The first such
//! failure is a warning; nothing panics.
//!
//! ## Protocol
//! Each slot's file sits behind its own lock: the slot's thread puts its
//! file in (and a spare takes it out) while the monitor may read it; a
//! reading holds the lock for one `pread` of a few hundred bytes. The
//! primaries' count of tries sits behind another lock, with a condition
//! variable that `wait_primaries` waits on. Neither takes part in a
//! scheduling protocol, and the monitor is left out of loom models, so they
//! are plain `std` locks.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};

use crate::policy::PRIMARIES_STAT_FILES_TIMEOUT;
use crate::runtime::threads::proc_file::{ProcBuf, ProcFile, ThreadPlace, ThreadState};
use crate::runtime::threads::thread_cpu::ThreadClock;
use crate::sync::{lock, wait_until};

/// The stat files of a runtime's slots (see the module docs).
pub(crate) struct StatFiles {
    files: Box<[Mutex<Option<ProcFile>>]>,
    /// Slots below this are the primaries.
    primaries: usize,
    /// Primaries whose thread has tried to open its file.
    tried: Mutex<usize>,
    tried_changed: Condvar,
    /// Whether a failure to open a file has been warned about.
    warned: AtomicBool,
}

impl StatFiles {
    /// No file yet for `primaries + spares` slots.
    pub(crate) fn new(primaries: usize, spares: usize) -> Self {
        StatFiles {
            files: (0..primaries + spares).map(|_| Mutex::new(None)).collect(),
            primaries,
            tried: Mutex::new(0),
            tried_changed: Condvar::new(),
            warned: AtomicBool::new(false),
        }
    }

    /// F3 of the policy (`policy.rs`): opens the calling thread's stat file
    /// as `slot`'s, in place of the
    /// slot's previous thread's. The calling thread must be the one that
    /// runs `slot` from now on. A failure is warned about once per runtime
    /// and leaves the slot without a file.
    pub(crate) fn open_own(&self, slot: usize) {
        let opened = match ThreadClock::current().tid() {
            Some(tid) => ProcFile::thread_stat(tid),
            None => Err(std::io::ErrorKind::Unsupported.into()),
        };
        let file = opened.map_err(|error| self.failed(slot, &error)).ok();
        // The previous thread's file (closed here) reads nothing any more.
        drop(std::mem::replace(&mut *lock(&self.files[slot]), file));
        if slot < self.primaries {
            *lock(&self.tried) += 1;
            self.tried_changed.notify_all();
        }
    }

    fn failed(&self, slot: usize, error: &std::io::Error) {
        if cfg!(not(target_os = "linux")) || self.warned.swap(true, Ordering::Relaxed) {
            return;
        }
        tracing::warn!(
            target: "brigade::compensation",
            worker = slot,
            %error,
            "could not open this worker thread's /proc stat file; compensation judges it \
             by wall time alone (a runnable worker on a crowded host may get a spare it \
             does not need). Reported once per runtime"
        );
    }

    /// Closes `slot`'s file: its thread (a spare) is exiting.
    pub(crate) fn close(&self, slot: usize) {
        drop(lock(&self.files[slot]).take());
    }

    /// Waits until the thread of each of the first `started` primaries has
    /// tried to open its file (bounded by [`PRIMARIES_STAT_FILES_TIMEOUT`],
    /// F3 of the policy).
    pub(crate) fn wait_primaries(&self, started: usize) {
        let deadline = std::time::Instant::now() + PRIMARIES_STAT_FILES_TIMEOUT;
        let tried = lock(&self.tried);
        let (_tried, timed_out) = wait_until(&self.tried_changed, tried, Some(deadline), |tried| {
            *tried >= started
        });
        if timed_out {
            tracing::debug!(
                target: "brigade::compensation",
                "worker threads were slow to start; build returns before all opened their stat file"
            );
        }
    }

    /// The state of `slot`'s thread, read from its file into `buf`;
    /// unknown if the slot has no file or it cannot be read.
    pub(crate) fn thread_state(&self, slot: usize, buf: &mut ProcBuf) -> ThreadState {
        lock(&self.files[slot])
            .as_ref()
            .map_or(ThreadState::Unknown, |file| file.thread_state(buf))
    }

    /// The state of `slot`'s thread and the CPU it last ran on, for the
    /// monitor's spreading (`runtime/threads/spread.rs`); unknown as above.
    pub(crate) fn thread_place(&self, slot: usize, buf: &mut ProcBuf) -> ThreadPlace {
        lock(&self.files[slot])
            .as_ref()
            .map_or(ThreadPlace::UNKNOWN, |file| file.thread_place(buf))
    }

    /// Whether `slot` has a file (for tests).
    #[cfg(test)]
    pub(crate) fn has_file(&self, slot: usize) -> bool {
        lock(&self.files[slot]).is_some()
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use crate::runtime::threads::proc_file::tests::read_until;
    use std::sync::Arc;
    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn each_slot_reads_the_thread_that_opened_its_file() {
        let files = Arc::new(StatFiles::new(1, 1));
        let (release, released) = mpsc::channel::<()>();
        let primary = {
            let files = files.clone();
            std::thread::spawn(move || {
                files.open_own(0);
                let _ = released.recv_timeout(Duration::from_secs(60));
            })
        };
        files.wait_primaries(1);
        assert!(files.has_file(0), "opened before the wait returned");
        let mut buf = [0; 512];
        // The primary waits on the channel, or is on its way there.
        assert_ne!(files.thread_state(0, &mut buf), ThreadState::Unknown);
        // A spare slot: this thread, runnable as it reads itself.
        files.open_own(1);
        assert_eq!(files.thread_state(1, &mut buf), ThreadState::Runnable);
        files.close(1);
        assert!(!files.has_file(1));
        assert_eq!(files.thread_state(1, &mut buf), ThreadState::Unknown);
        release.send(()).unwrap();
        primary.join().unwrap();
        // Its thread gone, the primary's file reads nothing.
        let gone = read_until(|| files.thread_state(0, &mut buf), ThreadState::Unknown);
        assert_eq!(gone, ThreadState::Unknown);
    }
}
