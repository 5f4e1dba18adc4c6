//! Seeded random sequences of operations over brigade's public API
//! (property-style).
//!
//! For each seed: build a runtime with 1–3 workers, run a random sequence
//! of operations (spawns of every kind, from every kind of caller; aborts,
//! detaches and bounded awaits of earlier tasks; timers; a TCP echo; wakers
//! kept past the runtime's end; background loops that never end by
//! themselves), end the runtime at a random point in one of several ways,
//! then check:
//! - every spawned future, every `spawn_blocking` closure and every task
//!   output was dropped exactly once (each is wrapped in a [`Token`]
//!   counted in a per-seed [`Ledger`], which also catches a second drop);
//! - every `JoinHandle` resolved as the operation says: the task's value,
//!   a panic for panicking tasks, a cancellation only after an abort or the
//!   runtime's end, and never anything for a task that never ends unless
//!   it was aborted or the runtime ended;
//! - spawning through a `Handle` kept past the runtime's end gives a
//!   cancelled `JoinHandle` (as `spawning_on_a_handle_after_shutdown_cancels_the_task`
//!   in `runtime.rs` documents) and drops the future or closure.
//!
//! Nothing may hang: every wait is bounded, and a wait that runs out fails
//! with the seed, what was being waited for and the operations so far. No
//! assertion is about speed.
//!
//! Environment:
//! - `BRIGADE_RANDOM_OPS_SEEDS=N`: how many seeds (default [`DEFAULT_SEEDS`]);
//! - `BRIGADE_RANDOM_OPS_SEED=N`: replay one seed (printed on failure);
//! - `BRIGADE_RANDOM_OPS_FIRST_SEED=N`: start of the seed range (default 0);
//! - `BRIGADE_RANDOM_OPS_BOUND_SECS=S`: the bound on each wait (default
//!   20 s; raise it under valgrind); a seed as a whole gets 3 × S + 10 s;
//! - `BRIGADE_RANDOM_OPS_SKIP=op,op`: leave these operations out (names as
//!   in the failure log, e.g. `ybl_loop`), to narrow a failure down;
//! - `BRIGADE_RANDOM_OPS_VERBOSE=1`: print every seed's operations.
//!
//! A seed fixes the sequence of operations, not the threads' interleaving,
//! so a replay exercises the same sequence under a new interleaving.

mod common;

use std::any::Any;
use std::fmt::Write as _;
use std::future::{Future, pending, poll_fn};
use std::net::{Shutdown, SocketAddr};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard, Once};
use std::task::{Context, Poll, Waker};
use std::thread;
use std::time::{Duration, Instant};

use brigade::net::{TcpListener, TcpStream};
use brigade::time::{interval, sleep, timeout};
use brigade::{Builder, Handle, JoinError, JoinHandle, Runtime};
use common::{local_block_on, panic_message, poll_once, with_timeout};

/// Seeds run when `BRIGADE_RANDOM_OPS_SEEDS` is not set.
const DEFAULT_SEEDS: u64 = 500;

/// Every intentional panic's message starts with this.
const INTENTIONAL: &str = "random_ops: intentional panic";

/// The panic hook keeps panics whose message starts with this off stderr:
/// the intentional ones, and failures of tasks that are allowed to fail
/// (a TCP echo whose peer was aborted or cancelled by the runtime's end; a
/// task whose child was). When such a failure is not allowed, the test's
/// own report carries the message (from the `JoinError`).
const QUIET: &str = "random_ops:";

/// The bound given to `shutdown_timeout` (a generous one: a hang, not
/// slowness, should make it run out).
const SHUTDOWN_BOUND: Duration = Duration::from_secs(10);

/// At most this many loops that keep a worker busy (`yield_if_busy`,
/// `yield_now`, elastic) per seed: the test runs on 2-core machines.
const MAX_CPU_LOOPS: usize = 3;

// ---------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------

struct Config {
    first_seed: u64,
    seeds: u64,
    skip: Vec<String>,
    bound: Duration,
    verbose: bool,
}

fn env_u64(name: &str) -> Option<u64> {
    let value = std::env::var(name).ok()?;
    Some(
        value
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={value:?} is not a number")),
    )
}

fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|value| !value.is_empty() && value != "0")
}

impl Config {
    fn from_env() -> Config {
        let (first_seed, seeds) = match env_u64("BRIGADE_RANDOM_OPS_SEED") {
            Some(seed) => (seed, 1),
            None => (
                env_u64("BRIGADE_RANDOM_OPS_FIRST_SEED").unwrap_or(0),
                env_u64("BRIGADE_RANDOM_OPS_SEEDS").unwrap_or(DEFAULT_SEEDS),
            ),
        };
        let skip = std::env::var("BRIGADE_RANDOM_OPS_SKIP")
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .map(str::to_owned)
            .collect();
        Config {
            first_seed,
            seeds,
            skip,
            bound: Duration::from_secs(env_u64("BRIGADE_RANDOM_OPS_BOUND_SECS").unwrap_or(20)),
            verbose: env_flag("BRIGADE_RANDOM_OPS_VERBOSE"),
        }
    }

    fn skips(&self, name: &str) -> bool {
        self.skip.iter().any(|skipped| skipped == name)
    }
}

// ---------------------------------------------------------------------
// A small seeded PRNG (SplitMix64)
// ---------------------------------------------------------------------

struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x6A09_E667_F3BC_C909)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`; the modulo bias is irrelevant here).
    fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// Uniform in `low..=high`.
    fn between(&mut self, low: u64, high: u64) -> u64 {
        low + self.below(high - low + 1)
    }

    fn index(&mut self, len: usize) -> usize {
        self.below(len as u64) as usize
    }

    fn percent(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    fn micros(&mut self, max: u64) -> Duration {
        Duration::from_micros(self.below(max + 1))
    }
}

// ---------------------------------------------------------------------
// Drop accounting
// ---------------------------------------------------------------------

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    /// A spawned future.
    Future,
    /// A `spawn_blocking` closure.
    Closure,
    /// A task's output.
    Output,
}

struct Entry {
    kind: Kind,
    what: &'static str,
    op: usize,
    drops: u32,
}

/// Every [`Token`] of one seed: what it guards and how often it was dropped.
#[derive(Default)]
struct Ledger {
    entries: Mutex<Vec<Entry>>,
}

/// Counted once when created and once when dropped; put one in everything
/// whose drop is to be checked.
struct Token {
    ledger: Arc<Ledger>,
    id: usize,
}

impl Ledger {
    fn token(self: &Arc<Self>, kind: Kind, what: &'static str, op: usize) -> Token {
        let mut entries = lock(&self.entries);
        entries.push(Entry {
            kind,
            what,
            op,
            drops: 0,
        });
        Token {
            ledger: self.clone(),
            id: entries.len() - 1,
        }
    }

    fn created(&self) -> usize {
        lock(&self.entries).len()
    }

    fn dropped(&self) -> usize {
        lock(&self.entries)
            .iter()
            .filter(|entry| entry.drops > 0)
            .count()
    }

    /// Names of the tokens of these kinds not dropped yet.
    fn live(&self, kinds: &[Kind]) -> Vec<String> {
        lock(&self.entries)
            .iter()
            .filter(|entry| entry.drops == 0 && kinds.contains(&entry.kind))
            .map(|entry| format!("{:?} of {}#{}", entry.kind, entry.what, entry.op))
            .collect()
    }

    fn dropped_twice(&self) -> Vec<String> {
        lock(&self.entries)
            .iter()
            .filter(|entry| entry.drops > 1)
            .map(|entry| {
                format!(
                    "{:?} of {}#{} dropped {} times",
                    entry.kind, entry.what, entry.op, entry.drops
                )
            })
            .collect()
    }
}

impl Drop for Token {
    fn drop(&mut self) {
        // Never panics here: a second drop is recorded and reported later.
        if let Some(entry) = lock(&self.ledger.entries).get_mut(self.id) {
            entry.drops += 1;
        }
    }
}

/// A future with a [`Token`]: its drop is counted.
struct Tracked<F> {
    _token: Token,
    future: Pin<Box<F>>,
}

impl<F: Future> Future for Tracked<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        self.future.as_mut().poll(cx)
    }
}

fn tracked<F: Future>(
    ledger: &Arc<Ledger>,
    what: &'static str,
    op: usize,
    future: F,
) -> Tracked<F> {
    Tracked {
        _token: ledger.token(Kind::Future, what, op),
        future: Box::pin(future),
    }
}

/// What every task of the sequence returns: a value with a token, so
/// outputs are counted too.
struct Out {
    value: u64,
    _token: Token,
}

impl std::fmt::Debug for Out {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Out({})", self.value)
    }
}

/// A tracked future whose value comes back as a tracked [`Out`].
fn tracked_task<F>(
    ledger: &Arc<Ledger>,
    what: &'static str,
    op: usize,
    future: F,
) -> Tracked<impl Future<Output = Out> + Send + 'static + use<F>>
where
    F: Future<Output = u64> + Send + 'static,
{
    let outputs = ledger.clone();
    tracked(ledger, what, op, async move {
        let value = future.await;
        Out {
            value,
            _token: outputs.token(Kind::Output, what, op),
        }
    })
}

/// A tracked `spawn_blocking` closure: its token is dropped with the
/// closure, run or not.
fn tracked_closure<F>(
    ledger: &Arc<Ledger>,
    what: &'static str,
    op: usize,
    f: F,
) -> impl FnOnce() -> Out + Send + 'static + use<F>
where
    F: FnOnce() -> u64 + Send + 'static,
{
    let token = ledger.token(Kind::Closure, what, op);
    let outputs = ledger.clone();
    move || {
        let _token = token;
        let value = f();
        Out {
            value,
            _token: outputs.token(Kind::Output, what, op),
        }
    }
}

/// A future whose `Drop` panics (unless already unwinding).
struct PanicsOnDrop<F> {
    future: Pin<Box<F>>,
}

impl<F: Future> Future for PanicsOnDrop<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        self.future.as_mut().poll(cx)
    }
}

impl<F> Drop for PanicsOnDrop<F> {
    fn drop(&mut self) {
        if !thread::panicking() {
            panic!("{INTENTIONAL} in a future's Drop");
        }
    }
}

/// The bound of a wait: like `brigade::time::timeout`, but measured by a
/// plain thread, so that it still runs out, with a message, if the
/// runtime's own timers stall.
fn wall_timeout<F: Future>(limit: Duration, future: F) -> WallTimeout<F> {
    WallTimeout {
        future: Box::pin(future),
        alarm: Alarm::start(limit),
    }
}

/// The error of a [`wall_timeout`] that ran out.
#[derive(Debug, PartialEq, Eq)]
struct WallElapsed;

/// Future returned by [`wall_timeout`].
struct WallTimeout<F> {
    future: Pin<Box<F>>,
    alarm: Alarm,
}

impl<F: Future> Future for WallTimeout<F> {
    type Output = Result<F::Output, WallElapsed>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Poll::Ready(output) = self.future.as_mut().poll(cx) {
            return Poll::Ready(Ok(output));
        }
        if self.alarm.has_fired(cx.waker()) {
            Poll::Ready(Err(WallElapsed))
        } else {
            Poll::Pending
        }
    }
}

/// A thread that wakes the last registered waker once its time is up, and
/// exits early when the alarm is dropped.
struct Alarm {
    state: Arc<AlarmState>,
    thread: thread::Thread,
}

struct AlarmState {
    fired: AtomicBool,
    dropped: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

impl Alarm {
    fn start(limit: Duration) -> Alarm {
        let state = Arc::new(AlarmState {
            fired: AtomicBool::new(false),
            dropped: AtomicBool::new(false),
            waker: Mutex::new(None),
        });
        let deadline = Instant::now() + limit;
        let thread = thread::Builder::new()
            .name("random-ops-alarm".to_owned())
            .spawn({
                let state = state.clone();
                move || {
                    while !state.dropped.load(Ordering::SeqCst) {
                        let now = Instant::now();
                        if now >= deadline {
                            state.fired.store(true, Ordering::SeqCst);
                            let waker = lock(&state.waker).take();
                            if let Some(waker) = waker {
                                waker.wake();
                            }
                            return;
                        }
                        thread::park_timeout(deadline - now);
                    }
                }
            })
            .expect("could not start an alarm thread")
            .thread()
            .clone();
        Alarm { state, thread }
    }

    /// Whether the time is up; if not, `waker` is woken when it is.
    fn has_fired(&self, waker: &Waker) -> bool {
        *lock(&self.state.waker) = Some(waker.clone());
        // Read after storing the waker: a firing in between wakes it.
        self.state.fired.load(Ordering::SeqCst)
    }
}

impl Drop for Alarm {
    fn drop(&mut self) {
        self.state.dropped.store(true, Ordering::SeqCst);
        self.thread.unpark();
    }
}

/// Panics on purpose (the message starts with [`INTENTIONAL`]).
fn intentional_panic(where_: &str) -> u64 {
    panic!("{INTENTIONAL} {where_}")
}

/// Keeps panics whose message starts with [`QUIET`] off stderr; every other
/// panic is printed by the previous hook.
fn install_panic_filter() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !panic_message(info.payload()).starts_with(QUIET) {
                previous(info);
            }
        }));
    });
}

// ---------------------------------------------------------------------
// Tasks and their expected outcomes
// ---------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Expect {
    /// Completes with this value.
    Value(u64),
    /// Panics.
    Panic,
    /// Never ends by itself.
    Never,
    /// Any outcome, or none before the runtime's end (its TCP peer was
    /// aborted, maybe before it connected).
    Any,
}

struct Task {
    handle: JoinHandle<Out>,
    name: String,
    expect: Expect,
    aborted: bool,
    /// `is_finished()` was true when it was first aborted: the abort must
    /// not turn its outcome into a cancellation.
    finished_at_abort: bool,
    /// Tasks that depend on each other (a TCP server and its client).
    group: Option<usize>,
    /// Its outcome depends on other tasks (its TCP peer, its children),
    /// which the runtime's end may cancel before its last poll: once the
    /// runtime has ended, any outcome is accepted.
    dependent: bool,
    /// A plain (not elastic) task looping on `yield_if_busy()`: the subject
    /// of the known bugs (a) and (b) (see [`bug_hint`]).
    ybl_loop: bool,
    /// Calls `yield_if_busy()` before it completes, so it may step aside
    /// into the yield queue, which a worker serves only when it has nothing
    /// else to do (as the README says). With as many never-ending loops as
    /// workers (on `yield_now()`, which always keep a task waiting, or on
    /// `yield_if_busy()`, which never give their worker up to the yield
    /// queue) no worker ever has nothing else to do, and such a task may wait
    /// for as long as the loops run. (An abort still reaches it: the abort
    /// wakes it out of the yield queue.)
    uses_ybl: bool,
}

/// Checks one resolved `JoinHandle` against what its operation promised.
/// `ended`: the runtime is gone, so any unfinished task may be cancelled.
fn check_outcome(
    name: &str,
    expect: Expect,
    aborted: bool,
    finished_at_abort: bool,
    ended: bool,
    result: &Result<Out, JoinError>,
) -> Result<(), String> {
    let problem = match result {
        Ok(out) => match expect {
            Expect::Value(value) if out.value == value => None,
            Expect::Any => None,
            _ => Some(format!("resolved as Ok({})", out.value)),
        },
        Err(error) if error.is_panic() => match expect {
            Expect::Panic | Expect::Any => None,
            _ => Some(format!("panicked: {error}")),
        },
        Err(error) if error.is_cancelled() => {
            if finished_at_abort {
                Some("was cancelled although it had finished before its abort".to_owned())
            } else if aborted || ended {
                None
            } else {
                Some("was cancelled without an abort or the runtime's end".to_owned())
            }
        }
        Err(error) => Some(format!(
            "failed neither by panic nor by cancellation: {error}"
        )),
    };
    match problem {
        None => Ok(()),
        Some(problem) => Err(format!(
            "task {name} (expected {expect:?}, aborted: {aborted}, runtime ended: {ended}) {problem}"
        )),
    }
}

/// The bugs a failure may be about, if a task looping on `yield_if_busy()`
/// was live (both fixed in 0534744; this test reproduces them on the commit
/// before).
fn bug_hint(ybl_loops: &[String]) -> String {
    if ybl_loops.is_empty() {
        String::new()
    } else {
        format!(
            " [tasks looping on yield_if_busy() were live: {}. Known bugs of such loops: \
             (a) dropping the runtime hung while a task looped on yield_if_busy(); (b) \
             JoinHandle::abort never took effect on a task looping on yield_if_busy()]",
            ybl_loops.join(", ")
        )
    }
}

// ---------------------------------------------------------------------
// Operations
// ---------------------------------------------------------------------

/// Every operation, with its relative weight.
const OPS: &[(&str, u64)] = &[
    ("short", 10),
    ("panic", 3),
    ("panic_in_drop", 3),
    ("elastic_short", 3),
    ("blocking", 4),
    ("blocking_panic", 2),
    ("blocking_spawner", 2),
    ("sleeper", 3),
    ("timeouts", 2),
    ("interval", 2),
    ("tcp_echo", 2),
    ("spawner", 3),
    ("waker_keeper", 3),
    ("waker_pending", 2),
    ("wake_from_thread", 2),
    ("ybl_loop", 3),
    ("ybl_loop_abort", 2),
    ("yield_now_loop", 2),
    ("elastic_ybl_loop", 1),
    ("sleep_loop", 2),
    ("io_read_pending", 1),
    ("io_accept_pending", 1),
    ("channel_pending", 1),
    ("pending", 1),
    ("abort", 6),
    ("abort_from_thread", 2),
    ("detach", 4),
    ("await", 8),
    ("foreign_waiter", 2),
    ("block_on_sleep", 2),
    ("block_on_timeout", 2),
    ("block_on_yields", 1),
];

/// Units of `spin` steps with `yield_if_busy()` between them, forever.
async fn yield_if_busy_forever(spin: u64) -> u64 {
    let mut units = 0u64;
    loop {
        for _ in 0..spin {
            units = std::hint::black_box(units.wrapping_add(1));
        }
        brigade::yield_if_busy().await;
    }
}

/// How the runtime ends.
#[derive(Clone, Copy, Debug)]
enum EndMode {
    /// `drop` on the thread that built it and ran the operations.
    Drop,
    /// `shutdown_timeout(SHUTDOWN_BOUND)` on that thread.
    ShutdownTimeout,
    /// `drop` on another plain thread it was moved to.
    DropOnThread,
    /// `shutdown_timeout(SHUTDOWN_BOUND)` on another plain thread.
    ShutdownTimeoutOnThread,
    /// `drop` inside one of its own tasks.
    DropInTask,
    /// `shutdown_timeout(SHUTDOWN_BOUND)` inside one of its own tasks.
    ShutdownTimeoutInTask,
    /// `shutdown_timeout(SHUTDOWN_BOUND)` inside one of its own
    /// `spawn_blocking` closures.
    ShutdownTimeoutInBlocking,
    /// `drop` inside one of its own `spawn_blocking` closures.
    DropInBlocking,
}

impl EndMode {
    /// Ends `rt` the way this mode says: a drop, or `shutdown_timeout`.
    fn end(self, rt: Runtime) {
        match self {
            EndMode::Drop
            | EndMode::DropOnThread
            | EndMode::DropInTask
            | EndMode::DropInBlocking => drop(rt),
            _ => rt.shutdown_timeout(SHUTDOWN_BOUND),
        }
    }
}

/// A foreign thread blocked in `Handle::block_on(join_handle)`.
struct Waiter {
    name: String,
    /// `Any` for a dependent task (see [`Task::dependent`]).
    expect: Expect,
    aborted: bool,
    finished_at_abort: bool,
    result: mpsc::Receiver<Result<Out, JoinError>>,
}

/// What the seed is doing, for the failure report.
#[derive(Default)]
struct Progress {
    log: Vec<String>,
    phase: String,
    /// [`bug_hint`] for the runtime's end, for a hang the seed's own bound
    /// catches (a `drop` on the seed's thread that never returns).
    end_hint: String,
}

/// One seed's run.
struct Run {
    seed: u64,
    cfg: Arc<Config>,
    rng: Rng,
    ledger: Arc<Ledger>,
    progress: Arc<Mutex<Progress>>,
    /// `None` once it has been ended (or leaked by a failing run).
    rt: Option<Runtime>,
    /// Kept past the runtime's end.
    handle: Handle,
    tasks: Vec<Task>,
    waiters: Vec<Waiter>,
    /// Wakers captured by tasks, woken from a foreign thread after the end.
    wakers: Arc<Mutex<Vec<Waker>>>,
    /// Things that must outlive the runtime (listeners nobody accepts on,
    /// channel senders nobody sends on).
    keep: Vec<Box<dyn Any + Send>>,
    cpu_loops: usize,
    workers: usize,
    /// `yield_now()` loops spawned (aborted or not: conservatively).
    yield_now_loops: usize,
    /// Plain tasks looping on `yield_if_busy()` not known to have ended
    /// (detached ones included), for [`bug_hint`].
    ybl_loops: Vec<String>,
    groups: usize,
    op: usize,
}

impl Drop for Run {
    fn drop(&mut self) {
        if thread::panicking() {
            // A failing run: dropping a runtime may hang (that may be the
            // very failure), which would hide the report. Leak it.
            if let Some(rt) = self.rt.take() {
                std::mem::forget(rt);
            }
        }
    }
}

impl Run {
    fn new(seed: u64, cfg: Arc<Config>, progress: Arc<Mutex<Progress>>) -> Run {
        let mut rng = Rng::new(seed);
        let workers = rng.between(1, 3) as usize;
        let mut builder = Builder::new();
        let mut settings = format!("worker_threads({workers})");
        builder.worker_threads(workers);
        if rng.percent(30) {
            let max = rng.between(1, 3) as usize;
            builder.max_blocking_threads(max);
            let _ = write!(settings, ".max_blocking_threads({max})");
        }
        if rng.percent(20) {
            builder.driver_thread(true);
            settings.push_str(".driver_thread(true)");
        }
        if rng.percent(20) {
            builder.latency_sample_every(1);
            settings.push_str(".latency_sample_every(1)");
        }
        let rt = builder.build().expect("building the runtime");
        let handle = rt.handle();
        let run = Run {
            seed,
            cfg,
            rng,
            ledger: Arc::new(Ledger::default()),
            progress,
            rt: Some(rt),
            handle,
            tasks: Vec::new(),
            waiters: Vec::new(),
            wakers: Arc::new(Mutex::new(Vec::new())),
            keep: Vec::new(),
            cpu_loops: 0,
            workers,
            yield_now_loops: 0,
            ybl_loops: Vec::new(),
            groups: 0,
            op: 0,
        };
        run.log(format!("runtime: Builder::new().{settings}"));
        run
    }

    fn rt(&self) -> &Runtime {
        self.rt.as_ref().expect("the runtime has ended")
    }

    fn log(&self, line: String) {
        lock(&self.progress).log.push(line);
    }

    fn phase(&self, phase: String) {
        lock(&self.progress).phase = phase;
    }

    fn bound(&self) -> Duration {
        self.cfg.bound
    }

    fn live_ybl_loops(&self) -> Vec<String> {
        self.ybl_loops.clone()
    }

    fn fail(&self, message: String) -> ! {
        panic!(
            "seed {}: {message}{}\n    runtime state: {}",
            self.seed,
            bug_hint(&self.live_ybl_loops()),
            self.diagnostics()
        )
    }

    /// The runtime's metrics, for failure messages.
    fn diagnostics(&self) -> String {
        let metrics = self.handle.metrics();
        format!(
            "{}; workers {} (idle {}), alive tasks {}, injector {}, yield queue {}, \
             elastic limit {:.3}, elastic waiting {}, elastic CPU {:?}, blocking threads {} \
             (idle {}, queued {}), timers {}, long polls {}",
            if self.rt.is_some() {
                "running"
            } else {
                "ended"
            },
            metrics.num_workers(),
            metrics.num_idle_workers(),
            metrics.num_alive_tasks(),
            metrics.injector_depth(),
            metrics.yield_queue_depth(),
            metrics.elastic_utilization_limit(),
            metrics.elastic_waiting(),
            metrics.elastic_cpu_time(),
            metrics.num_blocking_threads(),
            metrics.num_idle_blocking_threads(),
            metrics.blocking_queue_depth(),
            metrics.num_timers(),
            metrics.long_polls(),
        )
    }

    /// `rt.block_on(future)`, bounded by the wall clock.
    fn block_on_bounded<F: Future>(&self, what: &str, future: F) -> F::Output {
        let bound = self.bound();
        match self.rt().block_on(wall_timeout(bound, future)) {
            Ok(output) => output,
            Err(WallElapsed) => self.fail(format!("{what}: not done within {bound:?}")),
        }
    }

    fn push_task(&mut self, handle: JoinHandle<Out>, what: &str, expect: Expect) -> &mut Task {
        let name = format!("{what}#{}", self.op);
        self.log(format!("  -> {name}: expect {expect:?}"));
        self.tasks.push(Task {
            handle,
            name,
            expect,
            aborted: false,
            finished_at_abort: false,
            group: None,
            dependent: false,
            ybl_loop: false,
            uses_ybl: false,
        });
        self.tasks.last_mut().expect("just pushed")
    }

    /// Spawns `future` from a random kind of caller: the `Runtime`, a
    /// `Handle`, `brigade::spawn` inside `block_on`, another task, or a
    /// `Handle` on a plain thread.
    // The async blocks hand the new task's `JoinHandle` back on purpose.
    #[allow(clippy::async_yields_async)]
    fn spawn_via<F>(&mut self, elastic: bool, future: F) -> JoinHandle<Out>
    where
        F: Future<Output = Out> + Send + 'static,
    {
        let via = self.rng.below(5);
        self.log(format!(
            "  spawn{} via {}",
            if elastic { "_elastic" } else { "" },
            ["Runtime", "Handle", "block_on", "task", "thread"][via as usize]
        ));
        match via {
            0 if elastic => self.rt().spawn_elastic(future),
            0 => self.rt().spawn(future),
            1 if elastic => self.rt().handle().spawn_elastic(future),
            1 => self.rt().handle().spawn(future),
            2 => self.block_on_bounded("spawning inside block_on", async move {
                if elastic {
                    brigade::spawn_elastic(future)
                } else {
                    brigade::spawn(future)
                }
            }),
            3 => {
                let spawner = tracked(&self.ledger, "spawning_task", self.op, async move {
                    if elastic {
                        brigade::spawn_elastic(future)
                    } else {
                        brigade::spawn(future)
                    }
                });
                let spawner = self.rt().spawn(spawner);
                self.block_on_bounded("a task that spawns", spawner)
                    .unwrap_or_else(|error| self.fail(format!("a task that spawns: {error}")))
            }
            _ => {
                let handle = self.rt().handle();
                thread::spawn(move || {
                    if elastic {
                        handle.spawn_elastic(future)
                    } else {
                        handle.spawn(future)
                    }
                })
                .join()
                .expect("the spawning thread panicked")
            }
        }
    }

    /// `spawn_blocking` from a random kind of caller.
    // The async blocks hand the new task's `JoinHandle` back on purpose.
    #[allow(clippy::async_yields_async)]
    fn spawn_blocking_via<F>(&mut self, f: F) -> JoinHandle<Out>
    where
        F: FnOnce() -> Out + Send + 'static,
    {
        let via = self.rng.below(4);
        self.log(format!(
            "  spawn_blocking via {}",
            ["Runtime", "Handle on a thread", "block_on", "task"][via as usize]
        ));
        match via {
            0 => self.rt().spawn_blocking(f),
            1 => {
                let handle = self.rt().handle();
                thread::spawn(move || handle.spawn_blocking(f))
                    .join()
                    .expect("the spawning thread panicked")
            }
            2 => self.block_on_bounded("spawn_blocking inside block_on", async move {
                brigade::spawn_blocking(f)
            }),
            _ => {
                let spawner = tracked(&self.ledger, "spawning_task", self.op, async move {
                    brigade::spawn_blocking(f)
                });
                let spawner = self.rt().spawn(spawner);
                self.block_on_bounded("a task that spawns a blocking closure", spawner)
                    .unwrap_or_else(|error| self.fail(format!("a task that spawns: {error}")))
            }
        }
    }

    fn pick_op(&mut self) -> &'static str {
        let total: u64 = OPS.iter().map(|(_, weight)| weight).sum();
        loop {
            let mut roll = self.rng.below(total);
            let name = OPS
                .iter()
                .find(|(_, weight)| {
                    if roll < *weight {
                        true
                    } else {
                        roll -= weight;
                        false
                    }
                })
                .map(|&(name, _)| name)
                .expect("a weight matches");
            let cpu_loop = matches!(
                name,
                "ybl_loop" | "ybl_loop_abort" | "yield_now_loop" | "elastic_ybl_loop"
            );
            if self.cfg.skips(name) || (cpu_loop && self.cpu_loops >= MAX_CPU_LOOPS) {
                // Still consume randomness the same way: reroll.
                continue;
            }
            if cpu_loop {
                self.cpu_loops += 1;
            }
            return name;
        }
    }

    fn run(mut self) {
        let ops = self.rng.between(4, 30);
        for op in 0..ops as usize {
            self.op = op;
            let name = self.pick_op();
            self.log(format!("op {op}: {name}"));
            self.phase(format!("running op {op} ({name})"));
            self.do_op(name);
        }
        self.end();
    }

    fn do_op(&mut self, name: &'static str) {
        let ledger = self.ledger.clone();
        let op = self.op;
        let value = self.rng.below(1 << 32);
        match name {
            "short" => {
                let yields = self.rng.below(4);
                let task = tracked_task(&ledger, name, op, async move {
                    for i in 0..yields {
                        if i % 2 == 0 {
                            brigade::yield_now().await;
                        } else {
                            brigade::yield_if_busy().await;
                        }
                    }
                    value
                });
                let handle = self.spawn_via(false, task);
                self.push_task(handle, name, Expect::Value(value)).uses_ybl = yields >= 2;
            }
            "panic" => {
                let yield_first = self.rng.percent(50);
                let task = tracked_task(&ledger, name, op, async move {
                    if yield_first {
                        brigade::yield_now().await;
                    }
                    intentional_panic("in a task")
                });
                let handle = self.spawn_via(false, task);
                self.push_task(handle, name, Expect::Panic);
            }
            "panic_in_drop" => {
                let yield_first = self.rng.percent(50);
                let task = tracked_task(&ledger, name, op, async move {
                    PanicsOnDrop {
                        future: Box::pin(async move {
                            if yield_first {
                                brigade::yield_now().await;
                            }
                            value
                        }),
                    }
                    .await
                });
                let handle = self.spawn_via(false, task);
                self.push_task(handle, name, Expect::Panic);
            }
            "elastic_short" => {
                let yields = self.rng.below(20);
                let task = tracked_task(&ledger, name, op, async move {
                    for _ in 0..yields {
                        brigade::yield_if_busy().await;
                    }
                    value
                });
                let handle = self.spawn_via(true, task);
                self.push_task(handle, name, Expect::Value(value)).uses_ybl = yields > 0;
            }
            "blocking" => {
                let nap = self.rng.micros(2_000);
                let f = tracked_closure(&ledger, name, op, move || {
                    thread::sleep(nap);
                    value
                });
                let handle = self.spawn_blocking_via(f);
                self.push_task(handle, name, Expect::Value(value));
            }
            "blocking_panic" => {
                let f = tracked_closure(&ledger, name, op, || {
                    intentional_panic("in a spawn_blocking closure")
                });
                let handle = self.spawn_blocking_via(f);
                self.push_task(handle, name, Expect::Panic);
            }
            "blocking_spawner" => {
                // A blocking closure that spawns a detached task.
                let inner = ledger.clone();
                let f = tracked_closure(&ledger, name, op, move || {
                    drop(brigade::spawn(tracked_task(
                        &inner,
                        "blocking_child",
                        op,
                        async move {
                            brigade::yield_now().await;
                            value
                        },
                    )));
                    value
                });
                let handle = self.spawn_blocking_via(f);
                self.push_task(handle, name, Expect::Value(value));
            }
            "sleeper" => {
                let nap = self.rng.micros(3_000);
                let task = tracked_task(&ledger, name, op, async move {
                    let started = Instant::now();
                    sleep(nap).await;
                    assert!(
                        started.elapsed() >= nap,
                        "a sleep ended before its deadline"
                    );
                    value
                });
                let handle = self.spawn_via(false, task);
                self.push_task(handle, name, Expect::Value(value));
            }
            "timeouts" => {
                let short = self.rng.micros(2_000);
                let task = tracked_task(&ledger, name, op, async move {
                    assert!(timeout(short, pending::<()>()).await.is_err());
                    assert_eq!(
                        timeout(Duration::from_secs(3600), async { value }).await,
                        Ok(value)
                    );
                    assert!(
                        timeout(short, sleep(Duration::from_secs(3600)))
                            .await
                            .is_err()
                    );
                    value
                });
                let handle = self.spawn_via(false, task);
                self.push_task(handle, name, Expect::Value(value));
            }
            "interval" => {
                let ticks = self.rng.between(1, 4);
                let period = Duration::from_micros(self.rng.between(100, 1_500));
                let task = tracked_task(&ledger, name, op, async move {
                    let mut ticker = interval(period);
                    let mut previous = None;
                    for _ in 0..ticks {
                        let tick = ticker.tick().await;
                        assert!(Instant::now() >= tick, "a tick came before its instant");
                        if let Some(previous) = previous {
                            assert!(tick > previous, "interval ticks out of order");
                        }
                        previous = Some(tick);
                    }
                    ticks
                });
                let handle = self.spawn_via(false, task);
                self.push_task(handle, name, Expect::Value(ticks));
            }
            "tcp_echo" => self.tcp_echo(),
            "spawner" => {
                let children = self.rng.between(1, 6);
                let plan: Vec<(u64, bool, bool)> = (0..children)
                    .map(|_| {
                        (
                            self.rng.below(1 << 32),
                            self.rng.percent(30), // detached
                            self.rng.percent(20), // elastic
                        )
                    })
                    .collect();
                let expected = plan
                    .iter()
                    .filter(|(_, detached, _)| !detached)
                    .map(|(value, _, _)| value)
                    .sum();
                let inner = ledger.clone();
                let task = tracked_task(&ledger, name, op, async move {
                    let mut awaited = Vec::new();
                    for (value, detached, elastic) in plan {
                        let child = tracked_task(&inner, "child", op, async move {
                            brigade::yield_now().await;
                            value
                        });
                        let child = if elastic {
                            brigade::spawn_elastic(child)
                        } else {
                            brigade::spawn(child)
                        };
                        if !detached {
                            awaited.push((child, value));
                        }
                    }
                    let mut sum = 0;
                    for (child, value) in awaited {
                        let out = child.await.expect("random_ops: a child task failed");
                        assert_eq!(out.value, value);
                        sum += value;
                    }
                    sum
                });
                let handle = self.spawn_via(false, task);
                self.push_task(handle, name, Expect::Value(expected))
                    .dependent = true;
            }
            "waker_keeper" | "waker_pending" => {
                let never = name == "waker_pending";
                let wakers = self.wakers.clone();
                let task = tracked_task(&ledger, name, op, async move {
                    poll_fn(|cx| {
                        lock(&wakers).push(cx.waker().clone());
                        Poll::Ready(())
                    })
                    .await;
                    drop(wakers);
                    if never {
                        pending::<()>().await;
                    }
                    value
                });
                let handle = self.spawn_via(false, task);
                let expect = if never {
                    Expect::Never
                } else {
                    Expect::Value(value)
                };
                self.push_task(handle, name, expect);
            }
            "wake_from_thread" => {
                let wakers: Vec<Waker> = lock(&self.wakers).clone();
                thread::spawn(move || {
                    for waker in wakers {
                        waker.wake();
                    }
                })
                .join()
                .expect("the waking thread panicked");
            }
            "ybl_loop" | "ybl_loop_abort" => {
                let spin = self.rng.between(1, 300);
                let task = tracked_task(&ledger, name, op, yield_if_busy_forever(spin));
                let handle = self.spawn_via(false, task);
                let task = self.push_task(handle, name, Expect::Never);
                task.ybl_loop = true;
                task.uses_ybl = true;
                let task_name = task.name.clone();
                self.ybl_loops.push(task_name);
                if name == "ybl_loop_abort" {
                    // Abort it at once or once it runs, and await it: it must
                    // resolve as cancelled (known bug (b) before 0534744).
                    if self.rng.percent(70) {
                        let nap = self.rng.micros(2_000);
                        self.block_on_bounded(
                            "a sleep in block_on",
                            async move { sleep(nap).await },
                        );
                    }
                    let from_thread = self.rng.percent(30);
                    let index = self.tasks.len() - 1;
                    self.abort_task(index, from_thread);
                    self.await_task(index);
                }
            }
            "yield_now_loop" => {
                self.yield_now_loops += 1;
                let task = tracked_task(&ledger, name, op, async move {
                    loop {
                        brigade::yield_now().await;
                    }
                });
                let handle = self.spawn_via(false, task);
                self.push_task(handle, name, Expect::Never);
            }
            "elastic_ybl_loop" => {
                let spin = self.rng.between(1, 300);
                let task = tracked_task(&ledger, name, op, yield_if_busy_forever(spin));
                let handle = self.spawn_via(true, task);
                self.push_task(handle, name, Expect::Never).uses_ybl = true;
            }
            "sleep_loop" => {
                // Not zero: `sleep(0)` is ready at once, and a loop of them
                // would never give its worker back.
                let nap = Duration::from_micros(self.rng.between(50, 2_000));
                let task = tracked_task(&ledger, name, op, async move {
                    loop {
                        sleep(nap).await;
                    }
                });
                let handle = self.spawn_via(false, task);
                self.push_task(handle, name, Expect::Never);
            }
            "io_read_pending" => {
                // Connects to a listener that never accepts nor writes (kept
                // past the runtime's end), then waits to read.
                let listener =
                    std::net::TcpListener::bind("127.0.0.1:0").expect("binding a std listener");
                let addr = listener.local_addr().expect("listener address");
                self.keep.push(Box::new(listener));
                let task = tracked_task(&ledger, name, op, async move {
                    let stream = TcpStream::connect(addr).await.expect("random_ops: connect");
                    let mut buf = [0u8; 8];
                    let _ = stream.read(&mut buf).await;
                    pending::<u64>().await
                });
                let handle = self.spawn_via(false, task);
                self.push_task(handle, name, Expect::Never);
            }
            "io_accept_pending" => {
                let task = tracked_task(&ledger, name, op, async move {
                    let listener = TcpListener::bind("127.0.0.1:0")
                        .await
                        .expect("random_ops: bind");
                    let _ = listener.accept().await;
                    pending::<u64>().await
                });
                let handle = self.spawn_via(false, task);
                self.push_task(handle, name, Expect::Never);
            }
            "channel_pending" => {
                // The sender outlives the runtime; dropping it then wakes a
                // task of a runtime that is gone.
                let (sender, mut receiver) = common::channel::<u64>();
                self.keep.push(Box::new(sender));
                let task = tracked_task(&ledger, name, op, async move {
                    let _ = receiver.recv().await;
                    pending::<u64>().await
                });
                let handle = self.spawn_via(false, task);
                self.push_task(handle, name, Expect::Never);
            }
            "pending" => {
                let task = tracked_task(&ledger, name, op, pending::<u64>());
                let handle = self.spawn_via(false, task);
                self.push_task(handle, name, Expect::Never);
            }
            "abort" | "abort_from_thread" => self.abort(name == "abort_from_thread"),
            "detach" => {
                if !self.tasks.is_empty() {
                    let index = self.rng.index(self.tasks.len());
                    let task = self.tasks.swap_remove(index);
                    self.log(format!("  detach {}", task.name));
                }
            }
            "await" => self.await_one(),
            "foreign_waiter" => self.foreign_waiter(),
            "block_on_sleep" => {
                let nap = self.rng.micros(3_000);
                let started = Instant::now();
                self.block_on_bounded("a sleep in block_on", async move { sleep(nap).await });
                assert!(
                    started.elapsed() >= nap,
                    "a sleep ended before its deadline"
                );
            }
            "block_on_timeout" => {
                let short = self.rng.micros(2_000);
                self.block_on_bounded("timeouts in block_on", async move {
                    assert!(timeout(short, pending::<()>()).await.is_err());
                    assert_eq!(timeout(Duration::from_secs(3600), async { 7 }).await, Ok(7));
                });
            }
            "block_on_yields" => {
                let task = tracked_task(&ledger, name, op, async move {
                    brigade::yield_now().await;
                    value
                });
                let out = self.block_on_bounded("yields in block_on", async move {
                    brigade::yield_now().await;
                    brigade::yield_if_busy().await;
                    brigade::spawn(task).await
                });
                match out {
                    Ok(out) if out.value == value => {}
                    other => self.fail(format!("a task awaited in block_on gave {other:?}")),
                }
            }
            other => unreachable!("unknown op {other}"),
        }
    }

    fn tcp_echo(&mut self) {
        let ledger = self.ledger.clone();
        let op = self.op;
        let len = self.rng.between(1, 16 * 1024) as usize;
        let chunk = self.rng.between(1, 4096) as usize;
        let api = self.rng.below(3);
        let fill = self.rng.next_u64();
        let payload: Vec<u8> = (0..len)
            .map(|i| (fill.rotate_left(i as u32 % 64) ^ i as u64) as u8)
            .collect();
        let listener = self.block_on_bounded("binding a listener", async {
            TcpListener::bind("127.0.0.1:0").await
        });
        let listener = listener.expect("binding a TcpListener");
        let addr = listener.local_addr().expect("listener address");
        let server = tracked_task(&ledger, "tcp_server", op, async move {
            let (stream, _) = listener.accept().await.expect("random_ops: accept");
            let mut buf = [0u8; 512];
            let mut total = 0u64;
            loop {
                let n = stream
                    .read(&mut buf)
                    .await
                    .expect("random_ops: server read");
                if n == 0 {
                    break;
                }
                stream
                    .write_all(&buf[..n])
                    .await
                    .expect("random_ops: server write");
                total += n as u64;
            }
            total
        });
        let client = tracked_task(&ledger, "tcp_client", op, async move {
            echo_client(addr, payload, chunk, api)
                .await
                .expect("random_ops: echo client")
        });
        let group = Some(self.groups);
        self.groups += 1;
        let server = self.spawn_via(false, server);
        let client = self.spawn_via(false, client);
        self.log(format!(
            "  tcp echo of {len} bytes in {chunk}-byte chunks, api {api}"
        ));
        for (handle, what) in [(server, "tcp_server"), (client, "tcp_client")] {
            let task = self.push_task(handle, what, Expect::Value(len as u64));
            task.group = group;
            task.dependent = true;
        }
    }

    fn abort(&mut self, from_thread: bool) {
        if !self.tasks.is_empty() {
            let index = self.rng.index(self.tasks.len());
            self.abort_task(index, from_thread);
        }
    }

    fn abort_task(&mut self, index: usize, from_thread: bool) {
        let twice = self.rng.percent(10);
        let task = &mut self.tasks[index];
        if !task.aborted {
            task.finished_at_abort = task.handle.is_finished();
        }
        if from_thread {
            thread::scope(|scope| {
                scope.spawn(|| task.handle.abort());
            });
        } else {
            task.handle.abort();
        }
        if twice {
            task.handle.abort();
        }
        task.aborted = true;
        let name = task.name.clone();
        let group = task.group;
        self.log(format!("  abort {name}"));
        if let Some(group) = group {
            // Its peer may now fail or end early.
            for peer in self.tasks.iter_mut() {
                if peer.group == Some(group) && peer.name != name {
                    peer.expect = Expect::Any;
                }
            }
        }
    }

    /// Awaits a random task with a bound: from `block_on`, from another
    /// task, or from `Handle::block_on` on a plain thread. A task that need
    /// not end (and was not aborted) is awaited briefly: a `Never` one must
    /// still be pending; any other must resolve within the bound.
    fn await_one(&mut self) {
        if !self.tasks.is_empty() {
            let index = self.rng.index(self.tasks.len());
            self.await_task(index);
        }
    }

    fn await_task(&mut self, index: usize) {
        let mut task = self.tasks.swap_remove(index);
        // Not expected to end by itself (an aborted task must resolve).
        let still_pending = matches!(task.expect, Expect::Never | Expect::Any) && !task.aborted;
        let busy_loops = self.yield_now_loops + self.ybl_loops.len();
        let may_starve = task.uses_ybl && !task.aborted && busy_loops >= self.workers;
        let wait = if still_pending || may_starve {
            self.rng.micros(3_000)
        } else {
            self.bound()
        };
        let from = self.rng.below(3);
        self.log(format!(
            "  await {} for {wait:?} from {}",
            task.name,
            ["block_on", "a task", "a thread's Handle::block_on"][from as usize]
        ));
        let mut handle = task.handle;
        let (handle, result) = match from {
            0 => {
                let result = self.rt().block_on(wall_timeout(wait, &mut handle));
                (handle, result)
            }
            1 => {
                let (sender, receiver) = mpsc::channel();
                let joiner = tracked_task(&self.ledger, "joiner", self.op, async move {
                    let result = wall_timeout(wait, &mut handle).await;
                    let _ = sender.send((handle, result));
                    0
                });
                drop(self.rt().spawn(joiner));
                match receiver.recv_timeout(wait + self.bound()) {
                    Ok(pair) => pair,
                    Err(error) => self.fail(format!(
                        "the task awaiting {} did not report back: {error:?}",
                        task.name
                    )),
                }
            }
            _ => {
                let rt_handle = self.rt().handle();
                let (sender, receiver) = mpsc::channel();
                thread::spawn(move || {
                    let result = rt_handle.block_on(wall_timeout(wait, &mut handle));
                    let _ = sender.send((handle, result));
                });
                match receiver.recv_timeout(wait + self.bound()) {
                    Ok(pair) => pair,
                    Err(error) => self.fail(format!(
                        "the thread awaiting {} did not report back: {error:?}",
                        task.name
                    )),
                }
            }
        };
        task.handle = handle;
        match result {
            Err(_elapsed) if still_pending => self.tasks.push(task),
            Err(_elapsed) if may_starve => {
                self.log(format!(
                    "  {} still waiting, perhaps in the yield queue behind never-ending loops",
                    task.name
                ));
                self.tasks.push(task);
            }
            Err(_elapsed) => {
                let what = if task.aborted {
                    "was aborted but did not resolve"
                } else {
                    "did not resolve"
                };
                // Name the known bug this is, if it is one.
                let bug = if task.ybl_loop && task.aborted {
                    " (known bug (b): JoinHandle::abort did not take effect on a task looping on \
                     yield_if_busy())"
                } else {
                    ""
                };
                self.fail(format!("task {} {what} within {wait:?}{bug}", task.name))
            }
            Ok(result) => {
                if let Err(problem) = check_outcome(
                    &task.name,
                    task.expect,
                    task.aborted,
                    task.finished_at_abort,
                    false,
                    &result,
                ) {
                    self.fail(problem)
                }
                self.log(format!(
                    "  {} resolved: {:?}",
                    task.name,
                    result_summary(&result)
                ));
                self.ybl_loops.retain(|name| *name != task.name);
            }
        }
    }

    /// Moves a random task's handle to a plain thread blocked in
    /// `Handle::block_on` on it until it resolves, at the latest when the
    /// runtime ends.
    fn foreign_waiter(&mut self) {
        if self.tasks.is_empty() {
            return;
        }
        let index = self.rng.index(self.tasks.len());
        let task = self.tasks.swap_remove(index);
        self.log(format!("  {} awaited by a foreign thread", task.name));
        let rt_handle = self.rt().handle();
        let (sender, receiver) = mpsc::channel();
        let handle = task.handle;
        thread::spawn(move || {
            let _ = sender.send(rt_handle.block_on(handle));
        });
        self.waiters.push(Waiter {
            name: task.name,
            expect: if task.dependent {
                Expect::Any
            } else {
                task.expect
            },
            aborted: task.aborted,
            finished_at_abort: task.finished_at_abort,
            result: receiver,
        });
    }

    fn pick_end_mode(&mut self) -> EndMode {
        let modes = [
            (EndMode::Drop, 4),
            (EndMode::ShutdownTimeout, 3),
            (EndMode::DropOnThread, 2),
            (EndMode::ShutdownTimeoutOnThread, 2),
            (EndMode::DropInTask, 1),
            (EndMode::ShutdownTimeoutInTask, 1),
            (EndMode::ShutdownTimeoutInBlocking, 1),
            (EndMode::DropInBlocking, 1),
        ];
        let total = modes.iter().map(|(_, weight)| weight).sum();
        let mut roll = self.rng.below(total);
        for (mode, weight) in modes {
            if roll < weight {
                return mode;
            }
            roll -= weight;
        }
        unreachable!()
    }

    /// Ends the runtime, then checks everything it promised.
    fn end(mut self) {
        let mode = self.pick_end_mode();
        let storm = self.rng.percent(25);
        let racing_spawner = self.rng.percent(25);
        self.log(format!(
            "end: {mode:?}{}{}",
            if storm {
                ", wakers woken meanwhile"
            } else {
                ""
            },
            if racing_spawner {
                ", a thread spawning meanwhile"
            } else {
                ""
            }
        ));
        lock(&self.progress).end_hint = bug_hint(&self.live_ybl_loops());
        self.phase(format!("ending the runtime ({mode:?})"));

        // Threads racing with the end: one waking every captured waker, one
        // spawning through a Handle.
        let stop = Arc::new(AtomicBool::new(false));
        let storm = storm.then(|| {
            let stop = stop.clone();
            let wakers = self.wakers.clone();
            thread::spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    let wakers: Vec<Waker> = lock(&wakers).clone();
                    wakers.iter().for_each(Waker::wake_by_ref);
                    thread::yield_now();
                }
            })
        });
        let racing_spawner = racing_spawner.then(|| {
            let stop = stop.clone();
            let handle = self.handle.clone();
            let ledger = self.ledger.clone();
            let op = self.op + 1;
            thread::spawn(move || {
                let mut spawned = Vec::new();
                let mut n = 0u64;
                while !stop.load(Ordering::SeqCst) && spawned.len() < 5_000 {
                    let never = n % 2 == 0;
                    let task = tracked_task(&ledger, "racing_spawn", op, async move {
                        if never {
                            pending::<()>().await;
                        }
                        n
                    });
                    let expect = if never {
                        Expect::Never
                    } else {
                        Expect::Value(n)
                    };
                    spawned.push((handle.spawn(task), expect));
                    n += 1;
                    thread::yield_now();
                }
                spawned
            })
        });
        if racing_spawner.is_some() {
            // Let it spawn a few before the end begins.
            thread::sleep(Duration::from_micros(200));
        }

        let rt = self.rt.take().expect("the runtime");
        let bound = self.bound();
        let (done, ended) = mpsc::channel::<()>();
        let end_started = Instant::now();
        let inside = match mode {
            EndMode::Drop => {
                drop(rt);
                false
            }
            EndMode::ShutdownTimeout => {
                rt.shutdown_timeout(SHUTDOWN_BOUND);
                false
            }
            EndMode::DropOnThread | EndMode::ShutdownTimeoutOnThread => {
                thread::spawn(move || {
                    mode.end(rt);
                    let _ = done.send(());
                });
                self.wait_for_end(mode, &ended, bound + SHUTDOWN_BOUND);
                false
            }
            EndMode::DropInTask | EndMode::ShutdownTimeoutInTask => {
                let slot = Arc::new(Mutex::new(Some(rt)));
                let ender = tracked_task(&self.ledger, "ender_task", self.op, {
                    let slot = slot.clone();
                    async move {
                        let rt = lock(&slot).take();
                        if let Some(rt) = rt {
                            mode.end(rt);
                        }
                        let _ = done.send(());
                        0
                    }
                });
                drop(self.handle.spawn(ender));
                self.wait_for_end(mode, &ended, bound + SHUTDOWN_BOUND);
                true
            }
            EndMode::ShutdownTimeoutInBlocking | EndMode::DropInBlocking => {
                let slot = Arc::new(Mutex::new(Some(rt)));
                let ender = tracked_closure(&self.ledger, "ender_blocking", self.op, {
                    let slot = slot.clone();
                    move || {
                        let rt = lock(&slot).take();
                        if let Some(rt) = rt {
                            mode.end(rt);
                        }
                        let _ = done.send(());
                        0
                    }
                });
                drop(self.handle.spawn_blocking(ender));
                self.wait_for_end(mode, &ended, bound + SHUTDOWN_BOUND);
                true
            }
        };
        // For the log only; nothing asserts a duration.
        self.log(format!(
            "  the end returned after {:?}",
            end_started.elapsed()
        ));
        self.phase(format!("checking after the runtime's end ({mode:?})"));

        // Stop the racing threads; what they spawned must all have resolved.
        stop.store(true, Ordering::SeqCst);
        if let Some(storm) = storm {
            storm.join().expect("the waking thread panicked");
        }
        let racing_spawns =
            racing_spawner.map(|spawner| spawner.join().expect("the racing spawner panicked"));

        // Every future and closure has been dropped: at once if the end was
        // called from outside the runtime, within the bound if from inside
        // (the ending worker or blocking thread drops its last tasks after
        // the call returns).
        if inside {
            let deadline = Instant::now() + bound;
            while (!self.ledger.live(&[Kind::Future, Kind::Closure]).is_empty()
                || self.handle.metrics().num_alive_tasks() != 0)
                && Instant::now() < deadline
            {
                thread::sleep(Duration::from_millis(1));
            }
        }
        let live = self.ledger.live(&[Kind::Future, Kind::Closure]);
        if !live.is_empty() {
            self.fail(format!(
                "after the runtime's end ({mode:?}), these were never dropped: {}",
                live.join(", ")
            ));
        }

        // Every remaining JoinHandle has resolved.
        for mut task in std::mem::take(&mut self.tasks) {
            if !task.handle.is_finished() {
                self.fail(format!(
                    "JoinHandle of {} not finished after the runtime's end",
                    task.name
                ));
            }
            match self.resolved(&mut task.handle, inside) {
                Poll::Ready(result) => {
                    let expect = if task.dependent {
                        Expect::Any
                    } else {
                        task.expect
                    };
                    if let Err(problem) = check_outcome(
                        &task.name,
                        expect,
                        task.aborted,
                        task.finished_at_abort,
                        true,
                        &result,
                    ) {
                        self.fail(problem);
                    }
                }
                Poll::Pending => self.fail(format!(
                    "JoinHandle of {} still pending after the runtime's end",
                    task.name
                )),
            }
        }
        for (index, (mut handle, expect)) in racing_spawns.into_iter().flatten().enumerate() {
            let name = format!("racing_spawn {index}");
            match self.resolved(&mut handle, inside) {
                Poll::Ready(result) => {
                    if let Err(problem) = check_outcome(&name, expect, false, false, true, &result)
                    {
                        self.fail(problem);
                    }
                }
                Poll::Pending => self.fail(format!(
                    "JoinHandle of {name}, spawned while the runtime ended, still pending"
                )),
            }
        }
        for waiter in std::mem::take(&mut self.waiters) {
            match waiter.result.recv_timeout(bound) {
                Ok(result) => {
                    if let Err(problem) = check_outcome(
                        &waiter.name,
                        waiter.expect,
                        waiter.aborted,
                        waiter.finished_at_abort,
                        true,
                        &result,
                    ) {
                        self.fail(problem);
                    }
                }
                Err(error) => self.fail(format!(
                    "Handle::block_on of {}'s JoinHandle on a foreign thread did not return \
                     after the runtime's end: {error:?}",
                    waiter.name
                )),
            }
        }
        if self.handle.metrics().num_alive_tasks() != 0 {
            self.fail(format!(
                "{} task(s) still alive after the runtime's end",
                self.handle.metrics().num_alive_tasks()
            ));
        }

        // Wakers captured by tasks, woken from a foreign thread now that the
        // runtime is gone.
        self.phase("waking kept wakers after the runtime's end".to_owned());
        let wakers = std::mem::take(&mut *lock(&self.wakers));
        let woken = wakers.len();
        run_on_thread(bound, "waking kept wakers", move || {
            for waker in wakers {
                waker.wake_by_ref();
                waker.wake();
            }
        })
        .unwrap_or_else(|error| self.fail(error));

        // Spawning through a Handle kept past the end: cancelled at once,
        // the future or closure dropped.
        self.phase("spawning on a handle after the runtime's end".to_owned());
        let also_here = self.rng.percent(50);
        let handle = self.handle.clone();
        let ledger = self.ledger.clone();
        let op = self.op + 2;
        let mut late = Vec::from(
            run_on_thread(bound, "spawning after the end", move || {
                spawn_late(&handle, &ledger, op)
            })
            .unwrap_or_else(|error| self.fail(error)),
        );
        if also_here {
            late.extend(spawn_late(&self.handle, &self.ledger, op));
        }
        for result in late {
            match result {
                Err(error) if error.is_cancelled() => {}
                other => self.fail(format!(
                    "spawning on a Handle after the runtime's end gave {:?}, not a cancellation",
                    other.map_err(|error| error.to_string())
                )),
            }
        }

        // Listeners and channel senders kept for the never-ending tasks: the
        // senders' drop wakes tasks of a runtime that is gone.
        self.keep.clear();

        self.phase("final accounting".to_owned());
        let twice = self.ledger.dropped_twice();
        if !twice.is_empty() {
            self.fail(format!("dropped more than once: {}", twice.join(", ")));
        }
        let (created, dropped) = (self.ledger.created(), self.ledger.dropped());
        if created != dropped {
            self.fail(format!(
                "{created} tracked values created, {dropped} dropped; never dropped: {}",
                self.ledger
                    .live(&[Kind::Future, Kind::Closure, Kind::Output])
                    .join(", ")
            ));
        }
        self.log(format!(
            "end checked: {created} tracked values, {woken} kept wakers woken"
        ));
    }

    /// Polls a `JoinHandle` after the runtime's end: once if the end was
    /// called from outside the runtime (everything was dropped before it
    /// returned); else until it is ready, within the bound (the last worker
    /// or blocking thread may still be dropping its last task: `async-task`
    /// drops the future before it marks the task unscheduled, and the handle
    /// stays pending until then).
    fn resolved(&self, handle: &mut JoinHandle<Out>, inside: bool) -> Poll<Result<Out, JoinError>> {
        let deadline = Instant::now() + self.bound();
        loop {
            let poll = poll_once(handle);
            if poll.is_ready() || !inside || Instant::now() >= deadline {
                return poll;
            }
            thread::sleep(Duration::from_micros(100));
        }
    }

    fn wait_for_end(&self, mode: EndMode, ended: &mpsc::Receiver<()>, bound: Duration) {
        match ended.recv_timeout(bound) {
            Ok(()) => {}
            Err(RecvTimeoutError::Timeout) => self.fail(format!(
                "ending the runtime ({mode:?}) did not return within {bound:?}"
            )),
            Err(RecvTimeoutError::Disconnected) => self.fail(format!(
                "ending the runtime ({mode:?}): the ending thread or task went away without \
                 finishing (it panicked, or its task was dropped)"
            )),
        }
    }
}

/// Spawns a task, an elastic task and a blocking closure on `handle`, whose
/// runtime is gone, and waits (bounded) for their outcomes.
fn spawn_late(handle: &Handle, ledger: &Arc<Ledger>, op: usize) -> [Result<u64, JoinError>; 3] {
    let spawned = handle.spawn(tracked_task(ledger, "late_spawn", op, async { 1 }));
    let elastic = handle.spawn_elastic(tracked_task(ledger, "late_spawn_elastic", op, async { 2 }));
    let blocking = handle.spawn_blocking(tracked_closure(ledger, "late_spawn_blocking", op, || 3));
    [
        local_block_on(spawned),
        local_block_on(elastic),
        local_block_on(blocking),
    ]
    .map(|result| result.map(|out| out.value))
}

/// A one-line summary of an outcome for the log.
fn result_summary(result: &Result<Out, JoinError>) -> String {
    match result {
        Ok(out) => format!("Ok({})", out.value),
        Err(error) if error.is_panic() => "panic".to_owned(),
        Err(_) => "cancelled".to_owned(),
    }
}

/// Runs `f` on a new thread and waits for it at most `bound`.
fn run_on_thread<T: Send + 'static>(
    bound: Duration,
    what: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    let (sender, receiver) = mpsc::channel();
    let thread = thread::spawn(move || {
        let _ = sender.send(f());
    });
    match receiver.recv_timeout(bound) {
        Ok(value) => {
            let _ = thread.join();
            Ok(value)
        }
        Err(RecvTimeoutError::Timeout) => Err(format!("{what}: not done within {bound:?}")),
        Err(RecvTimeoutError::Disconnected) => match thread.join() {
            Err(payload) => Err(format!("{what}: panicked: {}", panic_message(&*payload))),
            Ok(()) => Err(format!("{what}: the thread exited without a result")),
        },
    }
}

/// Echoes `payload` through a server at `addr`, `chunk` bytes at a time,
/// with brigade's own methods (`api` 0), tokio's `AsyncReadExt` and
/// `AsyncWriteExt` (1) or futures-lite's (2); then half-closes and waits for
/// the server to close. Returns the number of bytes echoed.
async fn echo_client(
    addr: SocketAddr,
    payload: Vec<u8>,
    chunk: usize,
    api: u64,
) -> std::io::Result<u64> {
    let mut stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    let mut echoed = vec![0u8; chunk];
    for piece in payload.chunks(chunk) {
        let back = &mut echoed[..piece.len()];
        match api {
            0 => {
                stream.write_all(piece).await?;
                stream.read_exact(back).await?;
            }
            1 => {
                tokio::io::AsyncWriteExt::write_all(&mut stream, piece).await?;
                tokio::io::AsyncReadExt::read_exact(&mut stream, back).await?;
            }
            _ => {
                futures_lite::AsyncWriteExt::write_all(&mut stream, piece).await?;
                futures_lite::AsyncReadExt::read_exact(&mut stream, back).await?;
            }
        }
        if back != piece {
            return Err(std::io::Error::other("the echo differs from what was sent"));
        }
    }
    stream.shutdown(Shutdown::Write)?;
    let mut rest = [0u8; 16];
    match stream.read(&mut rest).await? {
        0 => Ok(payload.len() as u64),
        n => Err(std::io::Error::other(format!(
            "{n} unexpected byte(s) after the echo"
        ))),
    }
}

#[test]
fn random_operation_sequences() {
    install_panic_filter();
    let cfg = Arc::new(Config::from_env());
    let started = Instant::now();
    let seed_bound = 3 * cfg.bound.as_secs().max(1) + SHUTDOWN_BOUND.as_secs();
    for seed in cfg.first_seed..cfg.first_seed + cfg.seeds {
        let progress = Arc::new(Mutex::new(Progress::default()));
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let cfg = cfg.clone();
            let progress = progress.clone();
            with_timeout(seed_bound, move || {
                Run::new(seed, cfg, progress).run();
            })
        }));
        let progress = lock(&progress);
        if cfg.verbose || outcome.is_err() {
            let mut report = String::new();
            for line in &progress.log {
                let _ = writeln!(report, "    {line}");
            }
            eprintln!("random_ops: seed {seed}:\n{report}");
        }
        if let Err(payload) = outcome {
            let message = panic_message(&*payload);
            // The seed's own bound caught a hang (no message of ours).
            let hint = if message.starts_with("test body did not finish") {
                progress.end_hint.as_str()
            } else {
                ""
            };
            // Not starting with `QUIET`, which the panic hook keeps quiet.
            panic!(
                "random_ops seed {seed} failed while {}: {message}{hint}\n\
                 replay with: BRIGADE_RANDOM_OPS_SEED={seed} cargo test -p brigade --test random_ops",
                progress.phase,
            );
        }
    }
    eprintln!(
        "random_ops: {} seed(s) from {} passed in {:.1?}",
        cfg.seeds,
        cfg.first_seed,
        started.elapsed()
    );
}
