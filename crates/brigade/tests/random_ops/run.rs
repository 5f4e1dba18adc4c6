//! One seed's run: the operations, the state they share, and how the
//! runtime is ended.

mod end;
mod ops;

use end::result_summary;

#[allow(unused_imports)]
use super::*;

/// Every operation, with its relative weight.
pub(crate) const OPS: &[(&str, u64)] = &[
    ("short", 10),
    ("panic", 3),
    ("panic_in_drop", 3),
    ("elastic_short", 3),
    ("blocking", 4),
    ("blocking_panic", 2),
    ("blocking_spawner", 2),
    ("sleeper", 3),
    ("timeouts", 2),
    ("interval", 2),
    ("tcp_echo", 2),
    ("spawner", 3),
    ("waker_keeper", 3),
    ("waker_pending", 2),
    ("wake_from_thread", 2),
    ("ybl_loop", 3),
    ("ybl_loop_abort", 2),
    ("yield_now_loop", 2),
    ("elastic_ybl_loop", 1),
    ("sleep_loop", 2),
    ("io_read_pending", 1),
    ("io_accept_pending", 1),
    ("channel_pending", 1),
    ("pending", 1),
    ("abort", 6),
    ("abort_from_thread", 2),
    ("detach", 4),
    ("await", 8),
    ("foreign_waiter", 2),
    ("block_on_sleep", 2),
    ("block_on_timeout", 2),
    ("block_on_yields", 1),
];

/// Units of `spin` steps with `yield_if_busy()` between them, forever.
async fn yield_if_busy_forever(spin: u64) -> u64 {
    let mut units = 0u64;
    loop {
        for _ in 0..spin {
            units = std::hint::black_box(units.wrapping_add(1));
        }
        brigade::yield_if_busy().await;
    }
}

/// How the runtime ends.
#[derive(Clone, Copy, Debug)]
pub(crate) enum EndMode {
    /// `drop` on the thread that built it and ran the operations.
    Drop,
    /// `shutdown_timeout(SHUTDOWN_BOUND)` on that thread.
    ShutdownTimeout,
    /// `drop` on another plain thread it was moved to.
    DropOnThread,
    /// `shutdown_timeout(SHUTDOWN_BOUND)` on another plain thread.
    ShutdownTimeoutOnThread,
    /// `drop` inside one of its own tasks.
    DropInTask,
    /// `shutdown_timeout(SHUTDOWN_BOUND)` inside one of its own tasks.
    ShutdownTimeoutInTask,
    /// `shutdown_timeout(SHUTDOWN_BOUND)` inside one of its own
    /// `spawn_blocking` closures.
    ShutdownTimeoutInBlocking,
    /// `drop` inside one of its own `spawn_blocking` closures.
    DropInBlocking,
}

impl EndMode {
    /// Ends `rt` the way this mode says: a drop, or `shutdown_timeout`.
    pub(crate) fn end(self, rt: Runtime) {
        match self {
            EndMode::Drop
            | EndMode::DropOnThread
            | EndMode::DropInTask
            | EndMode::DropInBlocking => drop(rt),
            _ => rt.shutdown_timeout(SHUTDOWN_BOUND),
        }
    }
}

/// A foreign thread blocked in `Handle::block_on(join_handle)`.
pub(crate) struct Waiter {
    pub(crate) name: String,
    /// `Any` for a dependent task (see [`Task::dependent`]).
    pub(crate) expect: Expect,
    pub(crate) aborted: bool,
    pub(crate) finished_at_abort: bool,
    pub(crate) result: mpsc::Receiver<Result<Out, JoinError>>,
}

/// What the seed is doing, for the failure report.
#[derive(Default)]
pub(crate) struct Progress {
    pub(crate) log: Vec<String>,
    pub(crate) phase: String,
    /// [`bug_hint`] for the runtime's end, for a hang the seed's own bound
    /// catches (a `drop` on the seed's thread that never returns).
    pub(crate) end_hint: String,
}

