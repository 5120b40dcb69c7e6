//! An index run: files → turns → new chunks only → embeddings → one append per batch → index refresh.
//! Idempotent: chunk ids are coordinates, so a resent conversation adds only its new turns and an unchanged
//! directory adds nothing. A crash mid-run leaves every committed batch in place and the next run picks up
//! the rest (the ids already stored are skipped).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::lock::{WriterLock, LOCK_WAIT};
use super::state::{signature, IndexState};
use super::Engine;
use crate::chunk::{chunk_turn, turn_contexts};
use crate::error::Result;
use crate::inference::Embedder;
use crate::ingest::{collect_files, parse_file, BadLine};
use crate::runtime::block_on;
use crate::search::fusion::parse_ts_ms;
use crate::store::{StoredChunk, ROW_COLUMNS};

/// Chunks embedded and committed together: bounds memory and the work a crash can lose.
pub const APPEND_BATCH: usize = 4_096;

/// Texts up to this length are remembered across batches of a run (repeats are short: acknowledgements,
/// greetings, boilerplate); longer ones are shared only within their batch.
const REUSE_MAX_CHARS: usize = 400;
/// At most this many remembered vectors per run (about 60 MB at 384 dimensions).
const REUSE_MAX_TEXTS: usize = 40_000;

/// Vectors of the texts embedded in one run. Identical texts (acknowledgements, greetings, repeated tool
/// output: a third of the benchmark history) embed once; the model is deterministic, so a reused vector is
/// the one the text would get.
#[derive(Default)]
struct VectorCache {
    vectors: HashMap<String, Vec<f32>>,
    /// Texts actually run through the model.
    embedded: usize,
}

impl VectorCache {
    /// One vector per text, embedding only the texts not seen before in this run. `progress` counts texts.
    fn embed(&mut self, embedder: &Embedder, texts: &[&str], progress: &(dyn Fn(usize) + Sync)) -> Result<Vec<Vec<f32>>> {
        let mut queued = HashSet::new();
        let todo: Vec<&str> = texts.iter().copied().filter(|t| !self.vectors.contains_key(*t) && queued.insert(*t)).collect();
        let scale = |d: usize| d * texts.len() / todo.len().max(1);
        let fresh: HashMap<&str, Vec<f32>> = todo.iter().copied().zip(embedder.embed_many(&todo, &|d| progress(scale(d)))?).collect();
        self.embedded += todo.len();
        let out = texts.iter().map(|t| self.vectors.get(*t).or_else(|| fresh.get(t)).expect("embedded above").clone()).collect();
        for (t, v) in fresh {
            if t.chars().count() <= REUSE_MAX_CHARS && self.vectors.len() < REUSE_MAX_TEXTS {
                self.vectors.insert(t.to_string(), v);
            }
        }
        Ok(out)
    }
}

#[derive(Debug, Clone, Default)]
pub struct IndexReport {
    /// Files found under the path.
    pub files: usize,
    /// Files skipped because their size and mtime were unchanged since the last run.
    pub files_unchanged: usize,
    /// Turns parsed from the changed files.
    pub turns: usize,
    pub chunks_added: usize,
    /// Chunks of the parsed files that were already stored.
    pub chunks_skipped: usize,
    /// Distinct texts embedded: fewer than `chunks_added` when texts repeat (an identical text embeds once
    /// per run and its vector is reused).
    pub texts_embedded: usize,
    pub bad_lines: Vec<BadLine>,
    /// Files that could not be read at all (each with its error); the rest of the run goes on.
    pub unreadable: Vec<(PathBuf, String)>,
    pub seconds: f64,
}

/// Progress of the embedding step: chunks embedded so far out of the chunks to embed.
pub type IndexProgress<'a> = &'a (dyn Fn(usize, usize) + Sync);

