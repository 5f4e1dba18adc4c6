//! The runtime's threads other than the workers' loop, and where they run:
//! the blocking pool (`blocking.rs`), the monitor (`monitor.rs`), the CPUs
//! each thread is placed on (`spread.rs`), each thread's CPU clock
//! (`thread_cpu.rs`), the user's start/stop/park hooks (`thread_hooks.rs`),
//! every thread's name (`thread_names.rs`), and under feature
//! `tokio-compat` the compat thread (`tokio_compat.rs`).

pub(crate) mod blocking;
#[cfg(not(loom))]
pub(crate) mod monitor;
#[cfg(not(loom))]
pub(crate) mod proc_file;
#[cfg(not(loom))]
pub(crate) mod spread;
pub(crate) mod thread_cpu;
pub(crate) mod thread_hooks;
pub(crate) mod thread_names;
#[cfg(feature = "tokio-compat")]
pub(crate) mod tokio_compat;
