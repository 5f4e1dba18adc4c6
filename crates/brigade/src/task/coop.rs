//! The cooperative budget: tokio's `task::coop`, on brigade, spent only
//! when it matters.
//!
//! A task whose socket is always ready never returns `Pending` by itself,
//! so without help it would keep its worker from its timers, its I/O and
//! its other tasks for as long as the peer keeps sending. So every poll of
//! a task starts with a *budget* of 128 units (rule C6 of the policy,
//! `policy.rs`), and every brigade resource spends one before it reports
//! progress: socket readiness and reads and writes, accepts, timers,
//! signals, `JoinHandle` and `JoinSet` results, stdio, brigade-hyper's I/O
//! (through the sockets), and user code through [`consume_budget`] and
//! [`cooperative`].
//!
//! # Spent only when something waits
//! When the budget runs out, tokio's resources return `Pending` and wake
//! the task, whether or not anything else wants the worker. brigade asks
//! first, as `yield_if_busy()` does: is another task runnable on this
//! worker or in the injector, is a timer due, or is I/O ready that the
//! driver has not harvested (once per epoch, the check `yield_if_busy`
//! makes)? If so, the resource returns `Pending` and the task goes to the
//! back of its worker's deque, behind the work that waits (not into the
//! run-next slot), without counting as a self-wake: a foreground task
//! forced to yield is not demoted to background the way a loop around
//! `yield_now()` is. If nothing waits, the budget is refilled and the
//! operation goes on, so an always-ready loop alone on an idle runtime
//! loses nothing. Off a worker (a blocking-pool thread, a `LocalSet`
//! driven outside a runtime's workers) only a `LocalSet`'s own tasks can
//! wait behind the poll; a multi-thread runtime's `block_on` future and
//! code outside any runtime have no budget at all.
//!
//! Only the task's own waker yields for the budget. A combinator's waker
//! (`FuturesUnordered`'s, say) or a nested executor's (a
//! `futures::executor::block_on` inside the task) is not the task's: a
//! nested executor that is woken at once and polls again would otherwise
//! spin inside the task's poll for as long as work waits. For those the
//! budget is refilled, as `yield_if_busy()` treats them too.
//!
//! # Why the unit comes back on `Pending`
//! [`poll_proceed`] spends the unit before the operation runs; the
//! [`RestoreOnPending`] it returns gives it back when dropped, unless the
//! operation called [`RestoreOnPending::made_progress`]. So only real
//! progress spends: a read that finds the socket empty costs nothing.
//!
//! # With feature `tokio-compat`
//! Inside a brigade task, tokio's own budget is unconstrained (brigade
//! polls the task, not tokio), so a `tokio::net` socket there spends
//! nothing and never yields: only brigade's budget counts. In a
//! `tokio::spawn`ed task, on the runtime's tokio-compat threads, brigade's
//! resources spend tokio's budget instead of brigade's (and what brigade
//! runs unconstrained, it runs with tokio's lifted too), so each task has
//! one budget and never yields twice for one unit.

use std::cell::Cell;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use super::current;

/// C6 of the policy: the units a task's poll may spend (`policy.rs`).
pub(crate) use crate::policy::COOP_BUDGET as BUDGET;

/// What the running poll may still spend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Budget {
    /// No budget: outside a task's poll, or inside [`unconstrained`].
    Unconstrained,
    /// This many units left.
    Left(u8),
    /// Spent while work waited: every resource returns `Pending` until the
    /// poll ends.
    Yielding,
}

// `CURRENT`: what the running poll may still spend. `LOCAL_SET_WAITS`:
// while a `LocalSet` runs one of its tasks, whether the set's other tasks
// wait (`task/local.rs`), which the worker cannot see.
crate::sync::scheduler_thread_local! {
    static CURRENT: Cell<Budget> = Cell::new(Budget::Unconstrained);
    static LOCAL_SET_WAITS: Cell<Option<fn() -> bool>> = Cell::new(None);
}

/// Runs `f` (a task's poll, or a current-thread `block_on` future's) with a
/// full budget, then restores the budget it replaced, also when `f`
/// unwinds.
#[inline]
pub(crate) fn with_full_budget<R>(f: impl FnOnce() -> R) -> R {
    with_budget(Budget::Left(BUDGET), f)
}

