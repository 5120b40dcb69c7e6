//! funes_py: an in-process recall engine over one user's earlier conversations.
//!
//! It answers "what did we decide about N-11?" with the dated, verbatim passages that were really said, or
//! with nothing. No LLM, no summaries: parse → chunk → embed → store, then hybrid search on the way out.
//!
//! # Layers and data flow
//! ```text
//! write:  sources (.funes.jsonl, adapters' lines) → ingest (Turns) → chunk (Chunks) → inference (embed)
//!         → memory (store append + resident copy) → store (Lance commit + index refresh)
//! read:   query → inference (embed) → search [bm25 ‖ dense → fuse → (rerank) → recency → neighbours] → Hits
//!         (legs and neighbours answered by `resident`, the warm engine's copy in RAM, or by `store` queries)
//! ```
//! Dependencies point down only: a module imports modules of a lower layer, never of its own layer or
//! above. `py` imports only `engine` (which re-exports every type the binding converts) and `error`. Nothing
//! below `engine` knows about Python, but for `records`' macro, which makes a result struct its own Python
//! class behind the `python` feature. A *pure* file does no I/O and reads no environment: it names no
//! `std::fs`, `std::net`, `std::process`, `std::env`, tokio, Lance or ort outside its tests (scoped threads
//! that split a computation are allowed), and imports only pure files. In the table's last column, `yes`
//! means every file of the module, `yes but X` all but X, `mixed: X, Y` only those. `layers_test` checks all
//! of it on the source (whole `use` items and inline paths, `super::` resolved) and fails on a module
//! missing from the table.
//!
//! | layer | module      | job                                                                 | pure? |
//! |-------|-------------|---------------------------------------------------------------------|-------|
//! | 8     | `py`        | the PyO3 binding (feature `python`): extract, release the GIL, call, convert | no |
//! | 7     | `engine`    | the facade: decides what a call does, owns the lock and the runtime  | no    |
//! | 6     | `search`    | the recall pipeline; rank fusion and recency as pure kernels         | mixed: `adjacent`, `fusion`, `proximity`, `repeats`, `turns` |
//! | 5     | `memory`    | a memory: the dataset and its resident copy, kept in step            | no    |
//! | 4     | `store`     | the Lance dataset; the only module naming `lancedb`/Arrow or writing SQL | no |
//! | 4     | `resident`  | a warm memory's copy in RAM: packed rows, int8 codes, BM25 postings | yes |
//! | 4     | `inference` | the embedder and the reranker; the only module naming `ort`/`tokenizers` | no |
//! | 3     | `record`    | a chunk as stored (`StoredChunk`): fields, time, vector, BM25 context | yes   |
//! | 3     | `thesaurus` | a model's near words, which BM25 also asks for (weighted)           | yes   |
//! | 2     | `chunk`     | render blocks, split ~1,200 chars, stable ids, stitch splits back    | yes   |
//! | 2     | `analyzer`  | what the BM25 leg sees: identifier glue for `MT-4471`-style tokens   | yes   |
//! | 1     | `ingest`    | `.funes.jsonl` lines → `Turn`s; bad lines reported with their place  | yes but `files` |
//! | 1     | `options`   | the options of every call, with named default constants              | yes   |
//! | 1     | `home`      | where a memory lives: a local path or `s3://bucket/prefix`           | yes   |
//! | 1     | `script`    | the writing system of a letter; which scripts a model's vocabulary reads | yes |
//! | 1     | `time`      | timestamps and date bounds                                           | yes   |
//! | 0     | `records`   | `result_record!`: a result struct that, with `python`, is its Python class | yes |
//! | 0     | `error`     | one error type, one variant per Python exception class               | yes   |
//! | 0     | `runtime`   | the one tokio runtime (fork-aware)                                   | no    |
//! | 0     | `heap`      | gives the C allocator's freed memory back between a run's phases     | no    |
//!
//! # Where a new function goes
//! Names Lance or Arrow, or writes SQL → `store`. Names ort or tokenizers → `inference`. Keeps the resident
//! copy in step with the dataset → `memory`. Decides what to do about a memory (lock, skip, rebuild,
//! refuse) → `engine`. A pure transformation of text or ranks → its own small file (`chunk`, `analyzer`,
//! `search::fusion`) with unit tests that need no disk and no model. Options live in `options` as structs
//! with named default constants; every surface (CLI, MCP, HTTP) builds them, so no surface repeats a number.
//!
//! # Recipes: the files a change touches
//! * **A recall option** (e.g. the `harnesses` filter): its field and default in `options::RecallOptions`;
//!   where it acts (a filter: `store::Filter`, its SQL and its predicate side by side; a ranking knob:
//!   `search`); its extraction in `py/options.rs`; its field in `python/funes_py/options.py`
//!   (`RecallOptions`, the dataclass every surface builds). A surface that exposes it adds one flag or
//!   argument (`python/funes_py/cli/memory.py`, `python/funes_py/server/mcp_tool.py`).
//! * **An MCP tool**: `python/funes_py/server/mcp_tool.py` (its schema and handler, calling `Engine`), its
//!   rendering in `python/funes_py/render.py`, its settings in `python/funes_py/config.py`.
//! * **A model family**: the converter (`python/funes_py/convert/`: `spec.py` reads its config, `graph.py`
//!   builds its ONNX graph, `reference.py` is its numpy twin, `registry.py` names it), and `inference::spec`
//!   if the runtime needs a new field of `funes_model.json`.
//! * **An input format**: one adapter in `python/funes_py/sources/` (its detection and its lines), listed
//!   in `sources/registry.py`; the engine takes its lines through `engine::Source`.

pub mod analyzer;
pub mod chunk;
pub mod engine;
pub mod error;
pub mod heap;
pub mod home;
pub mod inference;
pub mod ingest;
pub mod memory;
pub mod options;
pub mod record;
mod records;
pub mod resident;
pub mod runtime;
pub mod script;
pub mod search;
pub mod store;
pub mod thesaurus;
pub mod time;

#[cfg(feature = "python")]
mod py;

#[cfg(test)]
mod layers_test;

pub use engine::Engine;
pub use error::{Error, Result};
pub use options::{EngineOptions, RecallOptions};
