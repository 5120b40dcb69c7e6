//! The memory on disk: one Lance dataset (`<home>/chunks.lance`) holding chunks, their vectors, a BM25 index
//! on the `fts` column and, once the memory is large, a vector index. The only module naming `lancedb` or
//! Arrow.
//!
//! Concurrency: Lance gives readers a snapshot, so reads never wait for a write; a writer lock
//! (`engine::lock`) keeps two index runs from writing at once. New rows are searchable at once: both search
//! legs scan the rows not yet in an index and merge them in. Every write is one Lance commit, so a crash
//! leaves the previous version intact.
//!
//! A warm store also keeps a resident copy (`crate::resident`) that recall searches instead of issuing Lance
//! queries. It is built from one scan on the first recall and tagged with the Lance version it reflects. This
//! process's own appends extend it in place (the slow part, coding and analysing, is done before the brief
//! write lock, so readers wait at most for a few pushes); deletes drop it; a version this process did not
//! write (another process indexed) makes the next recall build it again.

pub mod schema;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::TryStreamExt;
use lancedb::index::scalar::{BTreeIndexBuilder, FtsIndexBuilder, FullTextSearchQuery};
use lancedb::index::vector::IvfPqIndexBuilder;
use lancedb::index::Index;
use lancedb::query::{ExecutableQuery, QueryBase, Select};
use lancedb::table::{CompactionOptions, OptimizeAction, OptimizeOptions};
use lancedb::{Connection, DistanceType, Table};
use tokio::sync::RwLock;

use crate::error::{Error, Result};
use crate::resident::{self, Resident};
pub use schema::{sql_str, StoredChunk, ROW_COLUMNS};

/// Below this many rows dense search is an exact scan (fast enough, and exact); from here on an IVF_PQ index
/// pays off. Rows not yet in the index are always scanned exactly. Measured on the benchmark history: at
/// 18,000 rows the dense leg took 20 ms with the index and 35 ms exact, at 60,000 rows 26 ms and 88 ms.
pub const VECTOR_INDEX_MIN_ROWS: usize = 10_000;
/// Rows per IVF partition when the vector index is (re)built.
pub const ROWS_PER_PARTITION: usize = 4_096;
/// Partitions probed per query and the refine factor (exact re-scoring of the best PQ candidates). A
/// refine factor of 10 gave the same hit@1/3/8 as exact search at 18,000 and 60,000 rows; 4 lost a point.
pub const NPROBES: usize = 24;
pub const REFINE_FACTOR: u32 = 10;
/// Compact once a memory has this many fragments (each append adds one).
pub const COMPACT_FRAGMENTS: usize = 32;
/// Versions older than this are pruned after a write (readers of an older snapshot get this long to finish).
pub const PRUNE_AFTER: Duration = Duration::from_secs(600);
/// How often a handle looks for commits made by other processes.
pub const READ_CONSISTENCY: Duration = Duration::from_secs(1);

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
            Wanted::Fts => Index::FTS(FtsIndexBuilder::default()),
            Wanted::SessionId => Index::BTree(BTreeIndexBuilder::default()),
            Wanted::Vector => {
                let partitions = (rows / ROWS_PER_PARTITION).max(1) as u32;
                Index::IvfPq(IvfPqIndexBuilder::default().distance_type(DistanceType::Cosine).num_partitions(partitions))
            }
        }
    }
}

/// One search leg's result: rows in rank order with the leg's raw score (cosine distance or BM25); NaN where
/// the leg gave none, which equals nothing, so such a row never shares a rank (`search::fusion::Ranked`).
#[derive(Default)]
pub struct LegResult {
    pub rows: Vec<StoredChunk>,
    pub scores: Vec<f32>,
}

/// What `status` reports about the dataset.
#[derive(Debug, Clone, Default)]
pub struct StoreStats {
    pub rows: usize,
    pub version: u64,
    pub fragments: usize,
    pub fts_indexed: bool,
    pub fts_unindexed_rows: usize,
    pub vector_indexed: bool,
    pub vector_unindexed_rows: usize,
    pub disk_bytes: u64,
}

