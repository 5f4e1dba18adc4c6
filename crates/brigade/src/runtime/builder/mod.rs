//! `Builder`: runtime settings, validated into a `BuildError` instead of a
//! panic (`checks.rs`).

mod build_error;
mod checks;
mod tokio_names;

pub use build_error::BuildError;

use std::time::Duration;

use crate::admission::ElasticConfig;
pub use crate::policy::DEFAULT_MAX_YIELD_DELAY;
use crate::runtime::Runtime;
use crate::runtime::cpu_limit::CpuLimit;

/// The environment variable that sets the default worker count.
pub const WORKER_THREADS_ENV: &str = "BRIGADE_WORKER_THREADS";

/// Configures and builds a [`Runtime`].
///
/// # Examples
///
/// ```
/// let rt = brigade::Builder::new()
///     .worker_threads(2)
///     .thread_name("my-service")
///     .build()?;
/// assert_eq!(rt.metrics().num_workers(), 2);
/// # Ok::<(), brigade::BuildError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Builder {
    pub(crate) worker_threads: Option<usize>,
    pub(crate) max_blocking_threads: usize,
    /// `thread_name` / `thread_name_fn` (`thread_names.rs`).
    pub(crate) thread_naming: crate::runtime::threads::thread_names::ThreadNaming,
    pub(crate) thread_stack_size: Option<usize>,
    pub(crate) thread_keep_alive: Duration,
    pub(crate) driver_thread: bool,
    pub(crate) elastic: ElasticConfig,
    pub(crate) latency_sample_every: u32,
    pub(crate) long_poll_threshold: Option<Duration>,
    pub(crate) compensation_threshold: Option<Duration>,
    /// `None`: as many as workers.
    pub(crate) max_spare_workers: Option<usize>,
    pub(crate) demote_background: bool,
    pub(crate) max_yield_delay: Option<Duration>,
    pub(crate) background_floor: f64,
    pub(crate) crowded_host_handoff: bool,
    pub(crate) spread_workers: bool,
    /// Whether a spent cooperative budget yields while work waits
    /// (`runtime/scheduler/worker/budget.rs`): always on but in the tests that show
    /// what it prevents ([`Builder::coop_budget`]).
    pub(crate) coop_budget: bool,
    pub(crate) cpu_limit: CpuLimit,
    pub(crate) start_paused: bool,
    #[cfg(feature = "tokio-compat")]
    pub(crate) tokio_compat: bool,
    #[cfg(feature = "tokio-compat")]
    pub(crate) tokio_compat_threads: usize,
    /// `new_current_thread`: one worker, whatever `worker_threads` says,
    /// run by the thread in `block_on` (`runtime/scheduler/current_thread.rs`).
    pub(crate) current_thread: bool,
    /// `on_thread_start` / `on_thread_stop` (`thread_hooks.rs`).
    pub(crate) thread_hooks: crate::runtime::threads::thread_hooks::ThreadHooks,
}

/// Default of [`Builder::latency_sample_every`]: one schedule in 64.
///
/// A sample costs three clock reads: when the task becomes runnable, when
/// its poll starts and when it ends. One in 64 is the densest rate whose
/// cost stayed within the noise of `benches/rt_compare.rs`
/// (`BENCH_LATENCY_SAMPLE_EVERY` sets it there), while still giving the
/// elastic controller hundreds of samples per window on a busy runtime;
/// docs/decisions.md#design-choices has the figures.
pub const DEFAULT_LATENCY_SAMPLE_EVERY: u32 = 64;

pub use crate::policy::DEFAULT_COMPENSATION_THRESHOLD;

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

