//! tokio's builder constructors and driver switches on brigade's
//! [`Builder`], so that `tokio::runtime::Builder` code ports by renaming.

use super::Builder;

impl Builder {
    /// A builder for a runtime with a pool of workers: the same as
    /// [`Builder::new`] (one worker per CPU, or `BRIGADE_WORKER_THREADS`,
    /// unless [`worker_threads`](Self::worker_threads) says otherwise).
    /// tokio's name for brigade's only flavor.
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

    /// A builder for a runtime with exactly one worker thread, where tokio
    /// builds its current-thread runtime. [`worker_threads`](Self::worker_threads)
    /// has no effect on it, as on tokio's.
    ///
    /// One difference: tokio runs a current-thread runtime's tasks on the
    /// thread that calls `block_on`, and only while it does; brigade runs
    /// them on its worker thread, whether or not anyone is in `block_on`.
    /// Tasks therefore run one at a time, as under tokio, but they also
    /// make progress between two `block_on` calls, and on another thread
    /// than the caller's. `!Send` futures need a
    /// [`LocalSet`](crate::task::LocalSet) on both.
    ///
    /// # Examples
    ///
    /// ```
    /// use brigade::runtime::Builder;
    ///
    /// let rt = Builder::new_current_thread().enable_all().build()?;
    /// assert_eq!(rt.metrics().num_workers(), 1);
    /// assert_eq!(rt.block_on(async { brigade::spawn(async { 7 }).await.unwrap() }), 7);
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