pub struct Store {
    home: PathBuf,
    conn: Connection,
    /// `None` until the first append creates the dataset.
    table: RwLock<Option<Table>>,
    /// Whether recall may build and use the resident copy (a one-shot process should not: loading it
    /// costs more than a few indexed Lance queries).
    keep_resident: bool,
    /// The resident copy; `None` until a recall builds it, and after a delete.
    resident: std::sync::RwLock<Option<Resident>>,
    /// One build of the resident copy at a time.
    resident_build: tokio::sync::Mutex<()>,
    /// Writes of this process in progress: while any runs, a new dataset version is ours, not another
    /// process's, and the writer itself brings the resident copy up to date.
    own_writes: AtomicUsize,
}

/// Counts one of this process's writes while it lives.
struct OwnWrite<'a>(&'a AtomicUsize);

impl<'a> OwnWrite<'a> {
    fn new(n: &'a AtomicUsize) -> Self {
        n.fetch_add(1, Ordering::SeqCst);
        Self(n)
    }
}

impl Drop for OwnWrite<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Attempts at a resident build before settling for a copy that a concurrent commit already outdated (the
/// next recall then builds again).
const RESIDENT_BUILD_TRIES: usize = 3;

impl Store {
    /// Opens the memory at `home` (creating the directory). Does not create the dataset: an empty memory
    /// has none until its first append.
    pub async fn open(home: &Path, keep_resident: bool) -> Result<Self> {
        std::fs::create_dir_all(home).map_err(|e| Error::io(format!("creating {}", home.display()), e))?;
        let uri = home.to_string_lossy().to_string();
        let conn = lancedb::connect(&uri).read_consistency_interval(READ_CONSISTENCY).execute().await?;
        let names = conn.table_names().execute().await?;
        let table = if names.iter().any(|n| n == schema::TABLE) {
            Some(conn.open_table(schema::TABLE).execute().await?)
        } else {
            None
        };
        Ok(Self {
            home: home.to_path_buf(),
            conn,
            table: RwLock::new(table),
            keep_resident,
            resident: std::sync::RwLock::new(None),
            resident_build: tokio::sync::Mutex::new(()),
            own_writes: AtomicUsize::new(0),
        })
    }

    pub fn home(&self) -> &Path {
        &self.home
    }

    async fn table(&self) -> Option<Table> {
        self.table.read().await.clone()
    }

    /// The stamp and dimension the memory was built with, if it has data.
    pub async fn model_stamp(&self) -> Result<Option<(String, usize)>> {
        let Some(t) = self.table().await else { return Ok(None) };
        let schema = t.schema().await?;
        let stamp = schema.metadata().get(schema::META_MODEL).cloned().unwrap_or_default();
        let dim = match schema.field_with_name("vector").map(|f| f.data_type().clone()) {
            Ok(arrow_schema::DataType::FixedSizeList(_, d)) => d as usize,
            _ => 0,
        };
        Ok(Some((stamp, dim)))
    }

    pub async fn count(&self, filter: Option<String>) -> Result<usize> {
        match self.table().await {
            Some(t) => Ok(t.count_rows(filter).await?),
            None => Ok(0),
        }
    }

    /// Every stored chunk id (one projected scan): what an index run skips.
    pub async fn ids(&self) -> Result<HashSet<String>> {
        let rows = self.scan(None, &["id"]).await?;
        Ok(rows.into_iter().map(|r| r.chunk.id).collect())
    }

    /// Rows matching `filter`, with the given columns ("vector" may be among them).
    pub async fn scan(&self, filter: Option<String>, columns: &[&str]) -> Result<Vec<StoredChunk>> {
        let Some(t) = self.table().await else { return Ok(Vec::new()) };
        let mut q = t.query().select(Select::columns(columns));
        if let Some(f) = filter {
            q = q.only_if(f);
        }
        let batches: Vec<_> = q.execute().await?.try_collect().await?;
        let mut out = Vec::new();
        for b in &batches {
            out.extend(schema::from_batch(b)?);
        }
        Ok(out)
    }

    /// Appends rows in one commit, creating the dataset (stamped with the model) on the first append.
    pub async fn append(&self, rows: &[StoredChunk], dim: usize, stamp: &str) -> Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        let schema = schema::schema(dim, stamp);
        let fts = fts_texts(rows);
        let batch = schema::to_batch(&schema, rows, &fts)?;
        let _own = OwnWrite::new(&self.own_writes);
        let mut guard = self.table.write().await;
        match guard.as_ref() {
            Some(t) => {
                let before = t.version().await?;
                t.add(batch).execute().await?;
                let after = t.version().await?;
                drop(guard);
                self.resident_append(before, after, rows, fts);
            }
            None => {
                let t = self.conn.create_table(schema::TABLE, batch).execute().await?;
                *guard = Some(t);
            }
        }
        Ok(())
    }

    /// Extends the resident copy with rows this process just committed (`before` → `after`). If the copy
    /// was not at `before`, or another commit slipped in between, it is dropped: the next recall rebuilds.
    fn resident_append(&self, before: u64, after: u64, rows: &[StoredChunk], fts: Vec<String>) {
        let current = self.resident.read().expect("resident lock").as_ref().map(|r| r.version);
        if current.is_none() {
            return;
        }
        let prepared = (current == Some(before) && after == before + 1).then(|| resident::prepare(rows.to_vec(), fts));
        let mut guard = self.resident.write().expect("resident lock");
        match (guard.as_mut(), prepared) {
            (Some(r), Some(p)) if r.version == before => {
                r.extend(p);
                r.version = after;
            }
            _ => *guard = None,
        }
    }

    /// Moves the resident copy along commits that change no rows (index, compaction, pruning) made by this
    /// process from `before`.
    fn resident_follow(&self, before: u64, after: u64) {
        if let Some(r) = self.resident.write().expect("resident lock").as_mut() {
            if r.version == before {
                r.version = after;
            }
        }
    }

    fn resident_drop(&self) {
        *self.resident.write().expect("resident lock") = None;
    }

    /// Makes the resident copy current (building it from one scan when missing or outdated by another
    /// process's commit) and says whether recall can search it. `false`: this store keeps none, or the
    /// memory is empty.
    pub async fn resident_ready(&self) -> Result<bool> {
        if !self.keep_resident {
            return Ok(false);
        }
        let current = || self.resident.read().expect("resident lock").as_ref().map(|r| r.version);
        for _ in 0..RESIDENT_BUILD_TRIES {
            let Some(t) = self.table().await else { return Ok(false) };
            let version = t.version().await?;
            // While this process writes, new versions are its own and the writer updates the copy.
            if current() == Some(version) || (current().is_some() && self.own_writes.load(Ordering::SeqCst) > 0) {
                return Ok(true);
            }
            let _one = self.resident_build.lock().await;
            let version = t.version().await?;
            if current() == Some(version) {
                return Ok(true);
            }
            let built = self.build_resident(&t, version).await?;
            let settled = t.version().await? == version;
            let mut guard = self.resident.write().expect("resident lock");
            *guard = Some(built);
            if settled {
                return Ok(true);
            }
        }
        Ok(self.resident.read().expect("resident lock").is_some())
    }

    /// The resident copy of the dataset at `version`, from one streamed scan.
    async fn build_resident(&self, t: &Table, version: u64) -> Result<Resident> {
        let dim = match self.model_stamp().await? {
            Some((_, dim)) => dim,
            None => 0,
        };
        let mut cols: Vec<&str> = ROW_COLUMNS.to_vec();
        cols.extend(["vector", "fts"]);
        let mut stream = t.query().select(Select::columns(&cols)).execute().await?;
        let mut r = Resident::new(dim, version);
        while let Some(batch) = stream.try_next().await? {
            let fts = schema::string_column(&batch, "fts").ok_or_else(|| Error::Storage("no fts column".into()))?;
            r.extend(resident::prepare(schema::from_batch(&batch)?, fts));
        }
        Ok(r)
    }

    /// Runs `f` on the resident copy, if there is one.
    pub fn with_resident<R>(&self, f: impl FnOnce(&Resident) -> R) -> Option<R> {
        self.resident.read().expect("resident lock").as_ref().map(f)
    }

    /// Replaces the whole dataset with `rows` in one commit (a rebuild with another model).
    pub async fn overwrite(&self, rows: &[StoredChunk], dim: usize, stamp: &str) -> Result<()> {
        let schema = schema::schema(dim, stamp);
        let batch = schema::to_batch(&schema, rows, &fts_texts(rows))?;
        let _own = OwnWrite::new(&self.own_writes);
        self.resident_drop();
        let mut guard = self.table.write().await;
        let t = self
            .conn
            .create_table(schema::TABLE, batch)
            .mode(lancedb::database::CreateTableMode::Overwrite)
            .execute()
            .await?;
        *guard = Some(t);
        drop(guard);
        self.refresh_indexes(true).await?;
        self.resident_drop();
        Ok(())
    }

    /// Brings the indexes up to date after a write: creates the BM25 index on the first write, the vector
    /// index once the memory is large enough, and otherwise folds new rows into the existing indexes
    /// (incremental, never a full rebuild). Compacts when fragments pile up and prunes old versions.
    pub async fn refresh_indexes(&self, rebuild: bool) -> Result<()> {
        let Some(t) = self.table().await else { return Ok(()) };
        let _own = OwnWrite::new(&self.own_writes);
        let before = t.version().await?;
        let indices = t.list_indices().await?;
        let has = |col: &str| indices.iter().any(|i| i.columns.iter().any(|c| c == col));
        let rows = t.count_rows(None).await?;
        let fragments = self.fragments();
        if fragments >= COMPACT_FRAGMENTS {
            t.optimize(OptimizeAction::Compact { options: CompactionOptions::default(), remap_options: None }).await?;
        }
        // Fold new rows into the indexes that exist (incremental, never a full rebuild), then create the
        // missing ones over everything.
        if !rebuild && !indices.is_empty() {
            t.optimize(OptimizeAction::Index(OptimizeOptions::default())).await?;
        }
        for wanted in Wanted::for_rows(rows).filter(|w| rebuild || !has(w.column())) {
            t.create_index(&[wanted.column()], wanted.index(rows)).replace(true).execute().await?;
        }
        self.prune(PRUNE_AFTER, false).await?;
        self.resident_follow(before, t.version().await?);
        Ok(())
    }

    /// Whether an index this memory should have is missing (a memory written by an older version, or a
    /// vector index now due): an index run then refreshes even when it added nothing.
    pub async fn needs_index(&self) -> Result<bool> {
        let Some(t) = self.table().await else { return Ok(false) };
        let indices = t.list_indices().await?;
        let has = |col: &str| indices.iter().any(|i| i.columns.iter().any(|c| c == col));
        Ok(Wanted::for_rows(t.count_rows(None).await?).any(|w| !has(w.column())))
    }

    /// Data files of the dataset: one per append until compaction merges them.
    fn fragments(&self) -> usize {
        std::fs::read_dir(self.home.join(format!("{}.lance", schema::TABLE)).join("data")).map(|d| d.count()).unwrap_or(0)
    }

    /// Removes versions older than `older_than`. With `delete_unverified`, also files of unfinished writes:
    /// only safe while the writer lock is held.
    pub async fn prune(&self, older_than: Duration, delete_unverified: bool) -> Result<()> {
        let Some(t) = self.table().await else { return Ok(()) };
        let _own = OwnWrite::new(&self.own_writes);
        let before = t.version().await?;
        t.optimize(OptimizeAction::Prune {
            older_than: Some(lancedb::table::Duration::from_std(older_than).unwrap_or(lancedb::table::Duration::zero())),
            delete_unverified: Some(delete_unverified),
            error_if_tagged_old_versions: Some(false),
        })
        .await?;
        self.resident_follow(before, t.version().await?);
        Ok(())
    }

    /// Deletes matching rows and makes the deletion physical: fragments are rewritten without the rows, the
    /// indexes rebuilt, and every older version pruned, so the text is in no file of the memory.
    pub async fn purge(&self, filter: &str) -> Result<usize> {
        let Some(t) = self.table().await else { return Ok(0) };
        let n = t.count_rows(Some(filter.to_string())).await?;
        if n == 0 {
            return Ok(0);
        }
        let _own = OwnWrite::new(&self.own_writes);
        self.resident_drop();
        t.delete(filter).await?;
        let options = CompactionOptions { materialize_deletions: true, materialize_deletions_threshold: 0.0, ..Default::default() };
        t.optimize(OptimizeAction::Compact { options, remap_options: None }).await?;
        if t.count_rows(None).await? > 0 {
            self.refresh_indexes(true).await?;
        }
        self.prune(Duration::ZERO, true).await?;
        self.resident_drop();
        Ok(n)
    }

    /// A handle on the dataset for the search legs, which run as their own tasks. `None`: no data yet.
    pub async fn searcher(&self) -> Option<Searcher> {
        self.table().await.map(Searcher)
    }

    pub async fn stats(&self) -> Result<StoreStats> {
        let mut s = StoreStats { disk_bytes: dir_size(&self.home), ..Default::default() };
        let Some(t) = self.table().await else { return Ok(s) };
        s.rows = t.count_rows(None).await?;
        s.version = t.version().await?;
        s.fragments = self.fragments();
        for idx in t.list_indices().await? {
            let st = t.index_stats(&idx.name).await?;
            let unindexed = st.map(|x| x.num_unindexed_rows).unwrap_or(0);
            if idx.columns.iter().any(|c| c == "fts") {
                s.fts_indexed = true;
                s.fts_unindexed_rows = unindexed;
            } else if idx.columns.iter().any(|c| c == "vector") {
                s.vector_indexed = true;
                s.vector_unindexed_rows = unindexed;
            }
        }
        Ok(s)
    }
}

