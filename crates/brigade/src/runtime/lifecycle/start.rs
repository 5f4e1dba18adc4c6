//! Starting a runtime. `Runtime::start` runs these steps in order:
//!
//! 1. `new_shared`: the scheduler state (`Shared`: driver, blocking pool,
//!    admission, the builder's settings as a `SchedulerConfig`, and under
//!    `tokio-compat` the tokio context), and one local queue per worker and
//!    per spare.
//! 2. `Runtime::without_threads`: the runtime with no thread yet, its
//!    running-worker count already set to the workers about to start.
//! 3. `Runtime::start_workers`: one thread per worker (`spawn_worker`), each
//!    running `Core::run` on its local queue. A current-thread runtime
//!    starts none: its one worker's queue waits in `Shared::current_thread`
//!    for the thread in `block_on` (`current_thread.rs`).
//! 4. `Runtime::start_monitor`: the monitor thread (not under loom).
//! 5. `Runtime::start_fallback_driver`: the thread that polls the driver
//!    while no worker sleeps in it, if the builder asks for it (not under
//!    loom).
//!
//! A step that fails returns the error, and dropping the runtime built so far
//! shuts down the threads already started. Spares start later, on demand
//! (`compensation/spare_slots.rs`).

use std::sync::Arc;

#[cfg(not(loom))]
use crate::runtime::cpu_limit::LimitReader;
use crate::runtime::cpu_limit::cgroup::Quota;
use crate::runtime::cpu_limit::{CpuLimitState, LimitAtBuild};
use crate::runtime::lifecycle::shutdown::{ExitSignal, WorkerThreads};
use crate::runtime::scheduler::worker::Core;
use crate::runtime::shared::{SchedulerConfig, Shared};
use crate::runtime::threads::blocking::BlockingPool;
#[cfg(not(loom))]
use crate::runtime::threads::monitor;
use crate::runtime::threads::thread_names::ThreadNames;
use crate::runtime::{BuildError, Builder, Handle, Runtime};
use crate::sync::thread;
use crate::sync::{Condvar, LocalQueue, Mutex, lock};
use crate::task::Runnable;

impl Runtime {
    /// Builds the scheduler state, then starts the worker threads, the
    /// monitor and (if enabled) the fallback driver thread. On an error the
    /// runtime built so far is dropped, which shuts down the threads already
    /// started.
    pub(crate) fn start(
        builder: &Builder,
        num_workers: usize,
        max_spares: usize,
        limit: LimitAtBuild,
    ) -> Result<Runtime, BuildError> {
        let (shared, locals) = new_shared(builder, num_workers, max_spares, limit.quota)?;
        // A current-thread runtime's worker runs on the `block_on` thread
        // (`current_thread.rs`): `new_shared` kept its deque.
        let threads = if builder.current_thread {
            0
        } else {
            num_workers
        };
        let mut runtime = Runtime::without_threads(shared, threads);
        runtime.start_workers(builder, locals)?;
        // Under loom the monitor's periodic, clock-driven work is not
        // modelled (nor the fallback thread): a model has no time.
        #[cfg(not(loom))]
        runtime.start_monitor(limit)?;
        #[cfg(loom)]
        drop(limit);
        #[cfg(not(loom))]
        if builder.driver_thread {
            runtime.start_fallback_driver()?;
        }
        tracing::debug!(target: "brigade::runtime::start", workers = num_workers, "runtime started");
        Ok(runtime)
    }

    /// The runtime before any thread starts: its running-worker count
    /// already counts the `num_workers` threads about to start.
    fn without_threads(shared: Arc<Shared>, num_workers: usize) -> Runtime {
        Runtime {
            handle: Handle { shared },
            workers: Some(WorkerThreads {
                threads: Vec::with_capacity(num_workers),
                running: Arc::new((Mutex::new(num_workers), Condvar::new())),
                fallback: None,
                monitor: None,
            }),
        }
    }

    /// Starts one worker thread per local queue.
    fn start_workers(
        &mut self,
        builder: &Builder,
        locals: Vec<LocalQueue<Runnable>>,
    ) -> Result<(), BuildError> {
        let Some(workers) = self.workers.as_mut() else {
            return Ok(());
        };
        let num_workers = locals.len();
        for (index, local) in locals.into_iter().enumerate() {
            let shared = self.handle.shared.clone();
            let exit_signal = ExitSignal(workers.running.clone());
            match spawn_worker(builder, index, shared, local, exit_signal) {
                Ok(thread) => workers.threads.push(thread),
                Err(error) => {
                    // The threads not started will never signal their exit
                    // (this one's signal was dropped with its closure).
                    *lock(&workers.running.0) -= num_workers - index - 1;
                    return Err(BuildError::spawn_failed("a worker thread", error));
                }
            }
        }
        // Each worker opens the file the monitor reads its state from as
        // it starts (`compensation/stat_files.rs`): waiting for them here
        // means no file is opened after `build` returns.
        #[cfg(not(loom))]
        self.handle
            .shared
            .compensation
            .stat_files()
            .wait_primaries(num_workers);
        Ok(())
    }

