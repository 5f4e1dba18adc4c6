//! The cooperative budget against an input that is always ready: does a
//! 10 ms interval keep its ticks beside a task that never runs dry?
//!
//! Each case runs a flooded reader and a task ticking a 10 ms interval on
//! one runtime, for `--secs` seconds, and prints how many ticks the
//! interval got (of the `100 × secs` it asks for) and how many items the
//! reader took. The floods come from std threads, as fast as they can:
//!
//! - `socket`: a loopback TCP connection read 16 bytes at a time, with
//!   brigade's `TcpStream` on brigade and tokio's on tokio. Both spend their
//!   runtime's budget;
//! - `tokio-mpsc`: a `tokio::sync::mpsc` channel of 1,024 slots, whose
//!   reader spends about 2 µs on each item, so that the sender keeps the
//!   channel full. Its `recv` spends tokio's budget, which exists only
//!   inside tokio's own runtime: on brigade it never yields;
//! - `tokio-mpsc+cooperative`: the same channel on brigade, each `recv`
//!   wrapped in `brigade::task::coop::cooperative`, which spends brigade's
//!   budget (what docs/porting.md tells a porting user to do).
//!
//! ```text
//! cargo run --release -p brigade-examples --example coop_flood
//! cargo run --release -p brigade-examples --example coop_flood -- --workers 1 --secs 2
//! ```

use std::io::Write;
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

const HELP: &str = "\
usage: coop_flood [--workers W] [--secs S]

  --workers W   worker threads of each runtime (default 1; 0: brigade's and
                tokio's current-thread runtimes)
  --secs S      seconds per case (default 2)";

/// What a case left: interval ticks and items read during the flood.
struct Outcome {
    ticks: u64,
    items: u64,
}

/// One case's run: worker count, source, seconds.
type Case = fn(usize, Source, u64) -> Outcome;

/// Where the flood comes from.
#[derive(Clone, Copy)]
enum Source {
    Socket,
    TokioMpsc { cooperative: bool },
}

/// The flood's input, made on the caller's thread before the runtime
/// reads it.
enum Input {
    Socket(std::net::SocketAddr),
    Mpsc(tokio::sync::mpsc::Receiver<u64>),
}

/// Starts a flood of `source` until `until`; returns what a reader reads.
fn start_flood(source: Source, until: Instant) -> (Input, thread::JoinHandle<()>) {
    match source {
        Source::Socket => {
            let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback listener");
            let addr = listener.local_addr().expect("its address");
            let writer = thread::spawn(move || {
                let (mut socket, _) = listener.accept().expect("the reader connects");
                let chunk = vec![7u8; 64 * 1024];
                while Instant::now() < until && socket.write_all(&chunk).is_ok() {}
            });
            (Input::Socket(addr), writer)
        }
        Source::TokioMpsc { .. } => {
            let (tx, rx) = tokio::sync::mpsc::channel(1024);
            let sender = thread::spawn(move || {
                let mut n = 0u64;
                while Instant::now() < until && tx.blocking_send(n).is_ok() {
                    n += 1;
                }
            });
            (Input::Mpsc(rx), sender)
        }
    }
}

/// The reader's work on one channel item: about 2 µs, so
/// that the sender (a std thread doing nothing else) stays ahead.
fn handle_item() {
    let started = Instant::now();
    while started.elapsed() < Duration::from_micros(2) {
        std::hint::spin_loop();
    }
}

/// Ticks a 10 ms interval until `until`, counting the ticks that happen
/// before it.
async fn tick_brigade(until: Instant, ticks: Arc<AtomicU64>) {
    let mut interval = brigade::time::interval(Duration::from_millis(10));
    // Missed ticks are skipped, not burst: a starved interval would
    // otherwise make up for them all at once when it runs again.
    interval.set_missed_tick_behavior(brigade::time::MissedTickBehavior::Skip);
    loop {
        interval.tick().await;
        if Instant::now() >= until {
            return;
        }
        ticks.fetch_add(1, Ordering::Relaxed);
    }
}

async fn tick_tokio(until: Instant, ticks: Arc<AtomicU64>) {
    let mut interval = tokio::time::interval(Duration::from_millis(10));
    // Missed ticks are skipped, not burst: a starved interval would
    // otherwise make up for them all at once when it runs again.
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        interval.tick().await;
        if Instant::now() >= until {
            return;
        }
        ticks.fetch_add(1, Ordering::Relaxed);
    }
}

