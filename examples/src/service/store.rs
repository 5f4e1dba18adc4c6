//! The services' in-memory store: string keys to values with a version,
//! in [`SHARDS`] ordered shards (a key's shard is picked by its hash), each
//! behind its own `RwLock` so that handlers on different workers rarely
//! meet, and the bulk job's re-index: a pass over the keys, a chunk at a
//! time.
//!
//! Locks are held only to read or write entries, never across an `.await`
//! nor while the re-index hashes: a unit copies its chunk out (cheap
//! clones) and works on the copy.

use std::collections::BTreeMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

use hyper::body::Bytes;
use serde_json::value::RawValue;

/// Shards of the store.
pub const SHARDS: usize = 16;

/// Entries a re-index unit hashes and sorts: about 50–100 µs of CPU in a
/// release build (the examples print the figure on this machine).
pub const UNIT_ENTRIES: usize = 384;

/// What the store can hold: the bytes the re-index hashes.
pub trait Value: Clone + Send + Sync + 'static {
    /// The value's bytes.
    fn bytes(&self) -> &[u8];
}

impl Value for Bytes {
    fn bytes(&self) -> &[u8] {
        self
    }
}

impl Value for Arc<RawValue> {
    fn bytes(&self) -> &[u8] {
        self.get().as_bytes()
    }
}

/// A stored value and its version (1 when first put, +1 on each put).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry<V> {
    /// The value.
    pub value: V,
    /// How many times the key was put.
    pub version: u64,
}

/// One shard: its keys in order.
type Shard<V> = BTreeMap<String, Entry<V>>;

/// The store. Shared between handlers and bulk tasks in an `Arc`.
#[derive(Debug)]
pub struct Store<V> {
    shards: Box<[RwLock<Shard<V>>]>,
    /// The re-index's running digest of what it hashed (so that its work
    /// has an effect the optimiser must keep).
    digest: AtomicU64,
}

impl<V: Value> Default for Store<V> {
    fn default() -> Self {
        Store {
            shards: (0..SHARDS).map(|_| RwLock::default()).collect(),
            digest: AtomicU64::new(0),
        }
    }
}

/// The name of key number `n`, as the prefill and `kv_load` spell it.
pub fn key_name(n: u64) -> String {
    format!("key:{n:012}")
}

impl<V: Value> Store<V> {
    /// A store with keys `key_name(0..keys)`, each set to `value(n)`.
    pub fn prefilled(keys: u64, value: impl Fn(u64) -> V) -> Store<V> {
        let store = Store::default();
        for n in 0..keys {
            store.put(key_name(n), value(n));
        }
        store
    }

    /// The key's entry, if it is stored.
    pub fn get(&self, key: &str) -> Option<Entry<V>> {
        self.read(shard_of(key)).get(key).cloned()
    }

    /// Stores `value` under `key`; returns the new version.
    pub fn put(&self, key: String, value: V) -> u64 {
        let mut shard = self.write(shard_of(&key));
        match shard.get_mut(&key) {
            Some(entry) => {
                entry.value = value;
                entry.version += 1;
                entry.version
            }
            None => {
                shard.insert(key, Entry { value, version: 1 });
                1
            }
        }
    }

    /// Keys stored.
    pub fn len(&self) -> usize {
        (0..SHARDS).map(|shard| self.read(shard).len()).sum()
    }

    /// Whether no key is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entries with keys in `start..end` (`end` `None`: no end), in key
    /// order, at most `limit`.
    pub fn scan(&self, start: &str, end: Option<&str>, limit: usize) -> Vec<(String, Entry<V>)> {
        let upper = end.map_or(Bound::Unbounded, Bound::Excluded);
        let mut found: Vec<(String, Entry<V>)> = Vec::new();
        // Each shard's first `limit` in range; the first `limit` of all of
        // them are among these.
        for shard in 0..SHARDS {
            let shard = self.read(shard);
            let range = shard.range::<str, _>((Bound::Included(start), upper));
            found.extend(range.take(limit).map(|(k, e)| (k.clone(), e.clone())));
        }
        found.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        found.truncate(limit);
        found
    }

    /// One unit of the re-index: copies up to [`UNIT_ENTRIES`] entries of
    /// `cursor`'s shard after its key, hashes each key with its value,
    /// sorts the hashes (the index of that chunk) and folds them into the
    /// store's digest; then moves the cursor on (to the next shard at the
    /// end of one). Returns the entries indexed.
    pub fn reindex_unit(&self, cursor: &mut Cursor) -> usize {
        let chunk: Vec<(String, V)> = {
            let shard = self.read(cursor.shard);
            let after = cursor
                .after
                .as_deref()
                .map_or(Bound::Unbounded, Bound::Excluded);
            shard
                .range::<str, _>((after, Bound::Unbounded))
                .take(UNIT_ENTRIES)
                .map(|(key, entry)| (key.clone(), entry.value.clone()))
                .collect()
        };
        let mut index: Vec<(u64, &str)> = chunk
            .iter()
            .map(|(key, value)| {
                let mut hasher = DefaultHasher::new();
                key.hash(&mut hasher);
                hasher.write(value.bytes());
                (hasher.finish(), key.as_str())
            })
            .collect();
        index.sort_unstable();
        let folded = index
            .iter()
            .fold(0u64, |acc, (hash, _)| acc.rotate_left(5) ^ hash);
        self.digest.fetch_add(folded, Ordering::Relaxed);
        let indexed = chunk.len();
        cursor.advance(chunk.last().map(|(key, _)| key.clone()), indexed);
        indexed
    }

