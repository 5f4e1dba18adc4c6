//! Lock-free latency histograms: one writer (a worker), many readers.
//!
//! Buckets are log-linear over nanoseconds: values below 64 ns have a bucket
//! each; above, every power of two is split into 64 equal sub-buckets, so a
//! bucket is at most 1/64 (≈ 1.6%) of its lower bound wide and a quantile
//! read as the bucket's midpoint is within 0.8% of the true value. Values up
//! to 2^36 ns (≈ 69 s) are distinguished; larger ones land in the last
//! bucket (covering "≥ 10 s" with room to spare).
//!
//! Each worker owns its histograms and is their only writer, so a record is
//! a `Relaxed` load and store per counter (no locked instruction). Readers
//! sum every worker's buckets into a [`LatencySnapshot`]; a snapshot taken
//! while a worker records may be off by that one record, which is fine for
//! statistics.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

const SUB_BITS: u32 = 6;
const SUB_BUCKETS: usize = 1 << SUB_BITS;
/// Highest power of two tracked: 2^36 ns ≈ 69 s.
const MAX_MAGNITUDE: u32 = 36;
const NUM_BUCKETS: usize = SUB_BUCKETS * (MAX_MAGNITUDE - SUB_BITS + 2) as usize;

fn bucket_index(nanos: u64) -> usize {
    if nanos < SUB_BUCKETS as u64 {
        return nanos as usize;
    }
    let magnitude = (63 - nanos.leading_zeros()).min(MAX_MAGNITUDE);
    let shift = magnitude - SUB_BITS;
    let sub = ((nanos >> shift) as usize).min(2 * SUB_BUCKETS - 1) - SUB_BUCKETS;
    ((shift as usize + 1) << SUB_BITS) + sub
}

/// Lowest value (ns) that falls in bucket `index`, and the bucket's width.
fn bucket_range(index: usize) -> (u64, u64) {
    if index < SUB_BUCKETS {
        return (index as u64, 1);
    }
    let shift = (index >> SUB_BITS) as u32 - 1;
    let sub = (index & (SUB_BUCKETS - 1)) as u64;
    (((SUB_BUCKETS as u64) + sub) << shift, 1 << shift)
}

/// A histogram with a single writer.
pub(crate) struct Histogram {
    buckets: Box<[AtomicU64]>,
    max: AtomicU64,
}

fn bump(counter: &AtomicU64, by: u64) {
    counter.store(counter.load(Ordering::Relaxed) + by, Ordering::Relaxed);
}

impl Histogram {
    pub(crate) fn new() -> Self {
        Histogram {
            buckets: (0..NUM_BUCKETS).map(|_| AtomicU64::new(0)).collect(),
            max: AtomicU64::new(0),
        }
    }

    /// Records one value. Only the owning worker may call this.
    pub(crate) fn record(&self, nanos: u64) {
        bump(&self.buckets[bucket_index(nanos)], 1);
        if nanos > self.max.load(Ordering::Relaxed) {
            self.max.store(nanos, Ordering::Relaxed);
        }
    }

    /// Adds this histogram's counts into `snapshot`.
    pub(crate) fn add_to(&self, snapshot: &mut LatencySnapshot) {
        for (total, bucket) in snapshot.buckets.iter_mut().zip(self.buckets.iter()) {
            let count = bucket.load(Ordering::Relaxed);
            *total += count;
            snapshot.count += count;
        }
        snapshot.max = snapshot.max.max(self.max.load(Ordering::Relaxed));
    }
}

/// A latency distribution: everything recorded since the runtime started,
/// or (from [`since`](Self::since)) between two snapshots.
///
/// # Examples
///
/// ```
/// let rt = brigade::Builder::new().latency_sample_every(1).build()?;
/// rt.block_on(async { brigade::spawn(async {}).await }).unwrap();
/// let latency = rt.metrics().scheduling_latency();
/// assert!(latency.count() >= 1);
/// assert!(latency.quantile(0.5) <= latency.max());
/// # Ok::<(), brigade::BuildError>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct LatencySnapshot {
    buckets: Box<[u64]>,
    count: u64,
    /// Exact maximum for a cumulative snapshot; for a difference, the upper
    /// bound of the highest non-empty bucket.
    max: u64,
}

impl LatencySnapshot {
    pub(crate) fn empty() -> Self {
        LatencySnapshot {
            buckets: vec![0; NUM_BUCKETS].into_boxed_slice(),
            count: 0,
            max: 0,
        }
    }

    /// Number of values recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The largest value recorded (for a difference of snapshots: the upper
    /// end of the highest bucket that gained values).
    pub fn max(&self) -> Duration {
        Duration::from_nanos(self.max)
    }

    /// The value below which a fraction `q` (clamped to `0.0..=1.0`) of the
    /// recorded values fall, within 1%. Zero if nothing was recorded.
    pub fn quantile(&self, q: f64) -> Duration {
        if self.count == 0 {
            return Duration::ZERO;
        }
        let q = if q.is_nan() { 1.0 } else { q.clamp(0.0, 1.0) };
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (index, &count) in self.buckets.iter().enumerate() {
            seen += count;
            if seen >= rank {
                let (low, width) = bucket_range(index);
                let middle = low + width / 2;
                return Duration::from_nanos(middle.min(self.max));
            }
        }
        Duration::from_nanos(self.max)
    }