impl Builder {
    /// A builder with the defaults: one worker per available CPU (or
    /// `BRIGADE_WORKER_THREADS`), as many spare workers for stuck ones, up
    /// to 512 blocking threads, idle blocking and spare threads kept alive
    /// for 10 s, threads named for their role (`brigade-w-0`, …: see
    /// [`thread_name`](Self::thread_name)).
    pub fn new() -> Self {
        Builder {
            worker_threads: None,
            max_blocking_threads: 512,
            thread_naming: Default::default(),
            thread_stack_size: None,
            thread_keep_alive: crate::policy::DEFAULT_THREAD_KEEP_ALIVE,
            driver_thread: false,
            elastic: ElasticConfig::default(),
            latency_sample_every: DEFAULT_LATENCY_SAMPLE_EVERY,
            long_poll_threshold: Some(crate::policy::DEFAULT_LONG_POLL_THRESHOLD),
            compensation_threshold: Some(DEFAULT_COMPENSATION_THRESHOLD),
            max_spare_workers: None,
            demote_background: true,
            max_yield_delay: Some(DEFAULT_MAX_YIELD_DELAY),
            background_floor: 0.0,
            crowded_host_handoff: true,
            spread_workers: true,
            coop_budget: true,
            cpu_limit: CpuLimit::Auto,
            start_paused: false,
            #[cfg(feature = "tokio-compat")]
            tokio_compat: true,
            #[cfg(feature = "tokio-compat")]
            tokio_compat_threads: 1,
            current_thread: false,
            thread_hooks: Default::default(),
        }
    }

    /// Number of worker threads that run async tasks. Must be at least 1.
    ///
    /// Default: the `BRIGADE_WORKER_THREADS` environment variable if set,
    /// else [`std::thread::available_parallelism`] (which honours cgroup CPU
    /// quotas and affinity masks on Linux), else 1.
    pub fn worker_threads(&mut self, count: usize) -> &mut Self {
        self.worker_threads = Some(count);
        self
    }

    /// Upper bound on threads in the blocking pool (`spawn_blocking`). Must
    /// be at least 1. Default: 512.
    pub fn max_blocking_threads(&mut self, count: usize) -> &mut Self {
        self.max_blocking_threads = count;
        self
    }

    /// Names every thread the runtime starts `name`, as tokio's does:
    /// workers, spares, blocking-pool threads, the monitor, the fallback
    /// driver thread and the `tokio-compat` threads. Replaces an earlier
    /// [`thread_name_fn`](Self::thread_name_fn).
    ///
    /// Default: each thread is named for its role, within the 15 bytes
    /// Linux keeps of a name (`top -H`, `/proc/*/task/*/comm`): `brigade-w-N`
    /// for worker `N`, `brigade-s-N` for spare workers, `brigade-blk-N` for
    /// blocking-pool threads, `brigade-mon` for the monitor, `brigade-drv`
    /// for the fallback driver thread and `brigade-tok-N` for the
    /// `tokio-compat` threads.
    ///
    /// # Examples
    ///
    /// ```
    /// let rt = brigade::Builder::new().thread_name("my-service").build()?;
    /// let name = rt.block_on(rt.spawn(async {
    ///     std::thread::current().name().map(str::to_owned)
    /// }));
    /// assert_eq!(name.unwrap().as_deref(), Some("my-service"));
    /// # Ok::<(), brigade::BuildError>(())
    /// ```
    pub fn thread_name(&mut self, name: impl Into<String>) -> &mut Self {
        self.thread_naming =
            crate::runtime::threads::thread_names::ThreadNaming::fixed(name.into());
        self
    }

    /// Names each thread the runtime starts by calling `f` as it starts
    /// (every role, as [`thread_name`](Self::thread_name)), as tokio's
    /// does. Replaces an earlier `thread_name`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    ///
    /// let next = AtomicUsize::new(0);
    /// let rt = brigade::Builder::new()
    ///     .worker_threads(2)
    ///     .thread_name_fn(move || format!("svc-{}", next.fetch_add(1, Ordering::Relaxed)))
    ///     .build()?;
    /// let name = rt.block_on(rt.spawn(async {
    ///     std::thread::current().name().map(str::to_owned)
    /// }));
    /// assert!(name.unwrap().unwrap().starts_with("svc-"));
    /// # Ok::<(), brigade::BuildError>(())
    /// ```
    pub fn thread_name_fn<F>(&mut self, f: F) -> &mut Self
    where
        F: Fn() -> String + Send + Sync + 'static,
    {
        self.thread_naming =
            crate::runtime::threads::thread_names::ThreadNaming::from_fn(std::sync::Arc::new(f));
        self
    }

    /// Stack size of the runtime's threads, in bytes. Default: the standard
    /// library's (2 MiB unless `RUST_MIN_STACK` says otherwise).
    pub fn thread_stack_size(&mut self, bytes: usize) -> &mut Self {
        self.thread_stack_size = Some(bytes);
        self
    }

