//! The workloads of tokio's scheduler benchmarks (spawning, yielding,
//! ping-pong, chained spawns), each written once against [`Rt`].
//!
//! A workload runs in three steps: set-up (e.g. start tasks that keep the
//! runtime busy), the timed iterations, and tear-down. The caller times the
//! iterations: [`SuiteWorkload::run`] hands it the iteration as a closure,
//! which it may call any number of times (criterion's `Bencher::iter`, or a
//! plain timing loop).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use crate::harness::Rt;

/// How long [`stall`] keeps its thread busy.
const STALL: Duration = Duration::from_micros(10);
/// Yields per task in [`SuiteWorkload::YieldMany`].
const YIELDS_PER_TASK: usize = 1_000;

/// One workload of tokio's scheduler benchmarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SuiteWorkload {
    /// Inside `block_on`, spawns `count` tasks that count down a shared
    /// counter; the last one signals the channel `block_on` is blocked on.
    SpawnManyLocal,
    /// `count` remote spawns onto an idle runtime, then awaits them all.
    SpawnManyRemoteIdle,
    /// `count` remote spawns while 2 × workers tasks keep the runtime busy
    /// with `yield_now` + 10 µs stall loops (a thread spinning on
    /// `std::thread::yield_now`). The busy tasks start before the
    /// iterations and are stopped (and awaited) after them.
    SpawnManyRemoteBusy1,
    /// `count` remote spawns while `workers` chains of tasks (each task
    /// stalls, then spawns the next) keep the runtime busy. The chains
    /// start before the iterations and are stopped (and waited for) after.
    SpawnManyRemoteBusy2,
    /// `count` tasks, spawned from the caller's thread, each call
    /// `yield_now().await` 1,000 times; the caller waits for all of them.
    YieldMany,
    /// `count` tasks, spawned by one task, each exchange a message with a
    /// helper task over two `tokio::sync::oneshot` channels
    /// (runtime-agnostic, so both runtimes pay the same channel cost); the
    /// last to finish signals the channel `block_on` is blocked on.
    PingPong,
    /// A chain of `count` tasks, each spawning the next, started inside
    /// `block_on`; the caller waits for the last.
    ChainedSpawn,
}

impl SuiteWorkload {
    /// Every workload, in the report's order.
    pub const ALL: [SuiteWorkload; 7] = [
        SuiteWorkload::SpawnManyLocal,
        SuiteWorkload::SpawnManyRemoteIdle,
        SuiteWorkload::SpawnManyRemoteBusy1,
        SuiteWorkload::SpawnManyRemoteBusy2,
        SuiteWorkload::YieldMany,
        SuiteWorkload::PingPong,
        SuiteWorkload::ChainedSpawn,
    ];

    /// The benchmark's name.
    pub fn name(self) -> &'static str {
        match self {
            SuiteWorkload::SpawnManyLocal => "spawn_many_local",
            SuiteWorkload::SpawnManyRemoteIdle => "spawn_many_remote_idle",
            SuiteWorkload::SpawnManyRemoteBusy1 => "spawn_many_remote_busy1",
            SuiteWorkload::SpawnManyRemoteBusy2 => "spawn_many_remote_busy2",
            SuiteWorkload::YieldMany => "yield_many",
            SuiteWorkload::PingPong => "ping_pong",
            SuiteWorkload::ChainedSpawn => "chained_spawn",
        }
    }

    /// The `count` of one iteration in tokio's suite (which runs on 4
    /// workers): tasks spawned, yielding tasks, round trips or chain links.
    pub fn suite_count(self) -> usize {
        match self {
            SuiteWorkload::SpawnManyLocal
            | SuiteWorkload::SpawnManyRemoteIdle
            | SuiteWorkload::SpawnManyRemoteBusy1 => 10_000,
            SuiteWorkload::SpawnManyRemoteBusy2 => 1_000,
            SuiteWorkload::YieldMany => 200,
            SuiteWorkload::PingPong | SuiteWorkload::ChainedSpawn => 1_000,
        }
    }

    /// The `count` scaled to `workers`: × workers / 4, never below
    /// [`suite_count`](Self::suite_count), so that more workers get more
    /// work instead of less work each.
    pub fn scaled_count(self, workers: usize) -> usize {
        self.suite_count() * workers.max(4) / 4
    }

    /// Sets the workload up on `rt` (with `workers` worker threads), hands
    /// `measure` one iteration of `count` to call as often as it likes,
    /// then tears the set-up down.
    pub fn run<R: Rt>(
        self,
        rt: &R,
        workers: usize,
        count: usize,
        measure: impl FnOnce(&mut dyn FnMut()),
    ) {
        match self {
            SuiteWorkload::SpawnManyLocal => spawn_many_local(rt, count, measure),
            SuiteWorkload::SpawnManyRemoteIdle => {
                let mut handles = Vec::with_capacity(count);
                measure(&mut || spawn_remote_and_join(rt, count, &mut handles));
            }
            SuiteWorkload::SpawnManyRemoteBusy1 => {
                let busy = BusyYielders::start(rt, 2 * workers);
                let mut handles = Vec::with_capacity(count);
                measure(&mut || spawn_remote_and_join(rt, count, &mut handles));
                busy.stop(rt);
            }
            SuiteWorkload::SpawnManyRemoteBusy2 => {
                let busy = BusyChains::start(rt, workers);
                let mut handles = Vec::with_capacity(count);
                measure(&mut || spawn_remote_and_join(rt, count, &mut handles));
                busy.stop();
            }
            SuiteWorkload::YieldMany => yield_many(rt, count, measure),
            SuiteWorkload::PingPong => ping_pong(rt, count, measure),
            SuiteWorkload::ChainedSpawn => chained_spawn(rt, count, measure),
        }
    }
}