/// Runs `f` (a resource's poll that must not yield for the budget, such as
/// a timeout's deadline once its future spent the budget) with no budget:
/// neither brigade's nor, on a tokio-compat thread, tokio's.
pub(crate) fn with_unconstrained<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(all(feature = "tokio-compat", not(loom)))]
    if current::on_compat_thread() {
        let mut f = Some(f);
        let once = std::future::poll_fn(|_| Poll::Ready(f.take().map(|f| f())));
        let mut unconstrained = std::pin::pin!(tokio::task::unconstrained(once));
        let polled = unconstrained
            .as_mut()
            .poll(&mut Context::from_waker(std::task::Waker::noop()));
        if let Poll::Ready(Some(output)) = polled {
            return output;
        }
        unreachable!("a future that is ready at once");
    }
    with_budget(Budget::Unconstrained, f)
}

/// Runs `f`, a `LocalSet`'s poll of one of its tasks, with
/// `others_wait` telling whether the set's other tasks wait: a spent
/// budget then yields, so that they run (`task/local.rs`).
#[cfg(not(loom))]
pub(crate) fn with_local_set<R>(others_wait: fn() -> bool, f: impl FnOnce() -> R) -> R {
    struct Reset(Option<fn() -> bool>);
    impl Drop for Reset {
        fn drop(&mut self) {
            LOCAL_SET_WAITS.with(|current| current.set(self.0));
        }
    }
    let _reset = Reset(LOCAL_SET_WAITS.with(|current| current.replace(Some(others_wait))));
    f()
}

#[inline]
fn with_budget<R>(budget: Budget, f: impl FnOnce() -> R) -> R {
    struct Reset(Budget);
    impl Drop for Reset {
        #[inline]
        fn drop(&mut self) {
            CURRENT.with(|current| current.set(self.0));
        }
    }
    let _reset = Reset(CURRENT.with(|current| current.replace(budget)));
    f()
}

/// Spends one unit of the running task's budget, if it has one.
///
/// `Ready` with a [`RestoreOnPending`] while units are left (call its
/// [`made_progress`](RestoreOnPending::made_progress) once the operation
/// has done something, or the unit comes back when it is dropped), and
/// also when the budget is spent but nothing waits for this worker: the
/// budget is then refilled. `Pending`, after waking the task, when the
/// budget is spent and another task, a due timer or unharvested I/O waits
/// for this worker: the task goes to the back of the worker's deque.
///
/// # Examples
///
/// A hand-written stream that cooperates as brigade's sockets do:
///
/// ```
/// use std::pin::Pin;
/// use std::task::{Context, Poll, ready};
/// use brigade::task::coop;
///
/// /// Counts up for ever: always ready.
/// struct Counter(u64);
///
/// impl Counter {
///     fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<u64> {
///         let restore = ready!(coop::poll_proceed(cx));
///         self.0 += 1;
///         restore.made_progress();
///         Poll::Ready(self.0)
///     }
/// }
///
/// let rt = brigade::Runtime::new()?;
/// let last = rt.block_on(async {
///     let mut counter = Counter(0);
///     let mut last = 0;
///     for _ in 0..1_000 {
///         last = std::future::poll_fn(|cx| counter.poll_next(cx)).await;
///     }
///     last
/// });
/// assert_eq!(last, 1_000);
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn poll_proceed(cx: &mut Context<'_>) -> Poll<RestoreOnPending> {
    #[cfg(all(feature = "tokio-compat", not(loom)))]
    if current::on_compat_thread() {
        return tokio::task::coop::poll_proceed(cx).map(RestoreOnPending::tokio);
    }
    let budget = CURRENT.with(Cell::get);
    match budget {
        Budget::Unconstrained => Poll::Ready(RestoreOnPending::new(None)),
        Budget::Left(0) if current::is_own_waker(cx.waker()) && work_waits() => {
            current::budget_yield(LOCAL_SET_WAITS.with(Cell::get).is_some());
            CURRENT.with(|current| current.set(Budget::Yielding));
            cx.waker().wake_by_ref();
            Poll::Pending
        }
        Budget::Yielding if current::is_own_waker(cx.waker()) => {
            cx.waker().wake_by_ref();
            Poll::Pending
        }
        Budget::Yielding => {
            // A combinator's or a nested executor's waker (the module
            // docs): the operation goes on, spending nothing.
            Poll::Ready(RestoreOnPending::new(None))
        }
        Budget::Left(left) => {
            // Units are left, or nothing waits, or the waker is not the
            // task's own: a full budget again.
            let before = if left == 0 { BUDGET } else { left };
            CURRENT.with(|current| current.set(Budget::Left(before - 1)));
            Poll::Ready(RestoreOnPending::new(Some(Budget::Left(before))))
        }
    }
}

