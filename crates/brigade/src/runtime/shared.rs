//! The state every worker, handle and task of one runtime shares, and the
//! two operations at the centre of the scheduler: spawning a task and
//! scheduling a woken one.

use std::future::Future;
use std::panic::Location;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::sync::LocalQueue;
use crate::sync::deque::Stealer;
use async_task::WithInfo;
use crossbeam_utils::CachePadded;

use crate::admission::Admission;
use crate::driver::Driver;
use crate::metrics::{LatencySampler, MetricsCells};
use crate::runtime::compensation::Compensation;
use crate::runtime::cpu_limit::CpuLimitState;
use crate::runtime::scheduler::idle::Idle;
use crate::runtime::scheduler::placement::Arrival;
use crate::runtime::scheduler::run_next_slot::RunNext;
use crate::runtime::scheduler::shutdown_flag::{self, ShutdownFlag};
use crate::runtime::scheduler::worker::budget::BudgetReports;
use crate::runtime::threads::blocking::{BlockingPool, Mandatory};
use crate::sync::Injector;
use crate::task::TaskClass;
use crate::task::class::ClassState;
use crate::task::harness::Harness;
use crate::task::registry::Registry;
use crate::task::{JoinHandle, Origin, Runnable, TaskMeta};
use crate::yield_queue::YieldQueue;
use crate::yield_queue::rescue::YieldRescue;

/// Shared state of one runtime.
///
/// Shutdown, and how pushes into the shared queues race with it, is in
/// `shutdown.rs`.
pub(crate) struct Shared {
    pub(crate) injector: Injector<Runnable>,
    /// One per worker slot: the primaries', then the spare slots' (see
    /// `runtime/compensation/`).
    pub(crate) stealers: Box<[Stealer<Runnable>]>,
    /// One per worker slot, as `stealers`: the task each worker runs next
    /// (`run_next_slot.rs`).
    pub(crate) run_next: Box<[CachePadded<RunNext>]>,
    /// Spare workers for stuck ones.
    pub(crate) compensation: Compensation<LocalQueue<Runnable>>,
    pub(crate) yield_queue: YieldQueue,
    /// The yield queue's starvation bound.
    pub(crate) yield_rescue: YieldRescue,
    pub(crate) idle: Idle,
    pub(crate) registry: Registry,
    pub(crate) blocking: BlockingPool,
    pub(crate) driver: Arc<Driver>,
    pub(crate) metrics: MetricsCells,
    pub(crate) admission: Admission,
    /// The spawn locations already reported for a forced yield of the
    /// cooperative budget (`worker/budget.rs`).
    pub(crate) budget_reports: BudgetReports,
    /// The CPU limit: the pacer and the workers it runs (`cpu_limit/`).
    pub(crate) cpu: CpuLimitState,
    pub(crate) config: SchedulerConfig,
    /// Which schedules are timed (`metrics/mod.rs`); the monitor thread
    /// adapts it so the elastic controller always has enough samples for a
    /// p99.
    sampler: LatencySampler,
    /// The shutdown flag and the tasks set aside to be dropped.
    pub(crate) shutdown: ShutdownFlag,
    /// This runtime's identifier (`identity.rs`).
    pub(crate) id: crate::runtime::identity::Id,
    /// The worker slot of a current-thread runtime (`current_thread.rs`);
    /// `None` on a multi-thread one.
    pub(crate) current_thread: Option<crate::runtime::scheduler::current_thread::CurrentThread>,
    /// Feature `tokio-compat`: the tokio runtime whose context brigade's
    /// threads enter (`tokio_compat.rs`). Set once, right after this state
    /// is shared and before any brigade thread starts: its threads hold a
    /// `Weak` to it.
    #[cfg(feature = "tokio-compat")]
    pub(crate) tokio_compat:
        std::sync::OnceLock<crate::runtime::threads::tokio_compat::TokioCompat>,
    /// Time zero for `clock_nanos`.
    #[cfg_attr(loom, allow(dead_code))]
    start: Instant,
    /// The model's clock (see `clock_nanos`).
    #[cfg(loom)]
    loom_clock: std::sync::atomic::AtomicU64,
    /// Turns taken through `Core::take_turns`, for the loom models'
    /// coverage checks (statistics: `std`'s atomic, which loom does not
    /// model).
    #[cfg(loom)]
    pub(crate) turns_taken: std::sync::atomic::AtomicUsize,
}