/// Keeps the thread busy for [`STALL`], yielding the OS thread as it spins.
fn stall() {
    let start = Instant::now();
    while start.elapsed() < STALL {
        std::thread::yield_now();
    }
}

fn spawn_many_local<R: Rt>(rt: &R, count: usize, measure: impl FnOnce(&mut dyn FnMut())) {
    let remaining = Arc::new(AtomicUsize::new(0));
    let (done_tx, done_rx) = mpsc::sync_channel::<()>(1);
    measure(&mut || {
        remaining.store(count, Ordering::Relaxed);
        rt.block_on(async {
            for _ in 0..count {
                let remaining = remaining.clone();
                let done_tx = done_tx.clone();
                drop(R::spawn(async move {
                    if remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
                        done_tx.send(()).expect("bench thread gone");
                    }
                }));
            }
            // Blocks the `block_on` thread, as tokio's benchmark does.
            done_rx.recv().expect("tasks gone");
        });
    });
}

/// Spawns `count` empty tasks through the handle, then awaits them all.
fn spawn_remote_and_join<R: Rt>(rt: &R, count: usize, handles: &mut Vec<R::JoinHandle<()>>) {
    handles.extend((0..count).map(|_| rt.spawn_remote(async {})));
    rt.block_on(async {
        for handle in handles.drain(..) {
            handle.await.expect("empty task failed");
        }
    });
}

/// Tasks looping on `yield_now` + [`stall`] until stopped.
struct BusyYielders<R: Rt> {
    running: Arc<AtomicBool>,
    tasks: Vec<R::JoinHandle<()>>,
}

impl<R: Rt> BusyYielders<R> {
    fn start(rt: &R, count: usize) -> Self {
        let running = Arc::new(AtomicBool::new(true));
        let tasks = (0..count)
            .map(|_| {
                let running = running.clone();
                rt.spawn_remote(async move {
                    while running.load(Ordering::Relaxed) {
                        R::yield_now().await;
                        stall();
                    }
                })
            })
            .collect();
        BusyYielders { running, tasks }
    }

    fn stop(self, rt: &R) {
        self.running.store(false, Ordering::Relaxed);
        rt.block_on(async {
            for task in self.tasks {
                task.await.expect("busy task failed");
            }
        });
    }
}

/// Chains of tasks, each stalling then spawning the next, until stopped.
struct BusyChains {
    running: Arc<AtomicBool>,
    chains: usize,
    stopped: mpsc::Receiver<()>,
}

impl BusyChains {
    fn start<R: Rt>(rt: &R, chains: usize) -> Self {
        let running = Arc::new(AtomicBool::new(true));
        let (stopped_tx, stopped) = mpsc::channel();
        for _ in 0..chains {
            let running = running.clone();
            let stopped_tx = stopped_tx.clone();
            drop(rt.spawn_remote(async move { busy_link::<R>(running, stopped_tx) }));
        }
        BusyChains {
            running,
            chains,
            stopped,
        }
    }

    fn stop(self) {
        self.running.store(false, Ordering::Relaxed);
        for _ in 0..self.chains {
            self.stopped.recv().expect("busy chain lost");
        }
    }
}

/// One link of a busy chain: stall, then spawn the next link, until
/// `running` is cleared; the last link reports on `stopped`.
fn busy_link<R: Rt>(running: Arc<AtomicBool>, stopped: mpsc::Sender<()>) {
    drop(R::spawn(async move {
        if running.load(Ordering::Relaxed) {
            stall();
            busy_link::<R>(running, stopped);
        } else {
            stopped.send(()).expect("bench thread gone");
        }
    }));
}

