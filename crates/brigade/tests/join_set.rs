//! Integration tests of `task::JoinSet`: completion order, bookkeeping,
//! panics and cancellation, dropping, detaching, shutdown, spawning outside
//! a runtime, sets that outlive their runtime, and spawn locations.

mod common;

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};

use brigade::task::JoinSet;
use brigade::{Builder, Runtime};
use common::{
    DropFlag, Sender, TIMEOUT, TIMEOUT_SECS, channel, expect_panic, local_block_on, poll_once,
    wait_until, with_timeout,
};

fn runtime(workers: usize) -> Runtime {
    Builder::new().worker_threads(workers).build().unwrap()
}

/// A future that returns `output` once its gate is opened (a value is sent
/// or the sender dropped), and its gate.
fn gated<T: Send + 'static>(output: T) -> (Sender<()>, impl Future<Output = T> + Send + 'static) {
    let (gate, mut gate_rx) = channel::<()>();
    (gate, async move {
        gate_rx.recv().await;
        output
    })
}

/// A future that never finishes, sets `flag` when dropped, and reports on
/// `started` once it has been polled.
fn pending_with_flag(
    flag: &Arc<AtomicBool>,
    started: &mpsc::Sender<()>,
) -> impl Future<Output = u32> + Send + 'static {
    let guard = DropFlag(flag.clone());
    let started = started.clone();
    async move {
        let _guard = guard;
        started.send(()).unwrap();
        std::future::pending::<u32>().await
    }
}

/// `count` drop flags, none set.
fn flags(count: usize) -> Vec<Arc<AtomicBool>> {
    (0..count)
        .map(|_| Arc::new(AtomicBool::new(false)))
        .collect()
}

fn all_set(flags: &[Arc<AtomicBool>]) -> bool {
    flags.iter().all(|flag| flag.load(Ordering::SeqCst))
}

/// Receives `count` messages, each within the bound.
fn recv_n<T>(receiver: &mpsc::Receiver<T>, count: usize) {
    for _ in 0..count {
        receiver.recv_timeout(TIMEOUT).unwrap();
    }
}

#[test]
fn join_next_yields_results_in_completion_order() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(2);
        rt.block_on(async {
            let mut set = JoinSet::new();
            let mut gates = Vec::new();
            for index in 0..5u32 {
                let (gate, task) = gated(index);
                gates.push(gate);
                set.spawn(task);
            }
            // Open one gate at a time, last spawned first: only that task
            // can finish before the next `join_next` returns.
            for index in (0..5u32).rev() {
                gates[index as usize].send(());
                assert_eq!(set.join_next().await.unwrap().unwrap(), index);
                assert_eq!(set.len(), index as usize);
            }
            assert!(set.join_next().await.is_none());
        });
    });
}

#[test]
fn len_and_is_empty_count_tasks_until_they_are_joined() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(2);
        rt.block_on(async {
            let mut set = JoinSet::<u32>::default();
            assert!(set.is_empty());
            assert_eq!(set.len(), 0);
            assert!(set.join_next().await.is_none());
            assert!(set.try_join_next().is_none());
            for n in 0..3 {
                set.spawn(async move { n });
            }
            assert_eq!(set.len(), 3);
            assert!(!set.is_empty());
            let mut outputs = Vec::new();
            while let Some(result) = set.join_next().await {
                outputs.push(result.unwrap());
                assert_eq!(set.len(), 3 - outputs.len());
            }
            outputs.sort_unstable();
            assert_eq!(outputs, [0, 1, 2]);
            assert!(set.is_empty());
            // The set is reusable once empty.
            set.spawn(async { 7 });
            assert_eq!(set.join_next().await.unwrap().unwrap(), 7);
            assert!(set.is_empty());
        });
    });
}

