//! The soak's load: the echo server and its client, the background CPU
//! tasks and the churn task.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use brigade::time::timeout;
use brigade::{JoinHandle, Runtime};
use hdrhistogram::Histogram;

use super::{
    ELASTIC_TASKS, IO_TIMEOUT, JOIN_TIMEOUT, REQUEST_LEN, REQUEST_PERIOD, SHORT_BATCH, SPAWN_TASKS,
    Shared,
};
use crate::busy::spin;

/// The running load, as the end of the soak stops it.
pub(super) struct Load {
    pub(super) server: JoinHandle<()>,
    pub(super) background: Vec<JoinHandle<u64>>,
    pub(super) churn: JoinHandle<()>,
    pub(super) client: std::thread::JoinHandle<Histogram<u64>>,
}

/// Starts the echo server on `listener` (bound to `addr`), the background
/// tasks, the churn task and the client thread.
pub(super) fn start(
    rt: &Runtime,
    listener: brigade::net::TcpListener,
    addr: SocketAddr,
    iterations: u64,
    shared: &Arc<Shared>,
) -> io::Result<Load> {
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
    Ok(Load {
        server,
        background,
        churn,
        client,
    })
}

/// Echoes every connection's bytes back.
async fn echo_server(listener: brigade::net::TcpListener) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    while let Ok((mut stream, _)) = listener.accept().await {
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
            expect_cancelled(&shared, what, handle).await;
        }
    }
}

/// Awaits an aborted task's `handle` for at most [`JOIN_TIMEOUT`],
/// counting the outcome: it must end cancelled.
async fn expect_cancelled(shared: &Shared, what: &str, handle: JoinHandle<()>) {
    let count = &shared.count;
    let waiting_since = Instant::now();
    let problem = match timeout(JOIN_TIMEOUT, handle).await {
        Ok(Err(error)) if error.is_cancelled() => {
            count.aborted.fetch_add(1, Relaxed);
            return;
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
