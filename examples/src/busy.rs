//! Calibrated busy work, the unit of CPU work every demo and bench uses.

use std::time::Duration;

/// Busy work: `iterations` rounds of a multiply-add the optimiser cannot
/// remove.
#[inline(never)]
pub fn spin(iterations: u64) -> u64 {
    let mut x = std::hint::black_box(0x9E37_79B9_7F4A_7C15u64);
    for _ in 0..iterations {
        x = std::hint::black_box(
            x.wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407),
        );
    }
    x
}

/// How many [`spin`] iterations take `micros` µs of CPU time on this
/// machine while `threads` threads spin at once (the median of all their
/// trials, so one unusually fast or slow trial does not skew it).
///
/// Each trial is timed on its thread's CPU clock, not the wall clock: a
/// trial the kernel preempted, throttled (a cgroup's quota) or the host
/// stole from counts only the time it ran, so units done × `micros` is the
/// CPU the units took, whatever else ran on the machine while it
/// calibrated.
///
/// Calibrate with as many threads as the workload keeps busy: a core running
/// alone may clock higher than with its neighbours busy, and a unit
/// calibrated on one thread then takes longer under load, which would show
/// up as lost background throughput.
pub fn calibrate(micros: u64, threads: usize) -> u64 {
    // About 2 ms a trial and 30 ms in all: a few 0.5 ms trials gave unit
    // lengths that differed by ±1.5 % from one calibration to the next.
    const TRIAL: u64 = 2_000_000;
    const TRIALS_PER_THREAD: usize = 15;
    let mut trials: Vec<Duration> = std::thread::scope(|scope| {
        let spinners: Vec<_> = (0..threads.max(1))
            .map(|_| {
                scope.spawn(|| {
                    (0..TRIALS_PER_THREAD)
                        .map(|_| {
                            let started = thread_cpu_time();
                            std::hint::black_box(spin(TRIAL));
                            thread_cpu_time().saturating_sub(started)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        spinners
            .into_iter()
            .flat_map(|spinner| spinner.join().expect("calibration thread panicked"))
            .collect()
    });
    trials.sort();
    let per_micro = TRIAL as f64 / trials[trials.len() / 2].as_secs_f64() / 1e6;
    ((per_micro * micros as f64) as u64).max(1)
}

/// The calling thread's CPU time so far.
fn thread_cpu_time() -> Duration {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calibration_yields_a_positive_iteration_count() {
        assert!(calibrate(10, 1) >= 1);
        assert!(calibrate(10, 2) >= 1);
    }
}
