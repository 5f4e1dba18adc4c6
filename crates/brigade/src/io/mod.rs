//! The I/O reactor: readiness tracking on top of `mio`.
//!
//! - `reactor.rs`: the runtime's one `mio::Poll`, source registration and
//!   event dispatch;
//! - `scheduled_io.rs`: one source's readiness and waiting tasks;
//! - `poll_evented.rs`: a `mio` source registered with the current runtime,
//!   the building block of `brigade::net`.

pub(crate) mod poll_evented;
pub(crate) mod reactor;
pub(crate) mod scheduled_io;
