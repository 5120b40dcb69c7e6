//! The indexes a memory should have, and keeping them current after each write.

use lancedb::index::scalar::{BTreeIndexBuilder, FtsIndexBuilder};
use lancedb::index::vector::IvfPqIndexBuilder;
use lancedb::index::Index;
use lancedb::table::{CompactionOptions, OptimizeAction, OptimizeOptions};
use lancedb::{DistanceType, Table};

use super::{lost_to_another_writer, Store, COMMIT_ATTEMPTS, PRUNE_AFTER};
use crate::error::Result;
use crate::heap::RunMark;

/// Below this many rows dense search is an exact scan (fast enough, and exact); from here on an IVF_PQ index
/// pays off. Rows not yet in the index are always scanned exactly. Measured on the benchmark history: at
/// 18,000 rows the dense leg took 20 ms with the index and 35 ms exact, at 60,000 rows 26 ms and 88 ms.
pub const VECTOR_INDEX_MIN_ROWS: usize = 10_000;
/// Rows per IVF partition when the vector index is (re)built.
pub const ROWS_PER_PARTITION: usize = 4_096;
/// Training vectors per IVF partition and per PQ centroid (256 centroids) when the vector index is built:
/// Lance's default of 256 loads 65,536 vectors for PQ (100 MB at 384 dimensions, three copies while
/// training) whatever the memory's size, the peak of a first index over a large history. lancedb 0.40 passes
/// this rate to IVF only; scripts/vendor-lancedb.sh makes it reach PQ too (a refresh of 682,000 rows:
/// 480 → 322 MB peak, 87 → 46 s).
pub const VECTOR_INDEX_SAMPLE_RATE: u32 = 64;
/// Compact once a memory has this many fragments (each append adds one).
pub const COMPACT_FRAGMENTS: usize = 32;
/// Memory for the posting lists a BM25 index build holds before it writes a partition out (MiB, all
/// workers together). Lance's default is 2 GiB per worker, so a first build over a large history (a
/// gigabyte-sized export: ~700,000 chunks) would hold every posting list at once.
pub const FTS_BUILD_MEMORY_MB: u64 = 128;

/// The indexes a memory should have: one list for `refresh_indexes`, which creates the missing ones, and
/// `needs_index`, which asks whether any is missing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wanted {
    /// BM25 over the `fts` column (the CLI's and `exact=True`'s keyword leg).
    Fts,
    /// Every per-session read (neighbours of a hit, get, scan, sketch, forget) filters on session_id.
    SessionId,
    /// IVF_PQ, once the memory has `VECTOR_INDEX_MIN_ROWS` rows.
    Vector,
}

impl Wanted {
    fn for_rows(rows: usize) -> impl Iterator<Item = Wanted> {
        [Wanted::Fts, Wanted::SessionId].into_iter().chain((rows >= VECTOR_INDEX_MIN_ROWS).then_some(Wanted::Vector))
    }

    fn column(self) -> &'static str {
        match self {
            Wanted::Fts => "fts",
            Wanted::SessionId => "session_id",
            Wanted::Vector => "vector",
        }
    }

    fn index(self, rows: usize) -> Index {
        match self {
            Wanted::Fts => Index::FTS(FtsIndexBuilder::default().memory_limit_mb(FTS_BUILD_MEMORY_MB)),
            Wanted::SessionId => Index::BTree(BTreeIndexBuilder::default()),
            Wanted::Vector => {
                let partitions = (rows / ROWS_PER_PARTITION).max(1) as u32;
                Index::IvfPq(
                    IvfPqIndexBuilder::default()
                        .distance_type(DistanceType::Cosine)
                        .num_partitions(partitions)
                        .sample_rate(VECTOR_INDEX_SAMPLE_RATE),
                )
            }
        }
    }
}

/// Whether the dataset has an index on `column`.
pub(super) async fn has_index(t: &Table, column: &str) -> Result<bool> {
    Ok(t.list_indices().await?.iter().any(|i| i.columns.iter().any(|c| c == column)))
}