    /// How long an idle blocking-pool thread waits for work, and a spare
    /// worker thread that stepped down waits for another stuck worker,
    /// before it exits. Must be non-zero. Default: 10 s.
    pub fn thread_keep_alive(&mut self, duration: Duration) -> &mut Self {
        self.thread_keep_alive = duration;
        self
    }

    /// Whether to run a fallback driver thread. Default: `false`.
    ///
    /// When every worker is busy, nobody blocks in the I/O poll: readiness
    /// and timers are then noticed when a worker polls without blocking
    /// (every 61 ticks, and once per ≈ 33 µs epoch per runtime in `yield_if_busy()`).
    /// The fallback thread instead waits on the poll whenever no worker is
    /// parked in it and moves woken tasks to the injector at once.
    ///
    /// It is off by default because it loses where it was meant to win: with
    /// every core saturated, the OS runs the woken fallback thread only when
    /// a worker's time slice ends, so the foreground p99 is that of the OS
    /// scheduler's time slices rather than of the epoch
    /// (docs/decisions.md#design-choices compares the two with `mixed_load
    /// --driver-thread`). It may help on machines with spare cores or a
    /// real-time-priority driver thread. Not available on a current-thread
    /// runtime, whose thread in `block_on` polls the driver:
    /// [`build`](Self::build) reports it as an error.
    pub fn driver_thread(&mut self, enabled: bool) -> &mut Self {
        self.driver_thread = enabled;
        self
    }

    /// Settings of elastic admission (see [`spawn_elastic`](crate::spawn_elastic)
    /// and [`ElasticConfig`], which has an example). Invalid values are
    /// reported by [`build`](Self::build).
    pub fn elastic(&mut self, config: ElasticConfig) -> &mut Self {
        self.elastic = config;
        self
    }

    /// Records the scheduling latency of (at least) one schedule in `every`,
    /// and times that poll; 0 disables sampling, which also leaves the
    /// elastic controller blind. Default: [`DEFAULT_LATENCY_SAMPLE_EVERY`].
    ///
    /// `every` is the sparsest sampling, used on a busy runtime. When
    /// schedules are rare the runtime samples more of them (down to every
    /// one), aiming at 2,000 samples per elastic window, so the controller's
    /// p99 does not rest on a handful of samples; that costs at most about
    /// 2,000 samples' clock reads per window.
    pub fn latency_sample_every(&mut self, every: u32) -> &mut Self {
        self.latency_sample_every = every;
        self
    }

    /// Polls that run longer than this without returning to the scheduler
    /// are counted in [`RuntimeMetrics::long_polls`](crate::RuntimeMetrics::long_polls)
    /// and reported with a `tracing` warning naming where the task was
    /// spawned (at most once per spawn location per second). `None` disables
    /// the detector. Default: 10 ms. Detection resolution is half the
    /// threshold. Must be at least 1 ms.
    ///
    /// The warning's `tracing` target is `brigade::long_poll`.
    ///
    /// Yield points count: a `yield_if_busy().await` that lets the task go
    /// on (because nobody waits for its worker) starts a new stretch, so a
    /// loop that calls it after every unit is not reported however long its
    /// poll lasts; a stretch between two yield points that passes the
    /// threshold is.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let rt = brigade::Builder::new()
    ///     .long_poll_threshold(Some(Duration::from_millis(5)))
    ///     .build()?;
    /// rt.block_on(rt.spawn(async {
    ///     // Blocks its worker for 30 ms: a long poll.
    ///     std::thread::sleep(Duration::from_millis(30));
    /// }))
    /// .unwrap();
    /// // Reported shortly after the poll ends (unless the monitor thread was
    /// // starved of CPU for the whole poll).
    /// std::thread::sleep(Duration::from_millis(10));
    /// println!("long polls: {}", rt.metrics().long_polls());
    /// # Ok::<(), brigade::BuildError>(())
    /// ```
    pub fn long_poll_threshold(&mut self, threshold: Option<Duration>) -> &mut Self {
        self.long_poll_threshold = threshold;
        self
    }