#[test]
fn try_join_next_returns_only_finished_tasks() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(2);
        let mut set = JoinSet::new();
        assert!(set.try_join_next().is_none());
        let (gate, task) = gated("done");
        set.spawn_on(task, rt.handle());
        assert!(set.try_join_next().is_none());
        assert_eq!(set.len(), 1);
        gate.send(());
        let mut joined = None;
        wait_until("the finished task is joinable", || {
            joined = set.try_join_next();
            joined.is_some()
        });
        assert_eq!(joined.unwrap().unwrap(), "done");
        assert!(set.is_empty());
    });
}

#[test]
fn a_panicking_task_yields_a_panic_join_error() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(2);
        rt.block_on(async {
            let mut set = JoinSet::new();
            let (gate, task) = gated(1u32);
            set.spawn(task);
            set.spawn(async { panic!("boom") });
            let error = set.join_next().await.unwrap().unwrap_err();
            assert!(error.is_panic());
            assert!(!error.is_cancelled());
            assert_eq!(common::panic_message(&*error.into_panic()), "boom");
            // The other task is unaffected.
            gate.send(());
            assert_eq!(set.join_next().await.unwrap().unwrap(), 1);
        });
    });
}

#[test]
fn abort_all_cancels_every_task_and_drops_its_future() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(2);
        let dropped = flags(3);
        let (started_tx, started_rx) = mpsc::channel();
        let mut set = JoinSet::new();
        for flag in &dropped {
            set.spawn_on(pending_with_flag(flag, &started_tx), rt.handle());
        }
        recv_n(&started_rx, 3);
        assert!(!dropped.iter().any(|flag| flag.load(Ordering::SeqCst)));
        set.abort_all();
        assert_eq!(set.len(), 3, "aborted tasks stay in the set until joined");
        rt.block_on(async {
            for _ in 0..3 {
                let error = set.join_next().await.unwrap().unwrap_err();
                assert!(error.is_cancelled(), "{error:?}");
            }
            assert!(set.join_next().await.is_none());
        });
        // A handle resolves only once its task's future is dropped.
        assert!(all_set(&dropped));
    });
}

#[test]
fn dropping_the_set_cancels_its_tasks_and_drops_their_futures() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(2);
        let dropped = flags(3);
        let (started_tx, started_rx) = mpsc::channel();
        let mut set = JoinSet::new();
        for flag in &dropped {
            set.spawn_on(pending_with_flag(flag, &started_tx), rt.handle());
        }
        recv_n(&started_rx, 3);
        drop(set);
        wait_until("every future in the dropped set is dropped", || {
            all_set(&dropped)
        });
        wait_until("the cancelled tasks leave the runtime", || {
            rt.metrics().num_alive_tasks() == 0
        });
    });
}

#[test]
fn detach_all_lets_the_tasks_run_to_completion() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(2);
        let (done_tx, done_rx) = mpsc::channel();
        let mut set = JoinSet::new();
        let mut gates = Vec::new();
        for index in 0..3u32 {
            let (gate, task) = gated(index);
            let done_tx = done_tx.clone();
            gates.push(gate);
            set.spawn_on(
                async move { done_tx.send(task.await).unwrap() },
                rt.handle(),
            );
        }
        set.detach_all();
        assert!(set.is_empty());
        // Neither the detach nor dropping the emptied set cancels them.
        drop(set);
        gates.iter().for_each(|gate| gate.send(()));
        let mut done: Vec<u32> = (0..3)
            .map(|_| done_rx.recv_timeout(TIMEOUT).unwrap())
            .collect();
        done.sort_unstable();
        assert_eq!(done, [0, 1, 2]);
    });
}

#[test]
fn shutdown_aborts_every_task_and_waits_for_it() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(2);
        let dropped = flags(3);
        let (started_tx, started_rx) = mpsc::channel();
        rt.block_on(async {
            let mut set = JoinSet::new();
            for flag in &dropped {
                set.spawn(pending_with_flag(flag, &started_tx));
            }
            recv_n(&started_rx, 3);
            set.shutdown().await;
            assert!(set.is_empty());
            assert!(
                all_set(&dropped),
                "shutdown returned before a future was dropped"
            );
            // Still usable afterwards.
            set.spawn(async { 5 });
            assert_eq!(set.join_next().await.unwrap().unwrap(), 5);
        });
    });
}

