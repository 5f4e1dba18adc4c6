//! The monitor's decision to cover a stuck worker: which stretches past the
//! compensation threshold get a spare ([`compensate`], called at each of
//! the monitor's samples), and which of them a spare can help at all
//! ([`StuckJudge`]), from the kernel's view of the worker's thread and its
//! CPU clock (`runtime/threads/thread_cpu.rs`).
//!
//! Wall time alone cannot tell a worker blocked in a system call from one
//! the OS descheduled: on a crowded host (a load generator, a busy
//! neighbour, more threads than CPUs) a runnable worker can wait several
//! milliseconds for a CPU slice, and a spare started for it only crowds
//! the host further (brigade issue #24).

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::MonitorCover;
use crate::metrics::long_poll::Running;
use crate::policy::DESCHEDULED_ON_CPU_DIVISOR;
use crate::runtime::Shared;
use crate::runtime::threads::proc_file::{ProcBuf, ProcFile, ThreadState};

/// F2 of the policy (`policy.rs`): covers every slot stuck in one stretch
/// for at least `threshold`, while
/// work waits and no worker is idle to take it, and starts spares for them
/// with `start_spares` (the monitor's call of `worker/spare_threads.rs`, so that
/// compensation does not depend on the worker loop; see
/// `compensation/mod.rs`). Also retries starting spares that covered
/// slots still lack (a thread that could not be started). Returns whether a
/// slot needed a spare but every spare was serving already. The monitor
/// thread calls it at each sample of the workers' poll records.
pub(crate) fn compensate(
    shared: &Arc<Shared>,
    running: &[Running],
    threshold: Duration,
    judge: &mut StuckJudge,
    now: Instant,
    start_spares: &mut dyn FnMut(&dyn std::fmt::Display),
) -> bool {
    let compensation = &shared.compensation;
    let mut polled_driver = false;
    for stretch in running {
        if stretch.ran_for < threshold {
            break; // `running` is longest first
        }
        if compensation.is_covered(stretch.slot) || shared.idle.num_idle() > 0 {
            continue;
        }
        if !shared.has_waiting_work() && !polled_driver {
            // Work can wait unseen: with every worker busy nobody sleeps in
            // the driver, so a request on a readable socket or a due timer
            // queues no task until someone polls. Poll once, without
            // blocking, before deciding that nothing waits (the tasks it
            // wakes go to the injector, for the spare to run).
            polled_driver = true;
            if !shared.driver.has_worker_in_poll() {
                shared.driver.poll_nonblocking();
            }
        }
        if !shared.has_waiting_work() || !spare_helps(shared, judge, stretch, now) {
            continue;
        }
        if compensation.serving() >= compensation.max_spares() {
            return compensation.max_spares() > 0;
        }
        let cpu = compensation.clock(stretch.slot).read();
        let record = &shared.metrics.worker(stretch.slot).poll_record;
        let covered = compensation.cover_running(
            stretch.slot,
            stretch.seq,
            || record.seq(),
            shared.clock_nanos(),
            cpu,
        );
        match covered {
            MonitorCover::Covered => {
                tracing::info!(
                    target: "brigade::compensation",
                    worker = stretch.slot,
                    spawned_at = %stretch.location,
                    stuck_ms = stretch.ran_for.as_millis() as u64,
                    "worker {} has been stuck for {:.0?} in a task spawned at {}; a spare \
                     worker takes its place",
                    stretch.slot,
                    stretch.ran_for,
                    stretch.location
                );
                // Inline: a `format_args!` held in a `let` needs Rust 1.89.
                start_spares(&format_args!("worker {} is stuck", stretch.slot));
            }
            MonitorCover::TakenBack => shared.idle.notify_spare(compensation.first_spare()),
            MonitorCover::Taken => {}
        }
    }
    // A spare whose thread could not start is retried here.
    if compensation.lacks_spares() {
        start_spares(&"a covered worker still lacks a spare");
    }
    false
}

