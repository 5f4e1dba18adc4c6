//! The snapshot's bytes, little-endian:
//!
//! ```text
//! "KVSNAP01"                                           8-byte magic
//! { key length: u32, key, value length: u32, value }   per key
//! 0xFFFF_FFFF, key count: u64, checksum: u64           trailer
//! ```
//!
//! The checksum is the wrapping sum of [`entry_checksum`] over the keys, so
//! it does not depend on their order. [`Writer`] writes a snapshot, shard
//! by shard; [`decode`] reads one back.

use std::collections::HashMap;

use super::store::{Shard, hash_bytes};

const MAGIC: &[u8; 8] = b"KVSNAP01";
const END_MARK: u32 = u32::MAX;

/// The checksum of one key and its value.
pub fn entry_checksum(key: &[u8], value: &[u8]) -> u64 {
    hash_bytes(hash_bytes(0x4B56, key), value)
}

/// A snapshot being written into a reusable buffer.
#[derive(Debug, Default)]
pub struct Writer {
    buf: Vec<u8>,
    keys: u64,
    checksum: u64,
}

impl Writer {
    /// Starts a snapshot, reusing the buffer's memory.
    pub fn begin(&mut self) {
        self.buf.clear();
        self.buf.extend_from_slice(MAGIC);
        self.keys = 0;
        self.checksum = 0;
    }

    /// Appends every key of `shard`.
    pub fn add_shard(&mut self, shard: &Shard) {
        for (key, value) in shard {
            for field in [key, value] {
                // Keys and values over 4 GiB cannot be stored: requests
                // are limited to 64 MiB (`resp::MAX_BULK`).
                self.buf
                    .extend_from_slice(&(field.len() as u32).to_le_bytes());
                self.buf.extend_from_slice(field);
            }
            self.checksum = self.checksum.wrapping_add(entry_checksum(key, value));
        }
        self.keys += shard.len() as u64;
    }

    /// Ends the snapshot with its trailer; returns its bytes.
    pub fn finish(&mut self) -> &[u8] {
        self.buf.extend_from_slice(&END_MARK.to_le_bytes());
        self.buf.extend_from_slice(&self.keys.to_le_bytes());
        self.buf.extend_from_slice(&self.checksum.to_le_bytes());
        &self.buf
    }

    /// The checksum so far.
    pub fn checksum(&self) -> u64 {
        self.checksum
    }

    /// Keys so far.
    pub fn keys(&self) -> u64 {
        self.keys
    }

    /// Bytes so far.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Whether nothing was written since the last `begin`.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }
}

/// Reads a snapshot back, checking its format, key count and checksum.
pub fn decode(bytes: &[u8]) -> Result<HashMap<Vec<u8>, Vec<u8>>, String> {
    let mut rest = bytes
        .strip_prefix(MAGIC)
        .ok_or("not a kv snapshot (bad magic)")?;
    let mut map = HashMap::new();
    let mut checksum = 0u64;
    let take = |rest: &mut &[u8], n: usize| -> Result<Vec<u8>, String> {
        if rest.len() < n {
            return Err("truncated snapshot".to_owned());
        }
        let (head, tail) = rest.split_at(n);
        *rest = tail;
        Ok(head.to_vec())
    };
    let u32_of = |bytes: Vec<u8>| u32::from_le_bytes(bytes.try_into().expect("4 bytes"));
    let u64_of = |bytes: Vec<u8>| u64::from_le_bytes(bytes.try_into().expect("8 bytes"));
    loop {
        let length = u32_of(take(&mut rest, 4)?);
        if length == END_MARK {
            break;
        }
        let key = take(&mut rest, length as usize)?;
        let length = u32_of(take(&mut rest, 4)?);
        let value = take(&mut rest, length as usize)?;
        checksum = checksum.wrapping_add(entry_checksum(&key, &value));
        if map.insert(key, value).is_some() {
            return Err("a key appears twice".to_owned());
        }
    }
    let keys = u64_of(take(&mut rest, 8)?);
    let stored = u64_of(take(&mut rest, 8)?);
    if !rest.is_empty() {
        return Err("bytes after the trailer".to_owned());
    }
    if keys != map.len() as u64 {
        return Err(format!("trailer says {keys} keys, found {}", map.len()));
    }
    if stored != checksum {
        return Err("checksum mismatch".to_owned());
    }
    Ok(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kv::store::{SHARDS, Store};

    #[test]
    fn an_empty_store_makes_an_empty_snapshot() {
        let mut writer = Writer::default();
        writer.begin();
        assert!(decode(writer.finish()).unwrap().is_empty());
    }

    #[test]
    fn decode_rejects_damage() {
        let store = Store::new();
        store.prefill(0..10, 5);
        let mut writer = Writer::default();
        writer.begin();
        for index in 0..SHARDS {
            writer.add_shard(&store.shard(index));
        }
        let good = writer.finish().to_vec();
        assert_eq!(decode(&good).unwrap().len(), 10);
        let mut flipped = good.clone();
        flipped[20] ^= 1;
        assert!(decode(&flipped).is_err());
        assert!(decode(&good[..good.len() - 1]).is_err());
        assert!(decode(&good[1..]).is_err());
        let mut longer = good.clone();
        longer.push(0);
        assert!(decode(&longer).is_err());
    }
}