    /// A worker stuck in one poll (or between two yield points of one) for
    /// longer than this, while other work waits and no worker is idle, gets
    /// a *spare*: an extra worker thread that takes its place (its queue and
    /// its share of the work) until the stuck poll returns. `None` turns
    /// this off; [`task::block_in_place`](crate::task::block_in_place)
    /// still hands off. Default: [`DEFAULT_COMPENSATION_THRESHOLD`]. Must be
    /// at least 1 ms. The monitor thread samples the workers every half
    /// [`long_poll_threshold`](Self::long_poll_threshold), or every this
    /// threshold if that is sooner, so a stuck worker gets its spare within
    /// about twice the threshold.
    ///
    /// A stuck worker is a task making a blocking call from async code (a
    /// synchronous DNS lookup, `std::fs`, a lock held across I/O) or
    /// computing with no yield point. Go's scheduler compensates the same
    /// way for goroutines blocked in system calls; tokio does not. It is a
    /// safety net: blocking calls belong in
    /// [`spawn_blocking`](crate::spawn_blocking), and long computations
    /// need [`yield_if_busy`](crate::yield_if_busy) between their units.
    ///
    /// A worker whose thread is runnable rather than blocked gets no spare
    /// while it waits for a CPU (the OS descheduled it on a crowded host),
    /// and a computing one gets one only while the host has an idle CPU: see
    /// the crate docs' "Long polls and stuck workers".
    ///
    /// When the stuck poll returns, the spare finishes its current task,
    /// hands its queued tasks back and steps down, so the number of workers
    /// running goes back to the configured count; its thread waits
    /// [`thread_keep_alive`](Self::thread_keep_alive) for another stuck
    /// worker before it exits. Each compensation is counted in
    /// [`RuntimeMetrics::compensations`](crate::RuntimeMetrics::compensations)
    /// and logged at info level (target `brigade::compensation`).
    ///
    /// No effect on a current-thread runtime
    /// ([`new_current_thread`](Self::new_current_thread)), which has no
    /// spare workers.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let rt = brigade::Builder::new()
    ///     .worker_threads(1)
    ///     .compensation_threshold(Some(Duration::from_millis(2)))
    ///     .build()?;
    /// let (release, stuck) = std::sync::mpsc::channel::<()>();
    /// rt.spawn(async move {
    ///     // A blocking call by mistake: the only worker is stuck in it.
    ///     let _ = stuck.recv_timeout(Duration::from_secs(10));
    /// });
    /// // Tasks still run: a spare worker takes the stuck one's place.
    /// let answer = rt.block_on(rt.spawn(async { 6 * 7 })).unwrap();
    /// assert_eq!(answer, 42);
    /// release.send(()).unwrap();
    /// # Ok::<(), brigade::BuildError>(())
    /// ```
    pub fn compensation_threshold(&mut self, threshold: Option<Duration>) -> &mut Self {
        self.compensation_threshold = threshold;
        self
    }

    /// The most spare workers serving at once (see
    /// [`compensation_threshold`](Self::compensation_threshold)), so at most
    /// `worker_threads + max_spare_workers` threads run tasks. A worker
    /// stuck while every spare serves stays stuck without a stand-in (a
    /// warning says so). 0 turns compensation off entirely, `block_in_place`
    /// included. Default: as many as [`worker_threads`](Self::worker_threads).
    /// A current-thread runtime has none, whatever this says.
    pub fn max_spare_workers(&mut self, count: usize) -> &mut Self {
        self.max_spare_workers = Some(count);
        self
    }

    /// Whether tasks spawned with [`TaskClass::Auto`](crate::task::TaskClass::Auto)
    /// (every plain [`spawn`](crate::spawn)) are classified by how they
    /// behave. Default: `true`.
    ///
    /// A task that has only woken itself several times in a row (a loop
    /// around [`yield_now`](crate::yield_now), written for tokio) is
    /// *demoted* to background: while other work waits for a worker, its
    /// self-wakes step aside into the yield queue as
    /// [`yield_if_busy`](crate::yield_if_busy) does, instead of queueing
    /// ahead of foreground tasks woken after it. Its next wake by I/O, a
    /// timer or another task promotes it back.
    /// [`demotions`](crate::RuntimeMetrics::demotions) and
    /// [`promotions`](crate::RuntimeMetrics::promotions) count the changes,
    /// and each is logged at debug level (target `brigade::class`).
    ///
    /// `false` treats every such task as
    /// [`TaskClass::Foreground`](crate::task::TaskClass::Foreground), as
    /// tokio does; a task spawned with another class keeps it.
    pub fn demote_background(&mut self, enabled: bool) -> &mut Self {
        self.demote_background = enabled;
        self
    }