/// The budget is spent: whether work waits behind this poll, on its
/// `LocalSet` or on its worker (`Core::budget_work_waits`).
fn work_waits() -> bool {
    let local_set = LOCAL_SET_WAITS
        .with(Cell::get)
        .map(|others_wait| others_wait());
    current::budget_work_waits(local_set)
}

/// Returned by [`poll_proceed`]: gives the unit back when dropped, unless
/// [`made_progress`](Self::made_progress) was called.
#[must_use = "dropping it at once gives the unit back: call `made_progress` after the operation"]
pub struct RestoreOnPending {
    /// The budget before the unit was spent; `None`: nothing was spent.
    before: Cell<Option<Budget>>,
    #[cfg(all(feature = "tokio-compat", not(loom)))]
    tokio: Option<tokio::task::coop::RestoreOnPending>,
    /// Bound to this thread's budget.
    _not_send: PhantomData<*mut ()>,
}

impl RestoreOnPending {
    fn new(before: Option<Budget>) -> Self {
        RestoreOnPending {
            before: Cell::new(before),
            #[cfg(all(feature = "tokio-compat", not(loom)))]
            tokio: None,
            _not_send: PhantomData,
        }
    }

    #[cfg(all(feature = "tokio-compat", not(loom)))]
    fn tokio(restore: tokio::task::coop::RestoreOnPending) -> Self {
        RestoreOnPending {
            before: Cell::new(None),
            tokio: Some(restore),
            _not_send: PhantomData,
        }
    }

    /// The operation made progress: the unit stays spent.
    pub fn made_progress(&self) {
        self.before.set(None);
        #[cfg(all(feature = "tokio-compat", not(loom)))]
        if let Some(tokio) = &self.tokio {
            tokio.made_progress();
        }
    }
}

impl Drop for RestoreOnPending {
    /// Gives the unit back, unless a resource inside the operation made
    /// the poll yield meanwhile: that stays.
    fn drop(&mut self) {
        if let Some(before) = self.before.get() {
            CURRENT.with(|current| {
                if current.get() != Budget::Yielding {
                    current.set(before);
                }
            });
        }
    }
}

impl std::fmt::Debug for RestoreOnPending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RestoreOnPending").finish_non_exhaustive()
    }
}

/// Whether the running task has budget left: `true` outside a task's poll
/// and inside [`unconstrained`]; once its units are spent, `false` if work
/// waits for its worker (the next resource will yield), and otherwise
/// `true`, the budget refilled, as the next resource would refill it.
pub fn has_budget_remaining() -> bool {
    #[cfg(all(feature = "tokio-compat", not(loom)))]
    if current::on_compat_thread() {
        return tokio::task::coop::has_budget_remaining();
    }
    match CURRENT.with(Cell::get) {
        Budget::Unconstrained => true,
        Budget::Left(0) if work_waits() => false,
        Budget::Left(0) => {
            CURRENT.with(|current| current.set(Budget::Left(BUDGET)));
            true
        }
        Budget::Left(_) => true,
        Budget::Yielding => false,
    }
}

