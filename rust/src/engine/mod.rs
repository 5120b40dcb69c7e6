//! The facade: one open memory with the shared models. Decides what each call does (take the writer lock,
//! refuse or rebuild a memory of another model, skip unchanged sources) and delegates the mechanics to
//! `memory`, `search`, `inference`. Every method is synchronous and runs its Lance I/O on the shared
//! runtime, so the binding can call it with the GIL released. The binding imports this module and nothing
//! below it: every type it converts is re-exported here.

mod index;
mod lock;
mod reads;
mod state;

pub use index::{IndexProgress, IndexReport, Source, SourceContent};
pub use lock::{WriterLock, LOCK_WAIT};
pub use reads::{ForgetReport, ScanMatch, SessionInfo, Sketch, Status};

pub use crate::analyzer::ANALYZER_VERSION;
pub use crate::home::Home;
pub use crate::inference::{init_ort, vocabulary_scripts, Models, DEFAULT_QUERY_THREADS};
pub use crate::ingest::BadLine;
pub use crate::options::{
    EngineOptions, Legs, OnModelMismatch, RecallOptions, ANSWER_FLOOR_BASE_ROWS, DEFAULT_CANDIDATES, DEFAULT_DENSE_WEIGHT,
    DEFAULT_GET_WINDOW, DEFAULT_HALF_LIFE_DAYS, DEFAULT_K, DEFAULT_NEIGHBORS, DEFAULT_RESIDENT, NEAR_WORD_MIN_COSINE, NEAR_WORD_WEIGHT,
};
pub use crate::script::{letters_by_script, Scripts};
pub use crate::search::steps::{reset as reset_recall_steps, totals as recall_steps};
pub use crate::search::{Hit, Neighbor, TurnText};
pub use crate::time::parse_bound;

use std::path::PathBuf;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::memory::Memory;
use crate::runtime::block_on;
use crate::search;

/// Where a memory given as text lives: a local path, or an `s3://bucket/prefix` whose lock and index state go
/// under `$FUNES_STATE_DIR` (default `$XDG_STATE_HOME/funes_py/remote`, else `~/.local/state/funes_py/remote`).
pub fn resolve_home(home: &str) -> Result<Home> {
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    let root = env("FUNES_STATE_DIR")
        .or_else(|| env("XDG_STATE_HOME").map(|d| d.join("funes_py/remote")))
        .or_else(|| env("HOME").map(|d| d.join(".local/state/funes_py/remote")))
        .unwrap_or_else(|| std::env::temp_dir().join("funes_py-state"));
    Home::parse(home, &root)
}

/// The model a memory was built with ("name@fingerprint", dimension), read without loading any model:
/// `None` when there is no memory at `home` or it holds no data yet. A caller that names no model opens a
/// memory with its own.
pub fn stored_model(home: &Home) -> Result<Option<(String, usize)>> {
    if let Home::Local(dir) = home {
        if !dir.exists() {
            return Ok(None);
        }
    }
    block_on(async { Memory::open(home, false).await?.store().model_stamp().await })
}

pub struct Engine {
    home: Home,
    memory: Memory,
    models: Arc<Models>,
    /// Set when opening re-embedded a memory of another model (`OnModelMismatch::Rebuild`).
    rebuilt: Option<Rebuilt>,
}

/// What opening re-embedded: the model the memory was built with, and how many chunks.
#[derive(Debug, Clone, PartialEq)]
pub struct Rebuilt {
    pub from_model: String,
    pub chunks: usize,
}

impl Engine {
    /// Opens (or creates) the memory at `home`. A memory built with another embedder is refused with
    /// `Error::ModelMismatch`, which says how to rebuild, or re-embedded, as `opts.on_model_mismatch` says.
    /// A memory whose BM25 texts were made by an older analyzer is re-tokenised first (no embedding).
    pub fn open(home: &Home, models: Arc<Models>, opts: &EngineOptions) -> Result<Self> {
        let engine = Self::open_unchecked(home, models, opts)?;
        match (engine.model_mismatch()?, opts.on_model_mismatch) {
            (None, _) => {
                engine.add_missing_columns()?;
                engine.retokenize_if_older()?;
                Ok(engine)
            }
            (Some(e), OnModelMismatch::Refuse) => Err(e),
            (Some(Error::ModelMismatch { stored, .. }), OnModelMismatch::Rebuild) => {
                let mut engine = engine;
                let chunks = engine.rebuild_in_place(&|_, _| {})?;
                engine.rebuilt = Some(Rebuilt { from_model: stored, chunks });
                Ok(engine)
            }
            (Some(e), OnModelMismatch::Rebuild) => Err(e),
        }
    }

