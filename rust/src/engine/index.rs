//! An index run: sources → turns → new chunks only → embeddings → one append per batch → index refresh.
//! Idempotent: chunk ids are coordinates, so a resent conversation adds only its new turns and an unchanged
//! source adds nothing. A crash mid-run leaves every committed batch in place and the next run picks up
//! the rest (the ids already stored are skipped).
//!
//! Sources stream: a run holds one source and at most `APPEND_BATCH` chunks waiting for embedding, so a
//! gigabyte-sized export indexes in bounded memory. A source is a native `.funes.jsonl` file, read here,
//! or lines an adapter (`funes_py.sources`) made from another format.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::state::{signature, IndexState};
use super::Engine;
use crate::analyzer::ANALYZER_VERSION;
use crate::chunk::{chunk_turn, turn_contexts, Chunk};
use crate::error::Result;
use crate::heap::RunMark;
use crate::inference::Embedder;
use crate::ingest::files::{collect_files, parse_file};
use crate::ingest::{parse_lines, BadLine, ParsedFile};
use crate::record::{hash64, id_key, StoredChunk};
use crate::runtime::block_on;
use crate::store::{Filter, ROW_COLUMNS};

/// Chunks embedded and committed together: bounds memory and the work a crash can lose.
pub const APPEND_BATCH: usize = 4_096;

/// Texts up to this length are remembered across batches of a run (repeats are short: acknowledgements,
/// greetings, boilerplate); longer ones are shared only within their batch.
const REUSE_MAX_CHARS: usize = 400;
/// At most this many remembered vectors per run (about 60 MB at 384 dimensions).
const REUSE_MAX_TEXTS: usize = 40_000;

/// One source of turns for an index run.
#[derive(Debug, Clone)]
pub struct Source {
    /// Its name in the index state and in bad-line reports: a canonical path (`<zip>!<member>` for a member
    /// of an archive).
    pub key: String,
    /// Its change stamp ("size:mtime_ns"), stored once the run ends; `None`: always read.
    pub signature: Option<String>,
    pub content: SourceContent,
}

#[derive(Debug, Clone)]
pub enum SourceContent {
    /// A `.funes.jsonl` file, read and parsed here.
    File(PathBuf),
    /// `.funes.jsonl` lines an adapter made, each with its place (line, or record number), and the records
    /// the adapter could not read, with their place and reason. One conversation's turns are all in one
    /// source: the BM25 context of a turn is the turn before it within the source.
    Lines { lines: Vec<(usize, String)>, bad: Vec<(usize, String)> },
}

/// Vectors of the texts embedded in one run. Identical texts (acknowledgements, greetings, repeated tool
/// output: a third of the benchmark history) embed at most twice; the model is deterministic, so a reused
/// vector is the one the text would get.
#[derive(Default)]
struct VectorCache {
    /// Vectors of short texts seen more than once.
    vectors: HashMap<String, Vec<f32>>,
    /// Hashes of short texts embedded once so far. Most short texts never come back, and keeping a vector
    /// for each of the first `REUSE_MAX_TEXTS` held 70 MB through a long run for the few that do; a text's
    /// vector is kept when it comes back (a hash collision only keeps a vector that is not needed).
    seen_once: HashSet<u64>,
    /// Texts actually run through the model.
    embedded: usize,
}

impl VectorCache {
    /// One vector per text, embedding only the texts not seen before in this run. `progress` counts texts.
    fn embed(&mut self, embedder: &Embedder, texts: &[&str], progress: &(dyn Fn(usize) + Sync)) -> Result<Vec<Vec<f32>>> {
        let mut queued = HashSet::new();
        let todo: Vec<&str> = texts.iter().copied().filter(|t| !self.vectors.contains_key(*t) && queued.insert(*t)).collect();
        let scale = |d: usize| d * texts.len() / todo.len().max(1);
        let fresh: HashMap<&str, Vec<f32>> = todo.iter().copied().zip(embedder.embed_passages(&todo, &|d| progress(scale(d)))?).collect();
        self.embedded += todo.len();
        let out = texts.iter().map(|t| self.vectors.get(*t).or_else(|| fresh.get(t)).expect("embedded above").clone()).collect();
        for (t, v) in fresh {
            self.remember(t, v);
        }
        Ok(out)
    }

