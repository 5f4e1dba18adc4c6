//! [`JoinSet`]: a set of spawned tasks, joined in the order they finish.
//
// ## How completion order is found
// Each task in the set is an entry: its `JoinHandle` and a waker of its own
// (`EntryWaker`), the only waker that handle is ever polled with. Polling a
// handle that is not finished stores that waker as the task's awaiter, and
// `async-task` wakes the awaiter once, after the task has completed or been
// cancelled (its output, or the fact that it has none, is in place by then).
// The entry waker pushes the entry's key onto the set's ready list, so
// `join_next` polls only entries that were woken, in the order they were
// woken, rather than every handle on each call. A new entry starts on the
// ready list: its first poll registers its waker (or finds it finished).
// Each handle is thus polled about twice in all, whatever the set's size.
//
// ## Drop cancels
// `Drop` calls `JoinHandle::abort` on every handle still in the set, then
// drops the handles (which detaches them). An aborted task that waits is
// woken, and the worker that picks it up drops its future; a running one is
// dropped after its current poll (see `JoinHandle::abort`).

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::future::{Future, poll_fn};
use std::panic::{Location, resume_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use super::{AbortHandle, Id, JoinError, JoinHandle, Origin, TaskClass};
use crate::runtime::{Handle, context};
use crate::sync::{Mutex, lock};

/// A set of tasks spawned on a runtime, awaited in the order they finish.
///
/// Spawn tasks into it with [`spawn`](Self::spawn) (or
/// [`spawn_on`](Self::spawn_on), [`spawn_elastic`](Self::spawn_elastic),
/// [`spawn_blocking`](Self::spawn_blocking)), then take their results with
/// [`join_next`](Self::join_next): each call returns the result of a task
/// that has finished, in completion order, and `None` once the set is
/// empty. All tasks must have the same output type `T`.
///
/// Dropping the set aborts every task still in it, as
/// [`abort_all`](Self::abort_all) does; [`detach_all`](Self::detach_all)
/// lets them run on instead. The names and semantics are those of tokio's
/// `tokio::task::JoinSet`, except that the spawn methods return `()`
/// rather than an abort handle.
///
/// # Examples
///
/// ```
/// use brigade::task::JoinSet;
///
/// let rt = brigade::Runtime::new()?;
/// let total = rt.block_on(async {
///     let mut set = JoinSet::new();
///     for n in 1..=10u64 {
///         set.spawn(async move { n * n });
///     }
///     let mut total = 0;
///     while let Some(result) = set.join_next().await {
///         total += result.unwrap();
///     }
///     total
/// });
/// assert_eq!(total, 385);
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct JoinSet<T> {
    /// The tasks in the set. Keys are never reused within a set, so a stale
    /// key on the ready list is recognised by its absence here.
    tasks: HashMap<u64, Entry<T>>,
    /// The key of the next entry.
    next_key: u64,
    /// Keys of the entries worth polling, shared with every entry's waker.
    ready: Arc<Ready>,
}

/// One task of a [`JoinSet`].
struct Entry<T> {
    handle: JoinHandle<T>,
    /// Wakes the set for this entry (an [`EntryWaker`]); the only waker
    /// `handle` is polled with.
    waker: Waker,
}

/// The ready list of a [`JoinSet`]: keys of entries whose handle may have
/// finished, in the order they were woken, and the waker of the last
/// `join_next` that found none.
///
/// ## Protocol
/// - An entry's waker (on a worker, when its task completes or is
///   cancelled), and `spawn` for a new entry, push the key and take the
///   set's waker in one critical section, then wake that waker with the
///   lock released.
/// - `join_next` pops a key or, finding the list empty, stores its waker,
///   in one critical section.
///
/// The race this closes: a task that finishes between `join_next` finding
/// the list empty and `join_next` returning `Pending`. Both sides hold the
/// lock, so the push either comes first (the pop finds the key) or finds
/// the stored waker and wakes it. The lock also orders the task's
/// completion before the poll of its handle: `async-task` wakes the awaiter
/// only after it has marked the task finished.
///
/// A key is on the list at most once while its entry is in the set: it is
/// pushed when the entry is created and on each wake, and `async-task`
/// wakes an awaiter at most once per registration, which only the poll
/// that follows a pop makes. A handle detached by `detach_all` after it
/// registered may still wake, pushing a key that no entry has: `join_next`
/// skips it.
struct Ready {
    state: Mutex<ReadyState>,
}

struct ReadyState {
    keys: VecDeque<u64>,
    waker: Option<Waker>,
}

/// The waker each entry's handle is polled with.
struct EntryWaker {
    key: u64,
    ready: Arc<Ready>,
}

impl Wake for EntryWaker {
    fn wake(self: Arc<Self>) {
        self.ready.push(self.key);
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.ready.push(self.key);
    }
}

impl Ready {
    fn new() -> Self {
        Ready {
            state: Mutex::new(ReadyState {
                keys: VecDeque::new(),
                waker: None,
            }),
        }
    }

    /// Queues `key` and wakes the set's waker, if one is stored.
    fn push(&self, key: u64) {
        let waker = {
            let mut state = lock(&self.state);
            state.keys.push_back(key);
            state.waker.take()
        };
        // Woken with the lock released: the waker may run arbitrary code.
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// The next key, or `None` after storing `waker` for the next push.
    fn pop_or_register(&self, waker: &Waker) -> Option<u64> {
        let mut state = lock(&self.state);
        let key = state.keys.pop_front();
        if key.is_none() && !state.waker.as_ref().is_some_and(|w| w.will_wake(waker)) {
            state.waker = Some(waker.clone());
        }
        key
    }

    /// The next key, if any.
    fn pop(&self) -> Option<u64> {
        lock(&self.state).keys.pop_front()
    }

    /// Forgets every key and the stored waker: the set has been emptied
    /// or is being dropped. Detached tasks may still hold entry wakers
    /// (and so this list) until they finish; they should not also keep
    /// the set's owner, through its waker, alive.
    fn clear(&self) {
        let waker = {
            let mut state = lock(&self.state);
            state.keys.clear();
            state.waker.take()
        };
        // Dropped with the lock released, like a waker is woken in `push`.
        drop(waker);
    }
}

impl<T> JoinSet<T> {
    /// An empty set.
    pub fn new() -> Self {
        JoinSet {
            tasks: HashMap::new(),
            next_key: 0,
            ready: Arc::new(Ready::new()),
        }
    }

    /// The number of tasks in the set: spawned and not yet joined, finished
    /// or not.
    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    /// Whether the set has no tasks.
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    /// Aborts every task in the set (see [`JoinHandle::abort`]). The tasks
    /// stay in the set: [`join_next`](Self::join_next) returns a cancelled
    /// [`JoinError`] for each, or its output if it had already finished.
    pub fn abort_all(&mut self) {
        for entry in self.tasks.values() {
            entry.handle.abort();
        }
    }

    /// Removes every task from the set without aborting it: the tasks run
    /// on, as if their [`JoinHandle`]s had been dropped.
    pub fn detach_all(&mut self) {
        // Dropping a handle detaches its task.
        self.tasks.clear();
        self.ready.clear();
    }

    /// Polls for the next finished task: the building block of
    /// [`join_next`](Self::join_next), for hand-written futures.
    ///
    /// Returns `Ready(Some(result))` for a finished task (removing it from
    /// the set), `Ready(None)` if the set is empty, and `Pending` otherwise,
    /// after arranging for `cx`'s waker to be woken when a task finishes.
    /// Only the waker of the latest `Pending` call is woken.
    pub fn poll_join_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<T, JoinError>>> {
        self.poll_join_next_with_id(cx)
            .map(|joined| joined.map(without_id))
    }

    /// [`poll_join_next`](Self::poll_join_next), with the finished task's
    /// [`Id`] beside its output (a [`JoinError`] carries it already:
    /// [`JoinError::id`]).
    pub fn poll_join_next_with_id(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<(Id, T), JoinError>>> {
        // One unit of the task's cooperative budget per result, spent here
        // (`task/coop.rs`); each entry's own poll is unconstrained
        // (`poll_entry`).
        super::coop::budgeted(cx, |cx| self.poll_ready(cx))
    }

    /// [`poll_join_next_with_id`](Self::poll_join_next_with_id) without
    /// the budget.
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<(Id, T), JoinError>>> {
        // Ends: each key popped was pushed by a spawn or a wake, and a
        // handle wakes only after the poll here that registers it.
        loop {
            if self.tasks.is_empty() {
                return Poll::Ready(None);
            }
            let Some(key) = self.ready.pop_or_register(cx.waker()) else {
                return Poll::Pending;
            };
            if let Some(result) = self.poll_entry(key) {
                return Poll::Ready(Some(result));
            }
        }
    }

    /// Waits for a task of the set to finish and returns its result, or
    /// `None` if the set is empty. Tasks come out in the order they finish,
    /// not the order they were spawned.
    ///
    /// A task that panicked or was cancelled yields a [`JoinError`]
    /// (see [`JoinError::is_panic`] and [`JoinError::is_cancelled`]).
    ///
    /// # Cancel safety
    /// Cancel safe: a task leaves the set only when its result is returned,
    /// so dropping the future (as a losing `select!` branch) loses nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use brigade::task::JoinSet;
    ///
    /// let rt = brigade::Runtime::new()?;
    /// rt.block_on(async {
    ///     let mut set = JoinSet::new();
    ///     set.spawn(std::future::pending::<&str>()); // never finishes
    ///     set.spawn(async { "quick" });
    ///     // Completion order, not spawn order.
    ///     assert_eq!(set.join_next().await.unwrap().unwrap(), "quick");
    ///     assert_eq!(set.len(), 1);
    ///     // Dropping the set aborts the task still in it.
    /// });
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub async fn join_next(&mut self) -> Option<Result<T, JoinError>> {
        poll_fn(|cx| self.poll_join_next(cx)).await
    }

    /// [`join_next`](Self::join_next), with the finished task's [`Id`]
    /// beside its output, as tokio's: tells which task of the set an
    /// output belongs to (match it against [`AbortHandle::id`] or
    /// [`task::id`](super::id) inside the task). A [`JoinError`] carries
    /// the id already ([`JoinError::id`]).
    ///
    /// # Cancel safety
    /// Cancel safe, as [`join_next`](Self::join_next).
    ///
    /// # Examples
    ///
    /// ```
    /// use brigade::task::JoinSet;
    ///
    /// let rt = brigade::Runtime::new()?;
    /// rt.block_on(async {
    ///     let mut set = JoinSet::new();
    ///     let slow = set.spawn(std::future::pending::<u32>()).id();
    ///     let quick = set.spawn(async { 7 }).id();
    ///     assert_eq!(set.join_next_with_id().await.unwrap().unwrap(), (quick, 7));
    ///     set.abort_all();
    ///     let error = set.join_next_with_id().await.unwrap().unwrap_err();
    ///     assert!(error.is_cancelled());
    ///     assert_eq!(error.id(), slow);
    /// });
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub async fn join_next_with_id(&mut self) -> Option<Result<(Id, T), JoinError>> {
        poll_fn(|cx| self.poll_join_next_with_id(cx)).await
    }

    /// Returns the result of a task that has already finished, without
    /// waiting: `None` if no task in the set has finished (or it is empty).
    pub fn try_join_next(&mut self) -> Option<Result<T, JoinError>> {
        self.try_join_next_with_id().map(without_id)
    }

    /// [`try_join_next`](Self::try_join_next), with the finished task's
    /// [`Id`] beside its output.
    pub fn try_join_next_with_id(&mut self) -> Option<Result<(Id, T), JoinError>> {
        while let Some(key) = self.ready.pop() {
            if let Some(result) = self.poll_entry(key) {
                return Some(result);
            }
        }
        None
    }

    /// Aborts every task in the set and waits until they have all
    /// finished, dropping their results. The set is empty afterwards.
    ///
    /// A `spawn_blocking` closure that has already started cannot be
    /// aborted: this waits for it to return.
    pub async fn shutdown(&mut self) {
        self.abort_all();
        while self.join_next().await.is_some() {}
    }

    /// Waits for every task in the set and returns their outputs, in the
    /// order the tasks finished.
    ///
    /// # Panics
    /// If a task panicked, with that task's panic (`resume_unwind`); if a
    /// task was cancelled, with its [`JoinError`]. The set is dropped as the
    /// panic unwinds, which aborts the tasks still in it.
    pub async fn join_all(mut self) -> Vec<T> {
        let mut outputs = Vec::with_capacity(self.len());
        while let Some(result) = self.join_next().await {
            match result {
                Ok(output) => outputs.push(output),
                Err(error) if error.is_panic() => resume_unwind(error.into_panic()),
                Err(error) => panic!("{error}"),
            }
        }
        outputs
    }

    /// Adds a spawned task's handle; returns an [`AbortHandle`] for it.
    /// [`Builder::spawn_in`](super::Builder::spawn_in) spawns through it.
    pub(super) fn insert(&mut self, handle: JoinHandle<T>) -> AbortHandle {
        let abort = handle.abort_handle();
        let key = self.next_key;
        self.next_key += 1;
        let waker = Waker::from(Arc::new(EntryWaker {
            key,
            ready: self.ready.clone(),
        }));
        self.tasks.insert(key, Entry { handle, waker });
        // Its first poll registers its waker. The push also wakes a caller
        // of `poll_join_next` that is waiting on the other tasks.
        self.ready.push(key);
        abort
    }

    /// Polls entry `key`'s handle with the entry's own waker; removes the
    /// entry and returns its result, with the task's id, if the task has
    /// finished.
    fn poll_entry(&mut self, key: u64) -> Option<Result<(Id, T), JoinError>> {
        // A missing key: its entry was detached (see `Ready`).
        let entry = self.tasks.get_mut(&key)?;
        let mut cx = Context::from_waker(&entry.waker);
        // Unconstrained: a spent budget would make the handle wake its
        // entry, which would queue its key again for the caller's loop to
        // pop; the set spends the unit itself (`poll_join_next`).
        let polled = super::coop::with_unconstrained(|| Pin::new(&mut entry.handle).poll(&mut cx));
        match polled {
            Poll::Ready(result) => {
                let id = entry.handle.id();
                self.tasks.remove(&key);
                Some(result.map(|output| (id, output)))
            }
            Poll::Pending => None,
        }
    }
}

/// The spawn methods return an [`AbortHandle`] for the new task, as
/// tokio's do: it cancels that one task and can outlive the set.
impl<T: Send + 'static> JoinSet<T> {
    /// Spawns `task` on the current runtime (as [`spawn`](crate::spawn)
    /// does) and adds it to the set.
    ///
    /// # Panics
    /// Outside a runtime context. Use [`spawn_on`](Self::spawn_on) from
    /// other threads.
    #[track_caller]
    pub fn spawn<F>(&mut self, task: F) -> AbortHandle
    where
        F: Future<Output = T> + Send + 'static,
    {
        let location = Location::caller();
        let handle = context::with_current("brigade::task::JoinSet::spawn", |runtime| {
            runtime
                .shared
                .spawn(task, Origin::task(location), TaskClass::Auto)
        });
        self.insert(handle)
    }

    /// Spawns `task` on the runtime of `handle`, from any thread, and adds
    /// it to the set.
    #[track_caller]
    pub fn spawn_on<F>(&mut self, task: F, handle: &Handle) -> AbortHandle
    where
        F: Future<Output = T> + Send + 'static,
    {
        self.insert(handle.spawn(task))
    }

    /// Spawns an elastic task on the current runtime (as
    /// [`spawn_elastic`](crate::spawn_elastic) does) and adds it to the set.
    ///
    /// # Panics
    /// Outside a runtime context.
    #[track_caller]
    pub fn spawn_elastic<F>(&mut self, task: F) -> AbortHandle
    where
        F: Future<Output = T> + Send + 'static,
    {
        let location = Location::caller();
        let handle = context::with_current("brigade::task::JoinSet::spawn_elastic", |runtime| {
            runtime
                .shared
                .spawn(task, Origin::task(location), TaskClass::Elastic)
        });
        self.insert(handle)
    }

    /// Runs `f` on the current runtime's blocking pool (as
    /// [`spawn_blocking`](crate::spawn_blocking) does) and adds it to the
    /// set.
    ///
    /// # Panics
    /// Outside a runtime context. Use
    /// [`spawn_blocking_on`](Self::spawn_blocking_on) from other threads.
    #[track_caller]
    pub fn spawn_blocking<F>(&mut self, f: F) -> AbortHandle
    where
        F: FnOnce() -> T + Send + 'static,
    {
        let location = Location::caller();
        let handle = context::with_current("brigade::task::JoinSet::spawn_blocking", |runtime| {
            runtime.shared.spawn_blocking(f, location)
        });
        self.insert(handle)
    }

    /// Runs `f` on the blocking pool of `handle`'s runtime, from any
    /// thread, and adds it to the set.
    #[track_caller]
    pub fn spawn_blocking_on<F>(&mut self, f: F, handle: &Handle) -> AbortHandle
    where
        F: FnOnce() -> T + Send + 'static,
    {
        self.insert(handle.spawn_blocking(f))
    }
}

fn without_id<T>(joined: Result<(Id, T), JoinError>) -> Result<T, JoinError> {
    joined.map(|(_, output)| output)
}

/// Collects futures into a set, spawning each on the current runtime, as
/// tokio's `JoinSet` does.
///
/// # Panics
/// Outside a runtime context, like [`JoinSet::spawn`].
///
/// # Examples
///
/// ```
/// use brigade::task::JoinSet;
///
/// let rt = brigade::Runtime::new()?;
/// let mut squares = rt.block_on(async {
///     let set: JoinSet<u64> = (1..=4u64).map(|n| async move { n * n }).collect();
///     set.join_all().await
/// });
/// squares.sort();
/// assert_eq!(squares, [1, 4, 9, 16]);
/// # Ok::<(), std::io::Error>(())
/// ```
impl<T, F> FromIterator<F> for JoinSet<T>
where
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    fn from_iter<I: IntoIterator<Item = F>>(futures: I) -> Self {
        let mut set = JoinSet::new();
        set.extend(futures);
        set
    }
}

/// Spawns each future on the current runtime into the set, as tokio's
/// `JoinSet` does.
///
/// # Panics
/// Outside a runtime context, like [`JoinSet::spawn`].
impl<T, F> Extend<F> for JoinSet<T>
where
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    fn extend<I: IntoIterator<Item = F>>(&mut self, futures: I) {
        for future in futures {
            self.spawn(future);
        }
    }
}

impl<T> Default for JoinSet<T> {
    fn default() -> Self {
        JoinSet::new()
    }
}

impl<T> Drop for JoinSet<T> {
    /// Aborts every task still in the set; the handles are then dropped,
    /// which detaches the (cancelled) tasks.
    fn drop(&mut self) {
        self.abort_all();
        self.ready.clear();
    }
}

impl<T> fmt::Debug for JoinSet<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinSet").field("len", &self.len()).finish()
    }
}
