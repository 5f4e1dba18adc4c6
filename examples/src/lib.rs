//! Shared code of brigade's examples: the mixed-load demo's harness
//! (configuration, measurement, report and chart), the stuck-worker,
//! flood, `http_import` and `kv` demos', the calibrated busy work they share, kept in a library so it is unit-tested by
//! `cargo test --workspace`.

pub mod busy;
mod flags;
pub mod flood;
pub mod http_import;
pub mod kv;
pub mod mixed_load;
pub mod stuck_worker;
#[cfg(feature = "tokio-compat")]
pub mod tokio_client;