/// One seed's run.
pub(crate) struct Run {
    pub(crate) seed: u64,
    pub(crate) cfg: Arc<Config>,
    pub(crate) rng: Rng,
    pub(crate) ledger: Arc<Ledger>,
    pub(crate) progress: Arc<Mutex<Progress>>,
    /// `None` once it has been ended (or leaked by a failing run).
    pub(crate) rt: Option<Runtime>,
    /// Kept past the runtime's end.
    pub(crate) handle: Handle,
    pub(crate) tasks: Vec<Task>,
    pub(crate) waiters: Vec<Waiter>,
    /// Wakers captured by tasks, woken from a foreign thread after the end.
    pub(crate) wakers: Arc<Mutex<Vec<Waker>>>,
    /// Things that must outlive the runtime (listeners nobody accepts on,
    /// channel senders nobody sends on).
    pub(crate) keep: Vec<Box<dyn Any + Send>>,
    pub(crate) cpu_loops: usize,
    pub(crate) workers: usize,
    /// `yield_now()` loops spawned (aborted or not: conservatively).
    pub(crate) yield_now_loops: usize,
    /// Plain tasks looping on `yield_if_busy()` not known to have ended
    /// (detached ones included), for [`bug_hint`].
    pub(crate) ybl_loops: Vec<String>,
    pub(crate) groups: usize,
    pub(crate) op: usize,
}

impl Drop for Run {
    fn drop(&mut self) {
        if thread::panicking() {
            // A failing run: dropping a runtime may hang (that may be the
            // very failure), which would hide the report. Leak it.
            if let Some(rt) = self.rt.take() {
                std::mem::forget(rt);
            }
        }
    }
}

impl Run {
    pub(crate) fn new(seed: u64, cfg: Arc<Config>, progress: Arc<Mutex<Progress>>) -> Run {
        let mut rng = Rng::new(seed);
        let workers = rng.between(1, 3) as usize;
        let mut builder = Builder::new();
        let mut settings = format!("worker_threads({workers})");
        builder.worker_threads(workers);
        if rng.percent(30) {
            let max = rng.between(1, 3) as usize;
            builder.max_blocking_threads(max);
            let _ = write!(settings, ".max_blocking_threads({max})");
        }
        if rng.percent(20) {
            builder.driver_thread(true);
            settings.push_str(".driver_thread(true)");
        }
        if rng.percent(20) {
            builder.latency_sample_every(1);
            settings.push_str(".latency_sample_every(1)");
        }
        let rt = builder.build().expect("building the runtime");
        let handle = rt.handle().clone();
        let run = Run {
            seed,
            cfg,
            rng,
            ledger: Arc::new(Ledger::default()),
            progress,
            rt: Some(rt),
            handle,
            tasks: Vec::new(),
            waiters: Vec::new(),
            wakers: Arc::new(Mutex::new(Vec::new())),
            keep: Vec::new(),
            cpu_loops: 0,
            workers,
            yield_now_loops: 0,
            ybl_loops: Vec::new(),
            groups: 0,
            op: 0,
        };
        run.log(format!("runtime: Builder::new().{settings}"));
        run
    }

    pub(crate) fn rt(&self) -> &Runtime {
        self.rt.as_ref().expect("the runtime has ended")
    }

    pub(crate) fn log(&self, line: String) {
        lock(&self.progress).log.push(line);
    }

    pub(crate) fn phase(&self, phase: String) {
        lock(&self.progress).phase = phase;
    }

    pub(crate) fn bound(&self) -> Duration {
        self.cfg.bound
    }

    pub(crate) fn live_ybl_loops(&self) -> Vec<String> {
        self.ybl_loops.clone()
    }

    pub(crate) fn fail(&self, message: String) -> ! {
        panic!(
            "seed {}: {message}{}\n    runtime state: {}",
            self.seed,
            bug_hint(&self.live_ybl_loops()),
            self.diagnostics()
        )
    }

    /// The runtime's metrics, for failure messages.
    pub(crate) fn diagnostics(&self) -> String {
        let metrics = self.handle.metrics();
        format!(
            "{}; workers {} (idle {}), alive tasks {}, injector {}, yield queue {}, \
             elastic limit {:.3}, elastic waiting {}, elastic CPU {:?}, blocking threads {} \
             (idle {}, queued {}), timers {}, long polls {}",
            if self.rt.is_some() {
                "running"
            } else {
                "ended"
            },
            metrics.num_workers(),
            metrics.num_idle_workers(),
            metrics.num_alive_tasks(),
            metrics.injector_depth(),
            metrics.yield_queue_depth(),
            metrics.elastic_utilization_limit(),
            metrics.elastic_waiting(),
            metrics.elastic_cpu_time(),
            metrics.num_blocking_threads(),
            metrics.num_idle_blocking_threads(),
            metrics.blocking_queue_depth(),
            metrics.num_timers(),
            metrics.long_polls(),
        )
    }

