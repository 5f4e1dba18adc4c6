//! brigade: an async runtime that runs background work at full CPU without
//! hurting foreground latency.
//!
//! ```
//! #[brigade::main]
//! async fn main() -> std::io::Result<()> {
//!     // Background work steps aside between units, only when a task waits.
//!     let import = brigade::spawn(async {
//!         let mut checksum = 0u64;
//!         for row in 0..100_000u64 {
//!             checksum = checksum.wrapping_mul(31).wrapping_add(row);
//!             brigade::yield_if_busy().await;
//!         }
//!         checksum
//!     });
//!     // Foreground work (a request, say) is not held up by the import.
//!     let request = brigade::spawn(async { "served" });
//!     assert_eq!(request.await?, "served");
//!     import.await?;
//!     Ok(())
//! }
//! ```
//!
//! brigade is a work-stealing, multi-threaded runtime in the mould of
//! tokio's, with one addition: [`yield_if_busy`]. Background work (index
//! builds, imports, compaction, batch inference) calls
//! `yield_if_busy().await` between units of work. While the runtime has an
//! idle worker the call costs a few inlined instructions; when every worker
//! is busy and another task is waiting, the caller steps aside and resumes
//! as soon as a worker runs out of other work. Foreground tasks wait at
//! most one unit of background work, and the background still gets every
//! spare cycle. The rest of the API follows tokio's: [`macro@main`],
//! [`macro@test`], [`Runtime`], [`Builder`], [`spawn`], [`net`], [`time`],
//! [`signal`], [`task`], [`process`], [`fs`].
//!
//! # Where to go next
//! - **HTTP and gRPC servers**: hyper 1.x, axum and tonic run on brigade's
//!   workers through the `brigade-hyper` crate (`crates/brigade-hyper` in
//!   brigade's workspace; the paths below are in the workspace too).
//! - **Porting from tokio**: `docs/porting.md`
//!   (the renames, what stays on tokio, axum and tonic services, and the
//!   `tokio-compat` feature for tokio-based libraries).
//! - **How it works inside**: `docs/design.md`
//!   (the path of a task, the layers, the file that holds each mechanism).
//! - **Measurements against tokio**: `docs/results.md` (the history:
//!   `docs/decisions.md`).
//!
//! # Where to call `yield_if_busy().await`
//! - In loops that do CPU work: after each row, batch or chunk, ideally every
//!   10–100 µs of work. The call is cheap enough for tight loops.
//! - At points where the task holds no lock and no other task waits on it.
//! - Not needed in code that mostly awaits I/O: it yields whenever it waits.
//!
//! [`yield_now`] is the unconditional version: it always goes to the back of
//! the queue, whether or not anyone is waiting. Code written for tokio, a
//! loop around `yield_now().await`, gets the same treatment: a task that
//! only ever wakes itself is *demoted* to background after a few such wakes
//! and steps aside as `yield_if_busy()` does, until its next wake by I/O, a
//! timer or another task ([`task::Builder`] fixes a task's
//! [`task::TaskClass`]; [`Builder::demote_background`] turns demotion off).
//! Work that stepped aside does not starve: after
//! [`Builder::max_yield_delay`] (50 ms) it runs ahead of other work in
//! 250 µs slices, within a cap of 4% of the workers.
//!
//! # The mechanisms behind it
//! **Elastic tasks.** [`spawn_elastic`] runs background work whose yield
//! points are too far apart for `yield_if_busy` alone on grants of CPU
//! time, from a token bucket whose rate a controller sets from the
//! runtime's p99 scheduling latency (CockroachDB's elastic CPU admission
//! control). The limit starts low and rises while the p99 stays under the
//! target; idle workers run elastic work for free. See [`ElasticConfig`].
//!
//! **The cooperative budget.** A task whose socket is always ready never
//! returns `Pending` by itself. As on tokio, every brigade resource
//! (sockets, timers, signals, join handles, standard streams) spends a
//! unit of the task's budget of 128 per poll; unlike tokio, a spent budget
//! makes the task yield only when work waits for its worker, and is
//! refilled otherwise, so an always-ready loop alone loses nothing
//! ([`task::coop`]).
//!
//! **CPU limits.** Inside a container's CPU limit (a CFS quota, which the
//! kernel enforces by stopping every thread of the cgroup once a period's
//! quota is spent) brigade reads the limit from the cgroup
//! ([`Builder::cpu_limit`]), runs as many workers as the limit rounded up,
//! and paces background work so that the quota never runs out: requests
//! arriving at any time find CPU left, and the kernel does not throttle
//! the process (at a quota of 0.5 CPU, measured: no throttled period, and
//! the requests' p99 as without background, with 0.87–0.90 × the limit
//! left to the background, where tokio's and Go's were throttled every
//! period and their p99 reached 59 and 63 ms; `docs/results.md#cpu-limit`).
//! Outside a limit nothing changes.
//!
//! **Metrics.** [`Runtime::metrics`] returns [`RuntimeMetrics`]: how often
//! `yield_if_busy` gave way, the scheduling latency (how long runnable tasks
//! waited for a worker: its p99 says whether the foreground is hurt), poll
//! durations, the elastic limit, long polls, compensations, and worker,
//! task, steal and park counts.
//!
//! **Long polls and stuck workers.** A poll that runs past
//! [`Builder::long_poll_threshold`] (10 ms) is counted and reported with a
//! warning naming where its task was spawned. A worker stuck in a blocking
//! call while work waits gets a *spare* worker thread in its place until it
//! returns ([`Builder::compensation_threshold`];
//! [`task::block_in_place`] hands off at once). On Linux the runtime asks
//! the kernel first: a worker that is merely descheduled on a crowded host
//! gets no spare, which would only crowd the host further.
//!
//! # Tracing
//! brigade reports what its scheduler does through the
//! [`tracing`](https://docs.rs/tracing) crate and installs no subscriber.
//! The targets are fixed names (they do not follow the code when a module
//! moves), matched by prefix as usual:
//!
//! | target | level | events (fields) |
//! |---|---|---|
//! | `brigade::long_poll` | warn | a long poll, while it runs (`running=true`) and when it ends (`running=false`) (`worker`, `spawned_at`, `duration_ms`) |
//! | `brigade::compensation` | info, warn, debug | info: a stuck worker gets a spare (`worker`, `spawned_at`, `stuck_ms`); warn: a stuck worker finds every spare serving; debug: a spare starts serving, a worker enters `block_in_place`, a covered worker is back, a stuck worker is left without a spare as descheduled or as CPU-bound on a host with no idle CPU (`worker`, `spawned_at`, `stuck_ms`) |
//! | `brigade::runtime` | debug, warn | runtime started, shutting down, shut down; shutdown timed out |
//! | `brigade::runtime::worker` | debug | `worker started`, `worker parking`, `worker unparked`, `worker stopped` (`worker`: its index) |
//! | `brigade::runtime::monitor` | debug | `elastic utilization limit changed` by at least 0.01 (`limit`, `previous`, `p99_us`, `recent_p99_us`, `waiting`) |
//! | `brigade::driver::poll` | debug | fallback driver thread started, stopped |
//! | `brigade::driver` | debug | `idle worker not serving: a busy worker serves its I/O and timers` (`worker`, `woken`) |
//! | `brigade::class` | debug | `task demoted to background`, `task promoted to foreground` (`task`, `spawned_at`) |
//! | `brigade::yield_queue` | trace | `task stepped aside into the yield queue`, `task left the yield queue` (`task`: its id); `overdue task rescued from the yield queue` (`task`, `waited_ms`) |
//! | `brigade::admission` | trace | `elastic task waits for admission` (`task`) |
//! | `brigade::cpu_limit` | info, warn | info: `CPU limit changed` (`limit`, `previous`, `running_workers`); warn: a cgroup's limit file could not be parsed and is taken as no limit (`cgroup`) |
//! | `brigade::tokio_hint` | warn | `a task panicked calling tokio outside a tokio runtime`: a task panicked with one of tokio's no-runtime messages (`task`, `spawned_at`, `hint`: the brigade module that replaces the call; the task's `JoinError` shows the same line) |
//! | `brigade::coop` | debug | `cooperative budget spent while work waits: the task yields`, once per spawn location (`spawned_at`) |
//!
//! Errors the runtime cannot return to a caller (a failed I/O driver poll,
//! a blocking-pool thread that could not start) are logged at error level.
//! A filter such as `brigade=debug,brigade::yield_queue=trace` shows the
//! scheduler at work; `examples/tracing.rs` prints every kind with
//! `tracing-subscriber`.
//!
//! # Cargo features
//! - `tokio-io` (default): tokio's `AsyncRead`/`AsyncWrite` for
//!   [`net::TcpStream`] and `net::UnixStream` (through tokio with no
//!   runtime features), so tokio-util codecs and hyper-util's `TokioIo`
//!   work on them.
//!   `futures_io`'s traits are always implemented.
//! - `macros` (default): the `#[brigade::main]` and `#[brigade::test]`
//!   attributes.
//! - `tokio-compat`: tokio-based code (`tokio::net`, `tokio::time`,
//!   `tokio::fs`, `tokio::process`, `tokio::spawn`,
//!   `tokio::task::spawn_blocking`, and crates built on them such as
//!   hyper-util's client, reqwest or tonic) works inside brigade tasks. Each
//!   runtime runs a small tokio runtime for tokio's I/O, timers and spawned
//!   tasks (`Builder::tokio_compat_threads`), its threads enter that
//!   runtime's context, and the tokio threads enter brigade's;
//!   see `Builder::tokio_compat` for the cost and how to turn it off per
//!   runtime.
//! - `metrics`: `RuntimeMetrics::publish` and
//!   `RuntimeMetrics::publish_every` publish every figure (`brigade_*`,
//!   per-worker ones labelled `worker`) through the `metrics` facade, so
//!   any exporter shows them; the `prometheus` example serves them in
//!   Prometheus text format.
//! - `console`: tokio-console shows brigade's tasks and timers. Each task
//!   gets tokio's `runtime.spawn` span (its `task::Builder::name`, kind and
//!   spawn location), entered at each poll, with waker events, each
//!   `time::sleep` a timer resource span, as tokio emits them under
//!   `tokio_unstable`, and each socket, pipe and `AsyncFd` a resource span
//!   of its type (kind `io`). Install `console-subscriber` as usual and build
//!   with `--cfg console_without_tokio_unstable` (it checks for that cfg or
//!   `tokio_unstable`); `cargo run -p brigade-examples --features console
//!   --example console`, then `tokio-console`, shows it. Costs a span
//!   enter and a waker allocation per poll only while a subscriber takes
//!   the spans.
#![warn(missing_docs)]
// docs.rs builds with `--cfg docsrs` (see Cargo.toml) and marks each item
// that needs a feature or a platform; `loom` is brigade's own test build,
// not a user's choice, so it is not shown.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![cfg_attr(docsrs, doc(auto_cfg(hide(loom))))]