    /// The starvation bound of the yield queue: an entry that has waited
    /// longer than this is taken out ahead of other work and runs as if
    /// nothing waited for a 250 µs slice. Must be at least 1 ms; `None`
    /// lets yielded work wait for as long as other work keeps every worker
    /// busy. Default: [`DEFAULT_MAX_YIELD_DELAY`] (50 ms).
    ///
    /// Work in the yield queue ([`yield_if_busy`](crate::yield_if_busy),
    /// demoted background tasks) runs only when a worker has nothing else
    /// to do. Under a foreground load that never lets up, that is never;
    /// this bound gives it a share instead. After the first rescue the
    /// queue counts as starving until a worker serves it the usual way, and
    /// rescues follow each other as fast as a cap of 4% of the workers'
    /// time allows, shared among the starving tasks in queue order. So this
    /// setting is how long yielded work waits before a starving queue gets
    /// its share, not the share: for more, see
    /// [`background_floor`](Self::background_floor).
    ///
    /// The trade-off: each rescue delays the foreground on its worker by up
    /// to the slice. It happens only once the yield queue has starved for
    /// this long, that is, under overload; a runtime with spare time never
    /// rescues. A shorter bound starts the rescues sooner.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let rt = brigade::Builder::new()
    ///     .max_yield_delay(Some(Duration::from_millis(20)))
    ///     .build()?;
    /// # drop(rt);
    /// # Ok::<(), brigade::BuildError>(())
    /// ```
    pub fn max_yield_delay(&mut self, delay: Option<Duration>) -> &mut Self {
        self.max_yield_delay = delay;
        self
    }

    /// The smallest share of each worker's time that background work keeps
    /// while it waits, however busy the foreground is: a fraction in
    /// `[0, 1]`. Default: 0, no floor (foreground first: background work
    /// gets the time the foreground leaves, plus the starvation bound of
    /// [`max_yield_delay`](Self::max_yield_delay)).
    ///
    /// Background work is what waits in the yield queue (tasks that stepped
    /// aside in [`yield_if_busy`](crate::yield_if_busy), demoted background
    /// tasks) and elastic tasks ([`spawn_elastic`](crate::spawn_elastic)).
    /// With a floor `F`, each worker owes the yield queue `F` of the time it
    /// spends while background work waits, and pays it in turns: once it owes
    /// 250 µs, it takes the queue's head ahead of its own work and lets that
    /// task run on for 250 µs as if nothing waited. Background time it ran
    /// anyway (on a worker that had nothing else to do) counts, so a runtime
    /// with spare time takes no turns. Elastic admission's limit never falls
    /// below `F` ([`ElasticConfig::min_utilization`] is raised to it; an
    /// [`ElasticConfig::max_utilization`] below `F` is an error).
    ///
    /// The trade-off: under a saturating foreground, the foreground keeps
    /// only `1 − F` of the workers while background work waits, and a
    /// request may wait up to one turn (250 µs, or one unit of background
    /// work if that is longer) behind it. For a service whose bulk job has a
    /// deadline; leave it at 0 where foreground latency is all that counts.
    ///
    /// # Examples
    ///
    /// ```
    /// let rt = brigade::Builder::new().background_floor(0.25).build()?;
    /// # drop(rt);
    /// assert!(brigade::Builder::new().background_floor(1.5).build().is_err());
    /// # Ok::<(), brigade::BuildError>(())
    /// ```
    pub fn background_floor(&mut self, share: f64) -> &mut Self {
        self.background_floor = share;
        self
    }

