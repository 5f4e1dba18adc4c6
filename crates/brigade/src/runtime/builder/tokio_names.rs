//! tokio's builder constructors, driver switches and thread hooks on
//! brigade's [`Builder`], so that `tokio::runtime::Builder` code ports by
//! renaming. (The hooks' calls are in `thread_hooks.rs`.)

use std::sync::Arc;

use crate::runtime::Builder;

impl Builder {
    /// A builder for a runtime with a pool of workers: the same as
    /// [`Builder::new`] (one worker per CPU, or `BRIGADE_WORKER_THREADS`,
    /// unless [`worker_threads`](Self::worker_threads) says otherwise).
    /// Its tasks run on the worker threads, whether or not anyone is in
    /// `block_on`.
    ///
    /// # Examples
    ///
    /// ```
    /// use brigade::runtime::Builder;
    ///
    /// let rt = Builder::new_multi_thread()
    ///     .worker_threads(2)
    ///     .thread_name("my-service")
    ///     .enable_all()
    ///     .build()?;
    /// assert_eq!(rt.metrics().num_workers(), 2);
    /// # Ok::<(), brigade::BuildError>(())
    /// ```
    pub fn new_multi_thread() -> Builder {
        Builder::new()
    }

    /// A builder for a current-thread runtime, as tokio's: it starts no
    /// worker thread. The thread that calls [`block_on`](crate::Runtime::block_on)
    /// runs the runtime's one worker itself: it polls the `block_on` future
    /// and the spawned tasks in turns, on that thread.
    /// [`worker_threads`](Self::worker_threads) has no effect on it, as on
    /// tokio's, and its metrics report one worker.
    ///
    /// How the turns go, as on tokio:
    /// - A task spawned by the `block_on` future runs only once that future
    ///   returns `Pending` (awaits something not ready).
    /// - Tasks run in the order they were scheduled; the `block_on` future,
    ///   once woken, is polled again after the tasks queued before it have
    ///   had their turn (61 at most), or at once when none is left.
    /// - Nothing runs between two `block_on` calls: a task spawned with
    ///   [`Runtime::spawn`](crate::Runtime::spawn) outside `block_on` waits
    ///   for the next one. A spawn or a wake from another thread while a
    ///   thread is in `block_on` wakes it.
    /// - Several threads may call `block_on` at once: one runs the tasks,
    ///   the others poll only their own future, until the first returns.
    ///
    /// What differs from the multi-thread flavour, beside that:
    /// - [`yield_if_busy`](crate::yield_if_busy) keeps its meaning: it gives
    ///   way when another task, or the `block_on` future, is ready to run,
    ///   and returns at once otherwise.
    /// - No spare workers: [`max_spare_workers`](Self::max_spare_workers)
    ///   and [`compensation_threshold`](Self::compensation_threshold) have
    ///   no effect, and [`block_in_place`](crate::task::block_in_place)
    ///   panics, as tokio's does on its current-thread runtime (its one
    ///   thread runs every task; use `spawn_blocking`).
    /// - No fallback driver thread: [`driver_thread(true)`](Self::driver_thread)
    ///   is a [`BuildError`](crate::BuildError). I/O and timers are polled by
    ///   the thread in `block_on`.
    /// - Elastic tasks ([`spawn_elastic`](crate::spawn_elastic)) are admitted
    ///   by the monitor thread as on any runtime, and run on the `block_on`
    ///   thread like other tasks.
    /// - `!Send` futures need a [`LocalSet`](crate::task::LocalSet), as on
    ///   tokio.
    ///
    /// Dropping the runtime drops every unfinished task's future, as on the
    /// multi-thread flavour.
    ///
    /// # Examples
    ///
    /// ```
    /// use brigade::runtime::Builder;
    ///
    /// let rt = Builder::new_current_thread().enable_all().build()?;
    /// assert_eq!(rt.metrics().num_workers(), 1);
    /// let caller = std::thread::current().id();
    /// let ran_on = rt.block_on(async {
    ///     let task = brigade::spawn(async { std::thread::current().id() });
    ///     // The task has not run yet: it runs when the body awaits.
    ///     task.await.unwrap()
    /// });
    /// assert_eq!(ran_on, caller);
    /// # Ok::<(), brigade::BuildError>(())
    /// ```
    pub fn new_current_thread() -> Builder {
        let mut builder = Builder::new();
        builder.current_thread = true;
        builder
    }

    /// Does nothing: brigade's runtimes always have their I/O and time
    /// drivers. Kept so that tokio builder code ports unchanged.
    pub fn enable_all(&mut self) -> &mut Self {
        self
    }

