//! The memory on disk: one Lance dataset (`<home>/chunks.lance`) holding chunks, their vectors, a BM25 index
//! on the `fts` column and, once the memory is large, a vector index. Mechanics only: the only module
//! naming `lancedb` or Arrow, and the only one writing SQL (`Filter`). What to do about a memory (keep a
//! copy in RAM, rebuild, refuse) is decided above it (`memory`, `engine`).
//!
//! Concurrency: Lance gives readers a snapshot, so reads never wait for a write; a writer lock
//! (`engine::lock`) keeps two index runs from writing at once. New rows are searchable at once: both search
//! legs scan the rows not yet in an index and merge them in. Every write is one Lance commit, so a crash
//! leaves the previous version intact. A store opened on an empty home opens the dataset as soon as another
//! process creates it.

mod filter;
mod indexes;
mod legs;
pub mod schema;
mod versions;

pub use filter::Filter;
pub use indexes::COMPACT_FRAGMENTS;
pub use legs::{LegResult, Searcher};
pub use schema::ROW_COLUMNS;
pub use versions::{Grown, Snapshot};

use std::collections::HashSet;
use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures::TryStreamExt;
use lancedb::query::{ExecutableQuery, QueryBase, Select};
use lancedb::table::{CompactionOptions, OptimizeAction};
use lancedb::{Connection, Table};
use tokio::sync::RwLock;

use crate::error::{Error, Result};
use crate::home::Home;
use crate::record::{id_key, StoredChunk};

/// Tries of a write that another writer's commit made Lance refuse (see `append`, `refresh_indexes`).
const COMMIT_ATTEMPTS: usize = 5;
/// How long a writer that lost the race to create the dataset waits for the winner's first commit.
const CREATE_WAIT: Duration = Duration::from_secs(30);
/// Versions older than this are pruned after a write (readers of an older snapshot get this long to finish:
/// a one-shot recall or a replica's scan takes seconds). Every index run makes a few versions, and each run
/// costs more with every version kept (measured: 650 runs of one small conversation took 281 s with ten
/// minutes kept, 177 s with twenty seconds), so a server writing all day keeps a minute's worth.
pub const PRUNE_AFTER: Duration = Duration::from_secs(60);
/// How often a handle looks for commits made by other processes.
pub const READ_CONSISTENCY: Duration = Duration::from_secs(1);

/// Which reads a memory sends to Lance: it sizes Lance's caches of index pages and of manifests and file
/// metadata (see `session`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LanceReads {
    /// Recall goes through Lance's indexes (a one-shot engine, the CLI): index pages and metadata are read
    /// again by the next query, so they are cached (64 and 32 MiB; Lance's own defaults, 6 GiB and 1 GiB,
    /// are a server's whole memory).
    Recall,
    /// A resident copy answers recall; Lance only takes writes and refreshes indexes. Every index run writes
    /// new index files and a new manifest, so what a cache kept is never read again: with the caches above
    /// a server grew by their size and more (Lance under-counts its entries: 8 MiB caps grew an engine by
    /// about 200 KB per index run), so these get 1 MiB each.
    Writes,
}

impl LanceReads {
    /// (index cache, metadata cache) in bytes.
    fn cache_bytes(self) -> (usize, usize) {
        match self {
            Self::Recall => (64 << 20, 32 << 20),
            Self::Writes => (1 << 20, 1 << 20),
        }
    }
}

/// Whether Lance refused a commit because another writer committed first: a conflict it calls retryable,
/// one it calls incompatible (an index or compaction the other writer made of the same thing, an overwrite
/// under an append), or its own retries running out. Nothing of ours committed, and the write is worth
/// doing again on the new version.
fn lost_to_another_writer(e: &lancedb::Error) -> bool {
    matches!(
        e,
        lancedb::Error::Lance {
            source: lance::Error::RetryableCommitConflict { .. }
                | lance::Error::IncompatibleTransaction { .. }
                | lance::Error::CommitConflict { .. }
                | lance::Error::TooMuchWriteContention { .. }
        }
    )
}

