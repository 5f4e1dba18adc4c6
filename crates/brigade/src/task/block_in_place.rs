//! `block_in_place`: the explicit form of compensation (see
//! `runtime/compensation/`).

use super::current;

/// Runs `f`, which may block, on the current thread, while a spare worker
/// takes this worker's place: the worker's queued tasks and its share of
/// new work go to the spare, so the rest of the runtime keeps serving.
///
/// Use it where an async task must make a blocking call and cannot move it
/// to [`spawn_blocking`](crate::spawn_blocking), for example because the
/// call borrows from the task. The calling task itself waits for `f`, as
/// with any blocking call; only the other tasks are spared. When `f`
/// returns, the spare steps down between two of its tasks.
///
/// Like tokio's function of the same name, but brigade also hands off by
/// itself when a worker is stuck for longer than
/// [`Builder::compensation_threshold`](crate::Builder::compensation_threshold);
/// `block_in_place` does it at once, and the blocking inside it is not
/// reported as a long poll.
///
/// Outside a worker (in `block_on`, on a blocking-pool thread, or on a
/// thread that is not the runtime's) it simply runs `f`; so it does when
/// every spare is already serving (see
/// [`Builder::max_spare_workers`](crate::Builder::max_spare_workers)), or
/// when that bound is 0.
///
/// # Panics
/// On a current-thread runtime ([`Builder::new_current_thread`](crate::runtime::Builder::new_current_thread)),
/// as tokio's does: its one thread runs every task, and nobody could take
/// its place.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
///
/// let rt = brigade::Builder::new().worker_threads(1).build()?;
/// let (tx, rx) = std::sync::mpsc::channel();
/// let waiter = rt.spawn(async move {
///     // Blocks this worker, but another task still runs meanwhile.
///     brigade::task::block_in_place(|| rx.recv_timeout(Duration::from_secs(10)))
/// });
/// rt.block_on(rt.spawn(async move { tx.send("hello").unwrap() })).unwrap();
/// assert_eq!(rt.block_on(waiter).unwrap(), Ok("hello"));
/// assert!(rt.metrics().compensations() >= 1);
/// # Ok::<(), brigade::BuildError>(())
/// ```
pub fn block_in_place<F, R>(f: F) -> R
where
    F: FnOnce() -> R,
{
    let mut f = Some(f);
    let mut output = None;
    current::with_worker(|worker| {
        if let Some(worker) = worker {
            worker.block_in_place(&mut || output = f.take().map(|f| f()));
        }
    });
    match output {
        Some(output) => output,
        // Not on a worker: nothing to hand off.
        None => (f.take().expect("f runs once"))(),
    }
}
