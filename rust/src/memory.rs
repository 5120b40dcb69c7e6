//! A memory as the engine uses it: the Lance dataset (`store`, the memory of record) and, in a warm engine,
//! its resident copy in RAM (`resident`), kept in step with every write. The domain type above the
//! mechanics: `store` knows nothing of the copy, `resident` nothing of Lance.
//!
//! The copy is built from one scan the first time a recall asks for it (`ensure_resident`) and tagged with
//! the Lance version it reflects. This process's own appends extend it in place (the slow part, coding and
//! analysing, is done before the brief write lock, so readers wait at most for a few pushes); commits that
//! change no rows (index refresh, compaction, pruning) move its tag along; overwrites and purges drop it; a
//! version this process did not write (another process indexed) makes the next recall read the rows it
//! added (appended, and compacted or not), or build the copy again when it did more than add rows (a
//! forget, an overwrite).

use std::collections::HashSet;
use std::future::Future;
use std::ops::Deref;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError, RwLock, RwLockReadGuard};
use std::time::Duration;

use crate::analyzer::fts_document;
use crate::chunk::turn_contexts;
use crate::error::Result;
use crate::home::Home;
use crate::record::{id_key, StoredChunk};
use crate::resident::{self, Resident};
use crate::store::{Commit, Filter, LanceReads, Snapshot, Store, ROW_COLUMNS};

/// Attempts at a resident build before settling for a copy that a concurrent commit already outdated (the
/// next recall then builds again).
const RESIDENT_BUILD_TRIES: usize = 3;

pub struct Memory {
    store: Store,
    /// Whether recall may build and use the resident copy (a one-shot process should not: loading it
    /// costs more than a few indexed Lance queries).
    keep_resident: bool,
    /// The resident copy; `None` until a recall builds it, and after an overwrite or a purge.
    resident: RwLock<Option<Resident>>,
    /// The fragments of the version the copy was built or caught up at, to catch up from without reading that
    /// version again (see `store::Snapshot`); this process's own appends move the copy past it.
    snapshot: Mutex<Option<Snapshot>>,
    /// One build of the resident copy at a time.
    build: tokio::sync::Mutex<()>,
    /// Writes of this process in progress: while any runs, a new dataset version is ours, not another
    /// process's, and the writer itself brings the resident copy up to date.
    own_writes: AtomicUsize,
    /// Whole builds of the copy (tests tell a rebuild from an extension by it).
    #[cfg(test)]
    builds: AtomicUsize,
}

/// The current resident copy, read-locked: writers that extend it wait until the guard is dropped, so hold
/// it for one search, never across an await.
pub struct ResidentGuard<'a>(RwLockReadGuard<'a, Option<Resident>>);

impl Deref for ResidentGuard<'_> {
    type Target = Resident;
    fn deref(&self) -> &Resident {
        self.0.as_ref().expect("a guard is only made over a copy")
    }
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

/// What BM25 indexes for each row (the `fts` column): its month, context, text, glued identifiers.
pub fn fts_texts(rows: &[StoredChunk]) -> Vec<String> {
    rows.iter().map(|r| fts_document(&r.chunk.text, &r.context, &r.chunk.ts)).collect()
}

/// What the copy reads of each row: the fields, the vector (coded) and the BM25 text (analysed).
fn resident_columns() -> Vec<&'static str> {
    ROW_COLUMNS.iter().copied().chain(["vector", "fts"]).collect()
}

impl Memory {
    pub async fn open(home: &Home, keep_resident: bool) -> Result<Self> {
        Ok(Self {
            store: Store::open(home, if keep_resident { LanceReads::Writes } else { LanceReads::Recall }).await?,
            keep_resident,
            resident: RwLock::new(None),
            snapshot: Mutex::new(None),
            build: tokio::sync::Mutex::new(()),
            own_writes: AtomicUsize::new(0),
            #[cfg(test)]
            builds: AtomicUsize::new(0),
        })
    }

