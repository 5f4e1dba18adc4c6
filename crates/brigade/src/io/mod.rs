//! I/O resources on the runtime's reactor (the reactor itself, and each
//! source's readiness cell, are the driver's: `driver/reactor.rs` and
//! `driver/scheduled_io.rs`).
//!
//! - `poll_evented.rs`: a `mio` source registered with the current runtime,
//!   the building block of `brigade::net`.

pub(crate) mod poll_evented;
