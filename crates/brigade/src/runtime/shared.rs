//! The state every worker, handle and task of one runtime shares, and the
//! two operations at the centre of the scheduler: spawning a task and
//! scheduling a woken one.

use std::cell::Cell;
use std::future::Future;
use std::panic::Location;
use std::sync::Arc;
// A tuning knob no protocol reads, so not from `crate::sync`.
use std::sync::atomic::AtomicU32;
use std::time::{Duration, Instant};

use async_task::{ScheduleInfo, WithInfo};
use crossbeam_deque::Stealer;

use super::blocking::BlockingPool;
use super::context;
use super::driver::Driver;
use super::idle::Idle;
use crate::admission::Admission;
use crate::metrics::MetricsCells;
use crate::sync::{AtomicBool, Injector, Mutex, Ordering, injector_pop, lock};
use crate::task::harness::Harness;
use crate::task::registry::Registry;
use crate::task::{JoinHandle, Runnable, TaskMeta};
use crate::yield_queue::YieldQueue;

/// Shared state of one runtime.
///
/// ## Shutdown protocol
/// `shutdown` is set once (`SeqCst`), then every sleeping worker is woken.
/// A push into the injector or the yield queue is followed (after the
/// `SeqCst` fence in `notify_one`) by a `SeqCst` load of `shutdown`; if it is
/// set, the pusher drains the queue itself. The shutting-down thread drains
/// both queues after setting the flag. Whichever of the two comes second in
/// the fence order sees the other's write, so no task is left behind in a
/// queue that nobody will drain.
pub(crate) struct Shared {
    pub(crate) injector: Injector<Runnable>,
    pub(crate) stealers: Box<[Stealer<Runnable>]>,
    pub(crate) yield_queue: YieldQueue,
    pub(crate) idle: Idle,
    pub(crate) registry: Registry,
    pub(crate) blocking: BlockingPool,
    pub(crate) driver: Arc<Driver>,
    pub(crate) metrics: MetricsCells,
    pub(crate) admission: Admission,
    pub(crate) config: SchedulerConfig,
    /// The sampling interval in force: one schedule in this many is timed.
    /// Between 1 and `config.latency_sample_every` (0 when sampling is off);
    /// the monitor thread lowers it when schedules are rare, so the elastic
    /// controller always has enough samples for a p99 (see
    /// `runtime/monitor.rs`). Read with `Relaxed`: a stale value only shifts
    /// when the next sample is taken.
    sample_every: AtomicU32,
    shutdown: AtomicBool,
    /// Tasks woken or drained after shutdown began, waiting to be dropped
    /// by [`drop_cancelled`](Self::drop_cancelled) (see
    /// [`cancel_later`](Self::cancel_later)).
    cancelled: Mutex<Cancelled>,
    /// Time zero for `clock_nanos`.
    start: Instant,
}

/// See [`Shared::cancel_later`].
#[derive(Default)]
struct Cancelled {
    runnables: Vec<Runnable>,
    /// Set by the shutdown's final `drop_cancelled`: later tasks are
    /// dropped at once.
    closed: bool,
}

/// Scheduler settings from the `Builder`.
#[derive(Debug, Clone)]
pub(crate) struct SchedulerConfig {
    /// Sample at least one schedule in this many for the scheduling-latency
    /// histogram (more when schedules are rare); 0 disables sampling.
    pub(crate) latency_sample_every: u32,
    /// Polls longer than this are reported; `None` disables the detector.
    pub(crate) long_poll_threshold: Option<Duration>,
}

thread_local! {
    /// Schedules left on this thread until the next sampled one.
    static SAMPLE_COUNTDOWN: Cell<u32> = const { Cell::new(1) };
}

/// Where `schedule` put a task.
enum Pushed {
    /// The current worker's deque; `notify` is false when that worker is
    /// parked dispatching events and will run the task itself.
    Local { notify: bool },
    /// The injector or the yield queue.
    Shared,
}