    /// Keeps a freshly embedded text's vector for later batches if the text is short and was seen before.
    fn remember(&mut self, text: &str, vector: Vec<f32>) {
        if text.chars().count() <= REUSE_MAX_CHARS && self.vectors.len() < REUSE_MAX_TEXTS && !self.seen_once.insert(hash64(text)) {
            self.vectors.insert(text.to_string(), vector);
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct IndexReport {
    /// Sources found (files, archive members).
    pub files: usize,
    /// Sources skipped because their size and mtime were unchanged since the last run.
    pub files_unchanged: usize,
    /// Turns parsed from the changed sources.
    pub turns: usize,
    pub chunks_added: usize,
    /// Chunks of the parsed sources that were already stored.
    pub chunks_skipped: usize,
    /// Distinct texts embedded: fewer than `chunks_added` when texts repeat (an identical text embeds once
    /// per run and its vector is reused).
    pub texts_embedded: usize,
    pub bad_lines: Vec<BadLine>,
    /// Sources that could not be read at all (each with its error); the rest of the run goes on.
    pub unreadable: Vec<(PathBuf, String)>,
    pub seconds: f64,
}

/// Progress of the embedding step: chunks embedded so far out of the chunks queued so far.
pub type IndexProgress<'a> = &'a (dyn Fn(usize, usize) + Sync);

/// The state of one run between sources.
struct Run<'a> {
    engine: &'a Engine,
    progress: IndexProgress<'a>,
    report: IndexReport,
    /// Ids of the stored chunks and of those queued in this run.
    seen: HashSet<u64>,
    /// New chunks with their BM25 context, waiting for embedding.
    pending: Vec<(Chunk, String)>,
    queued: usize,
    vectors: VectorCache,
}

impl Run<'_> {
    fn add(&mut self, parsed: ParsedFile) -> Result<()> {
        self.report.turns += parsed.turns.len();
        self.report.bad_lines.extend(parsed.bad_lines);
        let chunks: Vec<Chunk> = parsed.turns.iter().flat_map(chunk_turn).collect();
        // Contexts come from whole parsed conversations, before the chunks already stored are dropped.
        let contexts = turn_contexts(&chunks);
        for c in chunks {
            if self.seen.insert(id_key(&c.id)) {
                let context = contexts.of(&c);
                self.pending.push((c, context));
                self.queued += 1;
            } else {
                self.report.chunks_skipped += 1;
            }
        }
        if self.pending.len() >= APPEND_BATCH {
            self.flush()?;
        }
        Ok(())
    }

    /// Embeds and appends the waiting chunks, in batches of `APPEND_BATCH`.
    fn flush(&mut self) -> Result<()> {
        let spec = self.engine.models.embedder.spec();
        for batch in std::mem::take(&mut self.pending).chunks(APPEND_BATCH) {
            let texts: Vec<&str> = batch.iter().map(|(c, _)| c.text.as_str()).collect();
            let (done, queued, progress) = (self.report.chunks_added, self.queued, self.progress);
            let embedded = self.vectors.embed(&self.engine.models.embedder, &texts, &|d| progress(done + d, queued))?;
            let rows: Vec<StoredChunk> =
                batch.iter().zip(embedded).map(|((c, context), v)| StoredChunk::new(c.clone(), v, context.clone())).collect();
            block_on(self.engine.memory.append(&rows, spec.dim, &spec.stamp()))?;
            self.report.chunks_added += batch.len();
        }
        Ok(())
    }
}

impl Engine {
    /// Indexes a `.funes.jsonl` file, or every one under a directory; files unchanged since the last run are
    /// not read.
    pub fn index(&self, path: &Path, progress: IndexProgress) -> Result<IndexReport> {
        let files = collect_files(path)?;
        let keyed: Vec<(String, Option<String>, PathBuf)> = files
            .into_iter()
            .map(|f| (f.canonicalize().unwrap_or_else(|_| f.clone()).to_string_lossy().to_string(), signature(&f), f))
            .collect();
        let pairs: Vec<(String, String)> = keyed.iter().filter_map(|(k, s, _)| s.clone().map(|s| (k.clone(), s))).collect();
        let unchanged: HashSet<String> = self.unchanged(&pairs)?.into_iter().zip(pairs).filter(|(u, _)| *u).map(|(_, (k, _))| k).collect();
        let skipped = unchanged.len();
        let sources = keyed
            .into_iter()
            .filter(|(k, _, _)| !unchanged.contains(k))
            .map(|(key, signature, f)| Ok(Source { key, signature, content: SourceContent::File(f) }));
        self.index_sources(sources, skipped, progress)
    }

