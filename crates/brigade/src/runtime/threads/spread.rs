//! D1 in `policy.rs`: workers the kernel has stacked on one CPU, spread
//! out by the monitor.
//!
//! A brigade worker with background work never sleeps: between requests
//! it runs the background, and `yield_if_busy()` keeps it on its CPU. The
//! kernel places a thread mostly when it wakes up, so a thread that never
//! sleeps is moved only by the periodic load balancer, and on a small host
//! whose other CPUs keep going briefly idle (a client or a neighbour that
//! wakes thousands of times a second) that balancer can leave two busy
//! workers sharing one CPU for seconds while another CPU idles. Each then
//! gets half a core, and the background loses a third of its throughput
//! (docs/decisions.md#two-workers-one-cpu). tokio's
//! workers sleep and wake often enough that the kernel re-places them.
//!
//! At each sample the monitor reads every primary worker's stat file: its
//! state and the CPU it last ran on ([`ThreadPlace`]). Two workers runnable
//! on the same CPU at [`SPREAD_AFTER_SAMPLES`] samples in a row are
//! *stacked*. If a CPU of the later one's mask holds no runnable worker and
//! was idle at least [`SPREAD_IDLE_PERCENT`]% of the last [`SPREAD_PAUSE`]
//! or so (`/proc/stat`, read at most that often: [`IdleCpus`]), the monitor
//! moves that worker there: it sets the thread's CPU mask to that one CPU,
//! which makes the kernel migrate it at once, and gives the thread the
//! mask it read back, which leaves it where it is. It moves at most one
//! worker per [`SPREAD_PAUSE`], so that it and the kernel's balancer do
//! not take turns moving threads.
//!
//! Why only onto an idle CPU: a CPU kept busy by another process (a
//! neighbour) gives a worker moved there half of it, as the CPU it left
//! did; the move would only take that half from the neighbour, and the
//! kernel's balancer, which sees the same number of threads on each CPU
//! either way, would leave it there.
//!
//! What it does not do: leave a thread pinned (its mask is back before the
//! monitor goes on; a failed restore is retried, then warned about), move
//! a worker to a CPU its mask leaves out (`taskset`, cgroup cpusets: the
//! allowed set is the thread's own mask, read each time), or move one when
//! no allowed CPU is idle and free of runnable workers. With
//! `Builder::spread_workers(false)`, or where `/proc` cannot be read,
//! nothing is moved; off Linux the move is a no-op.
//!
//! What a move leaves behind: the mask given back is the one
//! `sched_getaffinity` read, which Linux (6.2 and later) then keeps as the
//! thread's requested mask. A cgroup cpuset widened later widens the
//! thread only to that mask, and CPUs offline at the move are left out of
//! it. For the few microseconds of the move the thread's mask is the one
//! CPU: a thread or process it starts then inherits that mask. Where
//! cpusets change at run time, `spread_workers(false)` avoids all this.
//!
//! ## Protocol
//! None with the workers: only the monitor thread reads the stat files
//! (each behind its slot's lock, `compensation/stat_files.rs`) and calls
//! `sched_setaffinity` on a worker's thread id, which the kernel applies
//! whatever the thread is doing. A worker that has exited since its file
//! was read makes the call fail, and the move is dropped. The monitor is
//! left out of loom models, and so is this.

use std::time::Instant;

use crate::policy::{SPREAD_AFTER_SAMPLES, SPREAD_IDLE_PERCENT, SPREAD_PAUSE};
use crate::runtime::Shared;
use crate::runtime::threads::proc_file::{ProcBuf, ProcFile, ThreadPlace, ThreadState};

/// The monitor's record of stacked workers (see the module docs).
pub(crate) struct Spreader {
    /// The stacked pair of the last sample, by slot, and the CPU they share.
    stacked: Option<Stacked>,
    /// How many samples in a row have seen `stacked`.
    streak: u32,
    /// When the last move was made.
    moved_at: Option<Instant>,
    places: Vec<ThreadPlace>,
    buf: ProcBuf,
    idle: IdleCpus,
}

/// Two workers runnable on one CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stacked {
    first: usize,
    second: usize,
    cpu: usize,
}

