//! The scheduler's tests that run a whole `Runtime` and look at its
//! internals (the loom models of the same are in `runtime/loom_models/`).
//! A module's own unit tests are its `tests` submodule, and its loom models
//! its `loom_models` submodule, beside its code.

mod coop_budget;
mod crowded_host;
mod spawn_notify;
#[cfg(target_os = "linux")]
mod stacked_workers;