impl Shared {
    pub(crate) fn new(
        stealers: Box<[Stealer<Runnable>]>,
        blocking: BlockingPool,
        driver: Arc<Driver>,
        admission: Admission,
        config: SchedulerConfig,
    ) -> Self {
        let num_workers = stealers.len();
        let wake_driver = {
            let driver = driver.clone();
            Box::new(move || driver.wake())
        };
        Shared {
            injector: Injector::new(),
            yield_queue: YieldQueue::new(),
            idle: Idle::new(num_workers, wake_driver),
            driver,
            registry: Registry::new(num_workers),
            metrics: MetricsCells::new(num_workers),
            admission,
            sample_every: AtomicU32::new(config.latency_sample_every),
            config,
            stealers,
            blocking,
            shutdown: AtomicBool::new(false),
            cancelled: Mutex::new(Cancelled::default()),
            start: Instant::now(),
        }
    }

    pub(crate) fn num_workers(&self) -> usize {
        self.stealers.len()
    }

    /// Nanoseconds since the runtime started (monotonic).
    pub(crate) fn clock_nanos(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    pub(crate) fn is_shutdown(&self) -> bool {
        self.shutdown.load(Ordering::Acquire)
    }

    /// Spawns `future` as a task of this runtime.
    pub(crate) fn spawn<F>(
        self: &Arc<Self>,
        future: F,
        location: &'static Location<'static>,
        elastic: bool,
    ) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let id = TaskMeta::next_id();
        let (runnable, task) = self.registry.register(id, |registry_key| {
            let schedule = {
                let shared = self.clone();
                move |runnable, info| shared.schedule(runnable, info)
            };
            async_task::Builder::new()
                .metadata(TaskMeta::new(self, registry_key, id, location, elastic))
                .spawn(move |meta| Harness::new(future, meta), WithInfo(schedule))
        });
        self.metrics.count_spawn();
        if runnable.metadata().registry_key().is_some() {
            runnable.schedule();
        } else {
            // Spawned after shutdown began: cancel at once.
            drop(runnable);
        }
        JoinHandle::new(task)
    }

