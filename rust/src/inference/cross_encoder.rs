//! Cross-encoder reranking: (query, passage) pairs scored in bounded batches; one raw logit each.

use std::path::Path;

use super::onnx::OnnxModel;
use super::spec::{ModelKind, ModelSpec};
use crate::error::{Error, Result};

/// Pairs per forward pass. One: a batch is padded to its longest pair, and with passages of 300-600
/// characters the padding costs more than batching saves (pool of 12, MiniLM-sized, two threads: 290 ms in
/// batches of 16, 220 ms one pair at a time; int8 180 ms and 125 ms). The cost of a rerank is then the sum
/// of its pairs' lengths, each bounded by the model's `max_length`.
pub const RERANK_BATCH: usize = 1;

pub struct CrossEncoder {
    model: OnnxModel,
}

impl CrossEncoder {
    /// Loads one session whose operators use `threads` threads (see `onnx.rs` for why one session).
    pub fn load(dir: &Path, threads: usize) -> Result<Self> {
        let spec = ModelSpec::read(dir)?;
        if spec.kind != ModelKind::CrossEncoder {
            return Err(Error::model(format!("{} is a {:?}, not a cross-encoder", dir.display(), spec.kind)));
        }
        Ok(Self { model: OnnxModel::load(dir, spec, 1, threads, 0)? })
    }

    pub fn spec(&self) -> &ModelSpec {
        &self.model.spec
    }

    /// Raw logits, one per passage, in input order.
    pub fn score(&self, query: &str, passages: &[&str]) -> Result<Vec<f32>> {
        let mut out = Vec::with_capacity(passages.len());
        for batch in passages.chunks(RERANK_BATCH) {
            let encodings = batch.iter().map(|p| self.model.encode_pair(query, p)).collect::<Result<Vec<_>>>()?;
            let (shape, data) = self.model.run(&encodings)?;
            if shape.first() != Some(&batch.len()) || data.len() < batch.len() {
                return Err(Error::model(format!("unexpected cross-encoder output shape {shape:?}")));
            }
            let per_row = data.len() / batch.len();
            out.extend((0..batch.len()).map(|r| data[r * per_row]));
        }
        Ok(out)
    }
}

pub fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}