impl Spreader {
    /// Opens `/proc/stat`: call it on the thread that builds the runtime,
    /// as the monitor's other files are (`monitor.rs`).
    pub(crate) fn new() -> Self {
        Spreader {
            stacked: None,
            streak: 0,
            moved_at: None,
            places: Vec::new(),
            buf: [0; std::mem::size_of::<ProcBuf>()],
            idle: IdleCpus::open(),
        }
    }

    /// The CPUs found idle enough to move a worker to, as of the last
    /// reading (for tests).
    #[cfg(test)]
    pub(crate) fn idle_cpus(&self) -> &[usize] {
        &self.idle.idle
    }

    /// One sample at `now`: reads where the primaries are and, if two have
    /// stayed stacked long enough, moves one.
    pub(crate) fn sample(&mut self, shared: &Shared, now: Instant) {
        let files = shared.compensation.stat_files();
        self.places.clear();
        for slot in 0..shared.num_workers() {
            self.places.push(files.thread_place(slot, &mut self.buf));
        }
        self.idle.refresh(now);
        let Some(stacked) = self.note(find_stacked(&self.places), now) else {
            return;
        };
        let tid = shared.compensation.clock(stacked.second).tid();
        let free = free_cpus(&self.idle.idle, &self.places);
        if let Some(tid) = tid
            && let Some(target) = move_off(tid, stacked.cpu, &free)
        {
            self.moved_at = Some(now);
            shared.metrics.count_spread_move();
            tracing::debug!(
                target: "brigade::runtime::spread",
                worker = stacked.second,
                shared_with = stacked.first,
                from_cpu = stacked.cpu,
                to_cpu = target,
                "moved a worker off a CPU it shared with another worker"
            );
        }
    }

    /// Records this sample's stacked pair; returns it if it has been seen
    /// at [`SPREAD_AFTER_SAMPLES`] samples in a row and the last move is
    /// at least [`SPREAD_PAUSE`] old. A pair returned starts a new streak.
    fn note(&mut self, stacked: Option<Stacked>, now: Instant) -> Option<Stacked> {
        if stacked.is_none() || stacked != self.stacked {
            self.stacked = stacked;
            self.streak = u32::from(stacked.is_some());
            return None;
        }
        self.streak += 1;
        let paused = self
            .moved_at
            .is_some_and(|at| now.duration_since(at) < SPREAD_PAUSE);
        if self.streak < SPREAD_AFTER_SAMPLES || paused {
            return None;
        }
        self.streak = 0;
        stacked
    }
}

/// Which CPUs the kernel has left idle lately: two readings of `/proc/stat`
/// at least [`SPREAD_PAUSE`] apart, and the CPUs idle for at least
/// [`SPREAD_IDLE_PERCENT`]% of the time between them. The file's counts
/// are in clock ticks (10 ms on most hosts), so shorter windows would
/// read mostly 0 or 1 tick. No file (it could not be opened): no CPU is
/// ever idle, and nothing is moved.
struct IdleCpus {
    file: Option<ProcFile>,
    buf: Vec<u8>,
    /// The last reading, and when it was taken.
    last: Option<(Instant, Vec<(usize, u64)>)>,
    reading: Vec<(usize, u64)>,
    /// The CPUs found idle between the last two readings.
    idle: Vec<usize>,
    /// Nanoseconds per clock tick.
    tick_nanos: u64,
}

impl IdleCpus {
    fn open() -> Self {
        let mut idle = IdleCpus {
            file: ProcFile::host_stat().ok(),
            // About 100 bytes a CPU line, for every CPU of the host (not
            // only those this process may use), then the rest of the file,
            // which is not parsed.
            buf: vec![0; 4096 + 128 * host_cpus().max(64)],
            last: None,
            reading: Vec::new(),
            idle: Vec::new(),
            tick_nanos: clock_tick_nanos(),
        };
        idle.refresh(Instant::now());
        idle
    }

    /// Takes a reading if the last one is [`SPREAD_PAUSE`] old (or there is
    /// none), and works out which CPUs were idle since it.
    fn refresh(&mut self, now: Instant) {
        if let Some((at, _)) = &self.last
            && now.duration_since(*at) < SPREAD_PAUSE
        {
            return;
        }
        let Some(file) = &self.file else { return };
        if !file.cpu_idle(&mut self.buf, &mut self.reading) {
            return;
        }
        let reading = std::mem::take(&mut self.reading);
        if let Some((at, last)) = self.last.take() {
            let elapsed = now.duration_since(at).as_nanos() as u64;
            self.idle = idle_between(&last, &reading, elapsed, self.tick_nanos);
            self.reading = last;
        }
        self.last = Some((now, reading));
    }
}

