//! A hot, always-ready read loop, brigade next to tokio: what the
//! cooperative budget costs a task whose socket never runs dry.
//!
//! A std thread writes into a loopback TCP connection as fast as it can
//! (64 KiB writes, far ahead of the reader); a task reads it 16 bytes at a
//! time, so every read finds data and none returns `Pending` for want of
//! it. Each read spends a unit of the task's budget. tokio yields to its
//! scheduler once 128 units are spent, whatever else is runnable; brigade
//! yields only when work waits for the worker and otherwise refills (here
//! nothing else runs). One benchmark iteration is one read (criterion's
//! throughput: reads per second).
//!
//! - `coop_read_16b/always_ready/{brigade,tokio}`.
//!
//! Both runtimes run on `BENCH_WORKERS` workers (default 1, leaving the
//! writer a core on a 2-core host). The writer thread shares the machine
//! with the runtime: compare the two runtimes of one run, as a ratio.
//!
//! ```text
//! cargo bench -p brigade-benches --bench coop_read
//! ```

use std::io::Write;
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use brigade_examples::harness::{bench_workers, end_quietly_on_closed_pipe, exit_on_help};
use criterion::{BenchmarkId, Criterion, Throughput};

/// Bytes per read: small, so the socket always has more.
const READ: usize = 16;

/// A connection that a std thread floods until dropped.
struct Flood {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    writer: Option<thread::JoinHandle<()>>,
}

impl Flood {
    fn start() -> Flood {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback listener");
        let addr = listener.local_addr().expect("its address");
        let stop = Arc::new(AtomicBool::new(false));
        let writer = thread::spawn({
            let stop = stop.clone();
            move || {
                let (mut socket, _) = listener.accept().expect("the reader connects");
                let chunk = vec![7u8; 64 * 1024];
                while !stop.load(Ordering::Relaxed) {
                    if socket.write_all(&chunk).is_err() {
                        return;
                    }
                }
            }
        });
        Flood {
            addr,
            stop,
            writer: Some(writer),
        }
    }

    /// Stops the writer once the reader's side is closed (the caller drops
    /// its stream first, so a blocked write fails).
    fn stop(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(writer) = self.writer.take() {
            let _ = writer.join();
        }
    }
}

fn bench_brigade(c: &mut Criterion, workers: usize) {
    let mut setup: Option<(brigade::Runtime, Flood)> = None;
    let mut stream: Option<brigade::net::TcpStream> = None;
    let mut group = c.benchmark_group("coop_read_16b");
    group.throughput(Throughput::Elements(1));
    group.bench_function(BenchmarkId::new("always_ready", "brigade"), |b| {
        let (rt, flood) = setup.get_or_insert_with(|| {
            let rt = brigade::Builder::new()
                .worker_threads(workers)
                .build()
                .expect("build brigade runtime");
            (rt, Flood::start())
        });
        if stream.is_none() {
            let addr = flood.addr;
            stream = Some(
                rt.block_on(brigade::net::TcpStream::connect(addr))
                    .expect("connect"),
            );
        }
        b.iter_custom(|reads| {
            let mut socket = stream.take().expect("the stream is back");
            let (socket, took) = rt
                .block_on(rt.spawn(async move {
                    use tokio::io::AsyncReadExt;
                    let mut buf = [0u8; READ];
                    let started = Instant::now();
                    for _ in 0..reads {
                        let n = socket.read(&mut buf).await.expect("read");
                        assert!(n > 0, "the flood ended");
                    }
                    (socket, started.elapsed())
                }))
                .expect("the reader completes");
            stream = Some(socket);
            took
        });
    });
    group.finish();
    if let Some((rt, flood)) = setup {
        rt.block_on(async { drop(stream.take()) });
        flood.stop();
        drop(rt);
    }
}

fn bench_tokio(c: &mut Criterion, workers: usize) {
    let mut setup: Option<(tokio::runtime::Runtime, Flood)> = None;
    let mut stream: Option<tokio::net::TcpStream> = None;
    let mut group = c.benchmark_group("coop_read_16b");
    group.throughput(Throughput::Elements(1));
    group.bench_function(BenchmarkId::new("always_ready", "tokio"), |b| {
        let (rt, flood) = setup.get_or_insert_with(|| {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(workers)
                .enable_all()
                .build()
                .expect("build tokio runtime");
            (rt, Flood::start())
        });
        if stream.is_none() {
            let addr = flood.addr;
            stream = Some(
                rt.block_on(tokio::net::TcpStream::connect(addr))
                    .expect("connect"),
            );
        }
        b.iter_custom(|reads| {
            let mut socket = stream.take().expect("the stream is back");
            let (socket, took) = rt
                .block_on(rt.spawn(async move {
                    use tokio::io::AsyncReadExt;
                    let mut buf = [0u8; READ];
                    let started = Instant::now();
                    for _ in 0..reads {
                        let n = socket.read(&mut buf).await.expect("read");
                        assert!(n > 0, "the flood ended");
                    }
                    (socket, started.elapsed())
                }))
                .expect("the reader completes");
            stream = Some(socket);
            took
        });
    });
    group.finish();
    if let Some((rt, flood)) = setup {
        rt.block_on(async { drop(stream.take()) });
        flood.stop();
        drop(rt);
    }
}

// `criterion_group!` would generate an undocumented `pub fn`; this is what
// it and `criterion_main!` expand to, minus that.
fn main() {
    end_quietly_on_closed_pipe();
    exit_on_help("coop_read", "BENCH_WORKERS=N (default 1)");
    let mut criterion = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    let workers = bench_workers(1);
    bench_brigade(&mut criterion, workers);
    bench_tokio(&mut criterion, workers);
    criterion.final_summary();
}