// Under `--cfg loom` the scheduler itself is built, with loom's primitives
// (`sync/`), a driver without I/O (`driver/model_driver.rs`) and no monitor
// thread; the I/O, timer and signal modules, which need the real driver,
// are left out. `cargo test -p brigade --lib` then runs the loom models.
mod sync;

mod admission;
mod driver;
mod epoch;
#[cfg(not(loom))]
pub mod fs;
#[cfg(not(loom))]
pub mod io;
mod metrics;
#[cfg(not(loom))]
pub mod net;
mod policy;
#[cfg(all(unix, not(loom)))]
pub mod process;
pub mod runtime;
#[cfg(not(loom))]
pub mod signal;
mod slab_shrink;
pub mod task;
#[cfg(not(loom))]
pub mod time;
mod yield_if_busy;
mod yield_queue;

pub use admission::ElasticConfig;
#[cfg(feature = "tokio-compat")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio-compat")))]
pub use metrics::TokioCompatMetrics;
pub use metrics::{LatencySnapshot, RuntimeMetrics};
pub use runtime::{
    BuildError, Builder, CpuLimit, DEFAULT_COMPENSATION_THRESHOLD, DEFAULT_LATENCY_SAMPLE_EVERY,
    DEFAULT_MAX_YIELD_DELAY, Handle, Runtime, WORKER_THREADS_ENV, spawn, spawn_blocking,
    spawn_elastic,
};
pub use task::yield_now::{YieldNow, yield_now};
pub use task::{JoinError, JoinHandle};
pub use yield_if_busy::{YieldIfBusy, yield_if_busy};