/// The CPUs whose idle ticks grew by at least [`SPREAD_IDLE_PERCENT`]% of
/// the whole ticks in `elapsed` nanoseconds from `before` to `after`. Whole
/// ticks, since a window is a little longer than [`SPREAD_PAUSE`] (the
/// first sample after it takes the reading): one idle tick in a window of
/// 104 ms is 10%.
fn idle_between(
    before: &[(usize, u64)],
    after: &[(usize, u64)],
    elapsed: u64,
    tick_nanos: u64,
) -> Vec<usize> {
    after
        .iter()
        .filter_map(|&(cpu, ticks)| {
            let (_, earlier) = before.iter().find(|(c, _)| *c == cpu)?;
            let idle_ticks = ticks.saturating_sub(*earlier);
            let window_ticks = elapsed / tick_nanos.max(1);
            (idle_ticks > 0
                && idle_ticks.saturating_mul(100)
                    >= window_ticks.saturating_mul(SPREAD_IDLE_PERCENT))
            .then_some(cpu)
        })
        .collect()
}

/// CPUs the host has configured, at least those this process may use:
/// the `cpuN` entries of `/sys/devices/system/cpu`, which is what glibc's
/// `_SC_NPROCESSORS_CONF` counts.
fn host_cpus() -> usize {
    let usable = std::thread::available_parallelism().map_or(1, usize::from);
    let Ok(entries) = std::fs::read_dir("/sys/devices/system/cpu") else {
        return usable;
    };
    let is_cpu = |name: &str| {
        name.strip_prefix("cpu")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    let configured = entries
        .filter_map(Result::ok)
        .filter(|entry| entry.file_name().to_str().is_some_and(is_cpu))
        .count();
    usable.max(configured)
}

/// The length of `/proc/stat`'s clock tick (`_SC_CLK_TCK`, 100 a second
/// almost everywhere).
fn clock_tick_nanos() -> u64 {
    #[cfg(target_os = "linux")]
    if let Some(nanos) = 1_000_000_000u64.checked_div(rustix::param::clock_ticks_per_second()) {
        return nanos;
    }
    10_000_000
}

/// The first two runnable workers (by slot) that last ran on the same CPU.
fn find_stacked(places: &[ThreadPlace]) -> Option<Stacked> {
    let runnable = |place: &ThreadPlace| match place {
        ThreadPlace {
            state: ThreadState::Runnable,
            cpu: Some(cpu),
        } => Some(*cpu),
        _ => None,
    };
    places.iter().enumerate().find_map(|(second, place)| {
        let cpu = runnable(place)?;
        let first = places[..second]
            .iter()
            .position(|earlier| runnable(earlier) == Some(cpu))?;
        Some(Stacked { first, second, cpu })
    })
}

/// The `idle` CPUs that no runnable worker last ran on.
fn free_cpus(idle: &[usize], places: &[ThreadPlace]) -> Vec<usize> {
    let occupied = |cpu: usize| {
        places
            .iter()
            .any(|place| place.state == ThreadState::Runnable && place.cpu == Some(cpu))
    };
    idle.iter().copied().filter(|&cpu| !occupied(cpu)).collect()
}

/// The CPU to move a worker to: the first in its mask (`allowed`, in
/// order) that is not `from` and is `free` (idle, and holding no runnable
/// worker).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn pick_target(allowed: &[usize], from: usize, free: &[usize]) -> Option<usize> {
    allowed
        .iter()
        .copied()
        .find(|cpu| *cpu != from && free.contains(cpu))
}

