//! `Debug` for [`RuntimeMetrics`].

use super::RuntimeMetrics;

impl std::fmt::Debug for RuntimeMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeMetrics")
            .field("num_workers", &self.num_workers())
            .field("yields", &self.yields())
            .field("budget_forced_yields", &self.budget_forced_yields())
            .field("yield_queue_depth", &self.yield_queue_depth())
            .finish_non_exhaustive()
    }
}