    /// Which (key, signature) pairs are unchanged since the last run: a caller skips those without reading
    /// them. None is, in a memory without data (it must not trust the stamps of data it lost).
    pub fn unchanged(&self, pairs: &[(String, String)]) -> Result<Vec<bool>> {
        if block_on(self.memory.store().count(&Filter::default()))? == 0 {
            return Ok(vec![false; pairs.len()]);
        }
        let state = IndexState::load(self.home.state_dir());
        Ok(pairs.iter().map(|(k, s)| state.files.get(k) == Some(s)).collect())
    }

    /// Indexes sources as they come (the iterator may be lazy: an adapter reading an export). An error from
    /// the iterator ends the run with that error; what was committed before stays.
    pub fn index_sources(
        &self,
        sources: impl IntoIterator<Item = Result<Source>>,
        files_unchanged: usize,
        progress: IndexProgress,
    ) -> Result<IndexReport> {
        let started = Instant::now();
        let mark = RunMark::now();
        let _lock = self.lock_for_writing()?;
        self.check_model()?;
        let store = self.memory.store();
        let empty = block_on(store.count(&Filter::default()))? == 0;
        let mut state = if empty { IndexState::default() } else { IndexState::load(self.home.state_dir()) };
        let seen = if empty { HashSet::new() } else { block_on(store.ids())? };
        let report = IndexReport { files_unchanged, ..Default::default() };
        let mut run = Run { engine: self, progress, report, seen, pending: Vec::new(), queued: 0, vectors: VectorCache::default() };
        let mut keys = HashSet::new();
        let mut stamps = Vec::new();
        for source in sources {
            let source = source?;
            keys.insert(source.key.clone());
            let parsed = match source.content {
                SourceContent::File(path) => match parse_file(&path) {
                    Ok(parsed) => parsed,
                    Err(e) => {
                        run.report.unreadable.push((path, e.to_string()));
                        continue;
                    }
                },
                SourceContent::Lines { lines, bad } => {
                    let place = PathBuf::from(&source.key);
                    let mut parsed = parse_lines(&place, lines.iter().map(|(n, l)| (*n, l.as_str())));
                    let adapter_bad = bad.into_iter().map(|(line, reason)| BadLine { file: place.clone(), line, reason });
                    parsed.bad_lines.extend(adapter_bad);
                    parsed.bad_lines.sort_by_key(|b| b.line);
                    parsed
                }
            };
            run.add(parsed)?;
            if let Some(sig) = source.signature {
                stamps.push((source.key, sig));
            }
        }
        run.flush()?;
        let mut report = run.report;
        report.texts_embedded = run.vectors.embedded;
        // The run's caches (up to `REUSE_MAX_TEXTS` vectors, every id seen) go before the refresh, which
        // builds indexes over the whole memory and is a long run's peak.
        drop((run.vectors, run.seen));
        mark.release_if_grown();
        if report.chunks_added > 0 || block_on(store.needs_index())? {
            block_on(self.memory.refresh_indexes(false))?;
        }
        report.files = files_unchanged + keys.len();
        state.files.extend(stamps);
        state.save(self.home.state_dir())?;
        // What a large run and its refresh freed goes back now rather than staying in the allocator's arenas;
        // a service's run for a few conversations keeps it for the next run (`heap`).
        mark.release_if_grown();
        report.seconds = started.elapsed().as_secs_f64();
        Ok(report)
    }

