//! Shared code of brigade's examples: the mixed-load demo's harness
//! (configuration, measurement, report and chart), the stuck-worker demo's
//! and `http_import`'s, kept in a library so it is unit-tested by
//! `cargo test --workspace`.

mod flags;
pub mod http_import;
pub mod mixed_load;
pub mod stuck_worker;
