//! `!Send` tasks: [`LocalSet`] and [`spawn_local`], with tokio's API.
//!
//! A local task is an ordinary brigade task (a `TaskMeta` header, the
//! panic-catching `Harness`, a [`JoinHandle`]) built with `async-task`'s
//! thread-local spawn, whose schedule hook queues it on its set instead of
//! on a runtime. The set's tasks run on the thread that drives the set
//! (`run_until`, `block_on`, or awaiting the set), between polls of the
//! driving future, never on a worker.
//!
//! ## Protocol
//! [`LocalShared`] is what the set shares with its tasks' wakers, which may
//! run on any thread (a timer fired by a worker, a channel sent to from
//! another task):
//! - A wake-up (the schedule hook) pushes the task under the queue's lock
//!   and then wakes the driver's waker, taken under the same lock.
//! - The driver stores its waker under the lock *before* it takes the
//!   queued tasks, so a push that comes after its look finds the new waker
//!   and wakes it: no wake-up is lost between the look and `Pending`.
//! - Only the set's own thread takes tasks out and runs or drops them
//!   (`async-task` panics otherwise), so every local future is dropped on
//!   the thread that spawned it. Dropping the set closes its registry,
//!   wakes every live task and drops each, on that thread, until none is
//!   left; only then does the queue close. After that, a wake-up can only
//!   reach a task whose future is gone, and drops it where it is.
//!
//! `yield_if_busy()` in a local task completes at once, as it does in
//! `block_on`: the driving thread is not a worker, so no other task waits
//! for it. Local tasks take turns at their awaits; `yield_now()` lets the
//! set's other tasks run, and so does a spent cooperative budget
//! (`task/coop.rs`) while they wait.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::panic::Location;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use super::class::ClassState;
use super::harness::Harness;
use super::registry::Registry;
use super::task_host::TaskHost;
use super::{JoinHandle, Origin, Runnable, TaskMeta};
use crate::policy::LOCAL_SET_TASKS_PER_TURN;
use crate::runtime::Runtime;
use crate::sync::{Mutex, lock};

/// A set of `!Send` tasks that run on the thread that drives the set: the
/// home of [`spawn_local`] (tokio's `LocalSet`, same API).
///
/// Spawn onto it with [`spawn_local`](Self::spawn_local) (anywhere on its
/// thread, before or while it runs) or, from inside its tasks or the
/// future given to [`run_until`](Self::run_until), with
/// [`brigade::task::spawn_local`](spawn_local). Its tasks run while the set
/// is driven: inside [`run_until`](Self::run_until) or
/// [`block_on`](Self::block_on), or by awaiting the set itself, which
/// completes once every task has. Dropping the set drops its unfinished
/// tasks (their [`JoinHandle`]s resolve as cancelled).
///
/// Local tasks are polled on the driving thread (usually inside
/// `Runtime::block_on`), so brigade's timers, sockets and `spawn` work in
/// them, but they never run on a worker: `yield_if_busy()` completes at once
/// in them, and they take turns only at their awaits.
///
/// # Examples
///
/// ```
/// use std::rc::Rc;
/// use brigade::task::{self, LocalSet};
///
/// let rt = brigade::runtime::Builder::new_current_thread().build()?;
/// let local = LocalSet::new();
/// let shared = Rc::new(41); // not `Send`
/// let answer = local.block_on(&rt, async move {
///     let shared = shared.clone();
///     task::spawn_local(async move { *shared + 1 }).await.unwrap()
/// });
/// assert_eq!(answer, 42);
/// # Ok::<(), brigade::BuildError>(())
/// ```
pub struct LocalSet {
    shared: Arc<LocalShared>,
    /// `!Send` and `!Sync`: its tasks must stay on this thread.
    _not_send: PhantomData<*const ()>,
}

/// What a set shares with its tasks' schedule hooks (see the module's
/// protocol).
struct LocalShared {
    queue: Mutex<Queue>,
    /// The set's live tasks, for abort and for dropping them all.
    registry: Registry,
}

#[derive(Default)]
struct Queue {
    runnables: VecDeque<Runnable>,
    /// Woken when a task is queued: whoever drives the set.
    driver: Option<Waker>,
    /// Set once the dropped set has dropped every task.
    closed: bool,
}

std::thread_local! {
    /// The set being driven on this thread, for `task::spawn_local`.
    static CURRENT: RefCell<Option<Arc<LocalShared>>> = const { RefCell::new(None) };
}

impl LocalShared {
    /// The schedule hook of the set's tasks: queue, then wake the driver.
    fn schedule(&self, runnable: Runnable) {
        let mut queue = lock(&self.queue);
        if queue.closed {
            // Only a task whose future is gone gets here (see the protocol).
            drop(queue);
            drop(runnable);
            return;
        }
        queue.runnables.push_back(runnable);
        let driver = queue.driver.clone();
        drop(queue);
        if let Some(driver) = driver {
            driver.wake();
        }
    }

