//! The current-thread flavour's `block_on` loop (`worker/block_on.rs`):
//! the thread in `block_on` is the only worker, and parks in
//! `Idle::wait_for_work` when neither a task nor its own future is ready.
//! A spawn or a wake from another thread racing with that park must reach
//! it (`MainSignal`'s protocol in `worker/block_on.rs`, `Idle`'s in
//! `idle.rs`); a lost one leaves every thread blocked, which loom reports
//! as a deadlock.

use std::future::poll_fn;
use std::task::{Poll, Waker};

use loom::sync::atomic::{AtomicBool, Ordering};
use loom::sync::{Arc, Mutex};

use super::check;
use crate::{Builder, Runtime};

/// A current-thread runtime with nothing that needs the monitor.
fn current_thread() -> Runtime {
    Builder::new_current_thread()
        .long_poll_threshold(None)
        .latency_sample_every(0)
        .max_yield_delay(None)
        .build()
        .expect("build a current-thread runtime for a loom model")
}

/// A one-shot flag with a waker: `set` from any thread, `wait` in
/// `block_on` (it registers before it looks, so no wake is lost here).
#[derive(Clone, Default)]
struct Flag(Arc<(AtomicBool, Mutex<Option<Waker>>)>);

impl Flag {
    fn set(&self) {
        self.0.0.store(true, Ordering::SeqCst);
        if let Some(waker) = self.0.1.lock().unwrap().take() {
            waker.wake();
        }
    }

    async fn wait(&self) {
        poll_fn(|cx| {
            *self.0.1.lock().unwrap() = Some(cx.waker().clone());
            if self.0.0.load(Ordering::SeqCst) {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await;
    }
}

/// Another thread spawns a task (into the injector, then
/// `Idle::notify_one`) while `block_on`'s thread runs out of work and
/// parks. The task must run on the `block_on` thread and wake its future.
#[test]
fn a_remote_spawn_reaches_a_parking_block_on() {
    check(2, || {
        let rt = current_thread();
        let handle = rt.handle().clone();
        let flag = Flag::default();
        let spawner = {
            let flag = flag.clone();
            loom::thread::spawn(move || {
                drop(handle.spawn(async move { flag.set() }));
            })
        };
        rt.block_on(flag.wait());
        spawner.join().unwrap();
    });
}

/// Another thread wakes the `block_on` future itself (`MainSignal`: the
/// flag, then the worker's parker) while its thread parks.
#[test]
fn a_remote_wake_of_the_future_reaches_a_parking_block_on() {
    check(3, || {
        let rt = current_thread();
        let flag = Flag::default();
        let waker = {
            let flag = flag.clone();
            loom::thread::spawn(move || flag.set())
        };
        rt.block_on(flag.wait());
        waker.join().unwrap();
    });
}