fn yield_many<R: Rt>(rt: &R, tasks: usize, measure: impl FnOnce(&mut dyn FnMut())) {
    let (done_tx, done_rx) = mpsc::sync_channel::<()>(tasks);
    measure(&mut || {
        for _ in 0..tasks {
            let done_tx = done_tx.clone();
            drop(rt.spawn_remote(async move {
                for _ in 0..YIELDS_PER_TASK {
                    R::yield_now().await;
                }
                done_tx.send(()).expect("bench thread gone");
            }));
        }
        for _ in 0..tasks {
            done_rx.recv().expect("yielding task lost");
        }
    });
}

fn ping_pong<R: Rt>(rt: &R, pings: usize, measure: impl FnOnce(&mut dyn FnMut())) {
    let remaining = Arc::new(AtomicUsize::new(0));
    let (done_tx, done_rx) = mpsc::sync_channel::<()>(1);
    measure(&mut || {
        remaining.store(pings, Ordering::Relaxed);
        let remaining = remaining.clone();
        let done_tx = done_tx.clone();
        rt.block_on(async {
            drop(R::spawn(async move {
                for _ in 0..pings {
                    let remaining = remaining.clone();
                    let done_tx = done_tx.clone();
                    drop(R::spawn(async move {
                        let (ping_tx, ping_rx) = tokio::sync::oneshot::channel::<()>();
                        let (pong_tx, pong_rx) = tokio::sync::oneshot::channel::<()>();
                        drop(R::spawn(async move {
                            ping_rx.await.expect("ping lost");
                            pong_tx.send(()).expect("pinger gone");
                        }));
                        ping_tx.send(()).expect("ponger gone");
                        pong_rx.await.expect("pong lost");
                        if remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
                            done_tx.send(()).expect("bench thread gone");
                        }
                    }));
                }
            }));
            done_rx.recv().expect("ping-pong tasks gone");
        });
    });
}

/// Spawns the next link of a chain of `left` tasks; the last one signals.
fn chain_link<R: Rt>(done_tx: mpsc::SyncSender<()>, left: usize) {
    if left == 0 {
        done_tx.send(()).expect("bench thread gone");
    } else {
        drop(R::spawn(async move { chain_link::<R>(done_tx, left - 1) }));
    }
}

fn chained_spawn<R: Rt>(rt: &R, links: usize, measure: impl FnOnce(&mut dyn FnMut())) {
    let (done_tx, done_rx) = mpsc::sync_channel::<()>(1);
    measure(&mut || {
        let done_tx = done_tx.clone();
        rt.block_on(async move { chain_link::<R>(done_tx, links) });
        done_rx.recv().expect("chain broken");
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::{Brigade, Tokio};

    /// Every workload, two iterations of a small count, on a runtime of
    /// its own thread: a hang fails the test after 20 s.
    fn every_workload_completes<R: Rt>() {
        let (done_tx, done_rx) = mpsc::channel();
        std::thread::spawn(move || {
            let rt = R::build(2);
            for workload in SuiteWorkload::ALL {
                let mut iterations = 0;
                workload.run(&rt, 2, 20, |iteration| {
                    for _ in 0..2 {
                        iteration();
                        iterations += 1;
                    }
                });
                let _ = done_tx.send((workload, iterations));
            }
        });
        for workload in SuiteWorkload::ALL {
            let done = done_rx.recv_timeout(Duration::from_secs(20));
            assert_eq!(
                done,
                Ok((workload, 2)),
                "{} on {}",
                workload.name(),
                R::KIND
            );
        }
    }

    #[test]
    fn every_workload_completes_on_brigade() {
        every_workload_completes::<Brigade>();
    }

    #[test]
    fn every_workload_completes_on_tokio() {
        every_workload_completes::<Tokio>();
    }

    #[test]
    fn counts_scale_with_workers_but_never_shrink() {
        for workload in SuiteWorkload::ALL {
            let count = workload.suite_count();
            assert_eq!(workload.scaled_count(1), count);
            assert_eq!(workload.scaled_count(4), count);
            assert_eq!(workload.scaled_count(8), 2 * count);
            assert_eq!(workload.scaled_count(16), 4 * count);
        }
        let names: Vec<_> = SuiteWorkload::ALL.iter().map(|w| w.name()).collect();
        assert_eq!(names[0], "spawn_many_local");
        assert_eq!(names[6], "chained_spawn");
    }
}
