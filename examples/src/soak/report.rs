//! What the soak measures (RSS, live heap, open fds), its progress lines,
//! and the summary and verdict at the end.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use brigade::Runtime;
use hdrhistogram::Histogram;

use super::{Config, Counters, RSS_TOLERANCE, STOP_TIMEOUT, Shared, WARM_UP};

/// One progress line's figures.
pub(super) struct Sample {
    elapsed: Duration,
    rss_kib: u64,
    /// Heap bytes allocated and not yet freed, in KiB (see [`LiveHeap`]).
    heap_kib: u64,
    fds: usize,
}

/// The system allocator, counting the bytes it has handed out and not
/// taken back. RSS also counts memory that `free` left in the allocator's
/// arenas; this count does not, so it tells a leak (it grows) from memory
/// the allocator keeps for later (RSS grows, this stays flat).
///
/// The soak binary installs it as its `#[global_allocator]` (a library
/// that did so would install it in every program linking the library).
pub struct LiveHeap {
    bytes: AtomicU64,
}

impl LiveHeap {
    /// A count of zero bytes.
    pub const fn new() -> LiveHeap {
        LiveHeap {
            bytes: AtomicU64::new(0),
        }
    }

    /// Bytes allocated and not yet freed, in KiB.
    pub fn kib(&self) -> u64 {
        self.bytes.load(Relaxed) / 1024
    }
}

impl Default for LiveHeap {
    fn default() -> Self {
        LiveHeap::new()
    }
}

// SAFETY: every call is passed on to `System` unchanged, with the caller's
// layout; the counter is only statistics.
unsafe impl GlobalAlloc for LiveHeap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `alloc`'s contract, which `System` has too.
        let pointer = unsafe { System.alloc(layout) };
        if !pointer.is_null() {
            self.bytes.fetch_add(layout.size() as u64, Relaxed);
        }
        pointer
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        // SAFETY: `pointer` came from this allocator, so from `System`, with `layout`.
        unsafe { System.dealloc(pointer, layout) };
        self.bytes.fetch_sub(layout.size() as u64, Relaxed);
    }

    unsafe fn realloc(&self, pointer: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `dealloc`, and the caller upholds `realloc`'s contract.
        let moved = unsafe { System.realloc(pointer, layout, new_size) };
        if !moved.is_null() {
            self.bytes.fetch_add(new_size as u64, Relaxed);
            self.bytes.fetch_sub(layout.size() as u64, Relaxed);
        }
        moved
    }
}

pub(super) fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))?;
    line.trim().strip_suffix("kB")?.trim().parse().ok()
}