    /// Starts the monitor thread (elastic controller, admission, long polls).
    #[cfg(not(loom))]
    fn start_monitor(&mut self, limit: LimitAtBuild) -> Result<(), BuildError> {
        let name = self.handle.shared.config.thread_names.monitor();
        let watch = LimitReader::new(limit.source, limit.quota, limit.warned);
        let monitor = monitor::start(self.handle.shared.clone(), name, watch)
            .map_err(|error| BuildError::spawn_failed("the monitor thread", error))?;
        if let Some(workers) = self.workers.as_mut() {
            workers.monitor = Some(monitor);
        }
        Ok(())
    }

    /// Starts the fallback driver thread, which polls the driver while no
    /// worker sleeps in it.
    #[cfg(not(loom))]
    fn start_fallback_driver(&mut self) -> Result<(), BuildError> {
        let name = self.handle.shared.config.thread_names.driver();
        let fallback = self
            .handle
            .shared
            .driver
            .start_fallback(name)
            .map_err(|error| BuildError::spawn_failed("the fallback driver thread", error))?;
        if let Some(workers) = self.workers.as_mut() {
            workers.fallback = Some(fallback);
        }
        Ok(())
    }
}

/// The scheduler state `Runtime::start` shares with its threads, and the
/// local queues of the `num_workers` workers (the spares' queues stay in
/// `Shared`'s compensation).
fn new_shared(
    builder: &Builder,
    num_workers: usize,
    max_spares: usize,
    limit: Option<Quota>,
) -> Result<(Arc<Shared>, Vec<LocalQueue<Runnable>>), BuildError> {
    let locals: Vec<_> = (0..num_workers + max_spares)
        .map(|_| LocalQueue::new_fifo())
        .collect();
    let driver = Arc::new(
        crate::driver::Driver::new(builder.driver_thread).map_err(BuildError::driver_failed)?,
    );
    if builder.start_paused {
        driver.clock().pause_at_start();
    }
    let thread_names = ThreadNames::new(&builder.thread_naming);
    let blocking = BlockingPool::new(
        builder.max_blocking_threads,
        builder.thread_keep_alive,
        thread_names.clone(),
        builder.thread_stack_size,
        driver.clone(),
    );
    let admission = crate::admission::Admission::new(
        crate::runtime::scheduler::worker::floor::with_floor(
            &builder.elastic,
            builder.background_floor,
        ),
        num_workers,
    );
    let (shared, locals) = Shared::new(
        num_workers,
        locals,
        blocking,
        driver,
        admission,
        CpuLimitState::new(limit, num_workers),
        scheduler_config(builder, thread_names),
    );
    let mut shared = shared;
    let mut locals = locals;
    if builder.current_thread {
        let local = locals.pop().expect("one worker");
        shared.current_thread =
            Some(crate::runtime::scheduler::current_thread::CurrentThread::new(local));
    }
    let shared = Arc::new(shared);
    #[cfg(feature = "tokio-compat")]
    if builder.tokio_compat {
        let compat = crate::runtime::threads::tokio_compat::TokioCompat::start(
            builder.tokio_compat_threads,
            shared.config.thread_names.clone(),
            builder.thread_stack_size,
            shared.id,
            Arc::downgrade(&shared),
        )
        .map_err(BuildError::tokio_compat_failed)?;
        // Nothing else sets it: this state was created just above.
        let _ = shared.tokio_compat.set(compat);
    }
    Ok((shared, locals))
}

/// The builder's settings the scheduler reads while it runs.
fn scheduler_config(builder: &Builder, thread_names: Arc<ThreadNames>) -> SchedulerConfig {
    SchedulerConfig {
        latency_sample_every: builder.latency_sample_every,
        long_poll_threshold: builder.long_poll_threshold,
        // A current-thread runtime has no spare to start: the monitor does
        // not watch for stuck workers (nor poll the driver for them).
        compensation_threshold: builder
            .compensation_threshold
            .filter(|_| !builder.current_thread),
        spare_keep_alive: builder.thread_keep_alive,
        demote_background: builder.demote_background,
        max_yield_delay: builder.max_yield_delay,
        background_floor: builder.background_floor,
        crowded_host_handoff: builder.crowded_host_handoff,
        spread_workers: builder.spread_workers,
        coop_budget: builder.coop_budget,
        thread_names,
        thread_stack_size: builder.thread_stack_size,
        thread_hooks: builder.thread_hooks.clone(),
    }
}

/// Starts worker `index`'s thread, which runs the worker loop on `local`
/// and signals its exit through `exit_signal`, however it ends.
fn spawn_worker(
    builder: &Builder,
    index: usize,
    shared: Arc<Shared>,
    local: LocalQueue<Runnable>,
    exit_signal: ExitSignal,
) -> std::io::Result<thread::JoinHandle<()>> {
    let name = shared.config.thread_names.worker(index);
    let mut thread = thread::Builder::new().name(name);
    if let Some(size) = builder.thread_stack_size {
        thread = thread.stack_size(size);
    }
    thread.spawn(move || {
        let _exit = exit_signal;
        // First, before the thread hooks' user code: `build` waits for it.
        #[cfg(not(loom))]
        shared.compensation.stat_files().open_own(index);
        let hooks_of = shared.clone();
        crate::runtime::threads::thread_hooks::run_thread(&hooks_of, || {
            drop(Core::new(index, shared, local).run())
        });
    })
}