/// Scheduler settings from the `Builder`.
#[derive(Debug, Clone)]
pub(crate) struct SchedulerConfig {
    /// Sample at least one schedule in this many for the scheduling-latency
    /// histogram (more when schedules are rare); 0 disables sampling.
    pub(crate) latency_sample_every: u32,
    /// Polls longer than this are reported; `None` disables the detector.
    #[cfg_attr(loom, allow(dead_code))] // The monitor reads it; loom models leave it out.
    pub(crate) long_poll_threshold: Option<Duration>,
    /// A worker stuck in one stretch for longer than this, while work
    /// waits, gets a spare; `None` turns automatic compensation off.
    #[cfg_attr(loom, allow(dead_code))] // The monitor reads it; loom models leave it out.
    pub(crate) compensation_threshold: Option<Duration>,
    /// How long a spare thread that stepped down waits to serve again.
    pub(crate) spare_keep_alive: Duration,
    /// Whether `TaskClass::Auto` tasks are demoted when they only wake
    /// themselves (`task/class.rs`).
    pub(crate) demote_background: bool,
    /// The yield queue's starvation bound (`yield_queue/rescue.rs`); `None`: off.
    pub(crate) max_yield_delay: Option<Duration>,
    /// The background floor (`worker/floor.rs`); 0: none.
    pub(crate) background_floor: f64,
    /// Whether busy workers serve I/O an idle worker was woken for and not
    /// run (`worker/serving_check.rs`).
    pub(crate) crowded_host_handoff: bool,
    /// Whether a spent cooperative budget makes a task yield while work
    /// waits (`worker/budget.rs`); off only in tests that show what it
    /// prevents.
    pub(crate) coop_budget: bool,
    /// Whether the monitor spreads workers stacked on one CPU (`spread.rs`).
    #[cfg_attr(loom, allow(dead_code))]
    // The monitor reads it; loom models leave the monitor out.
    pub(crate) spread_workers: bool,
    /// The names of the runtime's threads (`thread_names.rs`), and the
    /// stack size of its workers, spares included.
    pub(crate) thread_names: Arc<crate::runtime::threads::thread_names::ThreadNames>,
    pub(crate) thread_stack_size: Option<usize>,
    /// Run on every worker, spare and blocking-pool thread (`thread_hooks.rs`).
    pub(crate) thread_hooks: crate::runtime::threads::thread_hooks::ThreadHooks,
}

impl Shared {
    /// `locals` holds one deque per worker slot: the primaries' are
    /// returned to start their threads with; the spare slots' are kept by
    /// `compensation`.
    pub(crate) fn new(
        num_workers: usize,
        mut locals: Vec<LocalQueue<Runnable>>,
        blocking: BlockingPool,
        driver: Arc<Driver>,
        admission: Admission,
        cpu: CpuLimitState,
        config: SchedulerConfig,
    ) -> (Self, Vec<LocalQueue<Runnable>>) {
        let num_slots = locals.len();
        let stealers = locals.iter().map(LocalQueue::stealer).collect();
        let spare_locals = locals.split_off(num_workers);
        let wake_driver = {
            let driver = driver.clone();
            Box::new(move || driver.unpark_watcher())
        };
        let shared = Shared {
            injector: Injector::new(),
            compensation: Compensation::new(num_workers, spare_locals),
            yield_queue: YieldQueue::new(num_slots),
            yield_rescue: YieldRescue::new(config.max_yield_delay, num_workers),
            idle: Idle::new(num_workers, num_slots, wake_driver),
            driver,
            registry: Registry::new(num_workers),
            metrics: MetricsCells::new(num_slots),
            admission,
            budget_reports: BudgetReports::default(),
            cpu,
            sampler: LatencySampler::new(config.latency_sample_every),
            config,
            stealers,
            run_next: (0..num_slots)
                .map(|_| CachePadded::new(RunNext::new()))
                .collect(),
            blocking,
            shutdown: ShutdownFlag::new(),
            id: crate::runtime::identity::Id::next(),
            current_thread: None,
            #[cfg(feature = "tokio-compat")]
            tokio_compat: std::sync::OnceLock::new(),
            start: Instant::now(),
            #[cfg(loom)]
            loom_clock: std::sync::atomic::AtomicU64::new(0),
            #[cfg(loom)]
            turns_taken: std::sync::atomic::AtomicUsize::new(0),
        };
        (shared, locals)
    }