    /// Runs `f` on the blocking pool.
    pub(crate) fn spawn_blocking<F, R>(
        self: &Arc<Self>,
        f: F,
        location: &'static Location<'static>,
    ) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        let id = TaskMeta::next_id();
        let schedule = {
            let shared = self.clone();
            move |runnable| shared.blocking.push(&shared, runnable)
        };
        let (runnable, task) = async_task::Builder::new()
            .metadata(TaskMeta::new(self, None, id, location, false))
            .spawn(move |meta| Harness::new(async move { f() }, meta), schedule);
        runnable.schedule();
        JoinHandle::new(task)
    }

    /// The schedule hook of every (non-blocking) task: where a woken task
    /// goes. On one of this runtime's workers: that worker's deque, or the
    /// yield queue if the task asked for it during the poll that just ended.
    /// Anywhere else: the injector.
    pub(crate) fn schedule(&self, runnable: Runnable, info: ScheduleInfo) {
        if self.is_shutdown() {
            self.cancel_later(runnable);
            return;
        }
        let routed_to_yield_queue =
            info.woken_while_running && runnable.metadata().take_yield_request();
        if routed_to_yield_queue {
            runnable.metadata().set_yielded_at(self.clock_nanos());
        } else {
            self.maybe_sample(&runnable);
        }
        let pushed = context::with_current_worker(|core| match core {
            Some(core) if std::ptr::eq(&**core.shared(), self) => {
                if !info.woken_while_running {
                    Pushed::Local {
                        notify: core.push_local(runnable),
                    }
                } else if routed_to_yield_queue {
                    self.yield_queue.push(runnable);
                    Pushed::Shared
                } else {
                    Pushed::Local {
                        notify: core.push_local_yielded(runnable),
                    }
                }
            }
            _ => {
                self.injector.push(runnable);
                Pushed::Shared
            }
        });
        match pushed {
            Pushed::Local { notify } => {
                if notify {
                    self.idle.notify_one();
                }
            }
            Pushed::Shared => {
                self.idle.notify_one();
                if self.shutdown.load(Ordering::SeqCst) {
                    self.drain_queues();
                }
            }
        }
    }

    /// Samples one schedule in `latency_sample_every` for the
    /// scheduling-latency histogram (the countdown is per thread, so sampling
    /// costs no shared write).
    fn maybe_sample(&self, runnable: &Runnable) {
        let every = self.sample_every.load(Ordering::Relaxed);
        if every == 0 {
            return;
        }
        let due = SAMPLE_COUNTDOWN.with(|countdown| {
            // `min`: a countdown started under a sparser interval catches up.
            let left = countdown.get().min(every).saturating_sub(1);
            countdown.set(if left == 0 { every } else { left });
            left == 0
        });
        if due {
            runnable.metadata().set_scheduled_at(self.clock_nanos());
        }
    }

    pub(crate) fn sample_every(&self) -> u32 {
        self.sample_every.load(Ordering::Relaxed)
    }

    /// Sets the sampling interval in force, within `[1, latency_sample_every]`
    /// (monitor thread). Does nothing when sampling is off.
    pub(crate) fn set_sample_every(&self, every: u32) {
        let sparsest = self.config.latency_sample_every;
        if sparsest != 0 {
            self.sample_every
                .store(every.clamp(1, sparsest), Ordering::Relaxed);
        }
    }

    /// Pushes a task into the injector from outside `schedule` (the monitor
    /// admitting elastic tasks).
    pub(crate) fn push_injected(&self, runnable: Runnable) {
        self.maybe_sample(&runnable);
        self.injector.push(runnable);
        self.idle.notify_one();
        if self.shutdown.load(Ordering::SeqCst) {
            self.drain_queues();
        }
    }

    /// Whether any queue a worker takes from holds a task.
    pub(crate) fn has_waiting_work(&self) -> bool {
        !self.injector.is_empty()
            || !self.yield_queue.is_empty()
            || self.stealers.iter().any(|stealer| !stealer.is_empty())
    }

    /// Whether any worker's deque other than `me`'s holds a task.
    pub(crate) fn others_have_work(&self, me: usize) -> bool {
        self.stealers
            .iter()
            .enumerate()
            .any(|(index, stealer)| index != me && !stealer.is_empty())
    }

    /// Sets the shutdown flag and wakes every worker.
    pub(crate) fn begin_shutdown(&self) {
        self.shutdown.store(true, Ordering::SeqCst);
        self.idle.notify_all();
        // Under the lock the monitor waits with, so it cannot miss the flag.
        let _admission = self.admission.lock_state();
        self.admission.changed.notify_all();
    }

    /// Cancels every task in the shared queues (see `cancel_later`).
    pub(crate) fn drain_queues(&self) {
        while let Some(runnable) = injector_pop(&self.injector) {
            self.cancel_later(runnable);
        }
        while let Some(runnable) = self.yield_queue.pop() {
            self.cancel_later(runnable);
        }
        self.admission.drain();
    }

    /// Cancels a task after shutdown began: it will be dropped, never run.
    ///
    /// Not dropped here, though: this runs inside `Waker::wake` (through
    /// `schedule`), whose caller may hold a lock that the task's destructor
    /// takes too. h2 does exactly that: dropping one of its stream handles
    /// locks the connection's stream state and wakes the connection task;
    /// dropping that task on the spot locks the same mutex again and
    /// deadlocks the shutdown. So the task waits in `cancelled` until the
    /// shutdown's [`drop_cancelled`](Self::drop_cancelled), which holds no
    /// lock while dropping. After that, tasks woken by threads outside the
    /// runtime are dropped at once, as there is nobody left to drop them.
    fn cancel_later(&self, runnable: Runnable) {
        let mut cancelled = lock(&self.cancelled);
        if cancelled.closed {
            drop(cancelled);
            drop(runnable);
        } else {
            cancelled.runnables.push(runnable);
        }
    }

    /// Drops the cancelled tasks, and any their destructors wake, until
    /// none is left; then tasks cancelled later are dropped at once
    /// (shutdown, after the workers stopped and every task was woken).
    pub(crate) fn drop_cancelled(&self) {
        loop {
            let batch = {
                let mut cancelled = lock(&self.cancelled);
                if cancelled.runnables.is_empty() {
                    cancelled.closed = true;
                    return;
                }
                std::mem::take(&mut cancelled.runnables)
            };
            drop(batch);
        }
    }
}
