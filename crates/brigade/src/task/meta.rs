//! A task's header ([`TaskMeta`]): the per-task state the scheduler needs,
//! stored as `async-task` metadata beside the future and the schedule
//! function; and the `Runnable` every scheduler queue holds.

use std::panic::Location;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering as StdOrdering};

use super::cancel::CancelState;
use super::class::ClassState;
use super::span::{Origin, TaskSpan};
use super::task_host::TaskHost;
use super::{ElasticState, YieldState};

/// The `Runnable` type every scheduler queue holds.
pub(crate) type Runnable = async_task::Runnable<TaskMeta>;

/// A payload captured from a panicking task.
pub(crate) type Panic = Box<dyn std::any::Any + Send + 'static>;

/// Scheduler state stored in each task's header (`async-task` metadata).
///
/// The header lives in the task allocation, next to the future and the
/// schedule closure. `async-task` drops the future first and frees the
/// allocation (dropping header and closure) only once the `Runnable`, the
/// `JoinHandle` and every waker are gone.
pub(crate) struct TaskMeta {
    /// Unique, never reused id.
    id: u64,
    /// The runtime this task belongs to, as the task layer sees it: the
    /// task's one reference to it. The schedule function of a spawned task
    /// (`task_host::schedule`) captures nothing and reaches the runtime through
    /// this field, so a spawn costs one reference count, not two (one here
    /// and one in a capturing closure: an atomic increment at every spawn,
    /// and a decrement at every task's end, on a cache line every worker
    /// shares; docs/decisions.md#schedule-function has the figures).
    /// Dropped with the header, when the task allocation is freed.
    host: Arc<dyn TaskHost>,
    /// Slot in the runtime's [`registry`], or `None` (blocking tasks and
    /// tasks spawned after shutdown).
    registry_key: Option<usize>,
    /// Set by `JoinHandle::abort`, which then wakes the task; a worker that
    /// pops a cancelled task drops it instead of polling it. An abort of a
    /// registered task also makes running `yield_if_busy()` loops check it
    /// (see `cancel.rs`).
    ///
    /// The race: a worker checks the flag, then `Runnable::run` moves the
    /// task from scheduled to running. An abort that lands between the two
    /// finds the task still scheduled, so its wake-up does nothing, and the
    /// poll would leave a cancelled task pending with nobody to wake it. So
    /// the harness checks the flag again at the start of every poll, and a
    /// cancelled task wakes itself and returns `Pending` instead of polling
    /// the future. The abort's CAS (Release) comes before its wake-up's
    /// read-modify-write of the task state (`async-task` publishes even a
    /// no-op wake with an `AcqRel` CAS), and `run`'s transition to running
    /// (Acquire) follows that in the state's modification order, so the
    /// harness's Acquire load sees the flag. An abort after the transition
    /// wakes a running task, which `async-task` reschedules after the poll.
    cancel: CancelState,
    /// Its stepping-aside state (`yield_queue/`).
    yield_state: YieldState,
    /// Where the task was spawned, for the long-poll warning.
    location: &'static Location<'static>,
    /// The name given with `task::Builder::name`, for the task's events.
    name: Option<Box<str>>,
    /// Its tokio-console span (`span.rs`; nothing without the feature).
    span: TaskSpan,
    /// How the scheduler treats the task, and the state its class needs
    /// (`class.rs`).
    class_state: ClassState,
    /// When the task became runnable, in runtime-clock nanoseconds, if this
    /// schedule was sampled for the scheduling-latency histogram; else 0.
    /// Written before the task is pushed to a queue, read after it is popped.
    scheduled_at: AtomicU64,
    /// Under loom: stands in for `async-task`'s task state word (see
    /// [`mirror_task_state`](Self::mirror_task_state)).
    #[cfg(loom)]
    state_mirror: crate::sync::AtomicUsize,
}

/// Hands out task ids. A statistics-style counter: no protocol reads it, so
/// it uses `std` directly.
static NEXT_TASK_ID: AtomicU64 = AtomicU64::new(1);

impl TaskMeta {
    /// A header for a task whose schedule closure owns (a clone of) `host`.
    pub(crate) fn new(
        host: &Arc<impl TaskHost + 'static>,
        registry_key: Option<usize>,
        id: u64,
        origin: Origin<'_>,
        class_state: ClassState,
    ) -> Self {
        TaskMeta {
            id,
            host: host.clone(),
            registry_key,
            cancel: CancelState::new(),
            yield_state: YieldState::new(),
            location: origin.location,
            name: origin.name.map(Box::from),
            span: TaskSpan::new(id, &origin),
            class_state,
            scheduled_at: AtomicU64::new(0),
            #[cfg(loom)]
            state_mirror: crate::sync::AtomicUsize::new(0),
        }
    }