/// The dataset as one search sees it. Owns its handle, so each leg can run as a `'static` task on the
/// runtime's workers, in parallel with each other and with the query embedding on the caller's thread.
#[derive(Clone)]
pub struct Searcher(Table);

impl Searcher {
    /// Dense leg: nearest neighbours by cosine distance, prefiltered.
    pub async fn dense(self, query: Vec<f32>, limit: usize, filter: Option<String>, exact: bool) -> Result<LegResult> {
        let t = self.0;
        let mut cols: Vec<&str> = ROW_COLUMNS.to_vec();
        cols.push("vector");
        let mut q = t
            .query()
            .nearest_to(query.as_slice())?
            .distance_type(DistanceType::Cosine)
            .nprobes(NPROBES)
            .refine_factor(REFINE_FACTOR)
            .limit(limit)
            .select(Select::columns(&cols));
        if exact {
            q = q.bypass_vector_index();
        }
        if let Some(f) = filter {
            q = q.only_if(f);
        }
        let batches: Vec<_> = q.execute().await?.try_collect().await?;
        collect_leg(&batches, "_distance")
    }

    /// BM25 leg over the `fts` column, prefiltered. A memory without an FTS index yet (its first write still
    /// running) returns nothing rather than failing the recall.
    pub async fn bm25(self, query: String, limit: usize, filter: Option<String>) -> Result<LegResult> {
        let t = self.0;
        if query.trim().is_empty() {
            return Ok(LegResult::default());
        }
        let mut cols: Vec<&str> = ROW_COLUMNS.to_vec();
        cols.push("vector");
        let fts = FullTextSearchQuery::new(query)
            .with_column("fts".to_string())
            .map_err(|e| Error::Storage(e.to_string()))?;
        let mut q = t.query().full_text_search(fts).limit(limit).select(Select::columns(&cols));
        if let Some(f) = filter {
            q = q.only_if(f);
        }
        match q.execute().await {
            Ok(stream) => {
                let batches: Vec<_> = stream.try_collect().await?;
                collect_leg(&batches, "_score")
            }
            Err(e) if e.to_string().to_lowercase().contains("index") => Ok(LegResult::default()),
            Err(e) => Err(e.into()),
        }
    }

}

fn collect_leg(batches: &[arrow_array::RecordBatch], score_col: &str) -> Result<LegResult> {
    let mut rows = Vec::new();
    let mut scores = Vec::new();
    for b in batches {
        let n = b.num_rows();
        rows.extend(schema::from_batch(b)?);
        scores.extend(schema::f32_column(b, score_col).unwrap_or_else(|| vec![f32::NAN; n]));
    }
    Ok(LegResult { rows, scores })
}

/// What BM25 indexes for each row (the `fts` column): context, text, glued identifiers.
fn fts_texts(rows: &[StoredChunk]) -> Vec<String> {
    rows.iter().map(|r| crate::analyzer::fts_document(&r.chunk.text, &r.context)).collect()
}

/// Bytes under a directory (what `status` reports as disk use).
pub fn dir_size(path: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![path.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            match e.metadata() {
                Ok(m) if m.is_dir() => stack.push(e.path()),
                Ok(m) => total += m.len(),
                Err(_) => {}
            }
        }
    }
    total
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