    fn open_unchecked(home: &Home, models: Arc<Models>, opts: &EngineOptions) -> Result<Self> {
        let state = home.state_dir();
        std::fs::create_dir_all(state).map_err(|e| Error::io(format!("creating {}", state.display()), e))?;
        let memory = block_on(Memory::open(home, opts.resident))?;
        Ok(Self { home: home.clone(), memory, models, rebuilt: None })
    }

    /// Re-embeds the memory at `home` with `models` from its stored text, whatever model built it, and
    /// opens it; returns the engine and the number of chunks re-embedded.
    pub fn rebuild(home: &Home, models: Arc<Models>, opts: &EngineOptions, progress: IndexProgress) -> Result<(Self, usize)> {
        let engine = Self::open_unchecked(home, models, opts)?;
        let n = engine.rebuild_in_place(progress)?;
        Ok((engine, n))
    }

    pub fn home(&self) -> &Home {
        &self.home
    }

    pub fn models(&self) -> &Arc<Models> {
        &self.models
    }

    pub fn rebuilt(&self) -> Option<&Rebuilt> {
        self.rebuilt.as_ref()
    }

    /// The mismatch error, if the memory was built with another model than the loaded one.
    fn model_mismatch(&self) -> Result<Option<Error>> {
        let loaded = self.models.embedder.spec();
        let Some((stored, dim)) = block_on(self.memory.store().model_stamp())? else { return Ok(None) };
        if stored == loaded.stamp() && dim == loaded.dim {
            return Ok(None);
        }
        Ok(Some(Error::ModelMismatch {
            stored: if stored.is_empty() { format!("an unknown model ({dim} dimensions)") } else { stored },
            loaded: loaded.stamp(),
            home: self.home.to_string(),
        }))
    }

    fn check_model(&self) -> Result<()> {
        self.model_mismatch()?.map_or(Ok(()), Err)
    }

    /// Takes the memory's writer lock (waiting at most `LOCK_WAIT`, then `Error::Locked`) and brings the
    /// dataset handle to the latest commit, so this writer builds on what the previous one wrote.
    fn lock_for_writing(&self) -> Result<WriterLock> {
        let lock = WriterLock::acquire(self.home.state_dir(), LOCK_WAIT)?;
        block_on(self.memory.store().checkout_latest())?;
        Ok(lock)
    }

    /// Does now what the first recall would: reads the memory into RAM (the resident copy) and runs the
    /// query embedder once. At 700,000 passages that first recall took 13 s against 9 ms for the next; a
    /// server calls this when it opens an engine, so that no user's question waits for it.
    pub fn warm(&self) -> Result<()> {
        drop(block_on(self.memory.ensure_resident())?);
        self.models.embedder.embed_query("warm")?;
        Ok(())
    }

    /// Whether this engine holds its memory in RAM (after `warm` or a recall; false for a memory with no data
    /// yet). Another process's later commit is read in at the next recall, a step as small as the commit.
    pub fn is_warm(&self) -> bool {
        self.memory.resident().is_some()
    }

    pub fn recall(&self, query: &str, opts: &RecallOptions) -> Result<Vec<Hit>> {
        block_on(search::recall(&self.memory, &self.models, query, opts))
    }

    /// `recall` of each query with the same options, their embeddings made in batches first: what a caller
    /// with many questions at once pays less for than for as many recalls.
    pub fn recall_many(&self, queries: &[&str], opts: &RecallOptions) -> Result<Vec<Vec<Hit>>> {
        let vectors = search::embed_questions(&self.models, queries)?;
        queries.iter().zip(vectors).map(|(q, v)| block_on(search::recall_embedded(&self.memory, &self.models, q, Some(v), opts))).collect()
    }
}