    /// A header for a task made by a unit test, on `host`'s runtime, which
    /// must outlive the task.
    #[cfg(all(test, not(loom)))]
    #[track_caller]
    pub(crate) fn for_tests(host: &Arc<impl TaskHost + 'static>) -> Self {
        TaskMeta::new(
            host,
            None,
            TaskMeta::next_id(),
            Origin::task(Location::caller()),
            ClassState::Foreground,
        )
    }

    /// Under loom, mirrors `async-task`'s synchronisation on this task's
    /// state word; nothing otherwise.
    ///
    /// `async-task` hands wakers and tasks between threads through its own
    /// `std` atomics (an `AcqRel` read-modify-write of the task's state at
    /// every wake and poll), which loom cannot see: a model would take a
    /// thread that wakes a task for one that never synchronised with the
    /// thread that polled it, during which poll the waker was handed out.
    /// One loom read-modify-write on this per-task word at the start of each
    /// poll (the harness) and of each schedule (the wake) gives loom the
    /// same edges, task by task, and no others: a wake's read-modify-write
    /// reads the one at the start of the poll that handed out the waker, or
    /// a later one.
    #[inline(always)]
    pub(crate) fn mirror_task_state(&self) {
        #[cfg(loom)]
        self.state_mirror
            .fetch_add(1, crate::sync::Ordering::AcqRel);
    }

    pub(crate) fn location(&self) -> &'static Location<'static> {
        self.location
    }

    /// The name given with `task::Builder::name`.
    pub(crate) fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// Its tokio-console span.
    pub(crate) fn span(&self) -> &TaskSpan {
        &self.span
    }

    /// How the scheduler treats the task.
    #[inline]
    pub(crate) fn class_state(&self) -> &ClassState {
        &self.class_state
    }

    /// The elastic admission state, for an elastic task.
    #[inline]
    pub(crate) fn elastic(&self) -> Option<&ElasticState> {
        self.class_state.elastic()
    }

    /// Marks this schedule as sampled at `now` (runtime-clock ns).
    pub(crate) fn set_scheduled_at(&self, now: u64) {
        self.scheduled_at.store(now.max(1), StdOrdering::Relaxed);
    }

    /// Takes the sampled schedule time, if any.
    pub(crate) fn take_scheduled_at(&self) -> Option<u64> {
        let at = self.scheduled_at.load(StdOrdering::Relaxed);
        if at == 0 {
            return None;
        }
        self.scheduled_at.store(0, StdOrdering::Relaxed);
        Some(at)
    }

    pub(crate) fn next_id() -> u64 {
        NEXT_TASK_ID.fetch_add(1, StdOrdering::Relaxed)
    }

    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// The runtime this task belongs to.
    pub(crate) fn host(&self) -> &dyn TaskHost {
        &*self.host
    }

    /// The runtime this task belongs to, as a pointer that outlives a borrow
    /// of the header (for `task_host::schedule`, which hands the header's task
    /// to it).
    pub(super) fn host_ptr(&self) -> std::ptr::NonNull<dyn TaskHost> {
        std::ptr::NonNull::from(&*self.host)
    }

    pub(crate) fn registry_key(&self) -> Option<usize> {
        self.registry_key
    }

    /// The runtime an abort takes an attention hold on: registered tasks
    /// only (blocking tasks and tasks cancelled at spawn run no
    /// `yield_if_busy()` loop a hold could reach).
    fn attention(&self) -> Option<&dyn TaskHost> {
        self.registry_key.map(|_| self.host())
    }

    /// Cancels the task (`JoinHandle::abort`); the caller wakes it.
    pub(crate) fn cancel(&self) {
        self.cancel.cancel(self.attention());
    }

    pub(crate) fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Whether the task's future has been dropped (it finished or was
    /// cancelled).
    pub(crate) fn future_is_dropped(&self) -> bool {
        self.cancel.is_dropped()
    }

    /// The task's future has been dropped (its harness, once).
    pub(crate) fn future_dropped(&self) {
        self.cancel.future_dropped(self.attention());
    }

    /// Its stepping-aside state: its yield-queue entry and the sentinel.
    #[inline]
    pub(crate) fn yield_state(&self) -> &YieldState {
        &self.yield_state
    }
}