    /// The dataset, for reads that need no copy in RAM.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Appends rows in one commit and extends the resident copy with them.
    pub async fn append(&self, rows: &[StoredChunk], dim: usize, stamp: &str) -> Result<()> {
        let fts = fts_texts(rows);
        let _own = OwnWrite::new(&self.own_writes);
        if let Some(commit) = self.store.append(rows, &fts, dim, stamp).await? {
            self.extend_resident(commit, rows, fts);
        }
        Ok(())
    }

    /// Replaces every row (a rebuild); the copy is built again by the next recall.
    pub async fn overwrite(&self, rows: &[StoredChunk], dim: usize, stamp: &str) -> Result<()> {
        let fts = fts_texts(rows);
        let _own = OwnWrite::new(&self.own_writes);
        self.drop_resident();
        self.store.overwrite(rows, &fts, dim, stamp).await?;
        self.drop_resident();
        Ok(())
    }

    /// Rewrites every row's `fts` text with this build's analyzer, keeping text and vectors, in one commit
    /// (`overwrite`), then drops the old versions: the tokens of two analyzers are never mixed, and the old
    /// ones are gone from disk. Returns the number of rows. The caller holds the writer lock.
    pub async fn retokenize(&self, stamp: &str, dim: usize) -> Result<usize> {
        let columns: Vec<&str> = ROW_COLUMNS.iter().copied().chain(["vector"]).collect();
        let rows = self.store.scan(&Filter::default(), &columns).await?;
        let contexts = turn_contexts(rows.iter().map(|r| &r.chunk));
        let rows: Vec<StoredChunk> = rows.iter().map(|r| StoredChunk { context: contexts.of(&r.chunk), ..r.clone() }).collect();
        if !rows.is_empty() {
            self.overwrite(&rows, dim, stamp).await?;
            self.prune(Duration::ZERO, true).await?;
        }
        Ok(rows.len())
    }

    /// Deletes the rows `filter` admits, physically (`Store::purge`); the copy is built again by the next
    /// recall.
    pub async fn purge(&self, filter: &Filter) -> Result<usize> {
        let _own = OwnWrite::new(&self.own_writes);
        self.drop_resident();
        let n = self.store.purge(filter).await?;
        self.drop_resident();
        Ok(n)
    }

    pub async fn refresh_indexes(&self, rebuild: bool) -> Result<()> {
        self.follow(self.store.refresh_indexes(rebuild)).await
    }

    pub async fn prune(&self, older_than: Duration, delete_unverified: bool) -> Result<()> {
        self.follow(self.store.prune(older_than, delete_unverified)).await
    }

    /// Runs a write that changes no rows, then moves the copy's tag along with the version it made.
    async fn follow(&self, write: impl Future<Output = Result<()>>) -> Result<()> {
        let _own = OwnWrite::new(&self.own_writes);
        let before = self.store.version().await?;
        write.await?;
        let after = self.store.version().await?;
        let mut guard = self.resident.write().unwrap_or_else(PoisonError::into_inner);
        if let (Some(r), Some(after)) = (guard.as_mut(), after) {
            if Some(r.version) == before {
                r.version = after;
            }
        }
        Ok(())
    }

    /// Extends the copy with rows this process just committed. If the copy was not at the version before
    /// the commit, or another commit slipped in between, it is dropped: the next recall rebuilds it.
    fn extend_resident(&self, commit: Commit, rows: &[StoredChunk], fts: Vec<String>) {
        let Some(current) = self.copy_version() else { return };
        let in_step = commit.before == Some(current) && commit.after == current + 1;
        let prepared = in_step.then(|| resident::prepare(rows.to_vec(), fts));
        let mut guard = self.resident.write().unwrap_or_else(PoisonError::into_inner);
        match (guard.as_mut(), prepared) {
            (Some(r), Some(p)) if r.version == current => {
                r.extend(p);
                r.version = commit.after;
            }
            _ => *guard = None,
        }
    }

    fn drop_resident(&self) {
        *self.resident.write().unwrap_or_else(PoisonError::into_inner) = None;
    }

