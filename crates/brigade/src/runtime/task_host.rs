//! The runtime as its tasks see it: [`Shared`] implements the task layer's
//! [`TaskHost`].

use async_task::ScheduleInfo;

use super::{Shared, context};
use crate::task::Runnable;
use crate::task::host::TaskHost;
use crate::task::registry::Registry;

impl TaskHost for Shared {
    fn schedule(&self, runnable: Runnable, info: ScheduleInfo) {
        Shared::schedule(self, runnable, info);
    }

    /// A worker of this runtime (a primary or a spare) holds the runtime's
    /// `Arc` in its `Core` for as long as its thread runs.
    fn is_held_here(&self) -> bool {
        context::with_current_worker(|core| {
            core.is_some_and(|core| std::ptr::eq(&**core.shared(), self))
        })
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