    /// Registers `waker` as the driver's, then takes up to `limit` queued
    /// tasks.
    fn take(&self, waker: Option<&Waker>, limit: usize) -> Vec<Runnable> {
        let mut queue = lock(&self.queue);
        if let Some(waker) = waker
            && !queue
                .driver
                .as_ref()
                .is_some_and(|old| old.will_wake(waker))
        {
            queue.driver = Some(waker.clone());
        }
        let count = queue.runnables.len().min(limit);
        queue.runnables.drain(..count).collect()
    }

    fn has_queued(&self) -> bool {
        !lock(&self.queue).runnables.is_empty()
    }

    /// One turn: runs the tasks queued now (up to [`LOCAL_SET_TASKS_PER_TURN`]), with
    /// `waker` registered as the driver's. Returns whether tasks are still
    /// queued.
    fn run_turn(&self, waker: &Waker) -> bool {
        for runnable in self.take(Some(waker), LOCAL_SET_TASKS_PER_TURN) {
            // A cancelled task is dropped unrun (its future with it). `run`
            // cannot unwind: the harness catches panics.
            if runnable.metadata().is_cancelled() {
                drop(runnable);
            } else {
                // Its poll gets a budget of its own (the harness), which
                // yields when it is spent and the set's other tasks wait.
                super::coop::with_local_set(current_set_has_queued, || runnable.run());
            }
        }
        self.has_queued()
    }
}

/// Whether the set being driven on this thread has tasks queued (for the
/// cooperative budget of the task it runs: `task/coop.rs`).
fn current_set_has_queued() -> bool {
    CURRENT.with(|current| {
        current
            .borrow()
            .as_ref()
            .is_some_and(|set| set.has_queued())
    })
}

impl TaskHost for LocalShared {
    /// A local task may be woken from any thread, and no thread is known
    /// to hold the set for the whole call: every call keeps the task alive.
    fn schedule_if_held(
        &self,
        runnable: Runnable,
        _: async_task::ScheduleInfo,
    ) -> Result<(), Runnable> {
        Err(runnable)
    }

    fn schedule(&self, runnable: Runnable, _: async_task::ScheduleInfo) {
        LocalShared::schedule(self, runnable);
    }

    fn registry(&self) -> &Registry {
        &self.registry
    }

    // No worker runs a local task, so an abort needs no attention hold to
    // reach a `yield_if_busy()` loop, and no yield queue holds one.
    fn hold_attention(&self) {}

    fn release_attention(&self) {}

    fn evict_aborted(&self) {}
}

impl LocalSet {
    /// An empty set.
    pub fn new() -> LocalSet {
        LocalSet {
            shared: Arc::new(LocalShared {
                queue: Mutex::new(Queue::default()),
                registry: Registry::new(1),
            }),
            _not_send: PhantomData,
        }
    }

    /// Spawns a `!Send` task on this set. It runs while the set is driven
    /// (see the type's docs); dropping the handle detaches it.
    #[track_caller]
    pub fn spawn_local<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + 'static,
        F::Output: 'static,
    {
        spawn_on(&self.shared, future, Location::caller())
    }

    /// Runs `future` on this thread, and the set's tasks between its polls,
    /// until `future` completes; tasks still unfinished then stay in the set.
    /// Inside it, [`spawn_local`] spawns onto this set.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::cell::Cell;
    /// use std::rc::Rc;
    /// use brigade::task::{self, LocalSet};
    ///
    /// let rt = brigade::Runtime::new()?;
    /// let local = LocalSet::new();
    /// let hits = Rc::new(Cell::new(0));
    /// rt.block_on(local.run_until(async {
    ///     let tasks: Vec<_> = (0..3)
    ///         .map(|_| {
    ///             let hits = hits.clone();
    ///             task::spawn_local(async move { hits.set(hits.get() + 1) })
    ///         })
    ///         .collect();
    ///     for task in tasks {
    ///         task.await.unwrap();
    ///     }
    /// }));
    /// assert_eq!(hits.get(), 3);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn run_until<F: Future>(&self, future: F) -> RunUntil<'_, F> {
        RunUntil { set: self, future }
    }

    /// Runs `future` with [`run_until`](Self::run_until) inside
    /// [`Runtime::block_on`](crate::Runtime::block_on) on `rt`.
    ///
    /// # Panics
    /// Where `rt.block_on` does: on a worker thread or inside another
    /// `block_on`.
    #[track_caller]
    pub fn block_on<F: Future>(&self, rt: &Runtime, future: F) -> F::Output {
        rt.block_on(self.run_until(future))
    }

    /// Runs `f` with this set current on this thread (for `spawn_local`).
    fn with_current<R>(&self, f: impl FnOnce() -> R) -> R {
        struct Restore(Option<Arc<LocalShared>>);
        impl Drop for Restore {
            fn drop(&mut self) {
                let previous = self.0.take();
                let _ = CURRENT.try_with(|current| *current.borrow_mut() = previous);
            }
        }
        let previous = CURRENT.with(|current| current.replace(Some(self.shared.clone())));
        let _restore = Restore(previous);
        f()
    }
}