    /// Runs `f`, the whole time a thread serves this runtime, with the
    /// tokio context entered if feature `tokio-compat` is on (see
    /// `tokio_compat.rs`); otherwise just runs `f`.
    pub(crate) fn enter_tokio_compat<R>(&self, f: impl FnOnce() -> R) -> R {
        #[cfg(feature = "tokio-compat")]
        if let Some(compat) = self.tokio_compat.get() {
            return compat.enter(f);
        }
        f()
    }

    /// The configured number of workers (spares not counted). Stored once,
    /// as the first spare slot: other parts keep only what they derive from
    /// it, or are passed it.
    pub(crate) fn num_workers(&self) -> usize {
        self.compensation.first_spare()
    }

    /// Nanoseconds since the runtime started (monotonic).
    #[cfg(not(loom))]
    pub(crate) fn clock_nanos(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    /// The runtime's clock under loom, which has no time: each read moves
    /// it on by one epoch (`src/epoch.rs`), deterministically, so that every
    /// clock read of an epoch gate starts a new epoch and the models take
    /// the amortised paths too.
    #[cfg(loom)]
    pub(crate) fn clock_nanos(&self) -> u64 {
        let step = crate::epoch::epoch_start(1);
        // Statistics-style: no protocol orders anything through it.
        self.loom_clock
            .fetch_add(step, std::sync::atomic::Ordering::Relaxed)
            + step
    }

    pub(crate) fn is_shutdown(&self) -> bool {
        self.shutdown.is_set()
    }

    /// Spawns `future` as a task of this runtime, from `origin`.
    pub(crate) fn spawn<F>(
        self: &Arc<Self>,
        future: F,
        origin: Origin<'_>,
        class: TaskClass,
    ) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let id = TaskMeta::next_id();
        let (runnable, task) = self.registry.register(id, |registry_key| {
            async_task::Builder::new()
                .metadata(TaskMeta::new(
                    self,
                    registry_key,
                    id,
                    origin,
                    ClassState::new(class, self.config.demote_background),
                ))
                .spawn(
                    move |meta| Harness::new(future, meta),
                    WithInfo(crate::task::task_host::schedule),
                )
        });
        if runnable.metadata().registry_key().is_some() {
            if let Err(runnable) = self.schedule_on_worker(runnable, Arrival::Spawned) {
                self.metrics.count_spawn();
                self.schedule_off_workers(runnable, Arrival::Spawned);
            }
        } else {
            // Spawned after shutdown began: cancel at once.
            self.metrics.count_spawn();
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
        self.spawn_blocking_as(f, location, Mandatory::No)
    }

    /// Runs `f` on the blocking pool, at shutdown too (`blocking.rs`).
    pub(crate) fn spawn_mandatory_blocking<F, R>(
        self: &Arc<Self>,
        f: F,
        location: &'static Location<'static>,
    ) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        self.spawn_blocking_as(f, location, Mandatory::Yes)
    }