impl From<lancedb::Error> for Error {
    fn from(e: lancedb::Error) -> Self {
        Error::Storage { message: e.to_string(), source: Some(Box::new(e)) }
    }
}

/// Lance's own errors (a few calls reach Lance below lancedb: full-text query building).
impl From<lance::Error> for Error {
    fn from(e: lance::Error) -> Self {
        Error::Storage { message: e.to_string(), source: Some(Box::new(e)) }
    }
}

/// How far Lance's scans may read ahead of what they have handed on (bytes), unless the operator set
/// `LANCE_DEFAULT_IO_BUFFER_SIZE`. Lance's default is 2 GiB: its index builds and compaction read the whole
/// memory faster than they can use it (the IVF_PQ build codes every vector), so over a gigabyte-sized
/// history the reads piled up (a refresh of 682,000 rows: 734 MB peak with 2 GiB, measured under heaptrack,
/// 535 MB with this).
/// Scans of this size still keep the disk busy; recall reads far less at a time.
pub const LANCE_IO_BUFFER_BYTES: u64 = 32 << 20;
const LANCE_IO_BUFFER_VAR: &str = "LANCE_DEFAULT_IO_BUFFER_SIZE";

/// The Lance session every store of this process with these reads shares (bounded caches, one object-store
/// registry each).
fn session(reads: LanceReads) -> Arc<lance::session::Session> {
    static RECALL: OnceLock<Arc<lance::session::Session>> = OnceLock::new();
    static WRITES: OnceLock<Arc<lance::session::Session>> = OnceLock::new();
    static IO_BUFFER: OnceLock<()> = OnceLock::new();
    // Lance reads this variable (not an option of its index builders), once for its default and again at
    // each scan: set before this process's first Lance call, while no scan runs to read it concurrently.
    IO_BUFFER.get_or_init(|| {
        if std::env::var_os(LANCE_IO_BUFFER_VAR).is_none() {
            std::env::set_var(LANCE_IO_BUFFER_VAR, LANCE_IO_BUFFER_BYTES.to_string());
        }
    });
    let cell = match reads {
        LanceReads::Recall => &RECALL,
        LanceReads::Writes => &WRITES,
    };
    cell.get_or_init(|| {
        let (index, metadata) = reads.cache_bytes();
        Arc::new(lance::session::Session::new(index, metadata, Arc::new(lance::io::ObjectStoreRegistry::default())))
    })
    .clone()
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

/// The versions around one commit of this process: `before` is `None` when the commit created the dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Commit {
    pub before: Option<u64>,
    pub after: u64,
}

pub struct Store {
    home: Home,
    conn: Connection,
    /// `None` until the dataset exists (the first append, here or in another process).
    table: RwLock<Option<Table>>,
}

impl Store {
    /// Opens the memory at `home` (creating a local directory). Does not create the dataset: an empty memory
    /// has none until its first append. A remote memory's bucket must exist; its endpoint and credentials
    /// come from the AWS variables (see `home`). `reads` sizes Lance's caches.
    pub async fn open(home: &Home, reads: LanceReads) -> Result<Self> {
        if let Some(dir) = home.local() {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
        }
        let conn = lancedb::connect(&home.uri()).read_consistency_interval(READ_CONSISTENCY).session(session(reads)).execute().await?;
        let store = Self { home: home.clone(), conn, table: RwLock::new(None) };
        store.table().await?;
        Ok(store)
    }

    pub fn home(&self) -> &Home {
        &self.home
    }