/// Runs an `async fn main` on a brigade runtime.
///
/// `#[brigade::main]` turns `async fn main` into a plain `fn main` that
/// builds a [`Runtime`] with [`Builder`] and [`block_on`](Runtime::block_on)s
/// the body. The return type is kept, so `main` can return a `Result`:
///
/// ```
/// #[brigade::main]
/// async fn main() -> std::io::Result<()> {
///     let listener = brigade::net::TcpListener::bind("127.0.0.1:0").await?;
///     let answer = brigade::spawn(async { 6 * 7 }).await?;
///     assert_eq!(answer, 42);
///     println!("listening on {}", listener.local_addr()?);
///     Ok(())
/// }
/// ```
///
/// It takes tokio's arguments: `flavor = "current_thread"` (no worker
/// thread: the body and its tasks share `main`'s thread, as on tokio) or
/// `"multi_thread"`, `worker_threads = N` (see [`Builder::worker_threads`]),
/// `start_paused = true` and `crate = "path"`. Without them, the runtime
/// has one worker per CPU or `BRIGADE_WORKER_THREADS`:
///
/// ```
/// #[brigade::main(worker_threads = 2)]
/// async fn main() {
///     assert_eq!(brigade::Handle::current().metrics().num_workers(), 2);
/// }
/// ```
///
/// Needs the `macros` feature (on by default). The details:
#[cfg(all(feature = "macros", not(loom)))]
#[cfg_attr(docsrs, doc(cfg(feature = "macros")))]
#[doc(inline)]
pub use brigade_macros::main;