/// Spends one unit of the running task's budget, yielding if it was the
/// last one and work waits for this worker (see [`poll_proceed`]).
///
/// For long computations that use no brigade resource, where the budget
/// should count their steps. (`yield_if_busy().await` asks the same
/// question at every call, not only every 128 units.)
///
/// # Examples
///
/// ```
/// async fn sum(values: &[u64]) -> u64 {
///     let mut total = 0;
///     for value in values {
///         total += value;
///         brigade::task::consume_budget().await;
///     }
///     total
/// }
///
/// let rt = brigade::Runtime::new()?;
/// let values: Vec<u64> = (1..=1_000).collect();
/// assert_eq!(rt.block_on(sum(&values)), 500_500);
/// # Ok::<(), std::io::Error>(())
/// ```
pub async fn consume_budget() {
    let mut done = false;
    std::future::poll_fn(move |cx| {
        if done {
            return Poll::Ready(());
        }
        let restore = ready!(poll_proceed(cx));
        restore.made_progress();
        done = true;
        Poll::Ready(())
    })
    .await
}

pin_project_lite::pin_project! {
    /// Future returned by [`unconstrained`].
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    #[derive(Debug)]
    pub struct Unconstrained<F> {
        #[pin]
        future: F,
    }
}

impl<F: Future> Future for Unconstrained<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let future = self.project().future;
        #[cfg(all(feature = "tokio-compat", not(loom)))]
        if current::on_compat_thread() {
            return with_budget(Budget::Unconstrained, || {
                Pin::new(&mut tokio::task::unconstrained(PollOnce(future))).poll(cx)
            });
        }
        with_budget(Budget::Unconstrained, || future.poll(cx))
    }
}

/// Polls the pinned future it holds: lets tokio's `unconstrained` wrap a
/// borrowed future for one poll.
#[cfg(all(feature = "tokio-compat", not(loom)))]
struct PollOnce<'a, F>(Pin<&'a mut F>);

#[cfg(all(feature = "tokio-compat", not(loom)))]
impl<F: Future> Future for PollOnce<'_, F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        self.0.as_mut().poll(cx)
    }
}

/// Runs `future` with no budget: brigade's resources inside it never
/// yield for the budget's sake (nor, on a tokio-compat thread, tokio's).
///
/// For code that must not be interrupted between two ready operations;
/// it can starve its worker's other tasks, timers and I/O, so prefer
/// short stretches.
///
/// # Examples
///
/// ```
/// let rt = brigade::Runtime::new()?;
/// rt.block_on(async {
///     brigade::task::unconstrained(async {
///         for _ in 0..1_000 {
///             brigade::task::consume_budget().await; // never yields here
///         }
///         assert!(brigade::task::coop::has_budget_remaining());
///     })
///     .await
/// });
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn unconstrained<F: Future>(future: F) -> Unconstrained<F> {
    Unconstrained { future }
}

pin_project_lite::pin_project! {
    /// Future returned by [`cooperative`].
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    #[derive(Debug)]
    pub struct Coop<F> {
        #[pin]
        future: F,
    }
}

impl<F: Future> Future for Coop<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let future = self.project().future;
        budgeted(cx, |cx| future.poll(cx))
    }
}