#[test]
fn join_all_returns_every_output() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(2);
        let mut outputs = rt.block_on(async {
            let mut set = JoinSet::new();
            for n in 0..10u32 {
                set.spawn(async move { n * 10 });
            }
            set.spawn_blocking(|| 100);
            set.join_all().await
        });
        outputs.sort_unstable();
        let mut expected: Vec<u32> = (0..10).map(|n| n * 10).collect();
        expected.push(100);
        assert_eq!(outputs, expected);
    });
}

#[test]
fn join_all_resumes_a_task_panic_and_aborts_the_rest() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(2);
        let dropped = flags(1);
        let (started_tx, started_rx) = mpsc::channel();
        let mut set = JoinSet::new();
        set.spawn_on(pending_with_flag(&dropped[0], &started_tx), rt.handle());
        recv_n(&started_rx, 1);
        set.spawn_on(async { panic!("boom") }, rt.handle());
        let message = expect_panic(|| rt.block_on(set.join_all()));
        assert_eq!(message, "boom");
        wait_until("the remaining task's future is dropped", || {
            all_set(&dropped)
        });
    });
}

#[test]
fn elastic_and_blocking_tasks_join_like_any_other() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(2);
        let mut outputs = rt.block_on(async {
            let mut set = JoinSet::new();
            set.spawn(async { "plain" });
            set.spawn_elastic(async { "elastic" });
            set.spawn_blocking(|| "blocking");
            let mut outputs = Vec::new();
            while let Some(result) = set.join_next().await {
                outputs.push(result.unwrap());
            }
            outputs
        });
        outputs.sort_unstable();
        assert_eq!(outputs, ["blocking", "elastic", "plain"]);
        // The `_on` variants work from a plain thread.
        let mut set = JoinSet::new();
        set.spawn_on(async { 1 }, rt.handle());
        set.spawn_blocking_on(|| 2, rt.handle());
        let mut outputs = rt.block_on(set.join_all());
        outputs.sort_unstable();
        assert_eq!(outputs, [1, 2]);
    });
}

#[test]
fn a_set_owned_by_a_task_joins_its_tasks() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(2);
        let parent = rt.spawn(async {
            let mut set = JoinSet::new();
            let mut gates = Vec::new();
            for index in 0..3u32 {
                let (gate, task) = gated(index);
                gates.push(gate);
                set.spawn(task);
            }
            let mut order = Vec::new();
            for index in [1, 2, 0] {
                gates[index].send(());
                order.push(set.join_next().await.unwrap().unwrap());
            }
            order
        });
        assert_eq!(rt.block_on(parent).unwrap(), [1, 2, 0]);
    });
}

#[test]
fn join_next_is_cancel_safe() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(2);
        let mut set = JoinSet::new();
        let (gate, task) = gated(9u32);
        set.spawn_on(task, rt.handle());
        {
            let mut join = Box::pin(set.join_next());
            assert!(poll_once(&mut join).is_pending());
            // Dropped while waiting, like a losing `select!` branch.
        }
        assert_eq!(set.len(), 1);
        gate.send(());
        assert_eq!(rt.block_on(set.join_next()).unwrap().unwrap(), 9);
    });
}

#[test]
fn spawning_outside_a_runtime_panics_naming_the_method() {
    let mut set = JoinSet::<()>::new();
    let message = expect_panic(|| set.spawn(async {}));
    assert!(
        message.contains("brigade::task::JoinSet::spawn called outside"),
        "{message}"
    );
    let message = expect_panic(|| set.spawn_elastic(async {}));
    assert!(
        message.contains("brigade::task::JoinSet::spawn_elastic called outside"),
        "{message}"
    );
    let message = expect_panic(|| set.spawn_blocking(|| {}));
    assert!(
        message.contains("brigade::task::JoinSet::spawn_blocking called outside"),
        "{message}"
    );
    assert!(set.is_empty());
}

