//! Amortised polling: how a busy worker bounds its expensive checks (the
//! scan of other workers' deques, the non-blocking I/O poll, the yield
//! queue's overdue test) to one per *epoch*, and even its clock reads to
//! one per many calls.
//!
//! When every worker is busy nobody sits in `epoll_wait`, so busy workers
//! must look for I/O and for work elsewhere themselves. Looking on every
//! call would cost a syscall and a cache miss per worker each time; looking
//! once per epoch of 2^[`EPOCH_SHIFT`] ns bounds how late such work is
//! noticed to about one epoch, at a fixed cost per epoch.
//!
//! Two gates per worker use it (`runtime/worker.rs`): `yield_if_busy()`'s
//! slow path and background self-wakes (`runtime/worker/step_aside.rs`), and
//! the worker's own loop, which polls the driver and rescues overdue
//! yielded work at the first tick of each epoch. The I/O poll itself is
//! once per epoch for the whole runtime (`Driver::poll_for_epoch`).

use std::cell::Cell;

/// log2 of the epoch length in nanoseconds: 2^15 ns ≈ 33 µs.
///
/// CockroachDB's `runtime.Yield` uses 2^18 ns (≈ 262 µs). When every worker
/// is busy, the epoch bounds how late a network-woken task is noticed, so
/// it sets the foreground latency floor; the price is one non-blocking
/// `epoll_wait` per epoch per runtime and one clock read per epoch per busy
/// worker (or per 1024 calls). docs/results.md's `mixed_load` section gives the
/// measurements behind the choice (2^15 to 2^18 ns, per-worker and
/// per-runtime polls).
pub(crate) const EPOCH_SHIFT: u32 = 15;

/// The epoch that `now_nanos` (runtime-clock nanoseconds) falls in.
pub(crate) fn epoch_of(now_nanos: u64) -> u64 {
    now_nanos >> EPOCH_SHIFT
}

/// The runtime-clock time at which `epoch` begins.
pub(crate) fn epoch_start(epoch: u64) -> u64 {
    epoch << EPOCH_SHIFT
}

/// Says when a new epoch has begun, reading the clock only on calls 1, 3,
/// 7, 15, … (2^k − 1) of a counter, which stays between 1023 and 2047 at
/// high call rates, so the clock is then read once per 1024 calls (as
/// CockroachDB's `yieldchecks` word does). The counter restarts whenever a
/// new epoch is seen. One per worker and use; only its worker's thread
/// touches it.
pub(crate) struct EpochGate {
    calls: Cell<u32>,
    epoch: Cell<u64>,
}

impl EpochGate {
    pub(crate) fn new() -> Self {
        EpochGate {
            calls: Cell::new(0),
            epoch: Cell::new(u64::MAX),
        }
    }

    /// The epoch seen by the last clock read.
    pub(crate) fn epoch(&self) -> u64 {
        self.epoch.get()
    }

    /// Counts one call; returns `true` when a new epoch has begun (and the
    /// expensive checks are due). `now_nanos` is called only when the clock
    /// is due to be read.
    pub(crate) fn is_new_epoch(&self, now_nanos: impl FnOnce() -> u64) -> bool {
        let calls = self.calls.get() + 1;
        // Read the clock only when `calls` is 2^k - 1.
        if calls & (calls + 1) != 0 {
            self.calls.set(calls);
            return false;
        }
        let epoch = epoch_of(now_nanos());
        if epoch != self.epoch.get() {
            self.epoch.set(epoch);
            self.calls.set(0);
            return true;
        }
        self.calls.set(if calls == 2047 { 1023 } else { calls });
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_is_read_on_calls_two_to_the_k_minus_one() {
        let gate = EpochGate::new();
        let reads = Cell::new(Vec::new());
        for call in 1..=5000u32 {
            gate.is_new_epoch(|| {
                let mut seen = reads.take();
                seen.push(call);
                reads.set(seen);
                // The epoch never changes after the first read.
                0
            });
        }
        let reads = reads.take();
        // The first read starts the epoch and resets the counter to 0.
        assert_eq!(
            &reads[..12],
            &[1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048]
        );
        // Afterwards the counter oscillates in 1023..=2047: one read per 1024 calls.
        assert!(
            reads
                .windows(2)
                .skip(11)
                .all(|pair| pair[1] - pair[0] == 1024),
            "{reads:?}"
        );
    }

    #[test]
    fn a_new_epoch_restarts_the_counter() {
        let gate = EpochGate::new();
        let now = Cell::new(0u64);
        assert!(gate.is_new_epoch(|| now.get()));
        now.set(epoch_start(1));
        // Next clock read is on the first call after the reset.
        assert!(gate.is_new_epoch(|| now.get()));
        assert!(!gate.is_new_epoch(|| now.get()));
        assert_eq!(gate.calls.get(), 1);
        assert_eq!(epoch_of(now.get()), gate.epoch());
    }
}
