//! Timers: sleep, timeout, interval, and many concurrent sleeps. Every
//! assertion is about ordering or completion ("not before the deadline"),
//! never about how soon after.

mod common;

use brigade::time::{Duration, Instant};

use brigade::time::{MissedTickBehavior, interval, sleep, sleep_until, timeout};
use common::{TIMEOUT_SECS, bounded, with_timeout};

fn runtime() -> brigade::Runtime {
    brigade::Builder::new().worker_threads(2).build().unwrap()
}

#[brigade::test(worker_threads = 2)]
async fn sleep_never_ends_before_its_deadline() {
    bounded(async {
        for ms in [0u64, 1, 3, 10, 70] {
            let started = Instant::now();
            sleep(Duration::from_millis(ms)).await;
            assert!(started.elapsed() >= Duration::from_millis(ms));
        }
        let deadline = Instant::now() + Duration::from_millis(5);
        sleep_until(deadline).await;
        assert!(Instant::now() >= deadline);
    })
    .await;
}

#[brigade::test(worker_threads = 2)]
async fn timeout_fires_and_passes_ready_values_through() {
    bounded(async {
        assert_eq!(timeout(Duration::ZERO, async { 5 }).await, Ok(5));
        assert_eq!(
            timeout(Duration::from_secs(30), sleep(Duration::from_millis(1))).await,
            Ok(())
        );
        let started = Instant::now();
        let result = timeout(Duration::from_millis(20), std::future::pending::<()>()).await;
        assert!(result.is_err());
        assert!(started.elapsed() >= Duration::from_millis(20));
        let error: std::io::Error = result.unwrap_err().into();
        assert_eq!(error.kind(), std::io::ErrorKind::TimedOut);
    })
    .await;
}

#[brigade::test(worker_threads = 2)]
async fn interval_ticks_on_schedule() {
    bounded(async {
        let period = Duration::from_millis(3);
        let mut ticker = interval(period);
        let first = ticker.tick().await;
        let mut previous = first;
        for _ in 0..5 {
            let tick = ticker.tick().await;
            assert_eq!(tick - previous, period, "Burst keeps the schedule");
            assert!(Instant::now() >= tick);
            previous = tick;
        }
        ticker.set_missed_tick_behavior(MissedTickBehavior::Delay);
        std::thread::sleep(Duration::from_millis(10));
        let late = ticker.tick().await;
        let next = ticker.tick().await;
        assert!(next - late >= period);
    })
    .await;
}

#[brigade::test(worker_threads = 2)]
async fn interval_resets_move_the_next_tick() {
    bounded(async {
        // A period no test waits out: every tick below comes from a reset.
        let period = Duration::from_secs(3600);
        let mut ticker = interval(period);
        ticker.tick().await; // The first tick is at once.
        let before = Instant::now();
        ticker.reset_immediately();
        let tick = ticker.tick().await;
        assert!(tick >= before && tick <= Instant::now());
        let at = Instant::now() + Duration::from_millis(5);
        ticker.reset_at(at);
        assert_eq!(ticker.tick().await, at);
        assert!(Instant::now() >= at);
        let before = Instant::now();
        ticker.reset_after(Duration::from_millis(2));
        let tick = ticker.tick().await;
        assert!(tick >= before + Duration::from_millis(2));
        // After a reset the schedule goes on a period apart.
        ticker.reset_at(at);
        assert_eq!(ticker.tick().await, at);
        let next = timeout(Duration::from_millis(20), ticker.tick()).await;
        assert!(
            next.is_err(),
            "the next tick is a period after the reset one"
        );
    })
    .await;
}

#[brigade::test(worker_threads = 2)]
async fn a_timeouts_future_can_be_reached_mutably() {
    bounded(async {
        let mut wrapped = timeout(Duration::from_secs(30), async { 1 });
        let _: &mut _ = wrapped.get_mut();
        let mut counting = timeout(Duration::from_secs(30), std::future::ready(7));
        *counting.get_mut() = std::future::ready(8);
        assert_eq!(counting.await, Ok(8));
        assert_eq!(wrapped.into_inner().await, 1);
    })
    .await;
}

#[test]
fn one_hundred_thousand_concurrent_sleeps_complete() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime();
        let done = rt.block_on(async {
            let tasks: Vec<_> = (0..100_000u64)
                .map(|i| {
                    brigade::spawn(async move {
                        sleep(Duration::from_millis(1 + i % 50)).await;
                        1u64
                    })
                })
                .collect();
            let mut done = 0;
            for task in tasks {
                done += task.await.unwrap();
            }
            done
        });
        assert_eq!(done, 100_000);
        assert_eq!(rt.metrics().num_timers(), 0);
    });
}

#[test]
fn dropped_sleeps_are_deregistered() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime();
        rt.block_on(async {
            for _ in 0..1000 {
                let result =
                    timeout(Duration::from_millis(1), sleep(Duration::from_secs(3600))).await;
                assert!(result.is_err());
            }
        });
        assert_eq!(rt.metrics().num_timers(), 0);
    });
}

#[test]
#[should_panic(expected = "outside of a brigade runtime")]
fn sleep_outside_a_runtime_panics_with_a_message() {
    let _sleep = sleep(Duration::from_millis(1));
}
