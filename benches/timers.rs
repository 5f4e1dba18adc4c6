//! The timer structure under a million pending sleeps, brigade next to tokio.
//!
//! - `timers_pending_1m/register_and_cancel`: inside one task, create
//!   1,000,000 sleeps with deadlines spread over 1–60 s, poll each once (which
//!   registers it with the runtime's timer), then drop them all (which
//!   cancels them). The cost of keeping a million timers pending.
//! - `timers_fire_100k/register_and_fire`: 100,000 sleeps with deadlines
//!   spread over the next 1 ms, registered the same way, then awaited one
//!   after another until every one has fired.
//!
//! Both runtimes run on `BENCH_WORKERS` workers (default 2). Compare the two
//! benchmarks of a group within one run: the ratio, not the absolute time.
//!
//! ```text
//! cargo bench -p brigade-benches --bench timers
//! ```

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use brigade_examples::harness::{
    Brigade, Rt, Tokio, bench_workers, end_quietly_on_closed_pipe, exit_on_help,
};
use criterion::{BenchmarkId, Criterion};

const PENDING: usize = 1_000_000;
const FIRING: usize = 100_000;

/// Polls a future once and reports whether it completed.
struct PollOnce<'a, F>(Pin<&'a mut F>);

impl<F: Future> Future for PollOnce<'_, F> {
    type Output = bool;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<bool> {
        Poll::Ready(self.0.as_mut().poll(cx).is_ready())
    }
}

/// `count` sleeps with durations spread evenly over `from..from + spread`,
/// each polled once so that it is registered with the timer.
async fn register<R: Rt>(
    count: usize,
    from: Duration,
    spread: Duration,
) -> Vec<Pin<Box<impl Future<Output = ()> + Send>>> {
    let step = spread / count as u32;
    let mut sleeps = Vec::with_capacity(count);
    for index in 0..count {
        let mut sleep = Box::pin(R::sleep(from + step * index as u32));
        let _ = PollOnce(sleep.as_mut()).await;
        sleeps.push(sleep);
    }
    sleeps
}

/// Runs `workload` as a task `iterations` times; returns the total time.
fn timed<R: Rt, F>(rt: &R, iterations: u64, workload: impl Fn() -> F) -> Duration
where
    F: Future<Output = ()> + Send + 'static,
{
    let mut total = Duration::ZERO;
    for _ in 0..iterations {
        let started = Instant::now();
        rt.block_on(rt.spawn_remote(workload()))
            .expect("the bench task completes");
        total += started.elapsed();
    }
    total
}

fn register_and_cancel<R: Rt>(rt: &R, iterations: u64) -> Duration {
    timed(rt, iterations, || async {
        let sleeps = register::<R>(PENDING, Duration::from_secs(1), Duration::from_secs(59)).await;
        drop(sleeps);
    })
}

fn register_and_fire<R: Rt>(rt: &R, iterations: u64) -> Duration {
    timed(rt, iterations, || async {
        let sleeps = register::<R>(FIRING, Duration::ZERO, Duration::from_millis(1)).await;
        for sleep in sleeps {
            sleep.await;
        }
    })
}

fn bench_runtime<R: Rt>(c: &mut Criterion, name: &str, workers: usize) {
    // Built when a benchmark first runs: never for `--list`.
    let mut rt: Option<R> = None;
    c.benchmark_group("timers_pending_1m").bench_function(
        BenchmarkId::new("register_and_cancel", name),
        |b| {
            let rt = rt.get_or_insert_with(|| R::build(workers));
            b.iter_custom(|iterations| register_and_cancel(rt, iterations))
        },
    );
    c.benchmark_group("timers_fire_100k").bench_function(
        BenchmarkId::new("register_and_fire", name),
        |b| {
            let rt = rt.get_or_insert_with(|| R::build(workers));
            b.iter_custom(|iterations| register_and_fire(rt, iterations))
        },
    );
}

// `criterion_group!` would generate an undocumented `pub fn`; this is what
// it and `criterion_main!` expand to, minus that.
fn main() {
    end_quietly_on_closed_pipe();
    exit_on_help("timers", "BENCH_WORKERS=N (default 2)");
    let mut criterion = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
        .configure_from_args();
    let workers = bench_workers(2);
    bench_runtime::<Brigade>(&mut criterion, "brigade", workers);
    bench_runtime::<Tokio>(&mut criterion, "tokio", workers);
    criterion.final_summary();
}
