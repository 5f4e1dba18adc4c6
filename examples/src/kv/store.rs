//! The key-value map: [`SHARDS`] shards, each a `HashMap` behind its own
//! mutex, so that commands on different keys rarely wait for each other and
//! the snapshot can walk the map a shard at a time while commands go on.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Mutex, MutexGuard};

/// Shards in a [`Store`]. With the default prefill of 1,000,000 keys a
/// shard holds about 120 keys, about 20 µs of the snapshot's work here.
pub const SHARDS: usize = 8192;

/// One shard's map.
pub type Shard = HashMap<Vec<u8>, Vec<u8>>;

/// The sharded map.
pub struct Store {
    shards: Box<[Mutex<Shard>]>,
}

impl Default for Store {
    fn default() -> Self {
        Store::new()
    }
}

impl Store {
    /// An empty store.
    pub fn new() -> Store {
        Store {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
        }
    }

    /// The shard that holds `key`, locked.
    pub fn shard_of(&self, key: &[u8]) -> MutexGuard<'_, Shard> {
        let index = (hash_bytes(SHARD_SEED, key) >> 32) as usize % SHARDS;
        self.shard(index)
    }

    /// Shard `index` (below [`SHARDS`]), locked.
    pub fn shard(&self, index: usize) -> MutexGuard<'_, Shard> {
        // A panic while a shard is locked leaves a map that is still
        // whole (no command panics half-way through an insert), so a
        // poisoned lock is taken over rather than propagated.
        self.shards[index]
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The value of `key`, copied out.
    pub fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.shard_of(key).get(key).cloned()
    }

    /// Sets `key` to `value`.
    pub fn set(&self, key: &[u8], value: &[u8]) {
        let mut shard = self.shard_of(key);
        match shard.get_mut(key) {
            Some(slot) => {
                slot.clear();
                slot.extend_from_slice(value);
            }
            None => {
                shard.insert(key.to_vec(), value.to_vec());
            }
        }
    }

    /// Removes `key`; whether it was there.
    pub fn remove(&self, key: &[u8]) -> bool {
        self.shard_of(key).remove(key).is_some()
    }

    /// Keys in the store (locks each shard in turn).
    pub fn len(&self) -> usize {
        (0..SHARDS).map(|index| self.shard(index).len()).sum()
    }

    /// Whether the store has no keys.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Sets the keys `indices` named [`prefill_key`] to `value_size`-byte
    /// values ([`prefill_value`]).
    pub fn prefill(&self, indices: Range<u64>, value_size: usize) {
        let mut value = Vec::with_capacity(value_size);
        for index in indices {
            prefill_value(index, value_size, &mut value);
            self.set(&prefill_key(index), &value);
        }
    }
}

/// The name of prefilled key `index`: `key:000000000042`, the names
/// `redis-benchmark -r` uses, so a benchmark with `-r N` hits them.
pub fn prefill_key(index: u64) -> Vec<u8> {
    format!("key:{index:012}").into_bytes()
}

/// The value of prefilled key `index`: `size` lowercase letters from an
/// xorshift stream seeded by the index, into `value`.
pub fn prefill_value(index: u64, size: usize, value: &mut Vec<u8>) {
    value.clear();
    let mut x = index.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    value.extend((0..size).map(|_| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        b'a' + (x % 26) as u8
    }));
}

const SHARD_SEED: u64 = 0x5EED_5A4D_0F00_0001;

/// A 64-bit hash of `bytes` from `seed`, eight bytes at a time: picks a
/// key's shard and makes the snapshot's checksum.
pub fn hash_bytes(seed: u64, bytes: &[u8]) -> u64 {
    let mut hash = seed ^ (bytes.len() as u64).wrapping_mul(0xA076_1D64_78BD_642F);
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        hash = mix(hash ^ u64::from_le_bytes(word.try_into().expect("8 bytes")));
    }
    let tail = words.remainder();
    if !tail.is_empty() {
        let mut word = [0u8; 8];
        word[..tail.len()].copy_from_slice(tail);
        hash = mix(hash ^ u64::from_le_bytes(word));
    }
    mix(hash)
}

/// Spreads every input bit over the output (multiply, rotate, multiply).
fn mix(x: u64) -> u64 {
    x.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .rotate_left(29)
        .wrapping_mul(0xBF58_476D_1CE4_E5B9)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_get_remove() {
        let store = Store::new();
        assert!(store.is_empty());
        store.set(b"a", b"1");
        store.set(b"a", b"22");
        store.set(b"b", b"");
        assert_eq!(store.get(b"a").as_deref(), Some(&b"22"[..]));
        assert_eq!(store.get(b"b").as_deref(), Some(&b""[..]));
        assert_eq!(store.len(), 2);
        assert!(store.remove(b"a"));
        assert!(!store.remove(b"a"));
        assert_eq!(store.get(b"a"), None);
    }

    #[test]
    fn prefill_spreads_keys_over_the_shards() {
        let store = Store::new();
        store.prefill(0..20_000, 10);
        assert_eq!(store.len(), 20_000);
        let mut value = Vec::new();
        prefill_value(123, 10, &mut value);
        assert_eq!(store.get(&prefill_key(123)), Some(value.clone()));
        assert_eq!(prefill_key(123), b"key:000000000123");
        assert!(value.iter().all(u8::is_ascii_lowercase));
        // About 2.4 keys a shard; none badly overloaded.
        let largest = (0..SHARDS).map(|index| store.shard(index).len()).max();
        assert!(largest.unwrap() < 20, "{largest:?}");
    }

    #[test]
    fn hashes_depend_on_every_byte_and_the_length() {
        let base = hash_bytes(1, b"abcdefghij");
        assert_ne!(base, hash_bytes(1, b"abcdefghik"));
        assert_ne!(base, hash_bytes(1, b"bbcdefghij"));
        assert_ne!(base, hash_bytes(2, b"abcdefghij"));
        assert_ne!(hash_bytes(1, b"a"), hash_bytes(1, b"a\0"));
        assert_eq!(base, hash_bytes(1, b"abcdefghij"));
    }
}
