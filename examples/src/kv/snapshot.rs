//! The background snapshot: serialises the whole map into a buffer, shard
//! by shard, with a yield point after each chunk of about [`CHUNK_KEYS`]
//! keys, while commands go on.
//!
//! A snapshot is consistent per shard (each shard is copied under its
//! lock), not across shards: a key written after its shard was copied is
//! not in it, as in a fuzzy checkpoint. The bytes are written by
//! [`Writer`] (see [`super::snapshot_format`] for the format).

use std::future::Future;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::snapshot_format::Writer;
use super::store::{SHARDS, Store};

/// A chunk (the work between two yield points) is whole shards, until it
/// holds at least this many keys: one shard at the default prefill (about
/// 120 keys), several in a small store.
pub const CHUNK_KEYS: usize = 64;

/// Bytes written to `--snapshot-path` between two yield points.
const FILE_PIECE: usize = 64 * 1024;

/// How often to snapshot, and where to save it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotSettings {
    /// Pause between the end of one snapshot and the start of the next;
    /// zero runs them back to back.
    pub every: Duration,
    /// Also write each snapshot to this file (through `<path>.tmp` and a
    /// rename).
    pub path: Option<PathBuf>,
}

/// One finished snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotReport {
    /// 1 for the first snapshot.
    pub number: u64,
    /// Keys serialised.
    pub keys: u64,
    /// Bytes of the snapshot.
    pub bytes: u64,
    /// Its checksum (as in the trailer).
    pub checksum: u64,
    /// From the first chunk to the last (file writing included).
    pub duration: Duration,
    /// Chunks, that is yield points.
    pub chunks: u64,
    /// The chunks' serialising time, waits at yield points left out.
    pub serialising: Duration,
    /// The longest chunk's serialising time.
    pub longest_chunk: Duration,
}

/// How the chunks of one pass over the store went.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChunkTimes {
    /// Chunks, that is yield points.
    pub chunks: u64,
    /// Their serialising time, summed.
    pub total: Duration,
    /// The longest one.
    pub longest: Duration,
}

/// Counters of the snapshot task, read by the report.
#[derive(Debug, Default)]
pub struct SnapshotStats {
    done: AtomicU64,
    keys: AtomicU64,
    bytes: AtomicU64,
    last: Mutex<Option<SnapshotReport>>,
}

impl SnapshotStats {
    /// Snapshots finished.
    pub fn done(&self) -> u64 {
        self.done.load(Ordering::Relaxed)
    }

    /// Keys serialised so far, over all snapshots (counted per chunk).
    pub fn keys(&self) -> u64 {
        self.keys.load(Ordering::Relaxed)
    }