fn on_brigade(workers: usize, source: Source, secs: u64) -> Outcome {
    let rt = if workers == 0 {
        brigade::runtime::Builder::new_current_thread().build()
    } else {
        brigade::Builder::new().worker_threads(workers).build()
    }
    .expect("build brigade runtime");
    let until = Instant::now() + Duration::from_secs(secs);
    let (input, flood) = start_flood(source, until);
    let ticks = Arc::new(AtomicU64::new(0));
    let items = rt.block_on(async {
        let ticker = brigade::spawn(tick_brigade(until, ticks.clone()));
        let reader = brigade::spawn(async move {
            let mut items = 0u64;
            match input {
                Input::Socket(addr) => {
                    use tokio::io::AsyncReadExt;
                    let mut socket = brigade::net::TcpStream::connect(addr).await.expect("c");
                    let mut buf = [0u8; 16];
                    while socket.read(&mut buf).await.expect("read") > 0 {
                        items += u64::from(Instant::now() < until);
                    }
                }
                Input::Mpsc(mut rx) => {
                    let cooperative = matches!(source, Source::TokioMpsc { cooperative: true });
                    loop {
                        let item = if cooperative {
                            brigade::task::coop::cooperative(rx.recv()).await
                        } else {
                            rx.recv().await
                        };
                        if item.is_none() {
                            break;
                        }
                        handle_item();
                        items += u64::from(Instant::now() < until);
                    }
                }
            }
            items
        });
        let items = reader.await.expect("the reader ends with the flood");
        ticker.await.expect("the ticker ends");
        items
    });
    flood.join().expect("the flood thread ends");
    Outcome {
        ticks: ticks.load(Ordering::Relaxed),
        items,
    }
}

fn on_tokio(workers: usize, source: Source, secs: u64) -> Outcome {
    let rt = if workers == 0 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .enable_all()
            .build()
    }
    .expect("build tokio runtime");
    let until = Instant::now() + Duration::from_secs(secs);
    let (input, flood) = start_flood(source, until);
    let ticks = Arc::new(AtomicU64::new(0));
    let items = rt.block_on(async {
        let ticker = tokio::spawn(tick_tokio(until, ticks.clone()));
        let reader = tokio::spawn(async move {
            let mut items = 0u64;
            match input {
                Input::Socket(addr) => {
                    use tokio::io::AsyncReadExt;
                    let mut socket = tokio::net::TcpStream::connect(addr).await.expect("c");
                    let mut buf = [0u8; 16];
                    while socket.read(&mut buf).await.expect("read") > 0 {
                        items += u64::from(Instant::now() < until);
                    }
                }
                Input::Mpsc(mut rx) => {
                    while rx.recv().await.is_some() {
                        handle_item();
                        items += u64::from(Instant::now() < until);
                    }
                }
            }
            items
        });
        let items = reader.await.expect("the reader ends with the flood");
        ticker.await.expect("the ticker ends");
        items
    });
    flood.join().expect("the flood thread ends");
    Outcome {
        ticks: ticks.load(Ordering::Relaxed),
        items,
    }
}

fn parse(args: &[String]) -> Result<(usize, u64), String> {
    let (mut workers, mut secs) = (1usize, 2u64);
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        let mut number = || -> Result<u64, String> {
            args.next()
                .and_then(|value| value.parse().ok())
                .ok_or_else(|| format!("{flag} needs a whole number\n\n{HELP}"))
        };
        match flag.as_str() {
            "--help" | "-h" => return Err(HELP.to_owned()),
            "--workers" => workers = number()? as usize,
            "--secs" => secs = number()?.max(1),
            other => return Err(format!("unknown flag {other}\n\n{HELP}")),
        }
    }
    Ok((workers, secs))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (workers, secs) = match parse(&args) {
        Ok(settings) => settings,
        Err(message) => {
            let help = message == HELP;
            eprintln!("{message}");
            std::process::exit(if help { 0 } else { 2 });
        }
    };
    let flavour = if workers == 0 {
        "current-thread".to_owned()
    } else {
        format!("{workers} worker(s)")
    };
    println!(
        "coop_flood: {flavour}, {secs} s a case; interval ticks of {} asked for",
        100 * secs
    );
    println!("{:<36} {:>8} {:>14}", "case", "ticks", "items/s");
    let socket = Source::Socket;
    let mpsc = Source::TokioMpsc { cooperative: false };
    let cases = [
        ("brigade, socket", on_brigade as Case, socket),
        ("tokio, socket", on_tokio, socket),
        ("brigade, tokio-mpsc", on_brigade, mpsc),
        (
            "brigade, tokio-mpsc+cooperative",
            on_brigade,
            Source::TokioMpsc { cooperative: true },
        ),
        ("tokio, tokio-mpsc", on_tokio, mpsc),
    ];
    for (name, run, source) in cases {
        let outcome = run(workers, source, secs);
        println!(
            "{name:<36} {:>8} {:>14.0}",
            outcome.ticks,
            outcome.items as f64 / secs as f64
        );
    }
}
