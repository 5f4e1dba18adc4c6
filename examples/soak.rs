//! Soak test: one brigade runtime under mixed load for minutes, watching for
//! leaks (memory, file descriptors, tasks), failed or lost requests, aborts
//! that do not take and a runtime that will not drop. Not part of CI (it
//! runs for minutes): `scripts/soak.sh --minutes 10 --workers 2 --sample-secs 10`.
//!
//! What runs, all on one runtime of `--workers` worker threads:
//!
//! - **Foreground**: an echo server task on 127.0.0.1, and a client on a
//!   plain OS thread (blocking `std::net` socket, 2 s time-outs) sending a
//!   16-byte request every 1 ms and checking each reply byte for byte (it
//!   reconnects after a failure). Latency: write to last byte of the reply.
//! - **Background**: 4 `spawn` and 2 `spawn_elastic` tasks doing 10 µs CPU
//!   units with `yield_if_busy().await` between units.
//! - **Churn**: a task spawning batches of short tasks, `spawn_blocking`
//!   closures, and long-running tasks (a `yield_if_busy` loop, a `sleep`
//!   loop, a never-ready future) that it aborts after a random 0–10 ms.
//!   Awaiting an aborted handle must give a cancelled `JoinError` within 2 s
//!   (`brigade::time::timeout`); anything else is an abort failure.
//!
//! Every `--sample-secs` a line: elapsed time, RSS (`VmRSS`), open fds,
//! requests ok / failed so far, live tasks (`RuntimeMetrics::num_alive_tasks`).
//! Failures are printed to stderr as they happen, with their time, marked
//! when they come after the stop signal (while the load winds down).
//!
//! At the end it stops everything and drops the runtime, each step bounded
//! by 10 s, and prints a summary. Reading it: the *post-warm-up* sample is
//! the first at or after 1 minute (the first sample in shorter runs). PASS
//! needs RSS (its last value and its maximum since warm-up) no more than 5 %
//! above the post-warm-up value, the last fd count equal to the post-warm-up
//! one, no failed request (time-out, mismatch, error) or lost one (sent, no
//! outcome), no abort or churn-task failure, and everything stopped in time.
//! Otherwise the verdict is FAIL with the reasons, and the exit status 1.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use brigade::time::timeout;
use brigade::{JoinError, JoinHandle, Runtime};
use brigade_examples::busy::{calibrate, spin};
use hdrhistogram::Histogram;

const HELP: &str = "\
usage: soak [--minutes M] [--workers W] [--sample-secs S]

  --minutes M      how long to run (default 10; fractions allowed)
  --workers W      worker threads (default 2)
  --sample-secs S  seconds between progress lines (default 10)";

const REQUEST_LEN: usize = 16;
const REQUEST_PERIOD: Duration = Duration::from_millis(1);
const IO_TIMEOUT: Duration = Duration::from_secs(2);
/// Bound on each await of a churn task's handle.
const JOIN_TIMEOUT: Duration = Duration::from_secs(2);
/// Bound on stopping the client and the tasks at the end, and on the drop.
const STOP_TIMEOUT: Duration = Duration::from_secs(10);
const WARM_UP: Duration = Duration::from_secs(60);
const RSS_TOLERANCE: f64 = 0.05;
const SPAWN_TASKS: usize = 4;
const ELASTIC_TASKS: usize = 2;
const UNIT_US: u64 = 10;
const SHORT_BATCH: usize = 8;
/// Failure messages printed as they happen; later ones are only counted.
const MAX_REPORTED: u64 = 20;

struct Config {
    duration: Duration,
    workers: usize,
    sample_every: Duration,
}

impl Config {
    fn parse(args: impl IntoIterator<Item = String>) -> Result<Config, String> {
        let mut config = Config {
            duration: Duration::from_secs(600),
            workers: 2,
            sample_every: Duration::from_secs(10),
        };
        let mut args = args.into_iter();
        while let Some(flag) = args.next() {
            if flag == "--help" || flag == "-h" {
                return Err(HELP.to_owned());
            }
            let text = match flag.as_str() {
                "--minutes" | "--workers" | "--sample-secs" => args
                    .next()
                    .ok_or_else(|| format!("{flag} needs a value\n\n{HELP}"))?,
                _ => return Err(format!("unknown flag {flag:?}\n\n{HELP}")),
            };
            let seconds = |unit: f64| {
                let value = text.parse::<f64>().ok().filter(|value| *value > 0.0);
                value
                    .and_then(|value| Duration::try_from_secs_f64(value * unit).ok())
                    .ok_or_else(|| format!("{flag} must be a positive number, got {text:?}"))
            };
            match flag.as_str() {
                "--minutes" => config.duration = seconds(60.0)?,
                "--sample-secs" => config.sample_every = seconds(1.0)?,
                _ => match text.parse() {
                    Ok(workers @ 1..) => config.workers = workers,
                    _ => {
                        return Err(format!(
                            "--workers must be a whole number of at least 1, got {text:?}"
                        ));
                    }
                },
            }
        }
        Ok(config)
    }
}