    fn copy_version(&self) -> Option<u64> {
        self.resident.read().unwrap_or_else(PoisonError::into_inner).as_ref().map(|r| r.version)
    }

    /// The copy as it is now, without building or refreshing it; `None` when there is none.
    pub fn resident(&self) -> Option<ResidentGuard<'_>> {
        let guard = self.resident.read().unwrap_or_else(PoisonError::into_inner);
        if guard.is_some() {
            Some(ResidentGuard(guard))
        } else {
            None
        }
    }

    /// Makes the copy current and returns it: builds it from one scan when missing or outdated by another
    /// process's commit. `None`: this memory keeps no copy, or has no data yet.
    pub async fn ensure_resident(&self) -> Result<Option<ResidentGuard<'_>>> {
        if !self.keep_resident {
            return Ok(None);
        }
        for _ in 0..RESIDENT_BUILD_TRIES {
            let Some(version) = self.store.version().await? else { return Ok(None) };
            let current = self.copy_version();
            // While this process writes, new versions are its own and the writer updates the copy.
            if current == Some(version) || (current.is_some() && self.own_writes.load(Ordering::SeqCst) > 0) {
                return Ok(self.resident());
            }
            let _one = self.build.lock().await;
            let Some(version) = self.store.version().await? else { return Ok(None) };
            let current = self.copy_version();
            if current == Some(version) {
                return Ok(self.resident());
            }
            // Another process added rows (an ingest worker's append, compacted or not): read only those. A
            // rebuild would read the whole memory each time, and hold two copies while it does; after every
            // compaction (each 32 appends) it also left the process a few MB bigger in freed-but-scattered heap.
            if let Some(from) = current {
                if let Some((parts, rows, snapshot)) = self.grown_rows(from, version).await? {
                    if self.extend_copy(from, snapshot, parts, rows) {
                        if self.store.version().await? == Some(version) {
                            return Ok(self.resident());
                        }
                        continue;
                    }
                }
            }
            // The old copy goes before the new one is read: with both alive the process's high-water mark
            // was twice the copy, and rose by twice the data written (recalls of this memory wait for the
            // build either way; neighbours read Lance meanwhile).
            self.drop_resident();
            let (built, snapshot) = self.build_resident(version).await?;
            let settled = self.store.version().await? == Some(version);
            *self.resident.write().unwrap_or_else(PoisonError::into_inner) = Some(built);
            *self.snapshot.lock().unwrap_or_else(PoisonError::into_inner) = snapshot;
            if settled {
                return Ok(self.resident());
            }
        }
        Ok(self.resident())
    }

    /// Extends the copy taken at `from` with the rows added up to `to`'s version, which has `rows` rows. A copy
    /// that moved meanwhile is left as it is; one that would not hold `rows` rows afterwards is not extended
    /// (false: the caller builds it again, so a copy never drifts from the dataset).
    fn extend_copy(&self, from: u64, to: Snapshot, parts: Vec<resident::Prepared>, rows: usize) -> bool {
        let mut guard = self.resident.write().unwrap_or_else(PoisonError::into_inner);
        let Some(r) = guard.as_mut().filter(|r| r.version == from) else { return true };
        if r.len() + parts.iter().map(resident::Prepared::len).sum::<usize>() != rows {
            return false;
        }
        parts.into_iter().for_each(|p| r.extend(p));
        r.version = to.version();
        *self.snapshot.lock().unwrap_or_else(PoisonError::into_inner) = Some(to);
        true
    }

    /// The rows version `to` has beyond version `from`, coded and analysed for the copy, `to`'s row count and
    /// its fragments; `None` when a version between did more than add rows, or that can no longer be told
    /// (see `Store::grown_since`).
    async fn grown_rows(&self, from: u64, to: u64) -> Result<Option<(Vec<resident::Prepared>, usize, Snapshot)>> {
        let kept = self.snapshot.lock().unwrap_or_else(PoisonError::into_inner).clone().filter(|s| s.version() == from);
        let from = match kept {
            Some(s) => s,
            None => match self.store.snapshot(from).await? {
                Some(s) => s,
                None => return Ok(None),
            },
        };
        let Some(grown) = self.store.grown_since(&from, to).await? else { return Ok(None) };
        // After a compaction the rewritten fragments hold rows the copy has: their ids tell them apart.
        let known: HashSet<u64> = match (grown.rewritten(), self.resident()) {
            (true, Some(r)) => (0..r.len()).map(|i| id_key(r.id(i))).collect(),
            _ => HashSet::new(),
        };
        let mut parts = Vec::new();
        let is_known = |id: &str| known.contains(&id_key(id));
        self.store.scan_grown(&grown, &is_known, &resident_columns(), |rows, fts| parts.push(resident::prepare(rows, fts))).await?;
        Ok(Some((parts, grown.rows, grown.snapshot())))
    }

    /// The copy of the dataset at `version`, from one streamed scan, and that version's fragments.
    async fn build_resident(&self, version: u64) -> Result<(Resident, Option<Snapshot>)> {
        #[cfg(test)]
        self.builds.fetch_add(1, Ordering::SeqCst);
        let dim = self.store.model_stamp().await?.map(|(_, dim)| dim).unwrap_or(0);
        let mut r = Resident::new(dim, version);
        let snapshot = self.store.scan_version(version, &resident_columns(), |rows, fts| r.extend(resident::prepare(rows, fts))).await?;
        Ok((r, snapshot))
    }
}

