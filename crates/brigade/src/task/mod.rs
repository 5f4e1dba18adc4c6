//! Tasks: [`JoinHandle`], [`AbortHandle`], [`JoinError`], [`JoinSet`], [`block_in_place`],
//! spawning with options: [`Builder`] and [`TaskClass`]; task ids ([`Id`],
//! [`id`]); and `!Send` tasks: [`LocalSet`] and [`spawn_local`].
//!
//! # Task-local values
//! tokio's `task_local!` works in brigade tasks unchanged: it is a future
//! wrapper that sets its value around each poll of the future it scopes, so
//! it needs nothing from the executor. As under tokio, a value is set only
//! inside the future given to `scope`, and a task spawned from there does
//! not inherit it (`crates/brigade/tests/task_local.rs` checks both).
//
// Inside the crate: the per-task scheduler state, spawning, and the
// handles users get. A task is an `async-task` allocation holding the future (wrapped in a
// `Harness` that catches panics), a schedule closure that
// owns an `Arc` of the runtime's shared state, and a `TaskMeta` header
// with the per-task flags the scheduler needs. This module sees the
// scheduler only through the `TaskHost` trait (`task_host.rs`).

mod abort;
mod block_in_place;
mod cancel;
pub(crate) mod class;
pub mod coop;
pub(crate) mod current;
mod elastic_state;
pub(crate) mod harness;
mod id;
mod join;
mod join_set;
#[cfg(not(loom))]
mod local;
mod meta;
pub(crate) mod registry;
pub(crate) mod span;
#[cfg(feature = "console")]
mod span_waker;
pub(crate) mod spawn;
mod task_builder;
pub(crate) mod task_host;
pub(crate) mod task_ref;
pub(crate) mod tokio_hint;
pub(crate) mod yield_now;
mod yield_state;

pub use abort::AbortHandle;
pub use block_in_place::block_in_place;
pub use class::TaskClass;
pub use coop::{Unconstrained, consume_budget, unconstrained};
pub use id::{Id, id, try_id};
pub use join::{JoinError, JoinHandle};
pub use join_set::JoinSet;
pub use task_builder::Builder;
// tokio's paths: `tokio::task::{spawn, spawn_blocking, yield_now}`.
#[cfg(not(loom))]
pub use local::{LocalSet, RunUntil, spawn_local};
pub use spawn::{spawn, spawn_blocking};
pub use yield_now::yield_now;

pub(crate) use elastic_state::ElasticState;
pub(crate) use meta::{Panic, Runnable, TaskMeta};
pub(crate) use span::Origin;
pub(crate) use yield_state::YieldState;
