//! A [`Sleep`](super::Sleep)'s spans in the form tokio-console reads
//! (feature `console`), as tokio emits them for its own `Sleep`: a
//! `runtime.resource` span (`concrete_type = "Sleep"`, `kind = "timer"`,
//! where it was created), an async-op span inside it
//! (`source = "Sleep::new_timeout"`) and a poll span inside that; each poll
//! enters all three and reports `poll_elapsed` with its readiness, and each
//! new deadline is a `duration` state update in milliseconds. The console
//! then lists every sleep as a resource, with the task that polls it.
//!
//! Without the feature, [`SleepSpan`] holds nothing and its poll is a plain
//! call.

use std::panic::Location;
use std::task::Poll;
use std::time::Duration;

/// The spans of one sleep (feature `console`), or nothing.
pub(super) struct SleepSpan {
    #[cfg(feature = "console")]
    resource: tracing::Span,
    #[cfg(feature = "console")]
    async_op: tracing::Span,
    #[cfg(feature = "console")]
    async_op_poll: tracing::Span,
}

impl SleepSpan {
    /// The spans of a sleep created at `location` that waits `duration`.
    #[cfg_attr(not(feature = "console"), allow(unused_variables))]
    pub(super) fn new(location: &'static Location<'static>, duration: Duration) -> Self {
        #[cfg(feature = "console")]
        {
            let resource = tracing::trace_span!(
                parent: None,
                "runtime.resource",
                concrete_type = "Sleep",
                kind = "timer",
                loc.file = location.file(),
                loc.line = location.line(),
                loc.col = location.column(),
            );
            let async_op = resource.in_scope(|| {
                tracing::trace_span!("runtime.resource.async_op", source = "Sleep::new_timeout")
            });
            let async_op_poll =
                async_op.in_scope(|| tracing::trace_span!("runtime.resource.async_op.poll"));
            let spans = SleepSpan {
                resource,
                async_op,
                async_op_poll,
            };
            spans.deadline_moved(duration);
            spans
        }
        #[cfg(not(feature = "console"))]
        SleepSpan {}
    }

    /// The sleep now ends `duration` from now (created or reset).
    #[cfg_attr(not(feature = "console"), allow(unused_variables))]
    pub(super) fn deadline_moved(&self, duration: Duration) {
        #[cfg(feature = "console")]
        self.resource.in_scope(|| {
            tracing::trace!(
                target: "runtime::resource::state_update",
                duration = duration.as_millis() as u64,
                duration.unit = "ms",
                duration.op = "override",
            )
        });
    }

    /// Runs one poll, `poll`, inside the spans, and reports its readiness.
    #[inline]
    pub(super) fn poll(&self, poll: impl FnOnce() -> Poll<()>) -> Poll<()> {
        #[cfg(feature = "console")]
        if !self.resource.is_disabled() {
            let _resource = self.resource.enter();
            let _async_op = self.async_op.enter();
            let _async_op_poll = self.async_op_poll.enter();
            let polled = poll();
            tracing::trace!(
                target: "runtime::resource::poll_op",
                op_name = "poll_elapsed",
                is_ready = polled.is_ready(),
            );
            return polled;
        }
        poll()
    }
}
