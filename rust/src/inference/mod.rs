//! Models: the sentence embedder and the cross-encoder reranker, run by ONNX Runtime. The only module that
//! names `ort` or `tokenizers`.
//!
//! A model is a directory written by the Python converter (`funes_py.convert`): `model.onnx`,
//! `tokenizer.json` and `funes_model.json` (see [`ModelSpec`]). ONNX Runtime itself is not linked: its
//! shared library, shipped by the `onnxruntime` PyPI wheel, is loaded once per process by [`init_ort`].
//! Models load once per process and are shared by every open memory (`Arc`).

mod batcher;
mod cross_encoder;
mod embedder;
mod onnx;
mod spec;

pub use cross_encoder::{sigmoid, CrossEncoder};
pub use embedder::{Embedder, DEFAULT_QUERY_THREADS};
pub use spec::{ModelKind, ModelSpec, Pooling};

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::error::{Error, Result};
use crate::script::Scripts;
use crate::thesaurus::{self, Thesaurus};

static ORT_INIT: OnceLock<std::result::Result<PathBuf, String>> = OnceLock::new();

/// The machine's cores (1 if unknown): the cap on a session's threads.
pub fn cores() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

/// Loads ONNX Runtime from `dylib` (or `$ORT_DYLIB_PATH`) once per process. Later calls return the path that
/// was loaded; a different path cannot replace it (the library stays loaded for the process's life).
pub fn init_ort(dylib: Option<&Path>) -> Result<PathBuf> {
    let r = ORT_INIT.get_or_init(|| {
        let path = match dylib {
            Some(p) => p.to_path_buf(),
            None => match std::env::var_os("ORT_DYLIB_PATH") {
                Some(p) => PathBuf::from(p),
                None => {
                    return Err("ONNX Runtime not found: pass the path of libonnxruntime.so or set ORT_DYLIB_PATH \
                                    (the onnxruntime wheel ships it in onnxruntime/capi/)"
                        .to_string())
                }
            },
        };
        if !path.exists() {
            return Err(format!("ONNX Runtime library not found at {}", path.display()));
        }
        let builder = ort::init_from(&path).map_err(|e| format!("loading {}: {e}", path.display()))?;
        builder.with_name("funes_py").commit();
        Ok(path)
    });
    r.clone().map_err(Error::model)
}

/// The scripts the vocabulary of a `tokenizer.json` is written in, without loading its model (to tell
/// which model reads a text before loading one).
pub fn vocabulary_scripts(tokenizer_json: &Path) -> Result<Scripts> {
    let tok =
        tokenizers::Tokenizer::from_file(tokenizer_json).map_err(|e| Error::model(format!("reading {}: {e}", tokenizer_json.display())))?;
    Ok(Scripts::of_vocabulary(tok.get_vocab(false).keys().map(String::as_str)))
}

/// What a recall needs from the loaded models: one embedder, and a reranker if one was given.
pub struct Models {
    pub embedder: Embedder,
    pub reranker: Option<CrossEncoder>,
    /// The embedder's near words (`thesaurus.tsv` beside it); empty when its directory has none.
    pub thesaurus: Thesaurus,
}

impl Models {
    /// Loads converted model directories (see `funes_py.convert`): the embedder with `pool` one-thread
    /// sessions (plus one with `query_threads` threads for single queries), the reranker with one session
    /// using every core.
    pub fn load(embedder_dir: &Path, reranker_dir: Option<&Path>, pool: usize, query_threads: usize) -> Result<Self> {
        let embedder = Embedder::load(embedder_dir, pool, query_threads)?;
        let reranker = reranker_dir.map(|d| CrossEncoder::load(d, cores())).transpose()?;
        let table = embedder_dir.join(thesaurus::FILE);
        let thesaurus = match std::fs::read_to_string(&table) {
            Ok(text) => Thesaurus::parse(&text)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Thesaurus::default(),
            Err(e) => return Err(Error::io(format!("reading {}", table.display()), e)),
        };
        Ok(Self { embedder, reranker, thesaurus })
    }

    /// Raw cross-encoder logits for (query, passage) pairs; an error when no reranker is loaded.
    pub fn rerank_scores(&self, query: &str, passages: &[&str]) -> Result<Vec<f32>> {
        let r = self.reranker.as_ref().ok_or_else(|| Error::InvalidInput("no reranker is loaded".into()))?;
        r.score(query, passages)
    }
}
