//! Task classes: how the scheduler treats a task.
//!
//! Every task has one [`ClassState`], fixed at spawn from its [`TaskClass`]:
//! - **foreground** ([`TaskClass::Foreground`]): a woken task goes to the
//!   back of its worker's deque and runs in FIFO order;
//! - **background** ([`TaskClass::Background`]): a task that wakes itself
//!   (`yield_now()`, or any await that wakes its own waker) steps aside for
//!   waiting work into the yield queue, as `yield_if_busy()` does, instead
//!   of queueing in front of tasks woken after it;
//! - **auto** ([`TaskClass::Auto`], the default): foreground until it has
//!   woken only itself [`DEMOTE_AFTER`] times in a row, then background
//!   (*demoted*) until a wake from anything else (I/O, a timer, another
//!   task) *promotes* it back;
//! - **elastic** ([`TaskClass::Elastic`], `spawn_elastic`): its CPU use is
//!   throttled by elastic admission (`admission/`), whose per-task state
//!   ([`ElasticState`]) lives here.
//!
//! ## Waitiness: why the wake source
//! A task that mostly waits on external events is latency-sensitive; one
//! that is always runnable is throughput work. The cheapest reliable signal
//! of the difference is who wakes the task: the schedule hook is told
//! whether the task was woken while it was running (`async-task`'s
//! `woken_while_running`: a self-wake, or, rarely, a wake from another
//! thread that lands during the poll), and every other wake comes from an
//! event the task was waiting for. Counting self-wakes in a row costs one
//! relaxed load (and a store while the count moves) per schedule, in a
//! header the schedule hook touches anyway; a clock read per poll, which
//! runtime-against-wait ratios or poll durations would need, would not be
//! free. Long polls without any wake (a task that never yields) are not this
//! classifier's business: the long-poll detector, compensation and elastic
//! admission handle those.
//!
//! ## Ordering
//! A task's schedules are totally ordered by happens-before: `async-task`
//! schedules a task at most once per transition to *scheduled*, that
//! transition is an `AcqRel` read-modify-write of the task's state, and the
//! queue hand-off orders a schedule before the poll it leads to. So the
//! self-wake count, written only by the schedule hook, needs no more than
//! `Relaxed` loads and stores.

// Not from `crate::sync`: the count takes part in no park/wake or hand-off
// protocol (see "Ordering" above), so loom has nothing to check in it.
use std::sync::atomic::{AtomicU32, Ordering};

use super::ElasticState;

/// How the scheduler treats a task, chosen at spawn with
/// [`task::Builder::class`](crate::task::Builder::class).
///
/// # Examples
///
/// ```
/// use brigade::task::{Builder, TaskClass};
///
/// let rt = brigade::Runtime::new()?;
/// let compaction = rt.block_on(async {
///     Builder::new()
///         .class(TaskClass::Background)
///         .spawn(async {
///             for _segment in 0..100 {
///                 brigade::yield_now().await; // steps aside only for waiting work
///             }
///         })
///         .await
/// });
/// assert!(compaction.is_ok());
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TaskClass {
    /// Classified by how the task behaves (the default for
    /// [`spawn`](crate::spawn)): foreground while it waits on I/O, timers
    /// or other tasks, *demoted* to background once it has only woken
    /// itself several times in a row (a loop around `yield_now()`), and
    /// promoted back by its next wake from anything else. Turned off for a
    /// whole runtime by [`Builder::demote_background`](crate::Builder::demote_background),
    /// which makes it [`Foreground`](Self::Foreground).
    #[default]
    Auto,
    /// Never demoted: every wake, a self-wake included, puts the task at
    /// the back of its worker's queue, in FIFO order with everything else.
    Foreground,
    /// Always background: when the task wakes itself while other work waits
    /// for a worker, it steps aside into the yield queue and runs again
    /// when a worker runs out of other work, as after
    /// [`yield_if_busy`](crate::yield_if_busy). Wakes from anything else
    /// schedule it as usual.
    Background,
    /// Elastic: background work whose CPU use elastic admission throttles.
    /// [`spawn_elastic`](crate::spawn_elastic) spawns with this class.
    Elastic,
}

/// A2 of the policy (`policy.rs`): self-wakes in a row that demote.
pub(crate) use crate::policy::DEMOTE_AFTER;

/// A task's class and the state that class needs (in `TaskMeta`).
pub(crate) enum ClassState {
    /// [`TaskClass::Auto`]: classified by its wakes.
    Auto(Waitiness),
    /// [`TaskClass::Foreground`].
    Foreground,
    /// [`TaskClass::Background`].
    Background,
    /// [`TaskClass::Elastic`].
    Elastic(ElasticState),
}

/// What a wake means for the task being scheduled, from
/// [`ClassState::classify_wake`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WakeClass {
    /// Schedule it as usual.
    Foreground,
    /// A self-wake of a background task: it steps aside if work waits.
    Background,
    /// As `Background`, and this wake demoted the task.
    Demoted,
    /// As `Foreground`, and this wake promoted the task.
    Promoted,
}

impl ClassState {
    /// The class state of a task spawned as `class`; `demote` is the runtime's
    /// [`Builder::demote_background`](crate::Builder::demote_background).
    pub(crate) fn new(class: TaskClass, demote: bool) -> Self {
        match class {
            TaskClass::Auto if demote => ClassState::Auto(Waitiness::new()),
            TaskClass::Auto | TaskClass::Foreground => ClassState::Foreground,
            TaskClass::Background => ClassState::Background,
            TaskClass::Elastic => ClassState::Elastic(ElasticState::new()),
        }
    }

