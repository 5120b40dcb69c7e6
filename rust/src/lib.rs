//! funes_py: an in-process recall engine over one user's earlier conversations.
//!
//! It answers "what did we decide about N-11?" with the dated, verbatim passages that were really said, or
//! with nothing. No LLM, no summaries: parse → chunk → embed → store, then hybrid search on the way out.
//!
//! # Layers and data flow
//! ```text
//! write:  .funes.jsonl bytes → ingest (Turns) → chunk (Chunks) → inference (embed) → store (append + index)
//! read:   query → inference (embed) → search [bm25 ‖ dense → fuse → (rerank) → recency → neighbours] → Hits
//!         (legs and neighbours answered by `resident`, the warm engine's copy in RAM, or by Lance queries)
//! ```
//! Dependencies point down only: `py` → `engine` → {`search`, `store`, `inference`, `chunk`, `ingest`} →
//! {`resident`, `analyzer`} → {`options`, `error`}. Nothing below `engine` knows about Python.
//!
//! | module      | job                                                                   | pure? |
//! |-------------|-----------------------------------------------------------------------|-------|
//! | `ingest`    | `.funes.jsonl` lines → `Turn`s; bad lines reported with their place    | yes (+ file walk) |
//! | `chunk`     | render blocks, split ~1,200 chars, stable ids, stitch splits back       | yes   |
//! | `analyzer`  | what the BM25 leg sees: identifier glue for `MT-4471`-style tokens      | yes   |
//! | `inference` | the embedder (and the reranker hook); the only module naming `ort`      | no    |
//! | `store`     | the Lance dataset; the only module naming `lancedb` or Arrow           | no    |
//! | `resident`  | a warm memory's copy in RAM: int8 vectors, BM25 postings, sessions     | yes   |
//! | `search`    | rank fusion and recency (pure kernels) and the recall pipeline          | mixed |
//! | `engine`    | the facade: decides what a call does, owns the lock and the runtime     | no    |
//! | `py`        | the PyO3 binding (feature `python`): extract, release the GIL, call, convert | no |
//!
//! # Where a new function goes
//! Names Lance or Arrow → `store`. Names ort or tokenizers → `inference`. Decides what to do about a memory
//! (lock, skip, rebuild, refuse) → `engine`. A pure transformation of text or ranks → its own small file
//! (`chunk`, `analyzer`, `search::fusion`) with unit tests that need no disk and no model.
//! Options live in `options` as structs with named default constants; every surface (CLI, MCP, HTTP) builds
//! them, so no surface repeats a magic number.

pub mod analyzer;
pub mod chunk;
pub mod engine;
pub mod error;
pub mod inference;
pub mod ingest;
pub mod options;
pub mod resident;
pub mod runtime;
pub mod search;
pub mod store;

#[cfg(feature = "python")]
mod py;

pub use engine::Engine;
pub use error::{Error, Result};
pub use options::{EngineOptions, RecallOptions};