    /// Whether a busy worker serves I/O and timers that an idle worker was
    /// woken for but has not run: the crowded-host hand-off. Default
    /// `true`.
    ///
    /// On a host with more busy threads than cores (the client on the
    /// server's cores, a noisy neighbour), the kernel may wake the idle
    /// worker that waits for I/O and leave it without a core for a
    /// scheduler tick or more. A busy worker notices (the I/O stayed
    /// pending, with nobody harvesting it, at two of its checks about half
    /// a millisecond apart), takes the woken tasks into its own deque, and
    /// its running task gives way to them at its next
    /// [`yield_if_busy`](crate::yield_if_busy). It goes on serving the idle
    /// worker's I/O until the kernel runs that worker.
    ///
    /// The trade-off: with the hand-off, requests wait less for a core,
    /// and the background task on the busy worker gets less of it. `false`
    /// leaves such I/O to the woken worker, whenever the kernel runs it, as
    /// tokio does: the background keeps its worker, and request latency
    /// follows the kernel's scheduling. On a quiet host (a free core for
    /// every busy thread) the two behave alike: a woken worker runs within
    /// microseconds, and the hand-off fires only now and then.
    /// [`idle_not_serving`](crate::RuntimeMetrics::idle_not_serving) counts
    /// the hand-offs.
    ///
    /// # Examples
    ///
    /// A bulk job that must keep its CPU on a crowded host:
    ///
    /// ```
    /// let rt = brigade::Builder::new().crowded_host_handoff(false).build()?;
    /// # drop(rt);
    /// # Ok::<(), brigade::BuildError>(())
    /// ```
    pub fn crowded_host_handoff(&mut self, enabled: bool) -> &mut Self {
        self.crowded_host_handoff = enabled;
        self
    }

    /// Whether the monitor thread moves a worker that the kernel has left
    /// on the same CPU as another busy worker, for 4 of its samples in a row
    /// (about 15–20 ms at the default sample interval), to a CPU that no busy
    /// worker holds and that was idle at least 10% of the last 100 ms or
    /// so. Default `true`; Linux only.
    ///
    /// A worker with background work never sleeps, and the kernel places a
    /// thread mostly when it wakes: on a small host whose other CPUs keep
    /// going briefly idle (a client or neighbour waking thousands of times
    /// a second) its balancer can leave two busy workers sharing one CPU
    /// for seconds, each at half a core, while another CPU idles. The move
    /// sets the worker's CPU mask to the idle CPU, which migrates it, and
    /// then gives back the mask it read: the worker is not left pinned, and
    /// a CPU outside its own mask (`taskset`, a cpuset) is never used. A CPU
    /// that another process keeps busy is not a target: a worker would get
    /// half of it there too. At most one move per 100 ms. The monitor reads
    /// each worker's `/proc/self/task/TID/stat` at each sample, so with both
    /// the long-poll detector and compensation off (no samples) nothing is
    /// moved.
    ///
    /// The mask given back is the one the kernel reported, which Linux 6.2
    /// and later keeps as the thread's requested mask: a cgroup cpuset
    /// widened later widens a moved worker only that far. Turn this off
    /// where cpusets change while the runtime runs.
    /// [`spread_moves`](crate::RuntimeMetrics::spread_moves) counts the
    /// moves.
    ///
    /// # Examples
    ///
    /// Leave thread placement to the kernel alone:
    ///
    /// ```
    /// let rt = brigade::Builder::new().spread_workers(false).build()?;
    /// # drop(rt);
    /// # Ok::<(), brigade::BuildError>(())
    /// ```
    pub fn spread_workers(&mut self, enabled: bool) -> &mut Self {
        self.spread_workers = enabled;
        self
    }

    /// Feature `tokio-compat`: whether tokio-based code (`tokio::net`,
    /// `tokio::time`, `tokio::spawn`, and the crates built on them) works
    /// inside this runtime's tasks. Default: `true`.
    ///
    /// The runtime then starts a tokio runtime of its own
    /// ([`tokio_compat_threads`](Self::tokio_compat_threads) threads that
    /// drive tokio's I/O and timers and run `tokio::spawn`ed tasks, plus
    /// tokio's blocking pool on demand), enters its context on every thread
    /// that polls brigade tasks, and shuts it down with itself. The cost: an
    /// extra thread, and a cross-thread wake-up for each tokio I/O or timer
    /// event. brigade's own [`net`](crate::net) and [`time`](crate::time)
    /// avoid both; use them in new code.
    ///
    /// # Examples
    ///
    /// ```
    /// let rt = brigade::Builder::new().worker_threads(1).build()?;
    /// rt.block_on(async {
    ///     // tokio's timer inside a brigade task.
    ///     brigade::spawn(async {
    ///         tokio::time::sleep(std::time::Duration::from_millis(1)).await;
    ///     })
    ///     .await
    ///     .unwrap();
    /// });
    /// # Ok::<(), brigade::BuildError>(())
    /// ```
    #[cfg(feature = "tokio-compat")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tokio-compat")))]
    pub fn tokio_compat(&mut self, enabled: bool) -> &mut Self {
        self.tokio_compat = enabled;
        self
    }