/// Whether a spare can help the worker stuck in `stretch`: not when its
/// thread is runnable, waiting for a CPU or running on a host with no idle
/// CPU (the rule is on [`StuckJudge`]). Reports the stretches it leaves
/// uncompensated, once per stretch and verdict.
fn spare_helps(shared: &Shared, judge: &mut StuckJudge, stretch: &Running, now: Instant) -> bool {
    let compensation = &shared.compensation;
    let state = compensation
        .stat_files()
        .thread_state(stretch.slot, &mut judge.buf);
    let cpu_nanos = compensation.clock(stretch.slot).read();
    let (verdict, news) = judge.judge(stretch.slot, stretch.seq, state, cpu_nanos, now);
    if news {
        let stuck_ms = stretch.ran_for.as_millis() as u64;
        match verdict {
            Verdict::Descheduled => {
                shared.metrics.count_descheduled();
                tracing::debug!(
                    target: "brigade::compensation",
                    worker = stretch.slot,
                    spawned_at = %stretch.location,
                    stuck_ms,
                    "worker {} is runnable but waiting for a CPU (descheduled, not compensated)",
                    stretch.slot,
                );
            }
            Verdict::CpuBoundHostFull => tracing::debug!(
                target: "brigade::compensation",
                worker = stretch.slot,
                spawned_at = %stretch.location,
                stuck_ms,
                "worker {} runs a CPU-bound stretch and the host has no idle CPU \
                 (a long poll, not compensated)",
                stretch.slot,
            ),
            _ => {}
        }
    }
    verdict.compensates()
}

/// What the monitor concluded about one stuck stretch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Blocked in the kernel (sleeping in a system call or a wait), or its
    /// state is unknown: compensated, as wall time alone would have it.
    Blocked,
    /// Runnable, and first seen so past the threshold: judged again at the
    /// next sample, from how far its CPU clock moves meanwhile.
    Undecided,
    /// Runnable but mostly off the CPU since the last sample: the OS
    /// descheduled it, waiting for a CPU. Never compensated.
    Descheduled,
    /// Running a CPU-bound stretch (mostly on the CPU since the last
    /// sample) while the host has an idle CPU, where a spare can run the
    /// waiting work: compensated.
    CpuBoundIdleCpu,
    /// Running a CPU-bound stretch on a host with no idle CPU: a spare
    /// would take a CPU from someone. Not compensated; the long-poll
    /// detector reports the stretch.
    CpuBoundHostFull,
}

impl Verdict {
    /// Whether a spare should take the worker's place.
    pub(crate) fn compensates(self) -> bool {
        matches!(self, Verdict::Blocked | Verdict::CpuBoundIdleCpu)
    }
}

/// What the judge last saw of a runnable stretch.
#[derive(Debug, Clone, Copy)]
struct Probe {
    /// The stretch's poll sequence number.
    seq: u64,
    at: Instant,
    cpu_nanos: u64,
    verdict: Verdict,
}

/// The monitor thread's judge of stuck stretches.
///
/// ## The rule
/// F3 of the policy (`policy.rs`), in full. The monitor asks only about a stretch past the compensation threshold,
/// while work waits and no worker is idle (so nothing is read on a runtime
/// whose workers return to the scheduler in time):
/// - the worker's thread is not runnable (`S`, `D`, ... in
///   `/proc/self/task/TID/stat`), or that cannot be read: it is blocked, and
///   compensated at once, as before;
/// - it is runnable (`R`: running, or waiting for a CPU): its CPU clock is
///   read, and the verdict waits for the next sample of the same stretch.
///   Then, if the clock moved by less than half the wall time between the
///   two samples ([`DESCHEDULED_ON_CPU_DIVISOR`]), the OS kept the thread
///   off the CPU: *descheduled*, never
///   compensated (a spare would wait for a CPU too, and take one from
///   whoever has it). Otherwise the stretch is CPU-bound: compensated only
///   while the host has an idle CPU (fewer threads runnable on the host,
///   the monitor left out, than this process may use), where the spare can
///   run the waiting work.
///
/// A runnable stretch is judged anew at every sample, so one that starts
/// to block, or that gets its CPU back on a host that has one to spare, is
/// compensated then; a CPU-bound stretch is compensated one sampling
/// interval later than wall time alone would have done it. The host-wide
/// runnable count (`/proc/loadavg`) does not see CPU quotas of containers:
/// under a quota it tends to find no idle CPU, and leaves CPU-bound
/// stretches uncompensated.
///
/// The files it reads are open already: the threads' stat files
/// (`stat_files.rs`), and `/proc/loadavg`, opened by [`new`](Self::new)
/// as the runtime is built. Without `/proc/loadavg` (no descriptor was left
/// then, or no `/proc`) the host is taken to have no idle CPU, so CPU-bound
/// stretches go uncompensated, as under a container's CPU quota.
///
/// Single-threaded: owned by the monitor thread, one probe per slot.
pub(crate) struct StuckJudge {
    probes: Box<[Option<Probe>]>,
    /// CPUs this process may use.
    cpus: usize,
    loadavg: Option<ProcFile>,
    /// Where the files are read into, reused by every reading.
    pub(super) buf: ProcBuf,
}