    /// The dataset, opened on first need: also when another process created it after this store opened.
    async fn table(&self) -> Result<Option<Table>> {
        if let Some(t) = self.table.read().await.as_ref() {
            return Ok(Some(t.clone()));
        }
        let mut guard = self.table.write().await;
        if guard.is_none() && self.conn.table_names().execute().await?.iter().any(|n| n == schema::TABLE) {
            match self.conn.open_table(schema::TABLE).execute().await {
                Ok(t) => *guard = Some(t),
                // Listed, yet not there: another writer's creation whose first commit has not landed (in a
                // bucket, files are listed before the manifest). Not there yet, then.
                Err(lancedb::Error::TableNotFound { .. }) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(guard.clone())
    }

    /// Moves the handle to the dataset's latest version now, not at the next consistency check: a writer
    /// that just took the lock must see every commit made before it (else it would re-add their rows).
    pub async fn checkout_latest(&self) -> Result<()> {
        if let Some(t) = self.table().await? {
            t.checkout_latest().await?;
        }
        Ok(())
    }

    /// The dataset's current version; `None` while there is no dataset.
    pub async fn version(&self) -> Result<Option<u64>> {
        match self.table().await? {
            Some(t) => Ok(Some(t.version().await?)),
            None => Ok(None),
        }
    }

    /// The stamp and dimension the memory was built with, if it has data.
    pub async fn model_stamp(&self) -> Result<Option<(String, usize)>> {
        let Some(t) = self.table().await? else { return Ok(None) };
        let schema = t.schema().await?;
        let stamp = schema.metadata().get(schema::META_MODEL).cloned().unwrap_or_default();
        let dim = match schema.field_with_name("vector").map(|f| f.data_type().clone()) {
            Ok(arrow_schema::DataType::FixedSizeList(_, d)) => d as usize,
            _ => 0,
        };
        Ok(Some((stamp, dim)))
    }

    /// The columns of `schema::ADDED_COLUMNS` the dataset lacks (a memory written before them).
    pub async fn missing_columns(&self) -> Result<Vec<&'static str>> {
        let Some(t) = self.table().await? else { return Ok(Vec::new()) };
        let have = t.schema().await?;
        Ok(schema::ADDED_COLUMNS.iter().copied().filter(|c| have.field_with_name(c).is_err()).collect())
    }

    /// Adds `names` (columns of the current schema) as all nulls: one commit that writes no data.
    pub async fn add_null_columns(&self, names: &[&str]) -> Result<()> {
        let Some(t) = self.table().await? else { return Ok(()) };
        let full = schema::schema(1, "");
        let fields: Vec<arrow_schema::Field> =
            names.iter().map(|n| full.field_with_name(n).cloned().map_err(|e| Error::storage(e.to_string()))).collect::<Result<_>>()?;
        t.add_columns()
            .transform(lancedb::table::NewColumnTransform::AllNulls(Arc::new(arrow_schema::Schema::new(fields))))
            .execute()
            .await?;
        Ok(())
    }

    /// The analyzer version of the stored `fts` texts, if the memory has data (1 when it predates the stamp).
    pub async fn analyzer_version(&self) -> Result<Option<u32>> {
        let Some(t) = self.table().await? else { return Ok(None) };
        let schema = t.schema().await?;
        Ok(Some(schema.metadata().get(schema::META_ANALYZER).and_then(|v| v.parse().ok()).unwrap_or(1)))
    }

    /// Drops the analyzer stamp, as a memory written before it existed has none (tests of re-tokenising).
    /// Drops a column, as a memory written before it existed lacks it (tests of `add_null_columns`).
    #[cfg(test)]
    pub async fn drop_column_for_test(&self, name: &str) -> Result<()> {
        self.table().await?.expect("a dataset").drop_columns(&[name]).await?;
        Ok(())
    }

    #[cfg(test)]
    pub async fn forget_analyzer_version_for_test(&self) -> Result<()> {
        let t = self.table().await?.expect("a dataset");
        let native = t.as_native().expect("a local table");
        let keep: Vec<(String, String)> = t
            .schema()
            .await?
            .metadata()
            .iter()
            .filter(|(k, _)| k.as_str() != schema::META_ANALYZER)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        native.replace_schema_metadata(keep).await?;
        Ok(())
    }

    pub async fn count(&self, filter: &Filter) -> Result<usize> {
        match self.table().await? {
            Some(t) => Ok(t.count_rows(filter.to_sql()).await?),
            None => Ok(0),
        }
    }

    /// Every stored chunk id, as its number (`record::id_key`), from one streamed projection: what an index
    /// run skips.
    pub async fn ids(&self) -> Result<HashSet<u64>> {
        let mut out = HashSet::new();
        let Some(t) = self.table().await? else { return Ok(out) };
        let mut stream = t.query().select(Select::columns(&["id"])).execute().await?;
        while let Some(batch) = stream.try_next().await? {
            out.extend(schema::string_column(&batch, "id").unwrap_or_default().iter().map(|id| id_key(id)));
        }
        Ok(out)
    }

    /// Rows `filter` admits, with the given columns ("vector" may be among them).
    pub async fn scan(&self, filter: &Filter, columns: &[&str]) -> Result<Vec<StoredChunk>> {
        let mut out = Vec::new();
        self.scan_batches(filter, columns, |rows, _| out.extend(rows)).await?;
        Ok(out)
    }

    /// Streams the rows `filter` admits batch by batch into `f`, with each row's `fts` text when `columns`
    /// names it (else empty strings): memory stays one batch deep.
    pub async fn scan_batches(&self, filter: &Filter, columns: &[&str], mut f: impl FnMut(Vec<StoredChunk>, Vec<String>)) -> Result<()> {
        let Some(t) = self.table().await? else { return Ok(()) };
        let mut q = t.query().select(Select::columns(columns));
        if let Some(sql) = filter.to_sql() {
            q = q.only_if(sql);
        }
        let mut stream = q.execute().await?;
        while let Some(batch) = stream.try_next().await? {
            let (rows, fts) = schema::rows_with_fts(&batch)?;
            f(rows, fts);
        }
        Ok(())
    }

    /// Appends rows (with their `fts` texts) in one commit, after creating the dataset (empty, stamped with
    /// the model) if there is none yet.
    pub async fn append(&self, rows: &[StoredChunk], fts: &[String], dim: usize, stamp: &str) -> Result<Option<Commit>> {
        if rows.is_empty() {
            return Ok(None);
        }
        let schema = schema::schema(dim, stamp);
        let batch = schema::to_batch(&schema, rows, fts)?;
        let t = match self.table().await? {
            Some(t) => t,
            None => self.create(schema).await?,
        };
        // Appends of several writers all commit (Lance retries those itself). What Lance refuses is an append
        // on top of an overwrite that slipped in (the other writer's empty creation, or a rebuild elsewhere):
        // nothing of ours committed then, so append again on the new version.
        let mut attempt = 1;
        loop {
            let before = t.version().await?;
            match t.add(batch.clone()).execute().await {
                Ok(_) => return Ok(Some(Commit { before: Some(before), after: t.version().await? })),
                Err(e) if lost_to_another_writer(&e) && attempt < COMMIT_ATTEMPTS => {
                    attempt += 1;
                    t.checkout_latest().await?;
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Creates the dataset empty, its schema only; rows always arrive as appends. Two writers may create it
    /// at once (two machines on one new memory in a bucket), and Lance may then commit both creations, the
    /// second as an overwrite of the first: harmless while both are empty, whereas a creation carrying rows
    /// would silently replace the other writer's. Appends of several writers, on the other hand, all commit
    /// (each retries on a conflict).
    async fn create(&self, schema: arrow_schema::SchemaRef) -> Result<Table> {
        let mut guard = self.table.write().await;
        let t = match self.conn.create_empty_table(schema::TABLE, schema).execute().await {
            Ok(t) => t,
            Err(lancedb::Error::TableAlreadyExists { .. }) => self.open_created_elsewhere().await?,
            Err(e) => return Err(e.into()),
        };
        *guard = Some(t.clone());
        Ok(t)
    }

    /// The dataset another writer has just created. In a bucket its files are listed before its first
    /// manifest lands (the commit is the last PUT), so for a moment it exists and cannot be opened: wait for
    /// that commit, at most `CREATE_WAIT`.
    async fn open_created_elsewhere(&self) -> Result<Table> {
        let start = std::time::Instant::now();
        loop {
            match self.conn.open_table(schema::TABLE).execute().await {
                Err(lancedb::Error::TableNotFound { .. }) if start.elapsed() < CREATE_WAIT => {
                    tokio::time::sleep(Duration::from_millis(100)).await
                }
                other => return Ok(other?),
            }
        }
    }

    /// Replaces the whole dataset with `rows` in one commit (a rebuild with another model or analyzer), then
    /// rebuilds every index.
    pub async fn overwrite(&self, rows: &[StoredChunk], fts: &[String], dim: usize, stamp: &str) -> Result<()> {
        let batch = schema::to_batch(&schema::schema(dim, stamp), rows, fts)?;
        let mut guard = self.table.write().await;
        let t = self.conn.create_table(schema::TABLE, batch).mode(lancedb::database::CreateTableMode::Overwrite).execute().await?;
        *guard = Some(t);
        drop(guard);
        self.refresh_indexes(true).await
    }

    /// Removes versions older than `older_than`. With `delete_unverified`, also files of unfinished writes:
    /// only safe while the writer lock is held.
    pub async fn prune(&self, older_than: Duration, delete_unverified: bool) -> Result<()> {
        let Some(t) = self.table().await? else { return Ok(()) };
        t.optimize(OptimizeAction::Prune {
            older_than: Some(lancedb::table::Duration::from_std(older_than).unwrap_or(lancedb::table::Duration::zero())),
            delete_unverified: Some(delete_unverified),
            error_if_tagged_old_versions: Some(false),
        })
        .await?;
        Ok(())
    }

    /// Deletes the rows `filter` admits and makes the deletion physical: fragments are rewritten without the
    /// rows, every index that held them is rebuilt (or dropped, when no row is left: an index over nothing
    /// would still list the deleted words), and every older version pruned, so neither the text nor the
    /// filter's values (a session id often names a person or a project) are in any file of the memory.
    pub async fn purge(&self, filter: &Filter) -> Result<usize> {
        let Some(t) = self.table().await? else { return Ok(0) };
        let sql = filter.to_sql().ok_or_else(|| Error::InvalidInput("refusing to purge without a filter".into()))?;
        let n = t.count_rows(Some(sql.clone())).await?;
        if n == 0 {
            return Ok(0);
        }
        t.delete(&sql).await?;
        let options = CompactionOptions { materialize_deletions: true, materialize_deletions_threshold: 0.0, ..Default::default() };
        t.optimize(OptimizeAction::Compact { options, remap_options: None }).await?;
        if t.count_rows(None).await? > 0 {
            self.refresh_indexes(true).await?;
        } else {
            self.drop_indexes().await?;
        }
        self.prune(Duration::ZERO, true).await?;
        Ok(n)
    }

    /// A handle on the dataset for the search legs, which run as their own tasks. `None`: no data yet.
    pub async fn searcher(&self) -> Result<Option<Searcher>> {
        Ok(self.table().await?.map(Searcher::new))
    }

    /// Fragments of the dataset's current version (its manifest): one per append until compaction merges
    /// them. Not the data files on disk: those of older versions stay until pruned (a minute), and counting
    /// them made every index run of that minute compact the whole memory again.
    async fn fragments_of(&self, t: &Table) -> lancedb::Result<usize> {
        match t.dataset() {
            Some(d) => Ok(d.get().await?.manifest().fragments.len()),
            None => Ok(t.stats().await?.fragment_stats.num_fragments),
        }
    }

    pub async fn stats(&self) -> Result<StoreStats> {
        let mut s = StoreStats { disk_bytes: self.home.local().map_or(0, dir_size), ..Default::default() };
        let Some(t) = self.table().await? else { return Ok(s) };
        s.rows = t.count_rows(None).await?;
        s.version = t.version().await?;
        if self.home.local().is_some() {
            s.fragments = self.fragments_of(&t).await?;
        } else {
            // One read of the manifest's statistics: its fragments, and the bytes of the current version's
            // data and index files.
            let st = t.stats().await?;
            s.fragments = st.fragment_stats.num_fragments;
            s.disk_bytes = st.total_bytes as u64;
        }
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
