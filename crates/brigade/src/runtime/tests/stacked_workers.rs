//! Two busy workers stacked on one CPU, as the kernel sometimes leaves
//! them, and the monitor's spreader (D1 of `policy.rs`, `runtime/threads/spread.rs`)
//! moving one off. The test stacks them itself, by setting both workers'
//! CPU masks to one CPU, for a little over the spreader's idle window (so
//! that the other CPU reads idle, unless other tests keep it busy), then
//! gives them their masks back and runs the spreader's samples at once,
//! before the kernel's balancer gets to them. An attempt where the kernel
//! got there first, or the other CPU did not read idle, is made again. The
//! runtime is built with `spread_workers(false)` so that its own monitor
//! stays out of the way. Every wait is bounded.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::Builder;
use crate::policy::{SPREAD_AFTER_SAMPLES, SPREAD_PAUSE};
use crate::runtime::Shared;
use crate::runtime::threads::proc_file::{ProcBuf, ThreadPlace, ThreadState};
use crate::runtime::threads::spread::{Spreader, affinity};

const BOUND: Duration = Duration::from_secs(10);
const ATTEMPTS: usize = 20;

/// Where the two workers are now, read as the spreader reads it.
fn places(shared: &Shared) -> [ThreadPlace; 2] {
    let mut buf = [0; std::mem::size_of::<ProcBuf>()];
    let files = shared.compensation.stat_files();
    [
        files.thread_place(0, &mut buf),
        files.thread_place(1, &mut buf),
    ]
}

fn tids(shared: &Shared) -> [i32; 2] {
    [0, 1].map(|slot| {
        shared
            .compensation
            .clock(slot)
            .tid()
            .expect("a worker's thread id")
    })
}

/// Sets both workers' masks to `cpu` alone and waits until both are
/// runnable there; `false` if they did not get there within the bound.
fn stack_on(shared: &Shared, cpu: usize) -> bool {
    for tid in tids(shared) {
        assert!(affinity::set(tid, &affinity::only(cpu)));
    }
    let deadline = Instant::now() + BOUND;
    while Instant::now() < deadline {
        let stacked = places(shared)
            .iter()
            .all(|place| place.state == ThreadState::Runnable && place.cpu == Some(cpu));
        if stacked {
            return true;
        }
        std::thread::yield_now();
    }
    false
}

#[test]
fn two_busy_workers_stacked_on_one_cpu_are_spread_apart() {
    let own = affinity::get(0)
        .map(|mask| affinity::cpus(&mask))
        .unwrap_or_default();
    if own.len() < 2 {
        eprintln!("one CPU allowed: nothing to spread onto");
        return;
    }
    let rt = Builder::new()
        .worker_threads(2)
        .spread_workers(false)
        .build()
        .unwrap();
    let shared = rt.handle.shared.clone();
    // Two busy loops: with every worker busy, `yield_if_busy()` steps the
    // one that shares a worker aside, and the other worker takes it, so each
    // worker runs one; the test waits until both have started.
    let stop = Arc::new(AtomicBool::new(false));
    let started = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    for _ in 0..2 {
        let (stop, started) = (stop.clone(), started.clone());
        rt.spawn(async move {
            started.fetch_add(1, Ordering::Relaxed);
            while !stop.load(Ordering::Relaxed) {
                std::hint::spin_loop();
                crate::yield_if_busy().await;
            }
        });
    }
    let deadline = Instant::now() + BOUND;
    while started.load(Ordering::Relaxed) < 2 && Instant::now() < deadline {
        std::thread::yield_now();
    }
    assert_eq!(started.load(Ordering::Relaxed), 2, "both busy tasks run");
    let masks = tids(&shared).map(|tid| affinity::get(tid).unwrap());
    let (mut spread, mut idle_seen) = (false, false);
    for _ in 0..ATTEMPTS {
        let mut spreader = Spreader::new();
        if !stack_on(&shared, own[0]) {
            continue;
        }
        std::thread::sleep(SPREAD_PAUSE + SPREAD_PAUSE / 2);
        for (tid, mask) in tids(&shared).into_iter().zip(&masks) {
            assert!(affinity::set(tid, mask));
        }
        let now = Instant::now();
        for _ in 0..SPREAD_AFTER_SAMPLES {
            spreader.sample(&shared, now);
        }
        let [first, second] = places(&shared);
        if rt.metrics().spread_moves() > 0 {
            // The later worker of the pair (slot 1) was moved off the CPU
            // they shared. (The kernel, now free to, may move slot 0 too,
            // even onto the same CPU: it is not asked to stay.)
            assert_ne!(second.cpu, Some(own[0]), "the later worker moved off");
            spread = true;
            break;
        }
        let allowed = affinity::cpus(&masks[1]);
        let idle_target = spreader
            .idle_cpus()
            .iter()
            .any(|cpu| *cpu != own[0] && allowed.contains(cpu));
        idle_seen |= idle_target;
        if idle_target && first.cpu == second.cpu {
            panic!(
                "left stacked on CPU {:?} with an idle CPU to move to",
                first.cpu
            );
        }
        // The kernel spread them first, or no other CPU read idle: again.
    }
    for (tid, mask) in tids(&shared).into_iter().zip(&masks) {
        affinity::set(tid, mask);
    }
    stop.store(true, Ordering::Relaxed);
    if !idle_seen && !spread {
        eprintln!("no other CPU read idle in {ATTEMPTS} attempts (a loaded host): nothing shown");
        return;
    }
    assert!(
        spread,
        "the spreader moved a worker in one of {ATTEMPTS} attempts"
    );
    // Each worker kept its own mask.
    for (tid, mask) in tids(&shared).into_iter().zip(&masks) {
        assert_eq!(
            affinity::cpus(&affinity::get(tid).unwrap()),
            affinity::cpus(mask)
        );
    }
}