/// Moves thread `tid` off CPU `from` to a `free` CPU of its own mask (see
/// [`pick_target`]) and gives it its mask back; returns the CPU, or `None`
/// if there was none or a call failed (the thread has exited, say).
#[cfg(target_os = "linux")]
pub(crate) fn move_off(tid: i32, from: usize, free: &[usize]) -> Option<usize> {
    let mask = affinity::get(tid)?;
    let target = pick_target(&affinity::cpus(&mask), from, free)?;
    let moved = affinity::set(tid, &affinity::only(target));
    // The mask goes back even if the move failed half way; a failed
    // restore is tried once more, then reported: the thread would stay on
    // one CPU.
    let restored = affinity::set(tid, &mask) || affinity::set(tid, &mask);
    if !restored {
        tracing::warn!(
            target: "brigade::runtime::spread",
            tid,
            cpu = target,
            "could not give a worker thread its CPU mask back after moving it; \
             it stays on this CPU (Builder::spread_workers(false) avoids the move)"
        );
    }
    (moved && restored).then_some(target)
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn move_off(_tid: i32, _from: usize, _free: &[usize]) -> Option<usize> {
    None
}

/// `sched_getaffinity` and `sched_setaffinity` on a thread id (0: the
/// calling thread).
#[cfg(target_os = "linux")]
pub(crate) mod affinity {
    use rustix::thread::{CpuSet, Pid, sched_getaffinity, sched_setaffinity};

    pub(crate) fn get(tid: i32) -> Option<CpuSet> {
        sched_getaffinity(Pid::from_raw(tid)).ok()
    }

    pub(crate) fn set(tid: i32, mask: &CpuSet) -> bool {
        sched_setaffinity(Pid::from_raw(tid), mask).is_ok()
    }

    pub(crate) fn cpus(mask: &CpuSet) -> Vec<usize> {
        (0..CpuSet::MAX_CPU)
            .filter(|&cpu| mask.is_set(cpu))
            .collect()
    }

    pub(crate) fn only(cpu: usize) -> CpuSet {
        let mut mask = CpuSet::new();
        mask.set(cpu);
        mask
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn runnable(cpu: usize) -> ThreadPlace {
        ThreadPlace {
            state: ThreadState::Runnable,
            cpu: Some(cpu),
        }
    }

    fn blocked(cpu: usize) -> ThreadPlace {
        ThreadPlace {
            state: ThreadState::Blocked,
            cpu: Some(cpu),
        }
    }

    #[test]
    fn two_runnable_workers_on_one_cpu_are_stacked_and_a_sleeping_one_is_not() {
        assert_eq!(find_stacked(&[runnable(0), runnable(1)]), None);
        assert_eq!(find_stacked(&[runnable(0), blocked(0)]), None);
        assert_eq!(
            find_stacked(&[runnable(1), runnable(0), runnable(1)]),
            Some(Stacked {
                first: 0,
                second: 2,
                cpu: 1
            })
        );
        let unknown = ThreadPlace {
            state: ThreadState::Unknown,
            cpu: None,
        };
        assert_eq!(find_stacked(&[unknown, unknown]), None);
    }

    #[test]
    fn the_target_is_a_free_cpu_of_the_mask() {
        assert_eq!(pick_target(&[0, 1], 0, &[1]), Some(1));
        assert_eq!(pick_target(&[0, 1, 2, 3], 1, &[3, 2]), Some(2));
        // No free CPU, or the mask has one CPU.
        assert_eq!(pick_target(&[0, 1], 0, &[]), None);
        assert_eq!(pick_target(&[0], 0, &[0]), None);
        // Not outside the mask, even if that CPU is free.
        assert_eq!(pick_target(&[2, 3], 3, &[1]), None);
        // Free: idle, and no runnable worker there (a blocked one is fine).
        assert_eq!(free_cpus(&[0, 1, 2], &[runnable(0), blocked(1)]), [1, 2]);
    }

    #[test]
    fn a_cpu_is_idle_when_its_idle_ticks_grew_by_a_tenth_of_the_window() {
        const TICK: u64 = 10_000_000;
        let before = [(0, 100), (1, 100), (2, 100)];
        // 100 ms: CPU 0 idle 0 ticks, CPU 1 one tick (10%), CPU 2 five.
        let after = [(0, 100), (1, 101), (2, 105), (3, 50)];
        assert_eq!(idle_between(&before, &after, 100 * 1_000_000, TICK), [1, 2]);
        // Over 200 ms one tick is 5%: not idle.
        assert_eq!(idle_between(&before, &after, 200 * 1_000_000, TICK), [2]);
        // A window a little longer than 100 ms (the first sample after the
        // pause reads): still ten whole ticks, and one of them idle is 10%.
        assert_eq!(idle_between(&before, &after, 104 * 1_000_000, TICK), [1, 2]);
        // No idle tick is never idle, however short the window.
        assert_eq!(idle_between(&before, &after, 1_000_000, TICK), [1, 2]);
        assert!(!idle_between(&before, &after, 1_000_000, TICK).contains(&0));
        // A CPU missing from the first reading (brought online) is not.
        assert_eq!(idle_between(&[], &after, 1, TICK), Vec::<usize>::new());
    }

    #[test]
    fn a_pair_is_moved_after_a_streak_of_samples_and_not_again_within_the_pause() {
        let pair = Some(Stacked {
            first: 0,
            second: 1,
            cpu: 0,
        });
        let mut spreader = Spreader::new();
        let start = Instant::now();
        for sample in 1..SPREAD_AFTER_SAMPLES {
            assert_eq!(spreader.note(pair, start), None, "sample {sample}");
        }
        assert_eq!(spreader.note(pair, start), pair);
        spreader.moved_at = Some(start);
        // Stacked again at once: a streak, but within the pause.
        for _ in 0..SPREAD_AFTER_SAMPLES * 2 {
            assert_eq!(spreader.note(pair, start + Duration::from_millis(1)), None);
        }
        // A sample that sees them apart ends the streak.
        assert_eq!(spreader.note(None, start + SPREAD_PAUSE), None);
        for _ in 1..SPREAD_AFTER_SAMPLES {
            assert_eq!(spreader.note(pair, start + SPREAD_PAUSE), None);
        }
        assert_eq!(spreader.note(pair, start + SPREAD_PAUSE), pair);
    }

    /// The move itself: a spinning thread, moved off the CPU it runs on,
    /// runs on the target next, and keeps the mask it had.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_moved_thread_runs_on_the_target_and_keeps_its_mask() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

        let tid = crate::runtime::threads::thread_cpu::ThreadClock::current()
            .tid()
            .unwrap();
        let own = affinity::cpus(&affinity::get(tid).unwrap());
        if own.len() < 2 {
            eprintln!("one CPU allowed: nothing to move to");
            return;
        }
        /// Stops the spinner when the test ends, a failed assertion included.
        struct StopOnDrop(Arc<AtomicBool>);
        impl Drop for StopOnDrop {
            fn drop(&mut self) {
                self.0.store(true, Ordering::Relaxed);
            }
        }
        let stop = Arc::new(AtomicBool::new(false));
        let _stop_on_drop = StopOnDrop(stop.clone());
        let on_cpu = Arc::new(AtomicUsize::new(usize::MAX));
        let (tids, spinner_tid) = std::sync::mpsc::channel();
        let spinner = {
            let (stop, on_cpu) = (stop.clone(), on_cpu.clone());
            std::thread::spawn(move || {
                tids.send(crate::runtime::threads::thread_cpu::ThreadClock::current().tid())
                    .unwrap();
                while !stop.load(Ordering::Relaxed) {
                    on_cpu.store(rustix::thread::sched_getcpu(), Ordering::Relaxed);
                }
            })
        };
        let spinner_tid = spinner_tid
            .recv_timeout(Duration::from_secs(60))
            .unwrap()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while on_cpu.load(Ordering::Relaxed) == usize::MAX && Instant::now() < deadline {
            std::thread::yield_now();
        }
        let from = on_cpu.load(Ordering::Relaxed);
        let mask_before = affinity::cpus(&affinity::get(spinner_tid).unwrap());
        let free: Vec<usize> = mask_before
            .iter()
            .copied()
            .filter(|cpu| *cpu != from)
            .collect();
        let target = move_off(spinner_tid, from, &free).expect("a CPU to move to");
        assert_ne!(target, from);
        // The kernel has migrated it when the call returns; the thread
        // notes the CPU it runs on in its next turns of the loop (a note
        // of `from` taken just before the move may still land first).
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut landed = on_cpu.load(Ordering::Relaxed);
        while landed != target && Instant::now() < deadline {
            std::thread::yield_now();
            landed = on_cpu.load(Ordering::Relaxed);
        }
        let mask_after = affinity::cpus(&affinity::get(spinner_tid).unwrap());
        stop.store(true, Ordering::Relaxed);
        spinner.join().unwrap();
        assert_eq!(landed, target, "moved from CPU {from}");
        assert_eq!(mask_after, mask_before);
    }
}
