//! brigade's tasks in tokio-console: a few named tasks (a background
//! compaction that steps aside when busy, a request loop that sleeps
//! between requests, short-lived jobs) run while `console-subscriber`
//! serves their spans on its default address, 127.0.0.1:6669.
//!
//! ```text
//! cargo run -p brigade-examples --features console --example console -- 60
//! # in another terminal (cargo install --locked tokio-console):
//! tokio-console
//! ```
//!
//! The argument is how many seconds to run (default 60). brigade needs
//! feature `console`, and `console-subscriber` the cfg
//! `console_without_tokio_unstable` (or `tokio_unstable`), which the
//! workspace's .cargo/config.toml sets; a project of your own sets it in its
//! own `.cargo/config.toml` or `RUSTFLAGS`.

use std::time::Duration;

use brigade::task::Builder;

fn main() -> std::io::Result<()> {
    let secs: u64 = match std::env::args().nth(1) {
        None => 60,
        Some(arg) => arg.parse().map_err(|error| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("usage: console [SECONDS]; {arg:?} is not a number: {error}"),
            )
        })?,
    };
    console_subscriber::init();
    println!("tokio-console: connect to http://127.0.0.1:6669 (running {secs} s)");
    let rt = brigade::Runtime::new()?;
    rt.block_on(async move {
        Builder::new().name("compaction").spawn(async {
            loop {
                std::hint::black_box((0..20_000u64).sum::<u64>());
                brigade::yield_if_busy().await;
            }
        });
        Builder::new().name("requests").spawn(async {
            loop {
                brigade::time::sleep(Duration::from_millis(10)).await;
            }
        });
        let mut job = 0u64;
        let end = brigade::time::Instant::now() + Duration::from_secs(secs);
        while brigade::time::Instant::now() < end {
            job += 1;
            let name = format!("job-{job}");
            Builder::new().name(&name).spawn(async {
                brigade::time::sleep(Duration::from_millis(500)).await;
            });
            brigade::time::sleep(Duration::from_millis(200)).await;
        }
    });
    Ok(())
}