#[test]
fn a_set_that_outlives_its_runtime_yields_cancelled_errors() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(2);
        let dropped = flags(4);
        let (started_tx, started_rx) = mpsc::channel();
        let mut set = JoinSet::new();
        for flag in &dropped[..3] {
            set.spawn_on(pending_with_flag(flag, &started_tx), rt.handle());
        }
        recv_n(&started_rx, 3);
        drop(rt);
        assert!(all_set(&dropped[..3]), "shutdown left a future alive");
        // Joined with no runtime at all.
        for _ in 0..3 {
            let error = local_block_on(set.join_next()).unwrap().unwrap_err();
            assert!(error.is_cancelled(), "{error:?}");
        }
        assert!(local_block_on(set.join_next()).is_none());

        // Dropping a set whose runtime is gone neither hangs nor panics.
        let rt = runtime(1);
        set.spawn_on(pending_with_flag(&dropped[3], &started_tx), rt.handle());
        recv_n(&started_rx, 1);
        drop(rt);
        drop(set);
        assert!(all_set(&dropped));
    });
}

/// Collects the `spawned_at` field of `brigade::class` events.
#[derive(Clone, Default)]
struct SpawnSites(Arc<Mutex<Vec<String>>>);

struct SpawnedAt(Option<String>);

impl tracing::field::Visit for SpawnedAt {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "spawned_at" {
            self.0 = Some(format!("{value:?}"));
        }
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for SpawnSites {
    fn enabled(
        &self,
        metadata: &tracing::Metadata<'_>,
        _: tracing_subscriber::layer::Context<'_, S>,
    ) -> bool {
        metadata.target() == "brigade::class"
    }

    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        let mut spawned_at = SpawnedAt(None);
        event.record(&mut spawned_at);
        self.0.lock().unwrap().extend(spawned_at.0);
    }
}

/// A loop on `yield_now()` that ends once `stop` is set: a task that only
/// ever wakes itself, which the runtime demotes.
fn yield_loop(stop: &Arc<AtomicBool>) -> impl Future<Output = ()> + Send + 'static {
    let stop = stop.clone();
    async move {
        while !stop.load(Ordering::SeqCst) {
            brigade::yield_now().await;
        }
    }
}

/// The demotion event of a task names where it was spawned: the test's
/// lines, not `join_set.rs` in the crate.
#[test]
fn spawn_locations_point_at_the_caller() {
    use tracing_subscriber::layer::SubscriberExt;

    let sites = SpawnSites::default();
    // The only test in this binary that installs a subscriber.
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(sites.clone()))
        .expect("install the capturing subscriber");
    with_timeout(TIMEOUT_SECS, move || {
        let rt = runtime(1);
        let stop = Arc::new(AtomicBool::new(false));
        let mut set = JoinSet::new();
        #[rustfmt::skip]
        let spawn_on_line = { set.spawn_on(yield_loop(&stop), rt.handle()); line!() };
        #[rustfmt::skip]
        let spawn_line = rt.block_on(async { set.spawn(yield_loop(&stop)); line!() });
        let metrics = rt.metrics();
        wait_until("both loops are demoted", || metrics.demotions() >= 2);
        stop.store(true, Ordering::SeqCst);
        rt.block_on(set.join_all());
        let sites = sites.0.lock().unwrap().clone();
        for line in [spawn_on_line, spawn_line] {
            let site = format!("tests/join_set.rs:{line}");
            assert!(
                sites.iter().any(|spawned_at| spawned_at.contains(&site)),
                "no demotion event names {site}: {sites:?}"
            );
        }
    });
}