impl Engine {
    pub fn index(&self, path: &Path, progress: IndexProgress) -> Result<IndexReport> {
        let started = Instant::now();
        let files = collect_files(path)?;
        let _lock = WriterLock::acquire(&self.home, LOCK_WAIT)?;
        self.check_model()?;
        let empty = block_on(self.store.count(None))? == 0;
        // A memory that lost its data (deleted, or never written) must not trust the old stamps.
        let mut state = if empty { IndexState::default() } else { IndexState::load(&self.home) };
        let mut report = IndexReport { files: files.len(), ..Default::default() };
        let mut chunks = Vec::new();
        let mut parsed_sigs = Vec::new();
        for f in &files {
            let key = f.canonicalize().unwrap_or_else(|_| f.clone()).to_string_lossy().to_string();
            let sig = signature(f);
            if sig.is_some() && state.files.get(&key) == sig.as_ref() {
                report.files_unchanged += 1;
                continue;
            }
            match parse_file(f) {
                Ok(parsed) => {
                    report.turns += parsed.turns.len();
                    report.bad_lines.extend(parsed.bad_lines);
                    chunks.extend(parsed.turns.iter().flat_map(chunk_turn));
                    if let Some(sig) = sig {
                        parsed_sigs.push((key, sig));
                    }
                }
                Err(e) => report.unreadable.push((f.clone(), e.to_string())),
            }
        }
        // Contexts come from whole parsed conversations, before the chunks already stored are dropped.
        let contexts = turn_contexts(&chunks);
        if !chunks.is_empty() {
            let mut seen: HashSet<String> = if empty { HashSet::new() } else { block_on(self.store.ids())? };
            let before = chunks.len();
            chunks.retain(|c| seen.insert(c.id.clone()));
            report.chunks_skipped = before - chunks.len();
        }
        let total = chunks.len();
        let spec = self.models.embedder.spec();
        let mut done = 0;
        let mut vectors = VectorCache::default();
        for batch in chunks.chunks(APPEND_BATCH) {
            let texts: Vec<&str> = batch.iter().map(|c| c.text.as_str()).collect();
            let embedded = vectors.embed(&self.models.embedder, &texts, &|d| progress(done + d, total))?;
            let rows: Vec<StoredChunk> = batch
                .iter()
                .zip(embedded)
                .map(|(c, v)| StoredChunk {
                    ts_ms: parse_ts_ms(&c.ts),
                    context: contexts.of(c),
                    chunk: c.clone(),
                    vector: v,
                })
                .collect();
            block_on(self.store.append(&rows, spec.dim, &spec.stamp()))?;
            done += batch.len();
            report.chunks_added += batch.len();
        }
        if report.chunks_added > 0 || block_on(self.store.needs_index())? {
            block_on(self.store.refresh_indexes(false))?;
        }
        report.texts_embedded = vectors.embedded;
        state.files.extend(parsed_sigs);
        state.save(&self.home)?;
        report.seconds = started.elapsed().as_secs_f64();
        Ok(report)
    }

    /// Re-embeds every stored chunk with the loaded embedder, from the text already stored (no source files
    /// needed), and replaces the dataset in one commit. The way out of a model mismatch.
    pub fn rebuild(
        home: &Path,
        models: std::sync::Arc<crate::inference::Models>,
        opts: &crate::options::EngineOptions,
        progress: IndexProgress,
    ) -> Result<(Self, usize)> {
        let engine = Self::open_unchecked(home, models, opts)?;
        let _lock = WriterLock::acquire(home, LOCK_WAIT)?;
        let rows = block_on(engine.store.scan(None, ROW_COLUMNS))?;
        let texts: Vec<&str> = rows.iter().map(|r| r.chunk.text.as_str()).collect();
        let total = texts.len();
        let vectors = VectorCache::default().embed(&engine.models.embedder, &texts, &|d| progress(d, total))?;
        let contexts = turn_contexts(rows.iter().map(|r| &r.chunk));
        let rows: Vec<StoredChunk> = rows
            .iter()
            .zip(vectors)
            .map(|(r, v)| StoredChunk {
                vector: v,
                context: contexts.of(&r.chunk),
                ..r.clone()
            })
            .collect();
        let spec = engine.models.embedder.spec();
        if !rows.is_empty() {
            block_on(engine.store.overwrite(&rows, spec.dim, &spec.stamp()))?;
            block_on(engine.store.prune(std::time::Duration::ZERO, true))?;
        }
        Ok((engine, total))
    }
}
