//! Ending the runtime at a random point, in one of several ways, and the
//! checks that follow (`Run::end`).

#[allow(unused_imports)]
use super::*;

impl Run {
    pub(crate) fn pick_end_mode(&mut self) -> EndMode {
        let modes = [
            (EndMode::Drop, 4),
            (EndMode::ShutdownTimeout, 3),
            (EndMode::DropOnThread, 2),
            (EndMode::ShutdownTimeoutOnThread, 2),
            (EndMode::DropInTask, 1),
            (EndMode::ShutdownTimeoutInTask, 1),
            (EndMode::ShutdownTimeoutInBlocking, 1),
            (EndMode::DropInBlocking, 1),
        ];
        let total = modes.iter().map(|(_, weight)| weight).sum();
        let mut roll = self.rng.below(total);
        for (mode, weight) in modes {
            if roll < weight {
                return mode;
            }
            roll -= weight;
        }
        unreachable!()
    }

    /// Ends the runtime, then checks everything it promised.
    pub(crate) fn end(mut self) {
        let mode = self.pick_end_mode();
        let storm = self.rng.percent(25);
        let racing_spawner = self.rng.percent(25);
        self.log(format!(
            "end: {mode:?}{}{}",
            if storm {
                ", wakers woken meanwhile"
            } else {
                ""
            },
            if racing_spawner {
                ", a thread spawning meanwhile"
            } else {
                ""
            }
        ));
        lock(&self.progress).end_hint = bug_hint(&self.live_ybl_loops());
        self.phase(format!("ending the runtime ({mode:?})"));

        // Threads racing with the end: one waking every captured waker, one
        // spawning through a Handle.
        let stop = Arc::new(AtomicBool::new(false));
        let storm = storm.then(|| {
            let stop = stop.clone();
            let wakers = self.wakers.clone();
            thread::spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    let wakers: Vec<Waker> = lock(&wakers).clone();
                    wakers.iter().for_each(Waker::wake_by_ref);
                    thread::yield_now();
                }
            })
        });
        let racing_spawner = racing_spawner.then(|| {
            let stop = stop.clone();
            let handle = self.handle.clone();
            let ledger = self.ledger.clone();
            let op = self.op + 1;
            thread::spawn(move || {
                let mut spawned = Vec::new();
                let mut n = 0u64;
                while !stop.load(Ordering::SeqCst) && spawned.len() < 5_000 {
                    let never = n.is_multiple_of(2);
                    let task = tracked_task(&ledger, "racing_spawn", op, async move {
                        if never {
                            pending::<()>().await;
                        }
                        n
                    });
                    let expect = if never {
                        Expect::Never
                    } else {
                        Expect::Value(n)
                    };
                    spawned.push((handle.spawn(task), expect));
                    n += 1;
                    thread::yield_now();
                }
                spawned
            })
        });
        if racing_spawner.is_some() {
            // Let it spawn a few before the end begins.
            thread::sleep(Duration::from_micros(200));
        }

        let rt = self.rt.take().expect("the runtime");
        let bound = self.bound();
        let (done, ended) = mpsc::channel::<()>();
        let end_started = Instant::now();
        let inside = match mode {
            EndMode::Drop => {
                drop(rt);
                false
            }
            EndMode::ShutdownTimeout => {
                rt.shutdown_timeout(SHUTDOWN_BOUND);
                false
            }
            EndMode::DropOnThread | EndMode::ShutdownTimeoutOnThread => {
                thread::spawn(move || {
                    mode.end(rt);
                    let _ = done.send(());
                });
                self.wait_for_end(mode, &ended, bound + SHUTDOWN_BOUND);
                false
            }
            EndMode::DropInTask | EndMode::ShutdownTimeoutInTask => {
                let slot = Arc::new(Mutex::new(Some(rt)));
                let ender = tracked_task(&self.ledger, "ender_task", self.op, {
                    let slot = slot.clone();
                    async move {
                        let rt = lock(&slot).take();
                        if let Some(rt) = rt {
                            mode.end(rt);
                        }
                        let _ = done.send(());
                        0
                    }
                });
                drop(self.handle.spawn(ender));
                self.wait_for_end(mode, &ended, bound + SHUTDOWN_BOUND);
                true
            }
            EndMode::ShutdownTimeoutInBlocking | EndMode::DropInBlocking => {
                let slot = Arc::new(Mutex::new(Some(rt)));
                let ender = tracked_closure(&self.ledger, "ender_blocking", self.op, {
                    let slot = slot.clone();
                    move || {
                        let rt = lock(&slot).take();
                        if let Some(rt) = rt {
                            mode.end(rt);
                        }
                        let _ = done.send(());
                        0
                    }
                });
                drop(self.handle.spawn_blocking(ender));
                self.wait_for_end(mode, &ended, bound + SHUTDOWN_BOUND);
                true
            }
        };
        // For the log only; nothing asserts a duration.
        self.log(format!(
            "  the end returned after {:?}",
            end_started.elapsed()
        ));
        self.phase(format!("checking after the runtime's end ({mode:?})"));

        // Stop the racing threads; what they spawned must all have resolved.
        stop.store(true, Ordering::SeqCst);
        if let Some(storm) = storm {
            storm.join().expect("the waking thread panicked");
        }
        let racing_spawns =
            racing_spawner.map(|spawner| spawner.join().expect("the racing spawner panicked"));

        // Every future and closure has been dropped: at once if the end was
        // called from outside the runtime, within the bound if from inside
        // (the ending worker or blocking thread drops its last tasks after
        // the call returns, and the ender's own output, which nobody awaits,
        // after its future or closure returns it).
        if inside {
            let deadline = Instant::now() + bound;
            let ender_output_live = || {
                self.ledger
                    .live(&[Kind::Output])
                    .iter()
                    .any(|value| value.contains(" of ender_"))
            };
            while (!self.ledger.live(&[Kind::Future, Kind::Closure]).is_empty()
                || self.handle.metrics().num_alive_tasks() != 0
                || ender_output_live())
                && Instant::now() < deadline
            {
                thread::sleep(Duration::from_millis(1));
            }
        }
        let live = self.ledger.live(&[Kind::Future, Kind::Closure]);
        if !live.is_empty() {
            self.fail(format!(
                "after the runtime's end ({mode:?}), these were never dropped: {}",
                live.join(", ")
            ));
        }

        // Every remaining JoinHandle has resolved.
        for mut task in std::mem::take(&mut self.tasks) {
            if !task.handle.is_finished() {
                self.fail(format!(
                    "JoinHandle of {} not finished after the runtime's end",
                    task.name
                ));
            }
            match self.resolved(&mut task.handle, inside) {
                Poll::Ready(result) => {
                    let expect = if task.dependent {
                        Expect::Any
                    } else {
                        task.expect
                    };
                    if let Err(problem) = check_outcome(
                        &task.name,
                        expect,
                        task.aborted,
                        task.finished_at_abort,
                        true,
                        &result,
                    ) {
                        self.fail(problem);
                    }
                }
                Poll::Pending => self.fail(format!(
                    "JoinHandle of {} still pending after the runtime's end",
                    task.name
                )),
            }
        }
        for (index, (mut handle, expect)) in racing_spawns.into_iter().flatten().enumerate() {
            let name = format!("racing_spawn {index}");
            match self.resolved(&mut handle, inside) {
                Poll::Ready(result) => {
                    if let Err(problem) = check_outcome(&name, expect, false, false, true, &result)
                    {
                        self.fail(problem);
                    }
                }
                Poll::Pending => self.fail(format!(
                    "JoinHandle of {name}, spawned while the runtime ended, still pending"
                )),
            }
        }
        for waiter in std::mem::take(&mut self.waiters) {
            match waiter.result.recv_timeout(bound) {
                Ok(result) => {
                    if let Err(problem) = check_outcome(
                        &waiter.name,
                        waiter.expect,
                        waiter.aborted,
                        waiter.finished_at_abort,
                        true,
                        &result,
                    ) {
                        self.fail(problem);
                    }
                }
                Err(error) => self.fail(format!(
                    "Handle::block_on of {}'s JoinHandle on a foreign thread did not return \
                     after the runtime's end: {error:?}",
                    waiter.name
                )),
            }
        }
        if self.handle.metrics().num_alive_tasks() != 0 {
            self.fail(format!(
                "{} task(s) still alive after the runtime's end",
                self.handle.metrics().num_alive_tasks()
            ));
        }

        // Wakers captured by tasks, woken from a foreign thread now that the
        // runtime is gone.
        self.phase("waking kept wakers after the runtime's end".to_owned());
        let wakers = std::mem::take(&mut *lock(&self.wakers));
        let woken = wakers.len();
        run_on_thread(bound, "waking kept wakers", move || {
            for waker in wakers {
                waker.wake_by_ref();
                waker.wake();
            }
        })
        .unwrap_or_else(|error| self.fail(error));

        // Spawning through a Handle kept past the end: cancelled at once,
        // the future or closure dropped.
        self.phase("spawning on a handle after the runtime's end".to_owned());
        let also_here = self.rng.percent(50);
        let handle = self.handle.clone();
        let ledger = self.ledger.clone();
        let op = self.op + 2;
        let mut late = Vec::from(
            run_on_thread(bound, "spawning after the end", move || {
                spawn_late(&handle, &ledger, op)
            })
            .unwrap_or_else(|error| self.fail(error)),
        );
        if also_here {
            late.extend(spawn_late(&self.handle, &self.ledger, op));
        }
        for result in late {
            match result {
                Err(error) if error.is_cancelled() => {}
                other => self.fail(format!(
                    "spawning on a Handle after the runtime's end gave {:?}, not a cancellation",
                    other.map_err(|error| error.to_string())
                )),
            }
        }

        // Listeners and channel senders kept for the never-ending tasks: the
        // senders' drop wakes tasks of a runtime that is gone.
        self.keep.clear();

        self.phase("final accounting".to_owned());
        let twice = self.ledger.dropped_twice();
        if !twice.is_empty() {
            self.fail(format!("dropped more than once: {}", twice.join(", ")));
        }
        let (created, dropped) = (self.ledger.created(), self.ledger.dropped());
        if created != dropped {
            self.fail(format!(
                "{created} tracked values created, {dropped} dropped; never dropped: {}",
                self.ledger
                    .live(&[Kind::Future, Kind::Closure, Kind::Output])
                    .join(", ")
            ));
        }
        self.log(format!(
            "end checked: {created} tracked values, {woken} kept wakers woken"
        ));
    }
}

/// Spawns a task, an elastic task and a blocking closure on `handle`, whose
/// runtime is gone, and waits (bounded) for their outcomes.
pub(crate) fn spawn_late(
    handle: &Handle,
    ledger: &Arc<Ledger>,
    op: usize,
) -> [Result<u64, JoinError>; 3] {
    let spawned = handle.spawn(tracked_task(ledger, "late_spawn", op, async { 1 }));
    let elastic = handle.spawn_elastic(tracked_task(ledger, "late_spawn_elastic", op, async { 2 }));
    let blocking = handle.spawn_blocking(tracked_closure(ledger, "late_spawn_blocking", op, || 3));
    [
        local_block_on(spawned),
        local_block_on(elastic),
        local_block_on(blocking),
    ]
    .map(|result| result.map(|out| out.value))
}

/// A one-line summary of an outcome for the log.
pub(crate) fn result_summary(result: &Result<Out, JoinError>) -> String {
    match result {
        Ok(out) => format!("Ok({})", out.value),
        Err(error) if error.is_panic() => "panic".to_owned(),
        Err(_) => "cancelled".to_owned(),
    }
}