    /// The elastic state, for an elastic task.
    #[inline]
    pub(crate) fn elastic(&self) -> Option<&ElasticState> {
        match self {
            ClassState::Elastic(state) => Some(state),
            _ => None,
        }
    }

    /// Whether a wake of the task by another task may put it in its
    /// worker's run-next slot (`runtime/scheduler/run_next_slot.rs`): foreground work
    /// only. A background or elastic task takes its turn at the back of
    /// the deque, behind the work already queued there.
    #[inline]
    pub(crate) fn may_run_next(&self) -> bool {
        matches!(self, ClassState::Auto(_) | ClassState::Foreground)
    }

    /// Classifies one wake of the task; `self_wake`: it was woken while it
    /// ran. Called by the schedule hook only (see the module docs).
    #[inline]
    pub(crate) fn classify_wake(&self, self_wake: bool) -> WakeClass {
        match self {
            ClassState::Auto(waitiness) => waitiness.on_wake(self_wake),
            ClassState::Background if self_wake => WakeClass::Background,
            ClassState::Foreground | ClassState::Background | ClassState::Elastic(_) => {
                WakeClass::Foreground
            }
        }
    }
}

/// The self-wake count of an [`TaskClass::Auto`] task: how many wakes in a
/// row were self-wakes, saturating at [`DEMOTE_AFTER`] (demoted).
pub(crate) struct Waitiness {
    self_wakes: AtomicU32,
}

impl Waitiness {
    fn new() -> Self {
        Waitiness {
            self_wakes: AtomicU32::new(0),
        }
    }

    #[inline]
    fn on_wake(&self, self_wake: bool) -> WakeClass {
        let run = self.self_wakes.load(Ordering::Relaxed);
        match (self_wake, run) {
            (true, DEMOTE_AFTER) => WakeClass::Background,
            (true, _) => {
                self.self_wakes.store(run + 1, Ordering::Relaxed);
                if run + 1 == DEMOTE_AFTER {
                    WakeClass::Demoted
                } else {
                    WakeClass::Foreground
                }
            }
            (false, 0) => WakeClass::Foreground,
            (false, _) => {
                self.self_wakes.store(0, Ordering::Relaxed);
                if run == DEMOTE_AFTER {
                    WakeClass::Promoted
                } else {
                    WakeClass::Foreground
                }
            }
        }
    }
}

/// Reports a change of class (`brigade::class` at debug level).
#[cold]
pub(crate) fn report_change(class: WakeClass, task: &super::TaskMeta) {
    let (id, name, spawned_at) = (task.id(), task.name(), task.location());
    match class {
        WakeClass::Demoted => tracing::debug!(
            target: "brigade::class",
            task = id,
            task.name = name,
            spawned_at = %spawned_at,
            "task demoted to background: it has only woken itself {DEMOTE_AFTER} times in a row"
        ),
        WakeClass::Promoted => tracing::debug!(
            target: "brigade::class",
            task = id,
            task.name = name,
            spawned_at = %spawned_at,
            "task promoted to foreground: woken by an event it waited for"
        ),
        WakeClass::Foreground | WakeClass::Background => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_auto_task_is_demoted_after_a_run_of_self_wakes_and_promoted_by_any_other_wake() {
        let class_state = ClassState::new(TaskClass::Auto, true);
        for _ in 1..DEMOTE_AFTER {
            assert_eq!(class_state.classify_wake(true), WakeClass::Foreground);
        }
        assert_eq!(class_state.classify_wake(true), WakeClass::Demoted);
        for _ in 0..10 {
            assert_eq!(class_state.classify_wake(true), WakeClass::Background);
        }
        assert_eq!(class_state.classify_wake(false), WakeClass::Promoted);
        assert_eq!(class_state.classify_wake(false), WakeClass::Foreground);
        assert_eq!(class_state.classify_wake(true), WakeClass::Foreground);
    }

    #[test]
    fn an_external_wake_restarts_the_count() {
        let class_state = ClassState::new(TaskClass::Auto, true);
        for _ in 0..10 {
            for _ in 1..DEMOTE_AFTER {
                assert_eq!(class_state.classify_wake(true), WakeClass::Foreground);
            }
            assert_eq!(class_state.classify_wake(false), WakeClass::Foreground);
        }
    }

    #[test]
    fn fixed_classes_never_change() {
        let foreground = ClassState::new(TaskClass::Foreground, true);
        let background = ClassState::new(TaskClass::Background, true);
        let elastic = ClassState::new(TaskClass::Elastic, true);
        let auto_off = ClassState::new(TaskClass::Auto, false);
        for _ in 0..2 * DEMOTE_AFTER {
            assert_eq!(foreground.classify_wake(true), WakeClass::Foreground);
            assert_eq!(auto_off.classify_wake(true), WakeClass::Foreground);
            assert_eq!(elastic.classify_wake(true), WakeClass::Foreground);
            assert_eq!(background.classify_wake(true), WakeClass::Background);
            assert_eq!(background.classify_wake(false), WakeClass::Foreground);
        }
        assert!(elastic.elastic().is_some() && foreground.elastic().is_none());
    }
}
