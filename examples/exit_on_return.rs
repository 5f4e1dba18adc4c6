//! How long a program takes to end after its `main` body returns while
//! background tasks that never end by themselves are still running: the
//! program of the hardening issue, once for each kind of endless task.
//!
//! ```text
//! cargo run --release -p brigade-examples --example exit_on_return
//! ```
//!
//! For each kind it builds a runtime with 2 workers (as
//! `#[brigade::main(worker_threads = 2)]` does), spawns 3 such tasks, lets
//! them run for 50 ms inside `block_on`, returns, and times the drop of the
//! runtime: the time from "main returns" to the end of the program. Each
//! drop is bounded by a watchdog, so a hang is reported instead of waited
//! for (exit status 1).

use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long one drop may take before it counts as a hang.
const HANG: Duration = Duration::from_secs(10);

const KINDS: [&str; 5] = [
    "yield_if_busy",
    "yield_now",
    "elastic+yield_if_busy",
    "pending on I/O",
    "sleeping",
];

/// A unit of work too small to measure: counts, so that the loop is not empty.
fn tick(units: &mut u64) {
    *units = units.wrapping_add(1);
    std::hint::black_box(*units);
}

/// CPU work with `yield_if_busy()` between units, forever.
async fn yield_if_busy_forever() {
    let mut units = 0;
    loop {
        tick(&mut units);
        brigade::yield_if_busy().await;
    }
}

/// Spawns one endless task of `kind` from inside the runtime.
fn spawn_endless(kind: &str) {
    match kind {
        "yield_if_busy" => drop(brigade::spawn(yield_if_busy_forever())),
        "yield_now" => drop(brigade::spawn(async {
            let mut units = 0;
            loop {
                tick(&mut units);
                brigade::yield_now().await;
            }
        })),
        "elastic+yield_if_busy" => drop(brigade::spawn_elastic(yield_if_busy_forever())),
        "pending on I/O" => drop(brigade::spawn(async {
            let socket = brigade::net::UdpSocket::bind("127.0.0.1:0").await?;
            let mut buffer = [0u8; 16];
            // Nobody sends to this socket.
            socket.recv_from(&mut buffer).await?;
            std::io::Result::Ok(())
        })),
        _ => drop(brigade::spawn(async {
            loop {
                brigade::time::sleep(Duration::from_millis(1)).await;
            }
        })),
    }
}

/// Runs the program for `kind`; the time its runtime took to end, or
/// `None` if it did not end within [`HANG`].
fn time_to_exit(kind: &'static str) -> std::io::Result<Option<Duration>> {
    let rt = brigade::Builder::new().worker_threads(2).build()?;
    rt.block_on(async {
        for _ in 0..3 {
            spawn_endless(kind);
        }
        brigade::time::sleep(Duration::from_millis(50)).await;
    });
    // "main returns": the runtime is dropped.
    let (done, finished) = mpsc::channel();
    let started = Instant::now();
    std::thread::spawn(move || {
        drop(rt);
        let _ = done.send(started.elapsed());
    });
    Ok(finished.recv_timeout(HANG).ok())
}

fn main() -> std::io::Result<()> {
    println!("| endless tasks (3 on 2 workers) | main returns → runtime ended |");
    println!("|---|---|");
    let mut hung = false;
    for kind in KINDS {
        match time_to_exit(kind)? {
            Some(took) => println!("| {kind} | {:.2} ms |", took.as_secs_f64() * 1e3),
            None => {
                println!("| {kind} | did not end within {} s |", HANG.as_secs());
                hung = true;
            }
        }
    }
    if hung {
        std::process::exit(1);
    }
    Ok(())
}
