//! brigade: an async runtime that runs background work at full CPU without
//! hurting foreground latency.
//!
//! brigade is a work-stealing, multi-threaded runtime in the mould of
//! tokio's, with one addition at its heart: [`yield_if_busy`]. Background
//! work (index builds, imports, compaction, batch inference) calls
//! `yield_if_busy().await` between units of work. While the runtime has an
//! idle worker the call costs one atomic load; when every worker is busy and
//! another task is waiting, the caller steps aside into a separate *yield
//! queue* and resumes as soon as a worker runs out of other work. Foreground
//! tasks therefore wait at most one unit of background work, and background
//! work still soaks up every spare cycle.
//!
//! # Where to call `yield_if_busy().await`
//! - In loops that do CPU work: after each row, batch or chunk, ideally every
//!   10–100 µs of work. The call is cheap enough for tight loops.
//! - At points where the task holds no lock and no other task waits on it.
//! - Not needed in code that mostly awaits I/O: it yields whenever it waits.
//!
//! [`yield_now`] is the unconditional version: it always goes to the back of
//! the queue, whether or not anyone is waiting.
//!
//! # Example
//!
//! ```
//! let rt = brigade::Runtime::new()?;
//! rt.block_on(async {
//!     let import = brigade::spawn(async {
//!         let mut checksum = 0u64;
//!         for row in 0..100_000u64 {
//!             checksum = checksum.wrapping_mul(31).wrapping_add(row);
//!             brigade::yield_if_busy().await;
//!         }
//!         checksum
//!     });
//!     let request = brigade::spawn(async { "served" });
//!     assert_eq!(request.await.unwrap(), "served");
//!     import.await.unwrap();
//! });
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! # Elastic tasks
//! [`spawn_elastic`] spawns background work under *elastic admission*: it
//! runs on grants of CPU time from a token bucket whose rate a controller
//! adjusts from the runtime's p99 scheduling latency (CockroachDB's elastic
//! CPU admission control). It is the backstop for work whose yield points
//! are too far apart for `yield_if_busy` alone: when foreground tasks start
//! waiting, elastic work is throttled. Tune it with [`ElasticConfig`].
//!
//! # Metrics
//! [`Runtime::metrics`] returns a [`RuntimeMetrics`]:
//! - [`yields`](RuntimeMetrics::yields) (how often `yield_if_busy` gave way)
//!   and [`yield_queue_depth`](RuntimeMetrics::yield_queue_depth) (how much
//!   background work is parked right now);
//! - [`scheduling_latency`](RuntimeMetrics::scheduling_latency): how long
//!   runnable tasks waited for a worker, the number that says whether
//!   foreground work is hurt (its p99 should stay near your target);
//!   [`poll_duration`](RuntimeMetrics::poll_duration) and
//!   [`yield_delay`](RuntimeMetrics::yield_delay) (how long background work
//!   stayed parked: large values mean the runtime is busy with other work);
//! - [`elastic_utilization_limit`](RuntimeMetrics::elastic_utilization_limit),
//!   [`elastic_waiting`](RuntimeMetrics::elastic_waiting) and
//!   [`elastic_cpu_time`](RuntimeMetrics::elastic_cpu_time);
//! - [`long_polls`](RuntimeMetrics::long_polls): polls that ran past the
//!   long-poll threshold, each also reported with a `tracing` warning that
//!   names the spawn location (add `yield_if_busy().await` there);
//! - worker, task, poll, steal and park counts.
#![warn(missing_docs)]
#![cfg_attr(loom, allow(dead_code, unused_imports, unreachable_pub))]

mod sync;

#[cfg(not(loom))]
mod admission;
#[cfg(not(loom))]
mod coop;
#[cfg(not(loom))]
mod io;
#[cfg(not(loom))]
mod metrics;
#[cfg(not(loom))]
pub mod net;
#[cfg(not(loom))]
mod runtime;
#[cfg(not(loom))]
mod task;
#[cfg(not(loom))]
pub mod time;
#[cfg(not(loom))]
mod yield_queue;

/// Under `--cfg loom` only the protocol modules are built, for their models.
#[cfg(loom)]
mod runtime {
    pub(crate) mod idle;
    mod park;
}

#[cfg(not(loom))]
pub use admission::ElasticConfig;
#[cfg(not(loom))]
pub use coop::{YieldIfBusy, YieldNow, yield_if_busy, yield_now};
#[cfg(not(loom))]
pub use metrics::{LatencySnapshot, RuntimeMetrics};
#[cfg(not(loom))]
pub use runtime::{
    BuildError, Builder, DEFAULT_LATENCY_SAMPLE_EVERY, Handle, Runtime, WORKER_THREADS_ENV, spawn,
    spawn_blocking, spawn_elastic,
};
#[cfg(not(loom))]
pub use task::{JoinError, JoinHandle};