impl StuckJudge {
    /// A judge for `num_slots` worker slots. Call it where the runtime is
    /// built: it opens `/proc/loadavg` (and `available_parallelism` reads
    /// cgroup files), which must not happen once the runtime runs.
    pub(crate) fn new(num_slots: usize) -> Self {
        let loadavg = ProcFile::loadavg()
            .inspect_err(|error| {
                if cfg!(target_os = "linux") {
                    tracing::warn!(
                        target: "brigade::compensation",
                        %error,
                        "could not open /proc/loadavg; compensation takes the host to \
                         have no idle CPU, and leaves CPU-bound stuck workers without a spare"
                    );
                }
            })
            .ok();
        StuckJudge {
            probes: vec![None; num_slots].into_boxed_slice(),
            cpus: std::thread::available_parallelism().map_or(1, |cpus| cpus.get()),
            loadavg,
            buf: [0; std::mem::size_of::<ProcBuf>()],
        }
    }

    /// Judges stretch `seq` of `slot`, whose thread is in `state` and has
    /// used `cpu_nanos` of CPU (if known), at `now` (see the type's rule).
    /// Returns the verdict and whether it is news: the first of its kind
    /// for this stretch.
    pub(crate) fn judge(
        &mut self,
        slot: usize,
        seq: u64,
        state: ThreadState,
        cpu_nanos: Option<u64>,
        now: Instant,
    ) -> (Verdict, bool) {
        let previous = self.probes[slot].take().filter(|probe| probe.seq == seq);
        let (ThreadState::Runnable, Some(cpu_nanos)) = (state, cpu_nanos) else {
            return (Verdict::Blocked, true);
        };
        let verdict = match previous {
            None => Verdict::Undecided,
            Some(probe) => self.runnable_verdict(probe, now, cpu_nanos),
        };
        self.probes[slot] = Some(Probe {
            seq,
            at: now,
            cpu_nanos,
            verdict,
        });
        let news = previous.is_none_or(|probe| probe.verdict != verdict);
        (verdict, news)
    }

    fn runnable_verdict(&mut self, previous: Probe, now: Instant, cpu_nanos: u64) -> Verdict {
        let wall = now.saturating_duration_since(previous.at);
        let on_cpu = Duration::from_nanos(cpu_nanos.saturating_sub(previous.cpu_nanos));
        if on_cpu < wall / DESCHEDULED_ON_CPU_DIVISOR {
            Verdict::Descheduled
        } else if self.host_has_idle_cpu() {
            Verdict::CpuBoundIdleCpu
        } else {
            Verdict::CpuBoundHostFull
        }
    }

    /// Whether a CPU is idle: fewer threads runnable on the host than CPUs
    /// this process may use, once the monitor (runnable while it reads, and
    /// about to sleep) is left out.
    fn host_has_idle_cpu(&mut self) -> bool {
        let Some(loadavg) = &self.loadavg else {
            return false;
        };
        loadavg
            .runnable_on_host(&mut self.buf)
            .is_some_and(|runnable| runnable <= self.cpus)
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use crate::runtime::threads::thread_cpu::ThreadClock;

    #[test]
    fn a_running_thread_is_judged_at_its_second_sample() {
        let mut judge = StuckJudge::new(2);
        let clock = ThreadClock::current();
        // This thread, read as the monitor reads a stuck worker.
        let running = |judge: &mut StuckJudge, seq, at| {
            judge.judge(0, seq, ThreadState::Runnable, clock.read(), at)
        };
        let start = Instant::now();
        assert_eq!(running(&mut judge, 1, start), (Verdict::Undecided, true));
        // A wall time far longer than the CPU time used since: descheduled.
        let later = start + Duration::from_secs(3600);
        assert_eq!(running(&mut judge, 1, later), (Verdict::Descheduled, true));
        assert_eq!(
            running(&mut judge, 1, later + Duration::from_secs(3600)),
            (Verdict::Descheduled, false),
            "reported once per stretch"
        );
        // A new stretch starts over.
        assert_eq!(running(&mut judge, 3, later), (Verdict::Undecided, true));
        // On the CPU for the whole (zero-length) wall time: CPU-bound.
        let (verdict, _) = running(&mut judge, 3, later);
        assert!(matches!(
            verdict,
            Verdict::CpuBoundIdleCpu | Verdict::CpuBoundHostFull
        ));
        // A blocked thread, or one whose state or clock is unknown:
        // compensated.
        for (state, cpu) in [
            (ThreadState::Blocked, Some(0)),
            (ThreadState::Unknown, Some(0)),
            (ThreadState::Runnable, None),
        ] {
            let (verdict, _) = judge.judge(1, 1, state, cpu, start);
            assert!(verdict.compensates());
        }
    }
}
