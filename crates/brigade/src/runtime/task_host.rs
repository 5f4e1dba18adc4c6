//! The runtime as its tasks see it: [`Shared`] implements the task layer's
//! [`TaskHost`].

use async_task::ScheduleInfo;

use super::Shared;
use super::placement::Arrival;
use crate::task::Runnable;
use crate::task::host::TaskHost;
use crate::task::registry::Registry;

impl TaskHost for Shared {
    /// A worker of this runtime (a primary or a spare) holds the runtime's
    /// `Arc` in its `Core` for as long as its thread runs.
    fn schedule_if_held(&self, runnable: Runnable, info: ScheduleInfo) -> Result<(), Runnable> {
        self.schedule_on_worker(runnable, Arrival::of_wake(info))
    }

    fn schedule(&self, runnable: Runnable, info: ScheduleInfo) {
        self.schedule_off_workers(runnable, Arrival::of_wake(info));
    }

    fn registry(&self) -> &Registry {
        &self.registry
    }

    fn hold_attention(&self) {
        self.idle.attention().hold();
    }

    fn release_attention(&self) {
        self.idle.attention().release();
    }

    fn evict_aborted(&self) {
        Shared::evict_aborted(self);
    }
}