    /// Does nothing: the I/O driver is always on. See [`enable_all`](Self::enable_all).
    pub fn enable_io(&mut self) -> &mut Self {
        self
    }

    /// Does nothing: timers always work. See [`enable_all`](Self::enable_all).
    pub fn enable_time(&mut self) -> &mut Self {
        self
    }
}

impl Builder {
    /// Runs `hook` on each thread the runtime starts, before it runs any
    /// task or closure: every worker, every spare worker (compensation,
    /// [`block_in_place`](crate::task::block_in_place)) and every
    /// blocking-pool thread (`spawn_blocking`), as tokio runs it on its
    /// workers and blocking threads. Use it to pin threads to CPUs or set
    /// up thread-locals. The runtime's context is entered while it runs
    /// ([`Handle::current`](crate::runtime::Handle::current) works). A panic in the hook is logged and the
    /// thread serves anyway.
    ///
    /// Threads are started when the runtime is built (workers), on demand
    /// (spares, blocking threads) and again after an idle one exits
    /// ([`thread_keep_alive`](Self::thread_keep_alive)), so count on one
    /// call per thread, not a fixed number of calls.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    ///
    /// let started = Arc::new(AtomicUsize::new(0));
    /// let counter = started.clone();
    /// let rt = brigade::runtime::Builder::new_multi_thread()
    ///     .worker_threads(2)
    ///     .on_thread_start(move || {
    ///         counter.fetch_add(1, Ordering::SeqCst);
    ///     })
    ///     .build()?;
    /// // Each worker calls it as it starts; wait for the second one.
    /// rt.block_on(async {
    ///     while started.load(Ordering::SeqCst) < 2 {
    ///         brigade::time::sleep(std::time::Duration::from_millis(1)).await;
    ///     }
    /// });
    /// # Ok::<(), brigade::BuildError>(())
    /// ```
    pub fn on_thread_start<F>(&mut self, hook: F) -> &mut Self
    where
        F: Fn() + Send + Sync + 'static,
    {
        self.thread_hooks.start = Some(Arc::new(hook));
        self
    }

    /// Runs `hook` on each thread that [`on_thread_start`](Self::on_thread_start)
    /// ran on, as it stops: a worker at shutdown, a spare or blocking-pool
    /// thread when it exits after idling (or at shutdown). The runtime's
    /// context is entered while it runs; a panic in it is logged. A thread
    /// abandoned by [`Runtime::shutdown_timeout`](crate::runtime::Runtime::shutdown_timeout)
    /// calls it when its poll or closure ends, if the process still runs.
    pub fn on_thread_stop<F>(&mut self, hook: F) -> &mut Self
    where
        F: Fn() + Send + Sync + 'static,
    {
        self.thread_hooks.stop = Some(Arc::new(hook));
        self
    }

    /// Runs `hook` on a worker thread each time it is about to park for
    /// lack of work, as tokio's: every worker and spare of a multi-thread
    /// runtime, and the thread in `block_on` of a current-thread runtime
    /// (its worker). [`on_thread_unpark`](Self::on_thread_unpark) follows
    /// every call, once the worker is awake again (or found work at its
    /// last look before sleeping, in which case it did not sleep at all).
    /// It runs on the worker, inside the runtime's context; a panic in it
    /// is logged. Keep it short: the worker runs nothing meanwhile.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    ///
    /// let parks = Arc::new(AtomicUsize::new(0));
    /// let counter = parks.clone();
    /// let rt = brigade::runtime::Builder::new_current_thread()
    ///     .on_thread_park(move || {
    ///         counter.fetch_add(1, Ordering::SeqCst);
    ///     })
    ///     .build()?;
    /// rt.block_on(async { brigade::time::sleep(std::time::Duration::from_millis(1)).await });
    /// assert!(parks.load(Ordering::SeqCst) >= 1);
    /// # Ok::<(), brigade::BuildError>(())
    /// ```
    pub fn on_thread_park<F>(&mut self, hook: F) -> &mut Self
    where
        F: Fn() + Send + Sync + 'static,
    {
        self.thread_hooks.park = Some(Arc::new(hook));
        self
    }

    /// Runs `hook` on a worker thread after each wait that
    /// [`on_thread_park`](Self::on_thread_park) began, before it runs any
    /// task again, as tokio's. On the worker, inside the runtime's context;
    /// a panic in it is logged.
    pub fn on_thread_unpark<F>(&mut self, hook: F) -> &mut Self
    where
        F: Fn() + Send + Sync + 'static,
    {
        self.thread_hooks.unpark = Some(Arc::new(hook));
        self
    }
}