/// Runs an `async fn` test on its own brigade runtime.
///
/// `#[brigade::test]` adds `#[test]` and rewrites the function like
/// [`macro@main`]: each test builds a fresh [`Runtime`] and
/// [`block_on`](Runtime::block_on)s its body. It takes tokio's arguments
/// (`flavor`, `worker_threads`, `start_paused`, `crate`), and keeps the
/// function's other attributes and its return type. Without arguments the
/// test's runtime is a **current-thread** runtime, as tokio's default test
/// has: the test's thread runs the body and the tasks it spawns, taking
/// turns, so a spawned task runs only once the body awaits
/// ([`Builder::new_current_thread`](runtime::Builder::new_current_thread));
/// `start_paused = true` works with any number of workers (see
/// [`time::pause`]):
///
/// ```
/// #[brigade::test]
/// async fn spawned_tasks_run() {
///     assert_eq!(brigade::spawn(async { 1 + 1 }).await.unwrap(), 2);
/// }
///
/// #[brigade::test(flavor = "multi_thread", worker_threads = 2)]
/// async fn tests_can_return_results() -> Result<(), brigade::JoinError> {
///     let answer = brigade::spawn(async { "pong" }).await?;
///     assert_eq!(answer, "pong");
///     Ok(())
/// }
///
/// #[brigade::test(start_paused = true)]
/// async fn a_minute_passes_at_once() {
///     let start = brigade::time::Instant::now();
///     brigade::time::sleep(std::time::Duration::from_secs(60)).await;
///     assert_eq!(start.elapsed(), std::time::Duration::from_secs(60));
/// }
/// # fn main() {}
/// ```
///
/// Needs the `macros` feature (on by default). The details:
#[cfg(all(feature = "macros", not(loom)))]
#[cfg_attr(docsrs, doc(cfg(feature = "macros")))]
#[doc(inline)]
pub use brigade_macros::test;

/// The crate README's Rust examples (what crates.io shows), compiled and
/// run as doc tests; the repository's README is tested by
/// `brigade-examples`, since a published crate holds only its own folder.
#[cfg(all(doctest, feature = "macros"))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