    /// `rt.block_on(future)`, bounded by the wall clock.
    pub(crate) fn block_on_bounded<F: Future>(&self, what: &str, future: F) -> F::Output {
        let bound = self.bound();
        match self.rt().block_on(wall_timeout(bound, future)) {
            Ok(output) => output,
            Err(WallElapsed) => self.fail(format!("{what}: not done within {bound:?}")),
        }
    }

    pub(crate) fn push_task(
        &mut self,
        handle: JoinHandle<Out>,
        what: &str,
        expect: Expect,
    ) -> &mut Task {
        let name = format!("{what}#{}", self.op);
        self.log(format!("  -> {name}: expect {expect:?}"));
        self.tasks.push(Task {
            handle,
            name,
            expect,
            aborted: false,
            finished_at_abort: false,
            group: None,
            dependent: false,
            ybl_loop: false,
            uses_ybl: false,
        });
        self.tasks.last_mut().expect("just pushed")
    }

    /// Spawns `future` from a random kind of caller: the `Runtime`, a
    /// `Handle`, `brigade::spawn` inside `block_on`, another task, or a
    /// `Handle` on a plain thread.
    // The async blocks hand the new task's `JoinHandle` back on purpose.
    #[allow(clippy::async_yields_async)]
    pub(crate) fn spawn_via<F>(&mut self, elastic: bool, future: F) -> JoinHandle<Out>
    where
        F: Future<Output = Out> + Send + 'static,
    {
        let via = self.rng.below(5);
        self.log(format!(
            "  spawn{} via {}",
            if elastic { "_elastic" } else { "" },
            ["Runtime", "Handle", "block_on", "task", "thread"][via as usize]
        ));
        match via {
            0 if elastic => self.rt().spawn_elastic(future),
            0 => self.rt().spawn(future),
            1 if elastic => self.rt().handle().spawn_elastic(future),
            1 => self.rt().handle().spawn(future),
            2 => self.block_on_bounded("spawning inside block_on", async move {
                if elastic {
                    brigade::spawn_elastic(future)
                } else {
                    brigade::spawn(future)
                }
            }),
            3 => {
                let spawner = tracked(&self.ledger, "spawning_task", self.op, async move {
                    if elastic {
                        brigade::spawn_elastic(future)
                    } else {
                        brigade::spawn(future)
                    }
                });
                let spawner = self.rt().spawn(spawner);
                self.block_on_bounded("a task that spawns", spawner)
                    .unwrap_or_else(|error| self.fail(format!("a task that spawns: {error}")))
            }
            _ => {
                let handle = self.rt().handle().clone();
                thread::spawn(move || {
                    if elastic {
                        handle.spawn_elastic(future)
                    } else {
                        handle.spawn(future)
                    }
                })
                .join()
                .expect("the spawning thread panicked")
            }
        }
    }

    /// `spawn_blocking` from a random kind of caller.
    // The async blocks hand the new task's `JoinHandle` back on purpose.
    #[allow(clippy::async_yields_async)]
    pub(crate) fn spawn_blocking_via<F>(&mut self, f: F) -> JoinHandle<Out>
    where
        F: FnOnce() -> Out + Send + 'static,
    {
        let via = self.rng.below(4);
        self.log(format!(
            "  spawn_blocking via {}",
            ["Runtime", "Handle on a thread", "block_on", "task"][via as usize]
        ));
        match via {
            0 => self.rt().spawn_blocking(f),
            1 => {
                let handle = self.rt().handle().clone();
                thread::spawn(move || handle.spawn_blocking(f))
                    .join()
                    .expect("the spawning thread panicked")
            }
            2 => self.block_on_bounded("spawn_blocking inside block_on", async move {
                brigade::spawn_blocking(f)
            }),
            _ => {
                let spawner = tracked(&self.ledger, "spawning_task", self.op, async move {
                    brigade::spawn_blocking(f)
                });
                let spawner = self.rt().spawn(spawner);
                self.block_on_bounded("a task that spawns a blocking closure", spawner)
                    .unwrap_or_else(|error| self.fail(format!("a task that spawns: {error}")))
            }
        }
    }