#[cfg(test)]
mod tests {
    //! The resident copy against the dataset, with hand-written vectors: no model.
    use super::*;
    use std::path::Path;

    use crate::chunk::{chunk_id, Chunk};
    use crate::runtime::block_on;
    use crate::store::{COMPACT_FRAGMENTS, READ_CONSISTENCY};

    const DIM: usize = 3;

    fn row(session: &str, seq: i64, text: &str, vector: [f32; DIM]) -> StoredChunk {
        let chunk = Chunk {
            id: chunk_id(session, &format!("{session}-{seq}"), 0, 0),
            text: text.into(),
            session_id: session.into(),
            turn_uuid: format!("{session}-{seq}"),
            seq,
            ts: format!("2026-10-0{}T09:00:00Z", seq.clamp(1, 9)),
            role: "user".into(),
            harness: "test".into(),
            block_type: "text".into(),
            ..Default::default()
        };
        StoredChunk::new(chunk, vector.to_vec(), String::new())
    }

    fn ids_in_copy(m: &Memory) -> Vec<String> {
        let r = block_on(m.ensure_resident()).unwrap().expect("a copy");
        let mut ids: Vec<String> = (0..r.len()).map(|i| r.id(i).to_owned()).collect();
        ids.sort();
        ids
    }

    fn sorted_ids(rows: &[&StoredChunk]) -> Vec<String> {
        let mut ids: Vec<String> = rows.iter().map(|r| r.chunk.id.clone()).collect();
        ids.sort();
        ids
    }

    #[test]
    fn own_appends_extend_the_copy_in_step_with_the_dataset() {
        let dir = tempfile::tempdir().unwrap();
        let m = block_on(Memory::open(&Home::Local(dir.path().into()), true)).unwrap();
        assert!(block_on(m.ensure_resident()).unwrap().is_none(), "no dataset, no copy");
        let (a, b, c) = (
            row("s1", 1, "pump seal leaking", [1., 0., 0.]),
            row("s1", 2, "MT-4471 open", [0., 1., 0.]),
            row("s2", 1, "motor", [0., 0., 1.]),
        );
        block_on(m.append(&[a.clone(), b.clone()], DIM, "m@1")).unwrap();
        assert_eq!(ids_in_copy(&m), sorted_ids(&[&a, &b]));
        let built = m.copy_version();
        block_on(m.append(std::slice::from_ref(&c), DIM, "m@1")).unwrap();
        assert_eq!(m.copy_version(), Some(built.unwrap() + 1), "extended in place, not rebuilt");
        assert_eq!(ids_in_copy(&m), sorted_ids(&[&a, &b, &c]));
        block_on(m.refresh_indexes(false)).unwrap();
        assert_eq!(m.copy_version(), block_on(m.store().version()).unwrap(), "index commits move the tag along");
        let r = m.resident().unwrap();
        assert_eq!(r.bm25(&crate::resident::query_terms("MT-4471"), 5, None).len(), 1);
        assert_eq!(r.session("s1").len(), 2);
    }