impl Default for LocalSet {
    fn default() -> Self {
        LocalSet::new()
    }
}

impl fmt::Debug for LocalSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalSet")
            .field("tasks", &self.shared.registry.len())
            .finish()
    }
}

/// Awaiting a set runs its tasks until every one has finished (tasks
/// spawned meanwhile included).
impl Future for LocalSet {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let set = &*self;
        set.with_current(|| {
            let more = set.shared.run_turn(cx.waker());
            if set.shared.registry.len() == 0 {
                return Poll::Ready(());
            }
            if more {
                cx.waker().wake_by_ref();
            }
            Poll::Pending
        })
    }
}

impl Drop for LocalSet {
    /// Drops every unfinished task's future, on this thread (see the
    /// module's protocol).
    fn drop(&mut self) {
        self.with_current(|| {
            self.shared.registry.close_and_wake_all();
            loop {
                // Destructors may wake other tasks of the set: next round.
                let batch = self.shared.take(None, usize::MAX);
                if batch.is_empty() {
                    break;
                }
                drop(batch);
            }
        });
        let left = {
            let mut queue = lock(&self.shared.queue);
            queue.closed = true;
            queue.driver = None;
            std::mem::take(&mut queue.runnables)
        };
        drop(left);
    }
}

pin_project_lite::pin_project! {
    /// The future returned by [`LocalSet::run_until`].
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct RunUntil<'a, F> {
        set: &'a LocalSet,
        #[pin]
        future: F,
    }
}

impl<F: Future> Future for RunUntil<'_, F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let set = *this.set;
        let mut future = this.future;
        set.with_current(|| {
            if let Poll::Ready(output) = future.as_mut().poll(cx) {
                return Poll::Ready(output);
            }
            if set.shared.run_turn(cx.waker()) {
                // More than one turn's worth: come back at once, after
                // giving the future its poll.
                cx.waker().wake_by_ref();
            }
            Poll::Pending
        })
    }
}

impl<F> fmt::Debug for RunUntil<'_, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunUntil").finish_non_exhaustive()
    }
}

/// Spawns a `!Send` task on the [`LocalSet`] being driven on this thread.
///
/// # Panics
/// Outside a `LocalSet`: anywhere but inside its
/// [`run_until`](LocalSet::run_until) or [`block_on`](LocalSet::block_on),
/// one of its tasks, or an awaited set. Use [`LocalSet::spawn_local`] to
/// spawn onto a set from elsewhere on its thread.
///
/// # Examples
///
/// ```
/// use std::rc::Rc;
/// use brigade::task::{self, LocalSet};
///
/// let rt = brigade::Runtime::new()?;
/// let local = LocalSet::new();
/// let name = Rc::new(String::from("local"));
/// local.spawn_local(async move {
///     let name = name.clone();
///     task::spawn_local(async move { assert_eq!(*name, "local") });
/// });
/// // Awaiting the set runs it until both tasks are done.
/// rt.block_on(local);
/// # Ok::<(), std::io::Error>(())
/// ```
#[track_caller]
pub fn spawn_local<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + 'static,
    F::Output: 'static,
{
    let location = Location::caller();
    match CURRENT.with(|current| current.borrow().clone()) {
        Some(shared) => spawn_on(&shared, future, location),
        None => panic!(
            "brigade::task::spawn_local called outside of a `LocalSet`: call it from inside \
             `LocalSet::run_until`, `LocalSet::block_on`, an awaited `LocalSet` or one of \
             its tasks, or call `LocalSet::spawn_local` on the set"
        ),
    }
}

/// Spawns `future` as a task of the set `shared`.
fn spawn_on<F>(
    shared: &Arc<LocalShared>,
    future: F,
    location: &'static Location<'static>,
) -> JoinHandle<F::Output>
where
    F: Future + 'static,
    F::Output: 'static,
{
    let id = TaskMeta::next_id();
    let (runnable, task) = shared.registry.register(id, |registry_key| {
        async_task::Builder::new()
            .metadata(TaskMeta::new(
                shared,
                registry_key,
                id,
                Origin::local(location),
                ClassState::Foreground,
            ))
            .spawn_local(
                move |meta| Harness::new(future, meta),
                async_task::WithInfo(super::task_host::schedule),
            )
    });
    if runnable.metadata().registry_key().is_some() {
        runnable.schedule();
    } else {
        // The set is being dropped: cancel at once.
        drop(runnable);
    }
    JoinHandle::new(task)
}