    /// The re-index's digest so far.
    pub fn digest(&self) -> u64 {
        self.digest.load(Ordering::Relaxed)
    }

    /// A poisoned lock means a handler panicked while holding it; the maps
    /// are never left half-changed (each change is one map operation), so
    /// the data is still good.
    fn read(&self, shard: usize) -> RwLockReadGuard<'_, Shard<V>> {
        self.shards[shard].read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self, shard: usize) -> RwLockWriteGuard<'_, Shard<V>> {
        self.shards[shard]
            .write()
            .unwrap_or_else(|e| e.into_inner())
    }
}

/// Where a re-index pass is: a shard and the last key indexed in it.
#[derive(Debug, Clone, Default)]
pub struct Cursor {
    shard: usize,
    after: Option<String>,
}

impl Cursor {
    /// A cursor starting at `shard` (modulo [`SHARDS`]), so that bulk tasks
    /// spread over the shards.
    pub fn at_shard(shard: usize) -> Cursor {
        Cursor {
            shard: shard % SHARDS,
            after: None,
        }
    }

    fn advance(&mut self, last: Option<String>, indexed: usize) {
        if indexed < UNIT_ENTRIES {
            // The shard's end: the next unit starts the next shard.
            self.shard = (self.shard + 1) % SHARDS;
            self.after = None;
        } else {
            self.after = last;
        }
    }
}

/// The shard of `key`.
fn shard_of(key: &str) -> usize {
    let mut hasher = DefaultHasher::new();
    key.hash(&mut hasher);
    (hasher.finish() % SHARDS as u64) as usize
}

/// How long one re-index unit takes here (the median of a few, over a
/// store of `keys` keys), for the examples' start-up line.
pub fn unit_duration<V: Value>(store: &Store<V>) -> Duration {
    let mut cursor = Cursor::default();
    let mut times: Vec<Duration> = (0..21)
        .map(|_| {
            let started = Instant::now();
            std::hint::black_box(store.reindex_unit(&mut cursor));
            started.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(text: &str) -> Bytes {
        Bytes::copy_from_slice(text.as_bytes())
    }

    #[test]
    fn put_get_and_versions() {
        let store = Store::<Bytes>::default();
        assert!(store.is_empty() && store.get("a").is_none());
        assert_eq!(store.put("a".into(), bytes("1")), 1);
        assert_eq!(store.put("a".into(), bytes("2")), 2);
        assert_eq!(store.put("b".into(), bytes("3")), 1);
        let entry = store.get("a").unwrap();
        assert_eq!((entry.value, entry.version), (bytes("2"), 2));
        assert_eq!(store.len(), 2);
    }

    #[test]
    fn scan_is_ordered_across_shards_bounded_and_limited() {
        let store = Store::prefilled(100, |n| bytes(&n.to_string()));
        let all = store.scan("", None, 1000);
        assert_eq!(all.len(), 100);
        assert!(all.windows(2).all(|w| w[0].0 < w[1].0));
        let some = store.scan(&key_name(10), Some(&key_name(20)), 1000);
        let keys: Vec<_> = some.iter().map(|(k, _)| k.clone()).collect();
        assert_eq!(keys, (10..20).map(key_name).collect::<Vec<_>>());
        assert_eq!(store.scan(&key_name(10), None, 3).len(), 3);
        assert_eq!(some[0].1.value, bytes("10"));
    }

    #[test]
    fn a_reindex_pass_visits_every_key_once() {
        let keys = (UNIT_ENTRIES * SHARDS * 2) as u64;
        let store = Store::prefilled(keys, |n| bytes(&n.to_string()));
        let mut cursor = Cursor::at_shard(3);
        let mut indexed = 0;
        // Every shard has fewer than 3 units of keys, so a pass ends within
        // 3 × SHARDS units; the cursor is back at shard 3 after it.
        for _ in 0..3 * SHARDS {
            indexed += store.reindex_unit(&mut cursor);
            if cursor.shard == 3 && cursor.after.is_none() {
                break;
            }
        }
        assert_eq!(indexed as u64, keys);
        assert_ne!(store.digest(), 0);
    }
}