    #[test]
    fn a_memory_without_a_later_column_gets_it_as_nulls() {
        let dir = tempfile::tempdir().unwrap();
        let m = block_on(Memory::open(&Home::Local(dir.path().into()), true)).unwrap();
        let mut a = row("s1", 1, "pump seal leaking", [1., 0., 0.]);
        a.chunk.workdir = "/src/pumps".into();
        block_on(m.append(std::slice::from_ref(&a), DIM, "m@1")).unwrap();
        block_on(m.store().drop_column_for_test("workdir")).unwrap(); // a memory written before the column
        assert_eq!(block_on(m.store().missing_columns()).unwrap(), ["workdir"]);
        block_on(m.store().add_null_columns(&["workdir"])).unwrap();
        assert!(block_on(m.store().missing_columns()).unwrap().is_empty());
        let mut b = row("s2", 1, "motor hums", [0., 1., 0.]);
        b.chunk.workdir = "/src/motors".into();
        block_on(m.append(std::slice::from_ref(&b), DIM, "m@1")).unwrap(); // this build's rows fit its schema
        let rows = block_on(m.store().scan(&Filter::default(), crate::store::ROW_COLUMNS)).unwrap();
        let mut seen: Vec<(String, String)> = rows.iter().map(|r| (r.chunk.session_id.clone(), r.chunk.workdir.clone())).collect();
        seen.sort();
        assert_eq!(seen, [("s1".to_string(), String::new()), ("s2".to_string(), "/src/motors".to_string())]);
        let projects = Filter { projects: vec!["/src/motors".into()], ..Default::default() };
        assert_eq!(block_on(m.store().count(&projects)).unwrap(), 1, "the SQL side of the projects filter");
    }

