//! tokio's builder constructors and driver switches on brigade's
//! [`Builder`], so that `tokio::runtime::Builder` code ports by renaming.

use super::Builder;

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