/// Counters written by the client and the churn task, read by the report.
#[derive(Default)]
struct Counters {
    stop: AtomicBool,
    sent: AtomicU64,
    ok: AtomicU64,
    failed: AtomicU64,
    spawned: AtomicU64,
    completed: AtomicU64,
    aborted: AtomicU64,
    abort_failures: AtomicU64,
    task_failures: AtomicU64,
    /// Failures of any kind after the stop signal (while the load winds down).
    while_stopping: AtomicU64,
    reported: AtomicU64,
}

struct Shared {
    started: Instant,
    count: Counters,
}

impl Shared {
    fn stopping(&self) -> bool {
        self.count.stop.load(Relaxed)
    }

    /// Counts a failure in `counter` and prints the first few as they happen.
    fn fail(&self, counter: &AtomicU64, message: std::fmt::Arguments<'_>) {
        counter.fetch_add(1, Relaxed);
        let phase = if self.stopping() {
            self.count.while_stopping.fetch_add(1, Relaxed);
            " (after the stop signal)"
        } else {
            ""
        };
        let reported = self.count.reported.fetch_add(1, Relaxed);
        if reported < MAX_REPORTED {
            let at = self.started.elapsed().as_secs_f64();
            eprintln!("[{at:7.1} s] FAILURE{phase}: {message}");
        } else if reported == MAX_REPORTED {
            eprintln!("(further failures are only counted)");
        }
    }
}

/// Echoes every connection's bytes back.
async fn echo_server(listener: brigade::net::TcpListener) {
    while let Ok((stream, _)) = listener.accept().await {
        let _ = stream.set_nodelay(true);
        brigade::spawn(async move {
            let mut buf = [0u8; 256];
            while let Ok(read @ 1..) = stream.read(&mut buf).await {
                if stream.write_all(&buf[..read]).await.is_err() {
                    break;
                }
            }
        });
    }
}

/// The client thread: a request every [`REQUEST_PERIOD`] until told to stop.
fn client(addr: SocketAddr, shared: &Shared) -> Histogram<u64> {
    let mut latencies_us =
        Histogram::new_with_bounds(1, 60_000_000, 3).expect("constant bounds are valid");
    let mut connection: Option<TcpStream> = None;
    let mut next = Instant::now();
    let mut sequence = 0u64;
    while !shared.stopping() {
        if let Some(wait) = next.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        // After a stall, carry on at the normal rate rather than in a burst.
        next = (next + REQUEST_PERIOD).max(Instant::now());
        sequence += 1;
        let mut request = [0u8; REQUEST_LEN];
        request[..8].copy_from_slice(&sequence.to_le_bytes());
        request[8..].copy_from_slice(&sequence.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_be_bytes());
        shared.count.sent.fetch_add(1, Relaxed);
        match round_trip(&mut connection, addr, &request) {
            Ok(latency) => {
                shared.count.ok.fetch_add(1, Relaxed);
                latencies_us.saturating_record((latency.as_micros() as u64).max(1));
            }
            Err(error) => {
                // The stream may still carry a late reply: start afresh.
                connection = None;
                let message = format_args!("request {sequence}: {error}");
                shared.fail(&shared.count.failed, message);
            }
        }
    }
    latencies_us
}

/// Sends `request` (connecting first if need be) and checks the echo;
/// returns the round-trip time.
fn round_trip(
    connection: &mut Option<TcpStream>,
    addr: SocketAddr,
    request: &[u8; REQUEST_LEN],
) -> io::Result<Duration> {
    if connection.is_none() {
        let stream = TcpStream::connect_timeout(&addr, IO_TIMEOUT)?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(IO_TIMEOUT))?;
        stream.set_write_timeout(Some(IO_TIMEOUT))?;
        *connection = Some(stream);
    }
    let stream = connection.as_mut().expect("connected above");
    let started = Instant::now();
    stream.write_all(request)?;
    let mut reply = [0u8; REQUEST_LEN];
    stream.read_exact(&mut reply)?;
    let latency = started.elapsed();
    if reply != *request {
        let message = format!("reply {reply:02x?} differs from request {request:02x?}");
        return Err(io::Error::new(io::ErrorKind::InvalidData, message));
    }
    Ok(latency)
}

