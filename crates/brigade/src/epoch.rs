//! Amortised polling: how a busy worker bounds its expensive checks (the
//! scan of other workers' deques, the non-blocking I/O poll, the yield
//! queue's overdue test) to one per *epoch*, and even its clock reads to
//! about one per epoch: each read is aimed at the call where the next epoch
//! should begin, at the rate the calls come in (at most 1024 calls apart).
//!
//! When every worker is busy nobody sits in `epoll_wait`, so busy workers
//! must look for I/O and for work elsewhere themselves. Looking on every
//! call would cost a syscall and a cache miss per worker each time; looking
//! once per epoch of 2^[`EPOCH_SHIFT`] ns bounds how late such work is
//! noticed to about one epoch, at a fixed cost per epoch.
//!
//! Two gates per worker use it (`runtime/scheduler/worker/mod.rs`): `yield_if_busy()`'s
//! slow path and background self-wakes (`runtime/scheduler/worker/step_aside.rs`), and
//! the worker's own loop, which polls the driver and rescues overdue
//! yielded work at the first tick of each epoch. The I/O poll itself is
//! once per epoch for the whole runtime (`Driver::poll_for_epoch`).

use std::cell::Cell;

pub(crate) use crate::policy::{EPOCH_SHIFT, MAX_CALLS_BETWEEN_READS};

/// The epoch that `now_nanos` (runtime-clock nanoseconds) falls in.
pub(crate) fn epoch_of(now_nanos: u64) -> u64 {
    now_nanos >> EPOCH_SHIFT
}

/// The runtime-clock time at which `epoch` begins.
pub(crate) fn epoch_start(epoch: u64) -> u64 {
    epoch << EPOCH_SHIFT
}

/// After a clock read at time `now`, `calls` calls after the previous read
/// (at `last_read_at`): how many calls to let pass before the next read, so
/// that it comes just after the next epoch begins at that rate of calls.
/// At least 1, at most twice `calls` (the rate of a few calls says little:
/// one short gap between two slow calls would otherwise aim a thousand
/// slow calls ahead), at most [`MAX_CALLS_BETWEEN_READS`].
///
/// Aimed, not doubled: a gate used to read on calls 1, 3, 7, … 2^k − 1
/// after each new epoch, which overshoots the next epoch by up to its own
/// length when calls are few per epoch. With 10 µs between yield points (3
/// calls an epoch) the reads fell 10, 30 and 70 µs after a new epoch, so
/// one I/O poll in four came 70 µs after the last instead of 33, and an
/// epoch could pass unseen (`mixed_load`'s headline at 1 worker;
/// docs/decisions.md#clock-backoff). At a steady rate an aimed gate reads once per epoch,
/// or once per 1024 calls.
///
/// Under loom every read is followed by a read at the next call: the
/// model's clock moves one epoch per read (`Shared::clock_nanos`), so that
/// every read starts an epoch and the models take the amortised paths.
pub(crate) fn calls_until_next_read(now: u64, last_read_at: u64, calls: u64) -> u64 {
    if cfg!(loom) {
        return 1;
    }
    let calls = calls.max(1);
    let nanos_per_call = (now.saturating_sub(last_read_at) / calls).max(1);
    let until_next_epoch = epoch_start(epoch_of(now) + 1) - now;
    until_next_epoch
        .div_ceil(nanos_per_call)
        .min(2 * calls)
        .clamp(1, MAX_CALLS_BETWEEN_READS)
}

/// Says when a new epoch has begun, reading the clock only now and then:
/// where the next epoch should begin at the rate its calls come in
/// ([`calls_until_next_read`]). One per worker and use; only its worker's
/// thread touches it.
pub(crate) struct EpochGate {
    /// Calls left until the next clock read.
    calls_left: Cell<u64>,
    /// The calls between the last read and the next.
    stride: Cell<u64>,
    /// The time of the last read.
    last_read_at: Cell<u64>,
    epoch: Cell<u64>,
}

impl EpochGate {
    pub(crate) fn new() -> Self {
        EpochGate {
            calls_left: Cell::new(1),
            stride: Cell::new(1),
            last_read_at: Cell::new(0),
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
        let left = self.calls_left.get().saturating_sub(1);
        self.calls_left.set(left);
        if left != 0 {
            return false;
        }
        let now = now_nanos();
        let stride = calls_until_next_read(now, self.last_read_at.replace(now), self.stride.get());
        self.stride.set(stride);
        self.calls_left.set(stride);
        let epoch = epoch_of(now);
        epoch != self.epoch.replace(epoch)
    }
}

// Under loom the gates read the clock at every call (`calls_until_next_read`).
#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Runs `calls` calls of a gate `nanos_per_call` apart and returns,
    /// per clock read, its call number, its time and whether it saw a new
    /// epoch.
    fn reads_at_steady_rate(nanos_per_call: u64, calls: u64) -> Vec<(u64, u64, bool)> {
        reads_with_gaps(&[nanos_per_call], calls)
    }

