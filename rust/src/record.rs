//! A chunk as the memory stores it: the chunk's fields, its parsed time, its vector and the BM25 context.
//! Pure data, below both `store` (which writes and reads it) and `resident` (which copies it into RAM), so
//! neither has to import the other.

use crate::chunk::Chunk;
use crate::time::parse_ts_ms;

#[derive(Debug, Clone, PartialEq, Default)]
pub struct StoredChunk {
    pub chunk: Chunk,
    /// Parsed `chunk.ts`, for date filters and recency; `None` when `ts` is not a time.
    pub ts_ms: Option<i64>,
    pub vector: Vec<f32>,
    /// The end of the turn before it (`chunk::turn_contexts`): indexed for BM25 with the text, in the `fts`
    /// column, never shown. Set on the way in; not read back (the `fts` column holds it).
    pub context: String,
}

impl StoredChunk {
    pub fn new(chunk: Chunk, vector: Vec<f32>, context: String) -> Self {
        Self { ts_ms: parse_ts_ms(&chunk.ts), chunk, vector, context }
    }
}

/// What a filter tests of a row (`store::Filter::admits`), borrowed from the resident copy's packed rows
/// (`resident::rows`) without building a `StoredChunk`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RowView<'a> {
    pub session_id: &'a str,
    pub role: &'a str,
    pub harness: &'a str,
    pub workdir: &'a str,
    pub block_type: &'a str,
    pub ts_ms: Option<i64>,
}

/// A chunk id (16 hex digits, `chunk::chunk_id`) as a number: what an index run keeps in its set of stored
/// ids (8 bytes instead of a string per row, for memories of millions of chunks). Another shape of id
/// (never written by this engine) hashes instead, so it still has a stable key.
pub fn id_key(id: &str) -> u64 {
    match u64::from_str_radix(id, 16) {
        Ok(v) if id.len() == 16 => v,
        _ => hash64(id),
    }
}

/// A string's 64-bit hash (std's SipHash with fixed keys): the same within a process, so a set can hold
/// the hash in place of the string.
pub fn hash64(s: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    s.hash(&mut h);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_become_their_number() {
        assert_eq!(id_key("00000000000000ff"), 255);
        assert_eq!(id_key(&crate::chunk::chunk_id("s", "t", 0, 0)), id_key(&crate::chunk::chunk_id("s", "t", 0, 0)));
        assert_ne!(id_key("not-hex"), id_key("also-not-hex"));
    }

    #[test]
    fn the_time_is_parsed_on_the_way_in() {
        let c = Chunk { ts: "1970-01-01T00:00:01Z".into(), ..Default::default() };
        assert_eq!(StoredChunk::new(c, vec![], String::new()).ts_ms, Some(1000));
    }
}