/// A background task: CPU units with `yield_if_busy` between them until
/// told to stop. Returns the number of units done.
async fn cpu_loop(iterations: u64, shared: Arc<Shared>) -> u64 {
    let mut units = 0;
    while !shared.stopping() {
        std::hint::black_box(spin(iterations));
        units += 1;
        brigade::yield_if_busy().await;
    }
    units
}

/// CPU units and `yield_if_busy` until aborted.
async fn yield_loop(iterations: u64) {
    loop {
        std::hint::black_box(spin(iterations));
        brigade::yield_if_busy().await;
    }
}

/// Sleeps 1 ms at a time until aborted.
async fn sleep_loop() {
    loop {
        brigade::time::sleep(Duration::from_millis(1)).await;
    }
}

/// The churn task: short tasks, blocking closures, and long-running tasks
/// that it aborts, until told to stop.
async fn churn(iterations: u64, shared: Arc<Shared>, mut seed: u64) {
    let mut random_below = move |bound: u64| {
        // xorshift64: plenty for picking abort delays.
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % bound
    };
    let count = &shared.count;
    let mut round = 0u64;
    while !shared.stopping() {
        round += 1;
        let short: Vec<_> = (0..SHORT_BATCH as u64)
            .map(|index| {
                brigade::spawn(async move {
                    if index.is_multiple_of(2) {
                        brigade::yield_now().await;
                    }
                    std::hint::black_box(spin(iterations / 4))
                })
            })
            .collect();
        count.spawned.fetch_add(SHORT_BATCH as u64, Relaxed);
        for handle in short {
            expect_completes(&shared, "short task", handle).await;
        }
        if round.is_multiple_of(10) {
            count.spawned.fetch_add(1, Relaxed);
            let handle = brigade::spawn_blocking(move || std::hint::black_box(spin(iterations)));
            expect_completes(&shared, "spawn_blocking closure", handle).await;
        }
        let long = [
            ("yield_if_busy loop", brigade::spawn(yield_loop(iterations))),
            ("sleep loop", brigade::spawn(sleep_loop())),
            ("never-ready future", brigade::spawn(std::future::pending())),
        ];
        count.spawned.fetch_add(long.len() as u64, Relaxed);
        for (_, handle) in &long {
            brigade::time::sleep(Duration::from_micros(random_below(10_000))).await;
            handle.abort();
        }
        for (what, handle) in long {
            let waiting_since = Instant::now();
            let problem = match timeout(JOIN_TIMEOUT, handle).await {
                Ok(Err(error)) if error.is_cancelled() => {
                    count.aborted.fetch_add(1, Relaxed);
                    continue;
                }
                Ok(Err(error)) => format!("awaiting its handle gave {error}"),
                Ok(Ok(())) => "its handle returned Ok".to_owned(),
                Err(_) => {
                    let metrics = brigade::Handle::current().metrics();
                    format!(
                        "handle not finished {:?} after abort() (yield queue {}, injector {}, idle workers {})",
                        waiting_since.elapsed(),
                        metrics.yield_queue_depth(),
                        metrics.injector_depth(),
                        metrics.num_idle_workers(),
                    )
                }
            };
            let message = format_args!("aborted {what}: {problem}");
            shared.fail(&count.abort_failures, message);
        }
    }
}

/// Awaits `handle` for at most [`JOIN_TIMEOUT`], counting the outcome.
async fn expect_completes<T>(shared: &Shared, what: &str, handle: JoinHandle<T>) {
    let problem = match timeout(JOIN_TIMEOUT, handle).await {
        Ok(Ok(_)) => {
            shared.count.completed.fetch_add(1, Relaxed);
            return;
        }
        Ok(Err(error)) => error.to_string(),
        Err(_) => format!("not finished within {JOIN_TIMEOUT:?}"),
    };
    shared.fail(
        &shared.count.task_failures,
        format_args!("{what}: {problem}"),
    );
}

/// One progress line's figures.
struct Sample {
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
struct LiveHeap {
    bytes: AtomicU64,
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

#[global_allocator]
static HEAP: LiveHeap = LiveHeap {
    bytes: AtomicU64::new(0),
};

fn heap_kib() -> u64 {
    HEAP.bytes.load(Relaxed) / 1024
}

fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))?;
    line.trim().strip_suffix("kB")?.trim().parse().ok()
}

