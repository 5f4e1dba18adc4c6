//! The runtime as its tasks see it: [`Shared`] implements the task layer's
//! [`TaskHost`].

use super::Shared;
use crate::task::host::TaskHost;
use crate::task::registry::Registry;

impl TaskHost for Shared {
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