    /// The same with the gaps between calls taken from `gaps` in turn.
    fn reads_with_gaps(gaps: &[u64], calls: u64) -> Vec<(u64, u64, bool)> {
        let gate = EpochGate::new();
        let mut reads = Vec::new();
        let mut now = 1_000_000;
        for (call, gap) in (1..=calls).zip(gaps.iter().cycle()) {
            now += gap;
            let mut read = false;
            let new_epoch = gate.is_new_epoch(|| {
                read = true;
                now
            });
            if read {
                reads.push((call, now, new_epoch));
            }
        }
        reads
    }

    #[test]
    fn few_calls_per_epoch_see_each_epoch_within_a_call() {
        // Three calls an epoch: every epoch is seen at its first call, and
        // the clock is read about once per epoch.
        let per_call = 10_000;
        let reads = reads_at_steady_rate(per_call, 3_000);
        let sightings: Vec<u64> = reads.iter().filter(|r| r.2).map(|r| r.1).collect();
        let epochs = epoch_of(sightings[sightings.len() - 1]) - epoch_of(sightings[0]) + 1;
        assert_eq!(sightings.len() as u64, epochs, "an epoch went unseen");
        for at in &sightings[1..] {
            let late = at - epoch_start(epoch_of(*at));
            assert!(late <= per_call, "seen {late} ns after the epoch began");
        }
        assert!(
            reads.len() as u64 <= epochs + epochs / 4,
            "{} reads, {epochs} epochs",
            reads.len()
        );
    }

    #[test]
    fn uneven_gaps_between_calls_do_not_blind_the_gate() {
        // A short gap between two long ones says little of the rate: the
        // gate must not aim hundreds of long gaps ahead from it. Each epoch
        // is seen within two of the longest gaps of its start.
        for gaps in [
            &[100, 20_000][..],
            &[50, 50, 30_000],
            &[1_000, 9_000, 15_000, 100],
        ] {
            let longest = *gaps.iter().max().unwrap();
            let reads = reads_with_gaps(gaps, 20_000);
            let sightings: Vec<u64> = reads.iter().filter(|r| r.2).map(|r| r.1).collect();
            for at in &sightings[1..] {
                let late = at - epoch_start(epoch_of(*at));
                assert!(late <= 2 * longest, "gaps {gaps:?}: seen {late} ns late");
            }
        }
    }

    #[test]
    fn many_calls_per_epoch_read_once_per_1024_calls_at_most() {
        // 10 ns a call: 3,277 calls an epoch. Reads at most 1024 calls apart,
        // and each epoch seen within 1024 calls of its start.
        let per_call = 10;
        let reads = reads_at_steady_rate(per_call, 200_000);
        for pair in reads.windows(2) {
            assert!(pair[1].0 - pair[0].0 <= MAX_CALLS_BETWEEN_READS, "{pair:?}");
        }
        let sightings: Vec<u64> = reads.iter().filter(|r| r.2).map(|r| r.1).collect();
        for at in &sightings[1..] {
            let late = at - epoch_start(epoch_of(*at));
            assert!(
                late <= MAX_CALLS_BETWEEN_READS * per_call,
                "seen {late} ns late"
            );
        }
        // Far fewer reads than calls: about 5 an epoch (the stride at most
        // doubling from the short one that found the epoch's start), where
        // reads on calls 1, 3, 7, … after each new epoch made 12.
        let epochs = epoch_of(reads[reads.len() - 1].1) - epoch_of(reads[0].1) + 1;
        assert!(
            reads.len() as u64 <= 6 * epochs,
            "{} reads, {epochs} epochs",
            reads.len()
        );
    }

    #[test]
    fn calls_that_slow_down_are_caught_within_1024_calls() {
        let gate = EpochGate::new();
        let now = Cell::new(0u64);
        // Fast calls: the gate lets many pass between reads.
        for _ in 0..10_000 {
            now.set(now.get() + 10);
            gate.is_new_epoch(|| now.get());
        }
        assert!(gate.stride.get() > 100, "{}", gate.stride.get());
        // Then one call per epoch: within at most 1024 calls a read sees a
        // new epoch; the read after it measures the new rate, and from then
        // on every call reads the clock and sees a new epoch.
        let one_epoch_on = || {
            now.set(now.get() + epoch_start(1));
            gate.is_new_epoch(|| now.get())
        };
        for _ in 0..2 {
            let waited = (1..=MAX_CALLS_BETWEEN_READS).find(|_| one_epoch_on());
            assert!(waited.is_some(), "no new epoch seen in 1024 calls");
        }
        for _ in 0..10 {
            assert!(one_epoch_on());
        }
        assert_eq!(epoch_of(now.get()), gate.epoch());
    }
}