fn open_fds() -> Option<usize> {
    Some(std::fs::read_dir("/proc/self/fd").ok()?.count())
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

/// Prints a progress line every `sample_every` until the run's end.
fn sample_until_end(config: &Config, shared: &Shared, rt: &Runtime) -> Vec<Sample> {
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
            heap_kib: heap_kib(),
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

/// Polls `done` until it holds (`true`) or `deadline` passes (`false`).
/// Plain polling: it relies on neither the runtime's timers nor its wakers.
fn wait_until(deadline: Instant, done: impl Fn() -> bool) -> bool {
    while !done() {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    true
}

/// The result of `task`, or `None` if it is not finished by `by`.
fn finish<T>(rt: &Runtime, task: JoinHandle<T>, by: Instant) -> Option<Result<T, JoinError>> {
    wait_until(by, || task.is_finished()).then(|| rt.block_on(task))
}

fn main() {
    let config = match Config::parse(std::env::args().skip(1)) {
        Ok(config) => config,
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(if message == HELP { 0 } else { 2 });
        }
    };
    let pass = run(&config).unwrap_or_else(|error| {
        eprintln!("soak failed: {error}");
        false
    });
    std::process::exit(if pass { 0 } else { 1 });
}

/// Runs the soak and prints the summary; `Ok(true)` on PASS.
fn run(config: &Config) -> io::Result<bool> {
    if rss_kib().is_none() || open_fds().is_none() {
        return Err(io::Error::other("needs Linux's /proc/self"));
    }
    let iterations = calibrate(UNIT_US, config.workers);
    let rt = brigade::Builder::new()
        .worker_threads(config.workers)
        .build()?;
    let listener = rt.block_on(brigade::net::TcpListener::bind("127.0.0.1:0"))?;
    let addr = listener.local_addr()?;
    println!(
        "soak: {:.2} min, {} workers, a line every {:?}; echo server on {addr}; \
         {SPAWN_TASKS} spawn + {ELASTIC_TASKS} spawn_elastic background tasks × {UNIT_US} µs",
        config.duration.as_secs_f64() / 60.0,
        config.workers,
        config.sample_every,
    );
    let shared = Arc::new(Shared {
        started: Instant::now(),
        count: Counters::default(),
    });
    let server = rt.spawn(echo_server(listener));
    let background: Vec<_> = (0..SPAWN_TASKS + ELASTIC_TASKS)
        .map(|index| {
            let task = cpu_loop(iterations, shared.clone());
            if index < SPAWN_TASKS {
                rt.spawn(task)
            } else {
                rt.spawn_elastic(task)
            }
        })
        .collect();
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |since| since.as_nanos() as u64 | 1);
    let churn = rt.spawn(churn(iterations, shared.clone(), seed));
    let client_shared = shared.clone();
    let client = std::thread::Builder::new()
        .name("soak-client".to_owned())
        .spawn(move || client(addr, &client_shared))?;

    let samples = sample_until_end(config, &shared, &rt);

    // Stop everything; every wait is bounded by one deadline.
    let mut failures: Vec<String> = Vec::new();
    let mut not_stopped = |what: &str| failures.push(format!("{what} within {STOP_TIMEOUT:?}"));
    shared.count.stop.store(true, Relaxed);
    let deadline = Instant::now() + STOP_TIMEOUT;
    let latencies = match wait_until(deadline, || client.is_finished()) {
        true => client.join().ok(),
        false => {
            not_stopped("the client thread did not stop");
            None
        }
    };
    let mut units = 0;
    for handle in background {
        match finish(&rt, handle, deadline) {
            Some(Ok(done)) => units += done,
            _ => not_stopped("a background task did not stop with its result"),
        }
    }
    if !matches!(finish(&rt, churn, deadline), Some(Ok(()))) {
        not_stopped("the churn task did not stop with its result");
    }
    server.abort();
    if !matches!(finish(&rt, server, deadline), Some(Err(e)) if e.is_cancelled()) {
        not_stopped("the aborted echo server did not end cancelled");
    }
    let (alive_after_stop, runtime_spawned) = {
        let metrics = rt.metrics();
        (metrics.num_alive_tasks(), metrics.spawned_tasks_count())
    };
    let (dropped_tx, dropped_rx) = std::sync::mpsc::channel();
    let drop_started = Instant::now();
    std::thread::spawn(move || {
        drop(rt);
        let _ = dropped_tx.send(drop_started.elapsed());
    });
    let drop_time = dropped_rx.recv_timeout(STOP_TIMEOUT).ok();
    if drop_time.is_none() {
        not_stopped("dropping the runtime did not finish");
    }

    // Summary.
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
    let count = &shared.count;
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

    // Verdict.
    let mut check = |bad: bool, why: String| failures.extend(bad.then_some(why));
    let tolerance = RSS_TOLERANCE * 100.0;
    let rss_grew = max_growth > tolerance || last_growth > tolerance;
    check(
        rss_grew,
        format!("RSS grew over {tolerance:.0} % past its post-warm-up value"),
    );
    let (from, to) = (post_warm_up.fds, last.fds);
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
    Ok(failures.is_empty())
}
