//! Spawns tasks on a brigade runtime and joins them.
//!
//! ```text
//! cargo run --release -p brigade-examples --example hello
//! ```

use std::time::Instant;

fn main() -> std::io::Result<()> {
    let rt = brigade::Runtime::new()?;
    let started = Instant::now();
    let total: u64 = rt.block_on(async {
        // Fan out: one task per chunk of the range, each summing its squares.
        let tasks: Vec<_> = (0..64u64)
            .map(|chunk| {
                brigade::spawn(async move {
                    let mut sum = 0u64;
                    for n in chunk * 10_000..(chunk + 1) * 10_000 {
                        sum = sum.wrapping_add(n * n);
                        // Background-style loop: step aside only if someone is waiting.
                        brigade::yield_if_busy().await;
                    }
                    sum
                })
            })
            .collect();
        let mut total = 0u64;
        for task in tasks {
            total = total.wrapping_add(task.await.expect("task panicked"));
        }
        total
    });
    let metrics = rt.metrics();
    println!("sum of squares below 640000 = {total}");
    println!(
        "{} tasks on {} workers in {:?}; yield_if_busy gave way {} times",
        metrics.spawned_tasks_count(),
        metrics.num_workers(),
        started.elapsed(),
        metrics.yields()
    );
    let expected = (0..640_000u64).fold(0u64, |sum, n| sum.wrapping_add(n * n));
    assert_eq!(total, expected);
    Ok(())
}