    /// Bytes serialised so far, over all snapshots (counted per chunk).
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// The latest finished snapshot.
    pub fn last(&self) -> Option<SnapshotReport> {
        *self
            .last
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Serialises the whole store once, calling `yield_point` after each
/// chunk; `None` if `stop` was set half-way.
pub async fn snapshot_once<Y, F>(
    store: &Store,
    writer: &mut Writer,
    stats: &SnapshotStats,
    stop: &AtomicBool,
    yield_point: &mut Y,
) -> Option<ChunkTimes>
where
    Y: FnMut() -> F,
    F: Future<Output = ()>,
{
    writer.begin();
    let mut times = ChunkTimes::default();
    let mut next_shard = 0;
    while next_shard < SHARDS {
        if stop.load(Ordering::Relaxed) {
            return None;
        }
        let started = Instant::now();
        let (keys_before, bytes_before) = (writer.keys(), writer.len());
        while next_shard < SHARDS && writer.keys() - keys_before < CHUNK_KEYS as u64 {
            writer.add_shard(&store.shard(next_shard));
            next_shard += 1;
        }
        let took = started.elapsed();
        times.longest = times.longest.max(took);
        times.total += took;
        times.chunks += 1;
        stats
            .keys
            .fetch_add(writer.keys() - keys_before, Ordering::Relaxed);
        let bytes = writer.len() - bytes_before;
        stats.bytes.fetch_add(bytes as u64, Ordering::Relaxed);
        yield_point().await;
    }
    Some(times)
}

/// Writes `bytes` to `path` (through `<path>.tmp` and a rename), a piece at
/// a time with a yield point between pieces.
async fn save<Y, F>(path: &PathBuf, bytes: &[u8], yield_point: &mut Y) -> std::io::Result<()>
where
    Y: FnMut() -> F,
    F: Future<Output = ()>,
{
    use std::io::Write;
    let mut temporary = path.clone().into_os_string();
    temporary.push(".tmp");
    let mut file = std::fs::File::create(&temporary)?;
    for piece in bytes.chunks(FILE_PIECE) {
        file.write_all(piece)?;
        yield_point().await;
    }
    drop(file);
    std::fs::rename(&temporary, path)
}

/// The snapshot task: snapshots until `stop` is set, pausing
/// `settings.every` between snapshots (`sleep`), with `yield_point` after
/// each chunk and each file piece.
pub async fn run_snapshots<Y, F, S, G>(
    store: &Store,
    stats: &SnapshotStats,
    settings: &SnapshotSettings,
    stop: &AtomicBool,
    mut yield_point: Y,
    mut sleep: S,
) where
    Y: FnMut() -> F,
    F: Future<Output = ()>,
    S: FnMut(Duration) -> G,
    G: Future<Output = ()>,
{
    let mut writer = Writer::default();
    let mut save_failed = false;
    while !stop.load(Ordering::Relaxed) {
        let started = Instant::now();
        let Some(times) = snapshot_once(store, &mut writer, stats, stop, &mut yield_point).await
        else {
            return;
        };
        let (keys, checksum) = (writer.keys(), writer.checksum());
        let bytes = writer.finish();
        if let Some(path) = &settings.path
            && let Err(error) = save(path, bytes, &mut yield_point).await
        {
            // Said once: the snapshot goes on in memory.
            if !save_failed {
                eprintln!(
                    "kv: cannot write the snapshot to {}: {error}",
                    path.display()
                );
            }
            save_failed = true;
        }
        let report = SnapshotReport {
            number: stats.done() + 1,
            keys,
            bytes: bytes.len() as u64,
            checksum,
            duration: started.elapsed(),
            chunks: times.chunks,
            serialising: times.total,
            longest_chunk: times.longest,
        };
        *stats
            .last
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(report);
        stats.done.fetch_add(1, Ordering::Relaxed);
        if settings.every.is_zero() {
            yield_point().await;
        } else {
            sleep(settings.every).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};

    /// Polls a future whose yield points are all ready: it finishes in one
    /// poll.
    fn finish<T>(future: impl Future<Output = T>) -> T {
        match pin!(future).poll(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(value) => value,
            Poll::Pending => panic!("the future waited"),
        }
    }

    #[test]
    fn a_snapshot_decodes_to_the_store() {
        let store = Store::new();
        store.prefill(0..3_000, 20);
        store.set(b"empty", b"");
        let (stats, stop) = (SnapshotStats::default(), AtomicBool::new(false));
        let mut writer = Writer::default();
        let mut yields = 0;
        let chunks = finish(snapshot_once(
            &store,
            &mut writer,
            &stats,
            &stop,
            &mut || {
                yields += 1;
                std::future::ready(())
            },
        ))
        .unwrap()
        .chunks;
        assert_eq!(yields, chunks);
        // 3,001 keys in chunks of at least CHUNK_KEYS keys (the last one
        // aside), each a few keys over at most.
        let most = 3_001 / CHUNK_KEYS as u64 + 1;
        assert!((most / 2..=most).contains(&chunks), "{chunks} chunks");
        assert_eq!((writer.keys(), stats.keys()), (3_001, 3_001));
        let map = crate::kv::snapshot_format::decode(writer.finish()).unwrap();
        assert_eq!(map.len(), 3_001);
        for (key, value) in &map {
            assert_eq!(store.get(key).as_ref(), Some(value));
        }
    }

    #[test]
    fn run_snapshots_reports_each_and_stops() {
        let store = Store::new();
        store.prefill(0..500, 8);
        let stats = SnapshotStats::default();
        let stop = AtomicBool::new(false);
        let settings = SnapshotSettings {
            every: Duration::from_secs(1),
            path: None,
        };
        let mut sleeps = 0;
        finish(run_snapshots(
            &store,
            &stats,
            &settings,
            &stop,
            || std::future::ready(()),
            |pause| {
                assert_eq!(pause, Duration::from_secs(1));
                sleeps += 1;
                // Stop after the third snapshot.
                stop.store(sleeps == 3, Ordering::Relaxed);
                std::future::ready(())
            },
        ));
        assert_eq!(stats.done(), 3);
        assert_eq!(stats.keys(), 1_500);
        let last = stats.last().unwrap();
        assert_eq!((last.number, last.keys), (3, 500));
        assert_eq!(stats.bytes(), 3 * (last.bytes - 8 - 20));
    }
}