    /// Files under `dir` that contain any of `needles`.
    fn files_holding(dir: &Path, needles: &[&[u8]]) -> Vec<String> {
        let mut found = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                    continue;
                }
                let bytes = std::fs::read(&p).unwrap();
                for needle in needles {
                    if bytes.windows(needle.len()).any(|w| w == *needle) {
                        found.push(format!("{} holds {:?}", p.display(), String::from_utf8_lossy(needle)));
                    }
                }
            }
        }
        found
    }

    #[test]
    fn a_purge_drops_the_copy_and_leaves_neither_id_nor_text_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let m = block_on(Memory::open(&Home::Local(dir.path().into()), true)).unwrap();
        let (a, b) = (row("keep", 1, "kept words", [1., 0., 0.]), row("sess-gone-4417", 1, "forgotten platypus", [0., 1., 0.]));
        block_on(m.append(&[a.clone(), b], DIM, "m@1")).unwrap();
        block_on(m.refresh_indexes(false)).unwrap();
        ids_in_copy(&m);
        assert!(!files_holding(dir.path(), &[b"sess-gone-4417"]).is_empty(), "the id is on disk before");
        assert_eq!(block_on(m.purge(&Filter::session("sess-gone-4417"))).unwrap(), 1);
        assert!(m.resident().is_none(), "dropped by the purge");
        assert_eq!(ids_in_copy(&m), sorted_ids(&[&a]));
        // Not in a data file, an index page (the session_id index held it), a transaction or a manifest.
        let left = files_holding(dir.path(), &[b"sess-gone-4417", b"platypus"]);
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn another_process_appends_are_read_alone_even_compacted_and_a_forget_rebuilds_the_copy() {
        let dir = tempfile::tempdir().unwrap();
        let reader = block_on(Memory::open(&Home::Local(dir.path().into()), true)).unwrap();
        let writer = block_on(Memory::open(&Home::Local(dir.path().into()), false)).unwrap();
        let settle = || std::thread::sleep(READ_CONSISTENCY + std::time::Duration::from_millis(200));
        let a = row("s1", 1, "first", [1., 0., 0.]);
        block_on(writer.append(std::slice::from_ref(&a), DIM, "m@1")).unwrap();
        // The reader opened on an empty home: it finds the dataset another handle created.
        assert_eq!(ids_in_copy(&reader), sorted_ids(&[&a]));
        assert_eq!(reader.builds.load(Ordering::SeqCst), 1);
        // Two appends and an index refresh by the other handle: the copy reads the two new rows only.
        let (b, c) = (row("s2", 1, "second wombat", [0., 1., 0.]), row("s2", 2, "third", [0., 0., 1.]));
        block_on(writer.append(std::slice::from_ref(&b), DIM, "m@1")).unwrap();
        block_on(writer.append(std::slice::from_ref(&c), DIM, "m@1")).unwrap();
        block_on(writer.refresh_indexes(false)).unwrap();
        settle();
        assert_eq!(ids_in_copy(&reader), sorted_ids(&[&a, &b, &c]));
        assert_eq!(reader.builds.load(Ordering::SeqCst), 1, "extended, not rebuilt");
        assert_eq!(reader.copy_version(), block_on(writer.store().version()).unwrap());
        {
            let r = reader.resident().unwrap();
            assert_eq!(r.bm25(&crate::resident::query_terms("wombat"), 5, None).len(), 1, "new rows are in BM25");
            assert_eq!(r.session("s2").len(), 2);
        }
        // Appends and a compaction in one go (the compaction rewrites the copy's rows and the new ones
        // together): the new rows are picked out by id, and the copy is extended, not rebuilt.
        let more: Vec<StoredChunk> =
            (0..COMPACT_FRAGMENTS as i64).map(|i| row(&format!("s3-{i}"), 1, "fourth wombat", [1., 1., 0.])).collect();
        for r in &more {
            block_on(writer.append(std::slice::from_ref(r), DIM, "m@1")).unwrap();
        }
        let fragments = |m: &Memory| block_on(m.store().stats()).unwrap().fragments;
        assert!(fragments(&writer) >= COMPACT_FRAGMENTS);
        block_on(writer.refresh_indexes(false)).unwrap();
        let compacted = fragments(&writer);
        assert!(compacted < COMPACT_FRAGMENTS, "compacted");
        settle();
        let all: Vec<&StoredChunk> = [&a, &b, &c].into_iter().chain(&more).collect();
        assert_eq!(ids_in_copy(&reader), sorted_ids(&all));
        assert_eq!(reader.builds.load(Ordering::SeqCst), 1, "extended across a compaction, not rebuilt");
        assert_eq!(reader.resident().unwrap().bm25(&crate::resident::query_terms("wombat"), 50, None).len(), 1 + more.len());
        // An append after the copy's version was pruned (a tenant idle for a minute while others wrote): the
        // copy kept that version's fragments, so it still reads the new row alone.
        let d = row("s4", 1, "fifth", [0., 1., 1.]);
        block_on(writer.append(std::slice::from_ref(&d), DIM, "m@1")).unwrap();
        // The compaction's old files stay on disk until pruned; they are no fragments of the dataset, so the
        // next index run leaves the compacted fragments as they are.
        block_on(writer.refresh_indexes(false)).unwrap();
        assert_eq!(fragments(&writer), compacted + 1, "the compacted fragments and the new one");
        block_on(writer.prune(Duration::ZERO, true)).unwrap();
        settle();
        assert!(block_on(reader.store().snapshot(reader.copy_version().unwrap())).unwrap().is_none(), "pruned");
        let all: Vec<&StoredChunk> = all.into_iter().chain([&d]).collect();
        assert_eq!(ids_in_copy(&reader), sorted_ids(&all));
        assert_eq!(reader.builds.load(Ordering::SeqCst), 1, "extended from the kept fragments");
        // A forget by the other handle deletes rows the copy holds: built again from the dataset.
        block_on(writer.purge(&Filter::session("s1"))).unwrap();
        settle();
        let left: Vec<&StoredChunk> = [&b, &c, &d].into_iter().chain(&more).collect();
        assert_eq!(ids_in_copy(&reader), sorted_ids(&left));
        assert_eq!(reader.builds.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn forgetting_every_row_leaves_no_index_behind() {
        let dir = tempfile::tempdir().unwrap();
        let m = block_on(Memory::open(&Home::Local(dir.path().into()), false)).unwrap();
        block_on(m.append(&[row("sess-quokka-7731", 1, "zebra wombat", [1., 0., 0.])], DIM, "m@1")).unwrap();
        block_on(m.refresh_indexes(false)).unwrap();
        assert!(block_on(m.store().stats()).unwrap().fts_indexed);
        block_on(m.purge(&Filter::session("sess-quokka-7731"))).unwrap();
        let stats = block_on(m.store().stats()).unwrap();
        assert_eq!((stats.rows, stats.fts_indexed), (0, false));
        // No index file is left (the FTS token list is an FST: a grep would not see its words)...
        let indices = dir.path().join("chunks.lance/_indices");
        let left: Vec<_> = std::fs::read_dir(&indices).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default();
        assert!(left.is_empty(), "index files left after forgetting every row: {left:?}");
        // ...and no file names the session or holds its words, not even a transaction or an old manifest.
        let left = files_holding(dir.path(), &[b"quokka-7731", b"zebra", b"wombat"]);
        assert!(left.is_empty(), "{left:?}");
        // And the memory takes new rows, with its indexes, afterwards.
        block_on(m.append(&[row("next", 1, "after", [0., 1., 0.])], DIM, "m@1")).unwrap();
        block_on(m.refresh_indexes(false)).unwrap();
        assert!(block_on(m.store().stats()).unwrap().fts_indexed);
    }

    #[test]
    fn an_older_analyzers_memory_is_retokenised_not_mixed() {
        use crate::analyzer::ANALYZER_VERSION;
        let dir = tempfile::tempdir().unwrap();
        let m = block_on(Memory::open(&Home::Local(dir.path().into()), true)).unwrap();
        let old = row("s1", 1, "어제 서버가 멈췄다", [1., 0., 0.]);
        // What analyzer version 1 stored: the text as it is (no bigrams), and no version in the schema.
        block_on(m.store().append(std::slice::from_ref(&old), std::slice::from_ref(&old.chunk.text), DIM, "m@1")).unwrap();
        block_on(m.store().forget_analyzer_version_for_test()).unwrap();
        assert_eq!(block_on(m.store().analyzer_version()).unwrap(), Some(1));
        let found =
            |m: &Memory| block_on(m.ensure_resident()).unwrap().expect("a copy").bm25(&crate::resident::query_terms("서버"), 5, None).len();
        assert_eq!(found(&m), 0, "version 1 indexed 서버가 as one token");

        assert_eq!(block_on(m.retokenize("m@1", DIM)).unwrap(), 1);
        assert_eq!(block_on(m.store().analyzer_version()).unwrap(), Some(ANALYZER_VERSION));
        assert_eq!(found(&m), 1, "the bare noun finds the noun with its particle");
        let back = block_on(m.store().scan(&Filter::default(), &["id", "text", "vector"])).unwrap();
        assert_eq!((back[0].chunk.text.as_str(), back[0].vector.as_slice()), (old.chunk.text.as_str(), old.vector.as_slice()));
        let reopened = block_on(Memory::open(&Home::Local(dir.path().into()), true)).unwrap();
        assert_eq!(found(&reopened), 1);
        assert_eq!(block_on(reopened.store().version()).unwrap(), block_on(m.store().version()).unwrap());
    }
}