    pub(crate) fn pick_op(&mut self) -> &'static str {
        let total: u64 = OPS.iter().map(|(_, weight)| weight).sum();
        loop {
            let mut roll = self.rng.below(total);
            let name = OPS
                .iter()
                .find(|(_, weight)| {
                    if roll < *weight {
                        true
                    } else {
                        roll -= weight;
                        false
                    }
                })
                .map(|&(name, _)| name)
                .expect("a weight matches");
            let cpu_loop = matches!(
                name,
                "ybl_loop" | "ybl_loop_abort" | "yield_now_loop" | "elastic_ybl_loop"
            );
            if self.cfg.skips(name) || (cpu_loop && self.cpu_loops >= MAX_CPU_LOOPS) {
                // Still consume randomness the same way: reroll.
                continue;
            }
            if cpu_loop {
                self.cpu_loops += 1;
            }
            return name;
        }
    }

    pub(crate) fn run(mut self) {
        let ops = self.rng.between(4, 30);
        for op in 0..ops as usize {
            self.op = op;
            let name = self.pick_op();
            self.log(format!("op {op}: {name}"));
            self.phase(format!("running op {op} ({name})"));
            self.do_op(name);
        }
        self.end();
    }

    pub(crate) fn abort(&mut self, from_thread: bool) {
        if !self.tasks.is_empty() {
            let index = self.rng.index(self.tasks.len());
            self.abort_task(index, from_thread);
        }
    }

    pub(crate) fn abort_task(&mut self, index: usize, from_thread: bool) {
        let twice = self.rng.percent(10);
        let task = &mut self.tasks[index];
        if !task.aborted {
            task.finished_at_abort = task.handle.is_finished();
        }
        if from_thread {
            thread::scope(|scope| {
                scope.spawn(|| task.handle.abort());
            });
        } else {
            task.handle.abort();
        }
        if twice {
            task.handle.abort();
        }
        task.aborted = true;
        let name = task.name.clone();
        let group = task.group;
        self.log(format!("  abort {name}"));
        if let Some(group) = group {
            // Its peer may now fail or end early.
            for peer in self.tasks.iter_mut() {
                if peer.group == Some(group) && peer.name != name {
                    peer.expect = Expect::Any;
                }
            }
        }
    }

    /// Awaits a random task with a bound: from `block_on`, from another
    /// task, or from `Handle::block_on` on a plain thread. A task that need
    /// not end (and was not aborted) is awaited briefly: a `Never` one must
    /// still be pending; any other must resolve within the bound.
    pub(crate) fn await_one(&mut self) {
        if !self.tasks.is_empty() {
            let index = self.rng.index(self.tasks.len());
            self.await_task(index);
        }
    }

    pub(crate) fn await_task(&mut self, index: usize) {
        let mut task = self.tasks.swap_remove(index);
        // Not expected to end by itself (an aborted task must resolve).
        let still_pending = matches!(task.expect, Expect::Never | Expect::Any) && !task.aborted;
        let busy_loops = self.yield_now_loops + self.ybl_loops.len();
        let may_starve = task.uses_ybl && !task.aborted && busy_loops >= self.workers;
        let wait = if still_pending || may_starve {
            self.rng.micros(3_000)
        } else {
            self.bound()
        };
        let from = self.rng.below(3);
        self.log(format!(
            "  await {} for {wait:?} from {}",
            task.name,
            ["block_on", "a task", "a thread's Handle::block_on"][from as usize]
        ));
        let mut handle = task.handle;
        let (handle, result) = match from {
            0 => {
                let result = self.rt().block_on(wall_timeout(wait, &mut handle));
                (handle, result)
            }
            1 => {
                let (sender, receiver) = mpsc::channel();
                let joiner = tracked_task(&self.ledger, "joiner", self.op, async move {
                    let result = wall_timeout(wait, &mut handle).await;
                    let _ = sender.send((handle, result));
                    0
                });
                drop(self.rt().spawn(joiner));
                match receiver.recv_timeout(wait + self.bound()) {
                    Ok(pair) => pair,
                    Err(error) => self.fail(format!(
                        "the task awaiting {} did not report back: {error:?}",
                        task.name
                    )),
                }
            }
            _ => {
                let rt_handle = self.rt().handle().clone();
                let (sender, receiver) = mpsc::channel();
                thread::spawn(move || {
                    let result = rt_handle.block_on(wall_timeout(wait, &mut handle));
                    let _ = sender.send((handle, result));
                });
                match receiver.recv_timeout(wait + self.bound()) {
                    Ok(pair) => pair,
                    Err(error) => self.fail(format!(
                        "the thread awaiting {} did not report back: {error:?}",
                        task.name
                    )),
                }
            }
        };
        task.handle = handle;
        match result {
            Err(_elapsed) if still_pending => self.tasks.push(task),
            Err(_elapsed) if may_starve => {
                self.log(format!(
                    "  {} still waiting, perhaps in the yield queue behind never-ending loops",
                    task.name
                ));
                self.tasks.push(task);
            }
            Err(_elapsed) => {
                let what = if task.aborted {
                    "was aborted but did not resolve"
                } else {
                    "did not resolve"
                };
                // Name the known bug this is, if it is one.
                let bug = if task.ybl_loop && task.aborted {
                    " (known bug (b): JoinHandle::abort did not take effect on a task looping on \
                     yield_if_busy())"
                } else {
                    ""
                };
                self.fail(format!("task {} {what} within {wait:?}{bug}", task.name))
            }
            Ok(result) => {
                if let Err(problem) = check_outcome(
                    &task.name,
                    task.expect,
                    task.aborted,
                    task.finished_at_abort,
                    false,
                    &result,
                ) {
                    self.fail(problem)
                }
                self.log(format!(
                    "  {} resolved: {:?}",
                    task.name,
                    result_summary(&result)
                ));
                self.ybl_loops.retain(|name| *name != task.name);
            }
        }
    }

    /// Moves a random task's handle to a plain thread blocked in
    /// `Handle::block_on` on it until it resolves, at the latest when the
    /// runtime ends.
    pub(crate) fn foreign_waiter(&mut self) {
        if self.tasks.is_empty() {
            return;
        }
        let index = self.rng.index(self.tasks.len());
        let task = self.tasks.swap_remove(index);
        self.log(format!("  {} awaited by a foreign thread", task.name));
        let rt_handle = self.rt().handle().clone();
        let (sender, receiver) = mpsc::channel();
        let handle = task.handle;
        thread::spawn(move || {
            let _ = sender.send(rt_handle.block_on(handle));
        });
        self.waiters.push(Waiter {
            name: task.name,
            expect: if task.dependent {
                Expect::Any
            } else {
                task.expect
            },
            aborted: task.aborted,
            finished_at_abort: task.finished_at_abort,
            result: receiver,
        });
    }

    /// Polls a `JoinHandle` after the runtime's end: once if the end was
    /// called from outside the runtime (everything was dropped before it
    /// returned); else until it is ready, within the bound (the last worker
    /// or blocking thread may still be dropping its last task: `async-task`
    /// drops the future before it marks the task unscheduled, and the handle
    /// stays pending until then).
    pub(crate) fn resolved(
        &self,
        handle: &mut JoinHandle<Out>,
        inside: bool,
    ) -> Poll<Result<Out, JoinError>> {
        let deadline = Instant::now() + self.bound();
        loop {
            let poll = poll_once(handle);
            if poll.is_ready() || !inside || Instant::now() >= deadline {
                return poll;
            }
            thread::sleep(Duration::from_micros(100));
        }
    }

    pub(crate) fn wait_for_end(&self, mode: EndMode, ended: &mpsc::Receiver<()>, bound: Duration) {
        match ended.recv_timeout(bound) {
            Ok(()) => {}
            Err(RecvTimeoutError::Timeout) => self.fail(format!(
                "ending the runtime ({mode:?}) did not return within {bound:?}"
            )),
            Err(RecvTimeoutError::Disconnected) => self.fail(format!(
                "ending the runtime ({mode:?}): the ending thread or task went away without \
                 finishing (it panicked, or its task was dropped)"
            )),
        }
    }
}
