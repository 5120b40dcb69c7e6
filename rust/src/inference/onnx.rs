//! One ONNX model with its tokenizer: a small pool of sessions (ONNX Runtime's `run` needs `&mut`). The
//! embedder's pool sessions use one intra-op thread each (indexing and concurrent recalls get their
//! parallelism from several sessions at once), plus one latency session with `query_threads` threads that
//! queries take (`Batcher` runs their passes, one at a time). It exists even with one thread: without it a
//! query waited for a pool session, and while an index run keeps every pool session busy with batches
//! (seconds each for long texts), another tenant's recall waited up to its timeout (10 s) behind them. No
//! session spins between operators (see `DEFAULT_QUERY_THREADS`). The reranker uses one session with threads
//! for every core (a rerank is one big job, and each session holds its own copy of the weights: a base-sized
//! cross-encoder is 1.1 GB).

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use ort::session::builder::GraphOptimizationLevel;
use ort::session::Session;
use ort::value::Tensor;
use tokenizers::{Encoding, Tokenizer, TruncationParams, TruncationStrategy};

use super::spec::ModelSpec;
use crate::error::{Error, Result};
use crate::script::Scripts;

/// Graph rewrites ONNX Runtime would apply that make our models slower. SkipLayerNormFusion turns each
/// residual Add + LayerNormalization into SkipLayerNormalization, whose CPU kernel in onnxruntime 1.32 takes
/// 340 µs on a [139, 384] input where the Add and the LayerNormalization take 70 µs together: 12 of them per
/// MiniLM forward pass cost 15% of an int8 rerank (pool of 12: 163 ms fused, 144 ms not).
const DISABLED_OPTIMIZERS: &str = "SkipLayerNormFusion";

// Why every session runs without ONNX Runtime's CPU arena and memory patterns: an index run feeds batches of
// ever-different shapes (texts × tokens); the arena kept blocks for every shape it had seen, and memory
// patterns planned one more set per shape. Embedding 8,192 texts of mixed lengths (MiniLM int8, 2 cores, RSS
// above the loaded model): with both 260-280 MB, without patterns 230 MB, without either 135-145 MB, at the
// same speed (33.5 s against 34.7 s); a query embedding and a rerank take the same time. Indexing a 64 MB
// ChatGPT export (43,000 chunks): 577 MB with them, 456 MB without, before the index refresh. That is with
// the C allocator's arenas capped (`funes_py.malloc`, as the CLI and both servers do); uncapped, the blocks
// the arena no longer keeps scatter over per-thread malloc arenas and the process grew larger than before.

pub(super) struct OnnxModel {
    pub spec: ModelSpec,
    tokenizer: Tokenizer,
    sessions: Vec<Mutex<Session>>,
    /// For single texts (queries): never queued behind a batch, and with more threads when asked for.
    latency: Option<Mutex<Session>>,
    next: AtomicUsize,
    pad_id: u32,
    output: String,
}