    /// The mean of the recorded values, from each bucket's middle (so
    /// within the buckets' width, 1%, of the exact mean). Zero if nothing
    /// was recorded.
    pub fn mean(&self) -> Duration {
        if self.count == 0 {
            return Duration::ZERO;
        }
        let total: u128 = self
            .buckets
            .iter()
            .enumerate()
            .filter(|&(_, &count)| count > 0)
            .map(|(index, &count)| {
                let (low, width) = bucket_range(index);
                u128::from((low + width / 2).min(self.max)) * u128::from(count)
            })
            .sum();
        Duration::from_nanos((total / u128::from(self.count)) as u64)
    }

    /// What was recorded after `earlier` (a snapshot of the same metric taken
    /// before this one).
    ///
    /// # Examples
    ///
    /// ```
    /// let rt = brigade::Builder::new().latency_sample_every(1).build()?;
    /// let metrics = rt.metrics();
    /// let start = metrics.scheduling_latency();
    /// rt.block_on(async { brigade::spawn(async {}).await }).unwrap();
    /// let now = metrics.scheduling_latency();
    /// let window = now.since(&start);
    /// assert_eq!(window.count(), now.count() - start.count());
    /// assert!(window.count() >= 1);
    /// assert_eq!(now.since(&now).count(), 0);
    /// # Ok::<(), brigade::BuildError>(())
    /// ```
    pub fn since(&self, earlier: &LatencySnapshot) -> LatencySnapshot {
        let buckets: Box<[u64]> = self
            .buckets
            .iter()
            .zip(earlier.buckets.iter())
            .map(|(now, before)| now.saturating_sub(*before))
            .collect();
        let count = buckets.iter().sum();
        let max = buckets
            .iter()
            .rposition(|&count| count > 0)
            .map_or(0, |index| {
                let (low, width) = bucket_range(index);
                (low + width - 1).min(self.max)
            });
        LatencySnapshot {
            buckets,
            count,
            max,
        }
    }
}

impl fmt::Debug for LatencySnapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LatencySnapshot")
            .field("count", &self.count)
            .field("p50", &self.quantile(0.5))
            .field("p99", &self.quantile(0.99))
            .field("max", &self.max())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(histogram: &Histogram) -> LatencySnapshot {
        let mut snapshot = LatencySnapshot::empty();
        histogram.add_to(&mut snapshot);
        snapshot
    }

    #[test]
    fn bucket_ranges_cover_the_line_and_are_narrow() {
        let mut expected_low = 0;
        for index in 0..NUM_BUCKETS - 1 {
            let (low, width) = bucket_range(index);
            assert_eq!(low, expected_low, "bucket {index} leaves a gap");
            assert!(low < 64 || width as f64 / low as f64 <= 1.0 / 64.0 + 1e-12);
            assert_eq!(bucket_index(low), index);
            assert_eq!(bucket_index(low + width - 1), index);
            expected_low = low + width;
        }
        // Ten seconds and beyond are still distinguished from each other.
        assert!(bucket_index(10_000_000_000) < bucket_index(40_000_000_000));
        assert_eq!(bucket_index(u64::MAX), NUM_BUCKETS - 1);
    }

    #[test]
    fn quantiles_are_within_three_percent() {
        let histogram = Histogram::new();
        for micros in 1..=10_000u64 {
            histogram.record(micros * 1000);
        }
        let snapshot = snapshot(&histogram);
        assert_eq!(snapshot.count(), 10_000);
        for q in [0.01, 0.5, 0.9, 0.99, 0.999] {
            let exact = q * 10_000.0 * 1000.0;
            let got = snapshot.quantile(q).as_nanos() as f64;
            assert!(
                (got - exact).abs() / exact <= 0.03,
                "q={q}: {got} vs {exact}"
            );
        }
        assert_eq!(snapshot.max(), Duration::from_millis(10));
        assert_eq!(LatencySnapshot::empty().quantile(0.99), Duration::ZERO);
    }

    #[test]
    fn the_mean_is_within_the_bucket_width() {
        let histogram = Histogram::new();
        for nanos in [1_000u64, 2_000, 3_000, 10_000] {
            histogram.record(nanos);
        }
        let mean = snapshot(&histogram).mean().as_nanos() as f64;
        assert!((mean - 4_000.0).abs() <= 4_000.0 * 0.03, "mean {mean}");
        assert_eq!(LatencySnapshot::empty().mean(), Duration::ZERO);
    }

    #[test]
    fn a_difference_holds_only_the_new_values() {
        let histogram = Histogram::new();
        for _ in 0..100 {
            histogram.record(1_000);
        }
        let before = snapshot(&histogram);
        for _ in 0..10 {
            histogram.record(5_000_000);
        }
        let window = snapshot(&histogram).since(&before);
        assert_eq!(window.count(), 10);
        let p50 = window.quantile(0.5).as_nanos() as f64;
        assert!((p50 - 5e6).abs() / 5e6 <= 0.02, "{p50}");
        assert!(window.max() >= Duration::from_millis(5));
    }
}