    /// Feature `tokio-compat`: how many worker threads the runtime's tokio
    /// runtime has, to drive tokio's I/O and timers and run `tokio::spawn`ed
    /// tasks (tokio's blocking pool, for `tokio::fs` and `spawn_blocking`,
    /// is extra). Must be at least 1. Default: 1.
    ///
    /// These threads have this runtime's context too, so `brigade::spawn`
    /// and `brigade::time` work inside `tokio::spawn`ed tasks, and
    /// [`RuntimeMetrics::tokio_compat`](crate::RuntimeMetrics::tokio_compat)
    /// reports their work. They are named `brigade-tok-N` (or as
    /// [`thread_name`](Self::thread_name) says, as every other thread).
    #[cfg(feature = "tokio-compat")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tokio-compat")))]
    pub fn tokio_compat_threads(&mut self, count: usize) -> &mut Self {
        self.tokio_compat_threads = count;
        self
    }

    /// Starts the runtime with its clock paused, as
    /// [`brigade::time::pause`](crate::time::pause) right at the start
    /// would: timers fire only when the clock is advanced, by hand or
    /// automatically once the runtime has nothing to do. For tests; works
    /// with any number of workers. Default: `false`.
    ///
    /// ```
    /// use brigade::time::{Duration, Instant, timeout};
    ///
    /// let rt = brigade::Builder::new().worker_threads(2).start_paused(true).build()?;
    /// rt.block_on(async {
    ///     let start = Instant::now();
    ///     let never = std::future::pending::<()>();
    ///     assert!(timeout(Duration::from_secs(30), never).await.is_err());
    ///     assert_eq!(start.elapsed(), Duration::from_secs(30));
    /// });
    /// # Ok::<(), brigade::BuildError>(())
    /// ```
    pub fn start_paused(&mut self, paused: bool) -> &mut Self {
        self.start_paused = paused;
        self
    }

    /// Turns the cooperative budget's yields off (`task/coop.rs`): the
    /// budget is then always refilled. For the tests that show what the
    /// budget prevents; users turn it off per future with
    /// [`task::unconstrained`](crate::task::unconstrained).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn coop_budget(&mut self, enabled: bool) -> &mut Self {
        self.coop_budget = enabled;
        self
    }

    /// Where the CPU limit comes from ([`CpuLimit`]): by default the
    /// cgroup's quota ([`CpuLimit::Auto`]), read at build and again about
    /// once a second; [`CpuLimit::Fixed`] for a limit known otherwise;
    /// [`CpuLimit::Off`] for none. Under a limit the default worker count
    /// is the limit rounded up (1.5 CPUs: 2 workers; an explicit
    /// [`worker_threads`](Self::worker_threads) wins), workers past the
    /// limit park while it is lower than their count, and background work
    /// is paced so that the kernel never throttles the process: the
    /// foreground always finds CPU left in the period
    /// ([`RuntimeMetrics::cpu_limit`](crate::RuntimeMetrics::cpu_limit),
    /// [`throttled_periods`](crate::RuntimeMetrics::throttled_periods),
    /// [`paced_time`](crate::RuntimeMetrics::paced_time)).
    ///
    /// A [`CpuLimit::Fixed`] value that is not finite and positive is a
    /// [`BuildError`] naming `cpu_limit`.
    ///
    /// # Examples
    ///
    /// ```
    /// use brigade::runtime::CpuLimit;
    ///
    /// let rt = brigade::Builder::new().cpu_limit(CpuLimit::Fixed(0.5)).build()?;
    /// assert_eq!(rt.metrics().num_workers(), 1);
    /// assert!(brigade::Builder::new().cpu_limit(CpuLimit::Fixed(0.0)).build().is_err());
    /// # Ok::<(), brigade::BuildError>(())
    /// ```
    pub fn cpu_limit(&mut self, limit: CpuLimit) -> &mut Self {
        self.cpu_limit = limit;
        self
    }

    /// Validates the settings and starts the runtime's worker threads.
    pub fn build(&mut self) -> Result<Runtime, BuildError> {
        let limit = self.checked_cpu_limit()?;
        let (workers, spares) = self.checked(limit.quota)?;
        Runtime::start(self, workers, spares, limit)
    }
}
