//! Sentence embeddings: tokenise, run the encoder, pool (mean or CLS, as the model's config says), and
//! L2-normalise when the model does.

use std::path::Path;

use super::onnx::OnnxModel;
use super::spec::{ModelKind, ModelSpec, Pooling};
use crate::error::{Error, Result};

/// Texts per forward pass when indexing. Texts are sorted by length first, so a batch pads little.
pub const EMBED_BATCH: usize = 32;

/// Threads for one query's embedding (capped at the machine's cores): 2 gives the lowest latency on an
/// idle machine; a server under concurrent load does better with 1 (`funes-py serve` uses 1).
pub const DEFAULT_QUERY_THREADS: usize = 2;

/// A text's position in the input and its vector (what each worker of `embed_many` returns).
type Indexed = (usize, Vec<f32>);

pub struct Embedder {
    model: OnnxModel,
}

impl Embedder {
    /// Loads a converted model directory with a pool of `pool` one-thread sessions and a session with
    /// `query_threads` threads for single queries (see `onnx`).
    pub fn load(dir: &Path, pool: usize, query_threads: usize) -> Result<Self> {
        let spec = ModelSpec::read(dir)?;
        if spec.kind != ModelKind::Embedder {
            return Err(Error::model(format!("{} is a {:?}, not an embedder", dir.display(), spec.kind)));
        }
        Ok(Self { model: OnnxModel::load(dir, spec, pool, 1, query_threads.clamp(1, super::cores()))? })
    }

    pub fn spec(&self) -> &ModelSpec {
        &self.model.spec
    }

    pub fn dim(&self) -> usize {
        self.model.spec.dim
    }

    /// Embeds a query, with the model's query prefix (on the latency session when it is free).
    pub fn embed_query(&self, query: &str) -> Result<Vec<f32>> {
        let text = format!("{}{query}", self.model.spec.query_prefix);
        Ok(self.embed_batch(&[text.as_str()])?.remove(0))
    }

    /// Embeds many queries at once (benchmarks, comparisons), with the model's query prefix.
    pub fn embed_queries(&self, queries: &[&str], progress: &(dyn Fn(usize) + Sync)) -> Result<Vec<Vec<f32>>> {
        self.embed_prefixed(&self.model.spec.query_prefix, queries, progress)
    }

    /// Embeds passages to store, with the model's passage prefix: sorted by length into batches, the
    /// batches spread over the session pool. `progress` is called with the number of texts done so far.
    pub fn embed_passages(&self, texts: &[&str], progress: &(dyn Fn(usize) + Sync)) -> Result<Vec<Vec<f32>>> {
        self.embed_prefixed(&self.model.spec.passage_prefix, texts, progress)
    }

    fn embed_prefixed(&self, prefix: &str, texts: &[&str], progress: &(dyn Fn(usize) + Sync)) -> Result<Vec<Vec<f32>>> {
        if prefix.is_empty() {
            return self.embed_many(texts, progress);
        }
        let prefixed: Vec<String> = texts.iter().map(|t| format!("{prefix}{t}")).collect();
        self.embed_many(&prefixed.iter().map(String::as_str).collect::<Vec<_>>(), progress)
    }

    /// Embeds one batch (padded to its longest text), as given: no prefix.
    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let encodings = texts.iter().map(|t| self.model.encode(t)).collect::<Result<Vec<_>>>()?;
        let (shape, data) = self.model.run(&encodings)?;
        let (b, s, h) = match shape[..] {
            [b, s, h] => (b, s, h),
            _ => return Err(Error::model(format!("expected [batch, seq, hidden] output, got {shape:?}"))),
        };
        if h != self.dim() || b != texts.len() {
            return Err(Error::model(format!("output shape {shape:?} does not match {} texts of dim {}", texts.len(), self.dim())));
        }
        let mut out = Vec::with_capacity(b);
        for (r, enc) in encodings.iter().enumerate() {
            let rows = &data[r * s * h..(r + 1) * s * h];
            let mut v = match self.model.spec.pooling {
                Pooling::Cls => rows[..h].to_vec(),
                Pooling::Mean => {
                    let n = enc.get_ids().len().max(1);
                    let mut acc = vec![0f32; h];
                    for tok in rows.chunks_exact(h).take(n) {
                        acc.iter_mut().zip(tok).for_each(|(a, x)| *a += x);
                    }
                    acc.iter_mut().for_each(|a| *a /= n as f32);
                    acc
                }
            };
            if self.model.spec.normalize {
                l2_normalize(&mut v);
            }
            out.push(v);
        }
        Ok(out)
    }

    /// Embeds many texts as given: sorted by length into batches, the batches spread over the session pool
    /// on scoped threads. `progress` is called with the number of texts done so far.
    fn embed_many(&self, texts: &[&str], progress: &(dyn Fn(usize) + Sync)) -> Result<Vec<Vec<f32>>> {
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let batches: Vec<&[usize]> = order.chunks(EMBED_BATCH).collect();
        let workers = self.model.pool_size().min(batches.len()).max(1);
        let done = std::sync::atomic::AtomicUsize::new(0);
        let next = std::sync::atomic::AtomicUsize::new(0);
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        let results: Vec<Result<Vec<Indexed>>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..workers)
                .map(|_| {
                    scope.spawn(|| -> Result<Vec<Indexed>> {
                        let mut mine = Vec::new();
                        loop {
                            let b = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let Some(idx) = batches.get(b) else { break };
                            let batch: Vec<&str> = idx.iter().map(|&i| texts[i]).collect();
                            let vecs = self.embed_batch(&batch)?;
                            mine.extend(idx.iter().copied().zip(vecs));
                            let d = done.fetch_add(idx.len(), std::sync::atomic::Ordering::Relaxed) + idx.len();
                            progress(d);
                        }
                        Ok(mine)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(Error::model("embedding thread panicked")))).collect()
        });
        for r in results {
            for (i, v) in r? {
                out[i] = v;
            }
        }
        Ok(out)
    }
}

pub fn l2_normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}