    /// Runs `f` on the blocking pool, at shutdown too if `mandatory`
    /// (`blocking.rs`).
    fn spawn_blocking_as<F, R>(
        self: &Arc<Self>,
        f: F,
        location: &'static Location<'static>,
        mandatory: Mandatory,
    ) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        let id = TaskMeta::next_id();
        let schedule = {
            let shared = self.clone();
            move |runnable| shared.blocking.push(&shared, runnable, mandatory)
        };
        let (runnable, task) = async_task::Builder::new()
            .metadata(TaskMeta::new(
                self,
                None,
                id,
                Origin::blocking(location),
                ClassState::Foreground,
            ))
            .spawn(move |meta| Harness::new(async move { f() }, meta), schedule);
        let waker = runnable.waker();
        runnable.schedule();
        JoinHandle::for_blocking(task, waker)
    }

    /// Samples one schedule in `latency_sample_every` for the
    /// scheduling-latency histogram ([`LatencySampler`]).
    pub(crate) fn maybe_sample(&self, runnable: &Runnable) {
        if self.sampler.due() {
            runnable.metadata().set_scheduled_at(self.clock_nanos());
        }
    }

    /// Which schedules are timed.
    #[cfg_attr(loom, allow(dead_code))] // The monitor thread uses it; loom models leave the monitor out.
    pub(crate) fn sampler(&self) -> &LatencySampler {
        &self.sampler
    }

    /// Pushes a task into the injector (a wake off the workers, or the
    /// monitor admitting elastic tasks).
    pub(crate) fn push_injected(&self, runnable: Runnable) {
        self.maybe_sample(&runnable);
        self.inject(runnable);
    }

    fn inject(&self, runnable: Runnable) {
        self.injector.push(runnable);
        self.after_shared_push();
    }

    /// After a push into the injector or the yield queue: wake a worker if
    /// one should look, and drain the queues if shutdown began meanwhile
    /// (the push-then-check protocol of `ShutdownFlag`).
    pub(crate) fn after_shared_push(&self) {
        self.idle.notify_one();
        if self.shutdown.is_set_after_push() {
            shutdown_flag::drain_queues(self);
        }
    }

    /// The stealers of the deques that can hold tasks: the primaries', and
    /// the spare slots' only while a spare serves. (A spare that steps down
    /// first stops counting as serving, then moves its tasks to the
    /// injector, notifying as any push does, so a task in its deque in
    /// between is not lost to a worker that parks; see
    /// `runtime/compensation/`.) One relaxed load: no worker stuck, no
    /// cost of the spare slots. Relaxed is enough: only a spare fills its
    /// own deque, after it started serving, and each of its pushes is
    /// followed by `notify_one`'s fence; a stale 0 here, read after a park
    /// fence, means that fence came first, so the push's notification finds
    /// this worker idle and wakes it.
    pub(crate) fn active_stealers(&self) -> &[Stealer<Runnable>] {
        &self.stealers[..self.active_slots()]
    }

    /// The run-next slots of the same workers as
    /// [`active_stealers`](Self::active_stealers), in the same order.
    pub(crate) fn active_run_next(&self) -> &[CachePadded<RunNext>] {
        &self.run_next[..self.active_slots()]
    }

    /// How many worker slots can hold tasks (see `active_stealers`).
    fn active_slots(&self) -> usize {
        if self.compensation.serving() == 0 {
            self.num_workers()
        } else {
            self.stealers.len()
        }
    }

    /// Whether any queue a worker takes from holds a task.
    pub(crate) fn has_waiting_work(&self) -> bool {
        !self.yield_queue.is_empty() || self.has_queued_tasks()
    }

    /// Whether any queue holds a task that worker `me` may take at `now()`:
    /// [`has_waiting_work`](Self::has_waiting_work) but for the lone entries
    /// of other workers' yield-queue shards still in their owners' grace
    /// (`YieldQueue::may_take`). The check of a worker about to sleep.
    pub(crate) fn has_waiting_work_for(&self, me: usize, now: impl FnOnce() -> u64) -> bool {
        self.has_queued_tasks() || self.yield_queue.has_entries_for(me, now)
    }

    /// Whether the injector or any worker's deque holds a task, or a
    /// worker's run-next slot an open one (an unopened task is its
    /// worker's to run: `run_next_slot.rs`).
    pub(crate) fn has_queued_tasks(&self) -> bool {
        !self.injector.is_empty()
            || self
                .active_stealers()
                .iter()
                .any(|stealer| !stealer.is_empty())
            || self.active_run_next().iter().any(|slot| slot.has_open())
    }
}
