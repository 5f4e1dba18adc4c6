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

mod bounds;
#[path = "../common/mod.rs"]
mod common;
mod ledger;
mod run;
mod tasks;

use bounds::*;
use ledger::*;
use run::*;
use tasks::*;

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
