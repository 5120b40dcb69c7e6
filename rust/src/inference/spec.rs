//! `funes_model.json`: what the converter knows about a model that the runtime needs.

use serde::Deserialize;
use std::path::Path;

use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelKind {
    Embedder,
    CrossEncoder,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pooling {
    Mean,
    Cls,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ModelSpec {
    /// Stamped into each memory: "sentence-transformers/all-MiniLM-L6-v2", "BAAI/bge-small-en-v1.5", …
    pub name: String,
    pub kind: ModelKind,
    /// "bert" or "xlm-roberta"; informational here (position ids are computed inside the graph).
    #[serde(default)]
    pub family: String,
    pub dim: usize,
    #[serde(default = "default_pooling")]
    pub pooling: Pooling,
    #[serde(default)]
    pub normalize: bool,
    pub max_length: usize,
    /// Whether the graph takes `token_type_ids` (BERT does, XLM-RoBERTa does not).
    #[serde(default)]
    pub token_type_ids: bool,
    /// A hash of the weights, so a memory can tell two models of the same name apart.
    #[serde(default)]
    pub fingerprint: String,
    /// Text put before a query and before a stored passage when they are embedded. Models trained with
    /// such markers (e5: `query: ` / `passage: `) score much worse without them; others have none.
    #[serde(default)]
    pub query_prefix: String,
    #[serde(default)]
    pub passage_prefix: String,
    /// The model this one was quantised from (`models quantize`): its activations are quantised per pass.
    #[serde(default)]
    pub quantized_from: Option<String>,
    /// Whether its graph quantises activations as it runs (`DynamicQuantizeLinear`), so that texts run in one
    /// pass share a scale; the converter records it for the exports it adopts.
    #[serde(default)]
    pub dynamic_quantization: bool,
}

fn default_pooling() -> Pooling {
    Pooling::Cls
}

impl ModelSpec {
    /// Whether a text's vector is the same whatever it is batched with (up to float rounding): not for a
    /// model that quantises activations per pass (`quantized_from`, `dynamic_quantization`).
    pub fn batch_independent(&self) -> bool {
        self.quantized_from.is_none() && !self.dynamic_quantization
    }

    pub fn read(dir: &Path) -> Result<Self> {
        let path = dir.join("funes_model.json");
        let bytes = std::fs::read(&path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Error::PathNotFound { what: "model description", path: path.clone() },
            _ => Error::io(format!("reading {}", path.display()), e),
        })?;
        serde_json::from_slice(&bytes).map_err(|e| Error::model(format!("{}: {e}", path.display())))
    }

    /// "name@fingerprint": what a memory stamps and compares.
    pub fn stamp(&self) -> String {
        if self.fingerprint.is_empty() {
            self.name.clone()
        } else {
            format!("{}@{}", self.name, self.fingerprint)
        }
    }
}