    /// Gives a memory written before a column was added (`store::schema::ADDED_COLUMNS`) that column, as nulls:
    /// a commit that writes no data, so the memory's schema is this build's before anything appends to it.
    pub(super) fn add_missing_columns(&self) -> Result<()> {
        let store = self.memory.store();
        if block_on(store.missing_columns())?.is_empty() {
            return Ok(());
        }
        let _lock = self.lock_for_writing()?;
        let missing = block_on(store.missing_columns())?; // another process may have added them meanwhile
        if !missing.is_empty() {
            block_on(store.add_null_columns(&missing))?;
        }
        Ok(())
    }

    /// Rewrites the `fts` column of a memory whose stored analyzer version is not this build's, from the stored
    /// text and with the stored vectors (nothing is embedded), in one commit, so BM25 never mixes the tokens
    /// of two analyzers. Returns the number of chunks re-tokenised (0 when the memory was current).
    pub(super) fn retokenize_if_older(&self) -> Result<usize> {
        let store = self.memory.store();
        if block_on(store.analyzer_version())?.is_none_or(|v| v == ANALYZER_VERSION) {
            return Ok(0);
        }
        let _lock = self.lock_for_writing()?;
        // Another process may have done it while we waited for the lock.
        let (Some(version), Some((stamp, dim))) = (block_on(store.analyzer_version())?, block_on(store.model_stamp())?) else {
            return Ok(0);
        };
        if version == ANALYZER_VERSION {
            return Ok(0);
        }
        block_on(self.memory.retokenize(&stamp, dim))
    }

    /// Re-embeds every stored chunk with the loaded embedder, from the text already stored (no source files
    /// needed), and replaces the dataset in one commit. The way out of a model mismatch.
    pub(super) fn rebuild_in_place(&self, progress: IndexProgress) -> Result<usize> {
        let _lock = self.lock_for_writing()?;
        let rows = block_on(self.memory.store().scan(&Filter::default(), ROW_COLUMNS))?;
        let texts: Vec<&str> = rows.iter().map(|r| r.chunk.text.as_str()).collect();
        let total = texts.len();
        let vectors = VectorCache::default().embed(&self.models.embedder, &texts, &|d| progress(d, total))?;
        let contexts = turn_contexts(rows.iter().map(|r| &r.chunk));
        let rows: Vec<StoredChunk> =
            rows.iter().zip(vectors).map(|(r, v)| StoredChunk { vector: v, context: contexts.of(&r.chunk), ..r.clone() }).collect();
        let spec = self.models.embedder.spec();
        if !rows.is_empty() {
            block_on(self.memory.overwrite(&rows, spec.dim, &spec.stamp()))?;
            block_on(self.memory.prune(std::time::Duration::ZERO, true))?;
        }
        Ok(total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_text_vector_is_kept_once_the_text_comes_back() {
        let mut cache = VectorCache::default();
        cache.remember("ok, thanks", vec![1.0]);
        assert!(cache.vectors.is_empty(), "a text seen once keeps only its hash");
        cache.remember("ok, thanks", vec![1.0]);
        assert_eq!(cache.vectors.get("ok, thanks"), Some(&vec![1.0]));
        let long = "x".repeat(REUSE_MAX_CHARS + 1);
        cache.remember(&long, vec![2.0]);
        cache.remember(&long, vec![2.0]);
        assert!(!cache.vectors.contains_key(&long), "long texts are shared only within their batch");
    }
}
