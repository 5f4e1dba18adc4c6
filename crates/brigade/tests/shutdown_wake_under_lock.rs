//! Runtime shutdown with h2's destructor pattern, deterministically.
//!
//! Dropping an h2 stream handle locks the connection's stream state and,
//! holding the lock, wakes the connection task; the connection's own
//! destructor takes the same lock. When a brigade runtime shut down with
//! both alive, it used to drop a woken task inside `Waker::wake`, so the
//! connection was dropped under the lock and the shutdown deadlocked
//! (brigade-hyper's `http2_*` tests hung about one run in 40). This test
//! builds the pattern with two plain tasks so it fails every time.

use std::future::Future;
use std::pin::Pin;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// The "stream state": each task's waker, behind one lock.
type State = Arc<Mutex<[Option<Waker>; 2]>>;

/// Pending forever. On drop it locks the state and, holding the lock,
/// wakes the other task (as h2's `drop_stream_ref` does).
struct Entangled {
    me: usize,
    state: State,
    polled: mpsc::Sender<()>,
}

impl Future for Entangled {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.state.lock().unwrap()[self.me] = Some(cx.waker().clone());
        let _ = self.polled.send(());
        Poll::Pending
    }
}

impl Drop for Entangled {
    fn drop(&mut self) {
        let state = self
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(other) = &state[1 - self.me] {
            other.wake_by_ref();
        }
    }
}

#[test]
fn shutdown_does_not_drop_tasks_inside_wake() {
    let (done_tx, done_rx) = mpsc::channel();
    // On its own thread, so a deadlock fails the test instead of hanging it.
    std::thread::spawn(move || {
        let rt = brigade::Builder::new().worker_threads(2).build().unwrap();
        let state = State::default();
        let (polled_tx, polled_rx) = mpsc::channel();
        for me in 0..2 {
            rt.spawn(Entangled {
                me,
                state: state.clone(),
                polled: polled_tx.clone(),
            });
        }
        for _ in 0..2 {
            polled_rx
                .recv_timeout(Duration::from_secs(30))
                .expect("a task was never polled");
        }
        drop(rt);
        done_tx.send(()).unwrap();
    });
    done_rx
        .recv_timeout(Duration::from_secs(30))
        .expect("runtime shutdown deadlocked");
}
