//! E2 of the policy (`policy.rs`): a primary worker past the CPU limit's
//! worker count parks until the limit grows again (`cpu_limit/mod.rs`).
//!
//! ## Protocol
//! The monitor stores the running-worker count (`CpuLimitState`), then
//! unparks each worker that may run again (`Idle::unpark`). A worker past
//! the count hands its tasks to the injector (as a spare that steps down
//! does), then loops: check the count, park on its own parker. The parker
//! keeps an unpark that comes before the park (`Parker::unpark` sets its
//! `notified` flag, which the next park consumes), so a count raised
//! between the check and the park is seen at once. The worker is not
//! counted idle (it never enters `Idle::wait_for_work`): `yield_if_busy()`
//! does not trust it to serve, and no notification picks it. Shutdown
//! unparks every primary (`shutdown.rs`, step 3); the park is also bounded
//! by `LIMIT_REREAD`, so a worker looks again at least that often.

use super::Core;
use crate::policy::LIMIT_REREAD;

impl Core {
    /// Whether this worker parks for the CPU limit now: a primary past
    /// the count the limit runs. One load.
    #[inline]
    pub(super) fn parked_by_limit(&self) -> bool {
        !self.is_spare && !self.shared.cpu.runs(self.index)
    }

    /// Parks this worker while the limit runs fewer workers than its index
    /// (see the module docs), handing its tasks to the injector first.
    pub(super) fn park_by_limit(&self) {
        self.end_cover();
        self.hand_back_tasks();
        tracing::debug!(
            target: "brigade::runtime::worker::park_by_limit",
            worker = self.index,
            "worker parked: the CPU limit runs fewer workers"
        );
        let shared = &self.shared;
        while self.parked_by_limit() && !shared.is_shutdown() {
            shared.idle.park_uncounted(self.index, LIMIT_REREAD);
        }
        tracing::debug!(target: "brigade::runtime::worker::park_by_limit", worker = self.index, "worker runs again under the CPU limit");
    }
}

#[cfg(all(test, loom))]
mod loom_models;