pub(super) fn open_fds() -> Option<usize> {
    Some(std::fs::read_dir("/proc/self/fd").ok()?.count())
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

/// Prints a progress line every `sample_every` until the run's end.
pub(super) fn sample_until_end(
    config: &Config,
    shared: &Shared,
    rt: &Runtime,
    heap: &LiveHeap,
) -> Vec<Sample> {
    let metrics = rt.metrics();
    let mut samples = Vec::new();
    let mut due = Duration::ZERO;
    while due < config.duration {
        due = (due + config.sample_every).min(config.duration);
        if let Some(wait) = (shared.started + due).checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        let sample = Sample {
            elapsed: shared.started.elapsed(),
            rss_kib: rss_kib().unwrap_or(0),
            heap_kib: heap.kib(),
            fds: open_fds().unwrap_or(0),
        };
        println!(
            "{:7.1} s  rss {:>10}  heap {:>6} KiB  fds {:3}  requests ok {:8} failed {}  alive tasks {}",
            sample.elapsed.as_secs_f64(),
            mib(sample.rss_kib),
            sample.heap_kib,
            sample.fds,
            shared.count.ok.load(Relaxed),
            shared.count.failed.load(Relaxed),
            metrics.num_alive_tasks(),
        );
        samples.push(sample);
    }
    samples
}

/// How stopping the load and dropping the runtime went.
pub(super) struct Stopped {
    /// The client's round-trip times (µs), if it stopped in time.
    pub(super) latencies: Option<Histogram<u64>>,
    /// CPU units the background tasks did.
    pub(super) units: u64,
    pub(super) alive_after_stop: usize,
    pub(super) runtime_spawned: u64,
    /// How long dropping the runtime took, if it finished in time.
    pub(super) drop_time: Option<Duration>,
    /// What did not stop in time; the verdict adds its own reasons.
    pub(super) failures: Vec<String>,
}

/// Prints the summary and the verdict; `true` on PASS.
pub(super) fn summarize(samples: &[Sample], count: &Counters, mut stopped: Stopped) -> bool {
    let failures = std::mem::take(&mut stopped.failures);
    let findings = print_summary(samples, count, stopped);
    verdict(&findings, failures)
}

/// What the verdict judges.
struct Findings {
    /// RSS growth past the post-warm-up value (%): the last, the largest.
    rss_growth: (f64, f64),
    /// Open fds: post-warm-up, last.
    fds: (usize, usize),
    failed: u64,
    lost: u64,
    abort_failures: u64,
    task_failures: u64,
}

/// Prints the summary lines.
fn print_summary(samples: &[Sample], count: &Counters, stopped: Stopped) -> Findings {
    let Stopped {
        latencies,
        units,
        alive_after_stop,
        runtime_spawned,
        drop_time,
        failures: _,
    } = stopped;
    let warm = samples
        .iter()
        .position(|s| s.elapsed >= WARM_UP)
        .unwrap_or(0);
    let (first, post_warm_up, last) = (&samples[0], &samples[warm], &samples[samples.len() - 1]);
    let max_rss = samples[warm..].iter().map(|s| s.rss_kib).max().unwrap_or(0);
    let max_fds = samples.iter().map(|s| s.fds).max().unwrap_or(0);
    let growth = |kib: u64| (kib as f64 / post_warm_up.rss_kib.max(1) as f64 - 1.0) * 100.0;
    let (last_growth, max_growth) = (growth(last.rss_kib), growth(max_rss));
    let load = |counter: &AtomicU64| counter.load(Relaxed);
    let (sent, ok, failed) = (load(&count.sent), load(&count.ok), load(&count.failed));
    let lost = sent.saturating_sub(ok + failed);
    let (abort_failures, task_failures) = (load(&count.abort_failures), load(&count.task_failures));
    let latency = match latencies {
        Some(h) if !h.is_empty() => format!(
            "p50 {} µs, p99 {} µs, max {} µs",
            h.value_at_quantile(0.5),
            h.value_at_quantile(0.99),
            h.max()
        ),
        _ => "n/a".to_owned(),
    };
    let drop_time = drop_time.map_or(format!("not done after {STOP_TIMEOUT:?}"), |time| {
        format!("took {:.3} s", time.as_secs_f64())
    });
    println!("\nsummary after {:.1} s", last.elapsed.as_secs_f64());
    println!(
        "  RSS       post-warm-up {} (at {:.0} s), last {} ({last_growth:+.1} %), \
         max since {} ({max_growth:+.1} %)",
        mib(post_warm_up.rss_kib),
        post_warm_up.elapsed.as_secs_f64(),
        mib(last.rss_kib),
        mib(max_rss),
    );
    let max_heap = samples[warm..]
        .iter()
        .map(|s| s.heap_kib)
        .max()
        .unwrap_or(0);
    println!(
        "  heap      post-warm-up {} KiB, last {} KiB, max since {max_heap} KiB (live bytes, \
         not counting what the allocator keeps)",
        post_warm_up.heap_kib, last.heap_kib,
    );
    println!(
        "  fds       first {}, post-warm-up {}, last {}, max {max_fds}",
        first.fds, post_warm_up.fds, last.fds
    );
    println!("  requests  sent {sent}, ok {ok}, failed {failed}, lost {lost}");
    println!("  latency   {latency}");
    println!(
        "  tasks     churn spawned {} (completed {}, aborted {}), abort failures {abort_failures}, \
         other failures {task_failures}, failures after the stop signal {}",
        load(&count.spawned),
        load(&count.completed),
        load(&count.aborted),
        load(&count.while_stopping),
    );
    println!(
        "  runtime   spawned_tasks_count {runtime_spawned}, {alive_after_stop} alive after \
         stop, drop {drop_time}; background did {units} units"
    );
    Findings {
        rss_growth: (last_growth, max_growth),
        fds: (post_warm_up.fds, last.fds),
        failed,
        lost,
        abort_failures,
        task_failures,
    }
}

/// Prints the verdict, adding its reasons to `failures`; `true` on PASS.
fn verdict(findings: &Findings, mut failures: Vec<String>) -> bool {
    let Findings {
        rss_growth: (last_growth, max_growth),
        fds: (from, to),
        failed,
        lost,
        abort_failures,
        task_failures,
    } = *findings;
    let mut check = |bad: bool, why: String| failures.extend(bad.then_some(why));
    let tolerance = RSS_TOLERANCE * 100.0;
    let rss_grew = max_growth > tolerance || last_growth > tolerance;
    check(
        rss_grew,
        format!("RSS grew over {tolerance:.0} % past its post-warm-up value"),
    );
    check(from != to, format!("fd count went from {from} to {to}"));
    let why = format!("{failed} requests failed and {lost} were lost");
    check(failed > 0 || lost > 0, why);
    let why = format!("{abort_failures} aborted tasks did not end cancelled in time");
    check(abort_failures > 0, why);
    let why = format!("{task_failures} churn tasks did not complete in time");
    check(task_failures > 0, why);
    if failures.is_empty() {
        println!("VERDICT: PASS");
    } else {
        println!("VERDICT: FAIL: {}", failures.join("; "));
    }
    failures.is_empty()
}
