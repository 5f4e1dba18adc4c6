//! A task's tracing span, in the form tokio-console reads (feature
//! `console`): where a task came from ([`Origin`]), the `runtime.spawn` span
//! each poll enters, and the waker events that let the console count a
//! task's wakes and live wakers.
//!
//! `console-subscriber` recognises tokio's callsites by name and target,
//! not by crate: a span named `runtime.spawn` is a task (its fields
//! `kind`, `task.name`, `task.id`, `loc.file`, `loc.line`, `loc.col`), each
//! enter and exit of it is a poll, and an event with target
//! `tokio::task::waker` whose `op` is `waker.clone`, `waker.drop`,
//! `waker.wake` or `waker.wake_by_ref` and whose `task.id` is the span's id
//! is a waker operation. brigade emits the same, so the console shows
//! brigade's tasks as it shows tokio's.
//!
//! Without the feature, [`TaskSpan`] holds nothing and its poll is a plain
//! call.

use std::panic::Location;
use std::task::Waker;

/// Where and how a task was spawned: what its span and its events name it
/// by.
#[derive(Clone, Copy)]
pub(crate) struct Origin<'a> {
    /// The caller of the spawn function.
    pub(crate) location: &'static Location<'static>,
    /// The name given with `task::Builder::name`.
    pub(crate) name: Option<&'a str>,
    /// tokio's kind: `task`, `local` or `blocking` (the span's `kind`).
    #[cfg_attr(not(feature = "console"), allow(dead_code))]
    pub(crate) kind: &'static str,
}

impl Origin<'static> {
    /// A task spawned at `location` with no name.
    pub(crate) fn task(location: &'static Location<'static>) -> Self {
        Origin {
            location,
            name: None,
            kind: "task",
        }
    }

    /// A `spawn_local` task.
    pub(crate) fn local(location: &'static Location<'static>) -> Self {
        Origin {
            kind: "local",
            ..Origin::task(location)
        }
    }

    /// A blocking-pool task.
    pub(crate) fn blocking(location: &'static Location<'static>) -> Self {
        Origin {
            kind: "blocking",
            ..Origin::task(location)
        }
    }
}

impl<'a> Origin<'a> {
    /// The same origin with `name`.
    pub(crate) fn named(self, name: Option<&'a str>) -> Self {
        Origin { name, ..self }
    }
}

/// The task's span (feature `console`), or nothing.
pub(crate) struct TaskSpan {
    #[cfg(feature = "console")]
    span: tracing::Span,
}

impl TaskSpan {
    /// The span of task `id`, spawned from `origin`. It has no parent: a
    /// task outlives whatever span its spawner was in.
    #[cfg_attr(not(feature = "console"), allow(unused_variables))]
    pub(crate) fn new(id: u64, origin: &Origin<'_>) -> Self {
        #[cfg(feature = "console")]
        {
            let location = origin.location;
            let span = tracing::trace_span!(
                target: "tokio::task",
                parent: None,
                "runtime.spawn",
                kind = %origin.kind,
                task.name = %origin.name.unwrap_or_default(),
                task.id = id,
                loc.file = location.file(),
                loc.line = location.line(),
                loc.col = location.column(),
            );
            TaskSpan { span }
        }
        #[cfg(not(feature = "console"))]
        TaskSpan {}
    }

    /// Runs one poll, `f`, inside the span, with a waker that reports its
    /// clones, drops and wakes as the span's (`span_waker.rs`); `f` gets
    /// the waker to poll with. A plain call when no subscriber takes the
    /// span.
    #[inline]
    pub(crate) fn poll<R>(&self, waker: &Waker, f: impl FnOnce(&Waker) -> R) -> R {
        #[cfg(feature = "console")]
        if let Some(id) = self.span.id() {
            let _entered = self.span.enter();
            return super::span_waker::poll_with(id.into_u64(), waker, f);
        }
        f(waker)
    }
}
