//! Shared code of brigade's examples and benches: the comparison harness
//! (brigade or tokio, the runtime abstraction, the benches' settings), the
//! calibrated busy work, the busy neighbour processes that crowd the host, the workloads written once for both runtimes, the
//! scaling bench's settings and tables, and the mixed-load, stuck-worker,
//! flood, `http_import` and `kv` demos (and `kv_load`, an open-loop load for `kv` and, with `--http`, for `http_import`, with `--http-kv` for `axum_service`), the
//! `axum_service` and `grpc_service` examples ([`service`]) and the soak test (configuration,
//! measurement, report and chart), and the brigade/tokio summary of the
//! criterion benches, kept in a library so that it is unit-tested by
//! `cargo test --workspace`.

pub mod bench_summary;
pub mod bursts;
pub mod busy;
pub mod cgroup;
mod flags;
pub mod flood;
pub mod harness;
pub mod http_import;
pub mod kv;
pub mod kv_load;
pub mod memory;
pub mod mixed_load;
pub mod neighbours;
#[cfg(feature = "prometheus")]
pub mod prometheus;
pub mod scaling;
pub mod service;
pub mod soak;
pub mod stuck_worker;
#[cfg(feature = "tokio-compat")]
pub mod tokio_client;
pub mod workloads;

/// The repository README's Rust examples, compiled and run as doc tests.
/// Here rather than in brigade: a published crate holds only its own
/// folder, so brigade tests its own README (`crates/brigade/README.md`).
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;