impl Store {
    /// Brings the indexes up to date after a write: creates the BM25 index on the first write, the vector
    /// index once the memory is large enough, and otherwise folds new rows into the existing indexes
    /// (incremental, never a full rebuild). Compacts when fragments pile up and prunes old versions.
    /// `rebuild`: build every index anew (after an overwrite or a purge).
    pub async fn refresh_indexes(&self, rebuild: bool) -> Result<()> {
        let Some(t) = self.table().await? else { return Ok(()) };
        // The refresh's steps trim what they grew above where the refresh started (`heap`).
        let mark = RunMark::now();
        // Another writer (another machine on a memory in a bucket) may commit an index or a compaction at
        // the same moment; Lance then refuses ours (retryable, or incompatible where both made the same
        // index), and a second look at the new version finds the work done or still to do.
        let mut attempt = 1;
        loop {
            match self.refresh_once(&t, rebuild, &mark).await {
                Err(e) if lost_to_another_writer(&e) && attempt < COMMIT_ATTEMPTS => {
                    attempt += 1;
                    t.checkout_latest().await?;
                }
                other => {
                    other?;
                    break;
                }
            }
        }
        self.prune(PRUNE_AFTER, false).await
    }

    async fn refresh_once(&self, t: &Table, rebuild: bool, mark: &RunMark) -> lancedb::Result<()> {
        let indices = t.list_indices().await?;
        let has = |col: &str| indices.iter().any(|i| i.columns.iter().any(|c| c == col));
        let rows = t.count_rows(None).await?;
        // Each step below reads the whole memory and frees what it read before the next starts: the freed
        // heap goes back between steps, so one step's peak does not stack on the last one's leftovers.
        if self.fragments_of(t).await? >= COMPACT_FRAGMENTS {
            t.optimize(OptimizeAction::Compact { options: CompactionOptions::default(), remap_options: None }).await?;
            mark.release_if_grown();
        }
        // Fold new rows into the indexes that exist (incremental, never a full rebuild), then create the
        // missing ones over everything.
        if !rebuild && !indices.is_empty() {
            t.optimize(OptimizeAction::Index(OptimizeOptions::default())).await?;
            mark.release_if_grown();
        }
        for wanted in Wanted::for_rows(rows).filter(|w| rebuild || !has(w.column())) {
            t.create_index(&[wanted.column()], wanted.index(rows)).replace(true).execute().await?;
            mark.release_if_grown();
        }
        Ok(())
    }

    /// Whether an index this memory should have is missing (a memory written by an older version, or a
    /// vector index now due): an index run then refreshes even when it added nothing.
    pub async fn needs_index(&self) -> Result<bool> {
        let Some(t) = self.table().await? else { return Ok(false) };
        let indices = t.list_indices().await?;
        let has = |col: &str| indices.iter().any(|i| i.columns.iter().any(|c| c == col));
        Ok(Wanted::for_rows(t.count_rows(None).await?).any(|w| !has(w.column())))
    }

    /// Drops every index (a memory with no rows left: see `purge`). The next write creates them again.
    pub(super) async fn drop_indexes(&self) -> Result<()> {
        let Some(t) = self.table().await? else { return Ok(()) };
        for idx in t.list_indices().await? {
            t.drop_index(&idx.name).await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vector_index_is_wanted_from_its_row_threshold() {
        let wanted = |rows| Wanted::for_rows(rows).collect::<Vec<_>>();
        assert_eq!(wanted(0), [Wanted::Fts, Wanted::SessionId]);
        assert_eq!(wanted(VECTOR_INDEX_MIN_ROWS - 1), [Wanted::Fts, Wanted::SessionId]);
        assert_eq!(wanted(VECTOR_INDEX_MIN_ROWS), [Wanted::Fts, Wanted::SessionId, Wanted::Vector]);
        assert_eq!(Wanted::Vector.column(), "vector");
    }
}
