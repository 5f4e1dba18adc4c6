//! A runtime's life: starting it (`start.rs`: the steps of
//! `Runtime::start`) and shutting it down (`shutdown.rs`: the steps of
//! dropping a `Runtime`). The flag the scheduler checks while it shuts
//! down is `scheduler/shutdown_flag.rs`.

pub(crate) mod shutdown;
pub(crate) mod start;