/// Runs `poll` (one poll of a brigade resource) if the task's budget
/// allows, and spends the unit only if it is ready: [`cooperative`] for
/// a poll function.
pub(crate) fn budgeted<R>(
    cx: &mut Context<'_>,
    poll: impl FnOnce(&mut Context<'_>) -> Poll<R>,
) -> Poll<R> {
    let restore = ready!(poll_proceed(cx));
    let output = ready!(poll(cx));
    restore.made_progress();
    Poll::Ready(output)
}

/// Makes `future` spend the budget as brigade's resources do: each poll
/// first spends a unit (yielding if it was the last and work waits, see
/// [`poll_proceed`]), and the unit stays spent only once `future` is
/// ready.
///
/// For resources brigade does not know, such as `futures` channels, or
/// `tokio::sync` channels inside brigade tasks (whose budget is tokio's,
/// unconstrained there: docs/porting.md).
///
/// # Examples
///
/// ```
/// use brigade::task::coop::cooperative;
///
/// let rt = brigade::Runtime::new()?;
/// rt.block_on(async {
///     let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
///     for n in 0..1_000 {
///         tx.send(n).unwrap();
///     }
///     drop(tx);
///     let mut total = 0;
///     while let Some(n) = cooperative(rx.recv()).await {
///         total += n;
///     }
///     assert_eq!(total, 499_500);
/// });
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn cooperative<F: Future>(future: F) -> Coop<F> {
    Coop { future }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::task::Waker;

    fn left() -> Budget {
        CURRENT.with(Cell::get)
    }

    #[test]
    fn outside_a_poll_nothing_is_spent() {
        let mut cx = Context::from_waker(Waker::noop());
        for _ in 0..1_000 {
            let Poll::Ready(restore) = poll_proceed(&mut cx) else {
                panic!("an unconstrained budget never yields");
            };
            restore.made_progress();
        }
        assert_eq!(left(), Budget::Unconstrained);
        assert!(has_budget_remaining());
    }

    #[test]
    fn progress_spends_a_unit_and_pending_gives_it_back() {
        let mut cx = Context::from_waker(Waker::noop());
        with_full_budget(|| {
            let Poll::Ready(restore) = poll_proceed(&mut cx) else {
                panic!("a full budget proceeds");
            };
            restore.made_progress();
            drop(restore);
            assert_eq!(left(), Budget::Left(BUDGET - 1));
            // An operation that found nothing to do: the unit comes back.
            let Poll::Ready(restore) = poll_proceed(&mut cx) else {
                panic!("units are left");
            };
            assert_eq!(left(), Budget::Left(BUDGET - 2));
            drop(restore);
            assert_eq!(left(), Budget::Left(BUDGET - 1));
        });
        assert_eq!(
            left(),
            Budget::Unconstrained,
            "the poll's budget ends with it"
        );
    }

    #[test]
    fn a_spent_budget_is_refilled_off_a_worker() {
        let mut cx = Context::from_waker(Waker::noop());
        with_full_budget(|| {
            for _ in 0..BUDGET {
                let Poll::Ready(restore) = poll_proceed(&mut cx) else {
                    panic!("units are left");
                };
                restore.made_progress();
            }
            assert_eq!(left(), Budget::Left(0));
            // No worker here, so nothing waits behind this poll: refill.
            let Poll::Ready(restore) = poll_proceed(&mut cx) else {
                panic!("nothing waits: the budget is refilled");
            };
            restore.made_progress();
            assert_eq!(left(), Budget::Left(BUDGET - 1));
            // Asking refills too, as the next resource would.
            with_budget(Budget::Left(0), || {
                assert!(has_budget_remaining());
                assert_eq!(left(), Budget::Left(BUDGET));
            });
        });
    }

    #[test]
    fn unconstrained_lifts_the_budget_for_its_future_only() {
        let mut cx = Context::from_waker(Waker::noop());
        with_full_budget(|| {
            let mut inner = std::pin::pin!(unconstrained(std::future::poll_fn(|cx| {
                assert_eq!(left(), Budget::Unconstrained);
                for _ in 0..1_000 {
                    assert!(poll_proceed(cx).is_ready());
                }
                Poll::Ready(())
            })));
            assert!(inner.as_mut().poll(&mut cx).is_ready());
            assert_eq!(left(), Budget::Left(BUDGET));
        });
    }

    #[test]
    fn a_yielding_budget_stays_pending_for_the_own_waker_until_the_poll_ends() {
        let own = Waker::noop();
        let mut cx = Context::from_waker(own);
        let other = std::task::Waker::from(std::sync::Arc::new(Flag));
        let mut foreign = Context::from_waker(&other);
        current::poll_main(own, || {
            with_budget(Budget::Yielding, || {
                assert!(poll_proceed(&mut cx).is_pending());
                // A unit given back by an operation around it does not end
                // the yield.
                let outer = RestoreOnPending::new(Some(Budget::Left(3)));
                assert!(poll_proceed(&mut cx).is_pending());
                drop(outer);
                assert_eq!(left(), Budget::Yielding);
                assert!(!has_budget_remaining());
                // A combinator's or a nested executor's waker goes on.
                assert!(poll_proceed(&mut foreign).is_ready());
            });
        });
        with_full_budget(|| assert!(has_budget_remaining()));
    }

    /// A waker that is not the task's own.
    struct Flag;

    impl std::task::Wake for Flag {
        fn wake(self: std::sync::Arc<Self>) {}
    }
}