impl OnnxModel {
    /// `latency_threads` > 0 adds the latency session with that many threads.
    pub fn load(dir: &Path, spec: ModelSpec, pool: usize, intra_threads: usize, latency_threads: usize) -> Result<Self> {
        super::init_ort(None)?;
        let onnx = dir.join("model.onnx");
        let tok = dir.join("tokenizer.json");
        for p in [&onnx, &tok] {
            if !p.exists() {
                return Err(Error::PathNotFound { what: "model file", path: p.clone() });
            }
        }
        let mut tokenizer = Tokenizer::from_file(&tok).map_err(|e| tokenizer_error(format!("reading {}", tok.display()), e))?;
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: spec.max_length,
                strategy: TruncationStrategy::LongestFirst,
                ..Default::default()
            }))
            .map_err(|e| tokenizer_error("setting truncation", e))?;
        tokenizer.with_padding(None);
        let pad_id = ["[PAD]", "<pad>"].iter().find_map(|t| tokenizer.token_to_id(t)).unwrap_or(0);
        // `reuse`: the latency session keeps ONNX Runtime's arena and memory patterns (see `latency` below).
        let session = |threads: usize, reuse: bool| -> Result<Session> {
            Ok(Session::builder()?
                .with_optimization_level(GraphOptimizationLevel::Level3)
                .map_err(|e| Error::model(e.to_string()))?
                .with_disabled_optimizers(DISABLED_OPTIMIZERS)
                .map_err(|e| Error::model(e.to_string()))?
                .with_intra_threads(threads.max(1))
                .map_err(|e| Error::model(e.to_string()))?
                // A worker that spins after its part of a run burns a core meant for other callers: with
                // spinning, one caller's recall (two threads per query) cost 13.3 ms of CPU for 6.7 ms of wall.
                .with_intra_op_spinning(false)
                .map_err(|e| Error::model(e.to_string()))?
                // No arena and no memory patterns for batches: see the note above `OnnxModel`.
                .with_execution_providers([ort::ep::CPU::default().with_arena_allocator(reuse).build()])
                .map_err(|e| Error::model(e.to_string()))?
                .with_memory_pattern(reuse)
                .map_err(|e| Error::model(e.to_string()))?
                .commit_from_file(&onnx)?)
        };
        let sessions = (0..pool.max(1)).map(|_| session(intra_threads, false).map(Mutex::new)).collect::<Result<Vec<_>>>()?;
        // The latency session runs single queries only: a few shapes, none larger than one text, so what its
        // arena keeps is bounded by the longest query, and reusing it spares every query its allocations.
        let latency = if latency_threads > 0 { Some(Mutex::new(session(latency_threads, true)?)) } else { None };
        let output = sessions[0].lock().unwrap().outputs().first().map(|o| o.name().to_string()).unwrap_or_default();
        Ok(Self { spec, tokenizer, sessions, latency, next: AtomicUsize::new(0), pad_id, output })
    }

    /// The scripts the model's vocabulary is written in (`script::Scripts::of_vocabulary`).
    pub fn scripts(&self) -> Scripts {
        let vocab = self.tokenizer.get_vocab(false);
        Scripts::of_vocabulary(vocab.keys().map(String::as_str))
    }

    pub fn pool_size(&self) -> usize {
        self.sessions.len()
    }

    pub fn encode(&self, text: &str) -> Result<Tokens> {
        self.tokenizer.encode_fast(text, true).map(Tokens::from).map_err(|e| tokenizer_error("tokenizing", e))
    }

    pub fn encode_pair(&self, a: &str, b: &str) -> Result<Tokens> {
        self.tokenizer.encode_fast((a, b), true).map(Tokens::from).map_err(|e| tokenizer_error("tokenizing a pair", e))
    }

    /// Runs a padded batch; returns the first output as (shape, data).
    pub fn run(&self, encodings: &[Tokens]) -> Result<(Vec<usize>, Vec<f32>)> {
        self.run_on(&encodings.iter().collect::<Vec<_>>(), encodings.len() == 1)
    }

    /// Runs a padded batch of queries on the latency session (`queries`: true), or, a batch of passages, on a
    /// free pool session. A batch of queries comes from `Batcher`, whose one running pass holds the latency
    /// session: it never waits behind an index run's batches.
    pub fn run_on(&self, encodings: &[&Tokens], queries: bool) -> Result<(Vec<usize>, Vec<f32>)> {
        let b = encodings.len();
        let s = encodings.iter().map(|t| t.len()).max().unwrap_or(0).max(1);
        let mut ids = vec![self.pad_id as i64; b * s];
        let mut mask = vec![0i64; b * s];
        let mut types = vec![0i64; b * s];
        for (r, e) in encodings.iter().enumerate() {
            for (c, (&id, &t)) in e.ids.iter().zip(&e.type_ids).enumerate() {
                ids[r * s + c] = id as i64;
                mask[r * s + c] = 1;
                types[r * s + c] = t as i64;
            }
        }
        let shape = [b, s];
        let mut inputs = ort::inputs![
            "input_ids" => Tensor::from_array((shape, ids))?,
            "attention_mask" => Tensor::from_array((shape, mask))?,
        ];
        if self.spec.token_type_ids {
            inputs.push(("token_type_ids".into(), Tensor::from_array((shape, types))?.into()));
        }
        // Queries take the latency session if it is free; otherwise a free pool session, else queue on the next
        // in turn.
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        let n = self.sessions.len();
        let mut guard = queries
            .then(|| self.latency.as_ref().and_then(|l| l.try_lock().ok()))
            .flatten()
            .or_else(|| (0..n).find_map(|i| self.sessions[(start + i) % n].try_lock().ok()))
            .unwrap_or_else(|| self.sessions[start % n].lock().unwrap_or_else(|p| p.into_inner()));
        let outputs = guard.run(inputs)?;
        let (oshape, data) = outputs[self.output.as_str()].try_extract_tensor::<f32>()?;
        Ok((oshape.iter().map(|&d| d as usize).collect(), data.to_vec()))
    }
}

/// What the model reads of a tokenised text: its token ids and their segment (type) ids, 8 bytes a token.
/// A tokenizer's `Encoding` also keeps every token's string, offsets, word ids and masks, and the truncated
/// rest as further encodings: about 100 bytes a token, 100 MB for an index run's batch of 4,096 chunks
/// tokenised ahead of their forward passes.
#[derive(Debug, Clone)]
pub struct Tokens {
    pub ids: Vec<u32>,
    pub type_ids: Vec<u32>,
}

impl Tokens {
    pub fn len(&self) -> usize {
        self.ids.len()
    }
}

impl From<Encoding> for Tokens {
    fn from(e: Encoding) -> Self {
        Self { ids: e.get_ids().to_vec(), type_ids: e.get_type_ids().to_vec() }
    }
}

/// A tokenizer failure, with the tokenizer's own error kept as the source.
fn tokenizer_error(context: impl Into<String>, e: tokenizers::Error) -> Error {
    Error::Model { message: context.into(), source: Some(e) }
}

impl From<ort::Error> for Error {
    fn from(e: ort::Error) -> Self {
        Error::Model { message: e.to_string(), source: Some(Box::new(e)) }
    }
}
