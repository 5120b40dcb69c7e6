//! Sentence embeddings: tokenise, run the encoder, pool (mean or CLS, as the model's config says), and
//! L2-normalise when the model does.

use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::batcher::Batcher;
use super::onnx::{OnnxModel, Tokens};
use super::spec::{ModelKind, ModelSpec, Pooling};
use crate::error::{Error, Result};
use crate::script::Scripts;

/// Texts per forward pass when indexing. Texts are sorted by token count first, so a batch pads little.
pub const EMBED_BATCH: usize = 32;

/// A cap on one indexing batch's attention: texts × tokens² (the size of one head's attention scores).
/// Attention grows with the square of the length, and what a batch allocated stayed with the process
/// (ONNX Runtime's arena, since turned off in `onnx.rs`, and the allocator's free lists): 32 texts of 256
/// tokens left a warm proxy at 1 GB after indexing 1,200 chunks of code. Under this cap 32 texts of up to
/// 64 tokens still make one batch, 256 tokens go two at a time. Measured on 1,200 chunks of code (MiniLM,
/// 2 cores, with the arena; RSS after / seconds): no cap 1,000 MB; 32 × 128² 445 MB / 7.6 s; this cap
/// 270 MB / 7.0 s; 32 × 32² 236 MB / 9.9 s (one long text per run). Short texts (200 characters) take 3.1 s
/// at every cap.
pub const MAX_BATCH_ATTENTION: usize = 32 * 64 * 64;

/// Threads for one query's embedding (capped at the machine's cores). One: ONNX Runtime's second thread
/// either spins between operators (a recall cost 13.3 ms of CPU for 6.7 ms of wall, 10,000 conversations)
/// or, told not to, waits to be woken for each (slower than one thread: 2.85 ms against 2.5). Concurrent
/// queries get their parallelism from going together (`batcher`) and from the pool.
pub const DEFAULT_QUERY_THREADS: usize = 1;

/// A text's position in the input and its vector (what each worker of `embed_many` returns).
type Indexed = (usize, Vec<f32>);

pub struct Embedder {
    model: OnnxModel,
    /// Queries asked for at once, embedded in one pass.
    batcher: Batcher,
    /// The scripts its vocabulary is written in: how much of a text it can read (`script`).
    scripts: Scripts,
}

impl Embedder {
    /// Loads a converted model directory with a pool of `pool` one-thread sessions and a session with
    /// `query_threads` threads for single queries (see `onnx`).
    pub fn load(dir: &Path, pool: usize, query_threads: usize) -> Result<Self> {
        let spec = ModelSpec::read(dir)?;
        if spec.kind != ModelKind::Embedder {
            return Err(Error::model(format!("{} is a {:?}, not an embedder", dir.display(), spec.kind)));
        }
        let model = OnnxModel::load(dir, spec, pool, 1, query_threads.clamp(1, super::cores()))?;
        let scripts = model.scripts();
        Ok(Self { model, scripts, batcher: Batcher::default() })
    }

    /// The scripts the model reads.
    pub fn scripts(&self) -> &Scripts {
        &self.scripts
    }

    /// The share of a text's letters the model reads (1 for a text without letters).
    pub fn share_read(&self, text: &str) -> f32 {
        self.scripts.share_read(text)
    }

    pub fn spec(&self) -> &ModelSpec {
        &self.model.spec
    }

    pub fn dim(&self) -> usize {
        self.model.spec.dim
    }

    /// Embeds a query, with the model's query prefix, on the latency session when it is free: in one pass
    /// with the queries other threads ask for meanwhile (`batcher`) when the model's vectors do not depend on
    /// their batch-mates, else alone.
    pub fn embed_query(&self, query: &str) -> Result<Vec<f32>> {
        let tokens = self.model.encode(&format!("{}{query}", self.model.spec.query_prefix))?;
        if !self.model.spec.batch_independent() {
            return Ok(self.embed_encoded(&[&tokens], true)?.remove(0));
        }
        let fits = |taken: &[&Tokens], next: &Tokens| {
            let longest = taken.iter().map(|t| t.len()).max().unwrap_or(0).max(next.len());
            (taken.len() + 1) * longest * longest <= MAX_BATCH_ATTENTION
        };
        self.batcher.embed(tokens, fits, |batch| self.embed_encoded(batch, true))
    }

    /// Embeds many queries at once (benchmarks, comparisons), with the model's query prefix.
    pub fn embed_queries(&self, queries: &[&str], progress: &(dyn Fn(usize) + Sync)) -> Result<Vec<Vec<f32>>> {
        self.embed_prefixed(&self.model.spec.query_prefix, queries, progress, Priority::Normal)
    }

    /// Embeds queries as `embed_query` would one at a time: in batches when the model's vectors do not
    /// depend on their batch-mates, else each alone, so that every query gets the vector it gets alone.
    pub fn embed_queries_as_alone(&self, queries: &[&str]) -> Result<Vec<Vec<f32>>> {
        if self.model.spec.batch_independent() {
            return self.embed_queries(queries, &|_| {});
        }
        queries.iter().map(|q| self.embed_query(q)).collect()
    }

    /// Embeds passages to store, with the model's passage prefix: sorted by length into batches, the
    /// batches spread over the session pool. `progress` is called with the number of texts done so far.
    /// The passages' batches run on threads of lower priority (`Priority::Background`): an index run takes
    /// what recalls leave of the cores.
    pub fn embed_passages(&self, texts: &[&str], progress: &(dyn Fn(usize) + Sync)) -> Result<Vec<Vec<f32>>> {
        self.embed_prefixed(&self.model.spec.passage_prefix, texts, progress, Priority::Background)
    }

    fn embed_prefixed(&self, prefix: &str, texts: &[&str], progress: &(dyn Fn(usize) + Sync), priority: Priority) -> Result<Vec<Vec<f32>>> {
        if prefix.is_empty() {
            return self.embed_many(texts, progress, priority);
        }
        let prefixed: Vec<String> = texts.iter().map(|t| format!("{prefix}{t}")).collect();
        self.embed_many(&prefixed.iter().map(String::as_str).collect::<Vec<_>>(), progress, priority)
    }

    /// Embeds tokenised texts as one padded batch (`queries`: on the latency session).
    fn embed_encoded(&self, encodings: &[&Tokens], queries: bool) -> Result<Vec<Vec<f32>>> {
        if encodings.is_empty() {
            return Ok(Vec::new());
        }
        let (shape, data) = self.model.run_on(encodings, queries)?;
        let (b, s, h) = match shape[..] {
            [b, s, h] => (b, s, h),
            _ => return Err(Error::model(format!("expected [batch, seq, hidden] output, got {shape:?}"))),
        };
        if h != self.dim() || b != encodings.len() {
            return Err(Error::model(format!("output shape {shape:?} does not match {} texts of dim {}", encodings.len(), self.dim())));
        }
        let mut out = Vec::with_capacity(b);
        for (r, enc) in encodings.iter().enumerate() {
            let rows = &data[r * s * h..(r + 1) * s * h];
            let mut v = match self.model.spec.pooling {
                Pooling::Cls => rows[..h].to_vec(),
                Pooling::Mean => {
                    let n = enc.len().max(1);
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

    /// Embeds many texts as given: tokenised, sorted by token count into batches (`batches`), the batches
    /// spread over the session pool on scoped threads. `progress` is called with the number of texts done.
    fn embed_many(&self, texts: &[&str], progress: &(dyn Fn(usize) + Sync), priority: Priority) -> Result<Vec<Vec<f32>>> {
        let workers = self.model.pool_size().min(texts.len().div_ceil(EMBED_BATCH)).max(1);
        let share = texts.len().div_ceil(workers);
        let mut encoded: Vec<(usize, Tokens)> = on_workers(workers, priority, |w| {
            let mine = (w * share).min(texts.len())..((w + 1) * share).min(texts.len());
            mine.map(|i| Ok((i, self.model.encode(texts[i])?))).collect()
        })?;
        encoded.sort_by_key(|(_, e)| e.len());
        let (order, encodings): (Vec<usize>, Vec<Tokens>) = encoded.into_iter().unzip();
        let batches = batches(&encodings.iter().map(Tokens::len).collect::<Vec<_>>());
        let done = AtomicUsize::new(0);
        let next = AtomicUsize::new(0);
        let workers = self.model.pool_size().min(batches.len()).max(1);
        let embedded: Vec<Indexed> = on_workers(workers, priority, |_| {
            let mut mine = Vec::new();
            while let Some(range) = batches.get(next.fetch_add(1, Ordering::Relaxed)) {
                let vecs = self.embed_encoded(&encodings[range.clone()].iter().collect::<Vec<_>>(), false)?;
                mine.extend(order[range.clone()].iter().copied().zip(vecs));
                progress(done.fetch_add(range.len(), Ordering::Relaxed) + range.len());
            }
            Ok(mine)
        })?;
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        for (i, v) in embedded {
            out[i] = v;
        }
        Ok(out)
    }
}

/// Cuts texts sorted by token count into consecutive batches of at most `EMBED_BATCH` texts whose padded
/// attention (texts × longest²) stays within `MAX_BATCH_ATTENTION`; a text longer than that goes alone.
fn batches(lengths: &[usize]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, &len) in lengths.iter().enumerate() {
        let n = i + 1 - start;
        if n > 1 && (n > EMBED_BATCH || n * len * len > MAX_BATCH_ATTENTION) {
            out.push(start..i);
            start = i;
        }
    }
    if start < lengths.len() {
        out.push(start..lengths.len());
    }
    out
}

/// Runs `work(w)` for each worker `w` in `0..workers` on scoped threads and concatenates what they return
/// (in worker order); the first error wins.
fn on_workers<T: Send>(workers: usize, priority: Priority, work: impl Fn(usize) -> Result<Vec<T>> + Sync) -> Result<Vec<T>> {
    let results: Vec<Result<Vec<T>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let work = &work;
                scope.spawn(move || {
                    if priority == Priority::Background {
                        lower_this_thread();
                    }
                    work(w)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(Error::model("embedding thread panicked")))).collect()
    });
    let mut out = Vec::new();
    for r in results {
        out.extend(r?);
    }
    Ok(out)
}

/// Whose work a batch is: a recall's (`Normal`) or an index run's (`Background`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Priority {
    Normal,
    Background,
}

/// The nice value of an index run's embedding threads: CFS gives a thread of nice 0 about nine times the CPU
/// of one at 10, so a recall arriving while an index run keeps both cores busy gets a core almost at once
/// (another tenant's recall during a 200 KB turn's index run: up to 80 ms on a quiet 2-core machine, 95-203
/// ms on a busy one, against about 5 alone), and an index run still gets every cycle no recall wants.
const BACKGROUND_NICE: i32 = 10;

/// Lowers the calling thread's scheduling priority to `BACKGROUND_NICE` (Linux sets nice per thread; nothing
/// elsewhere, and a refusal changes nothing but the priority).
fn lower_this_thread() {
    #[cfg(target_os = "linux")]
    // SAFETY: gettid and setpriority take plain integers and only read them.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, BACKGROUND_NICE);
    }
}

pub fn l2_normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_texts_fill_a_batch_and_long_ones_go_in_small_batches() {
        let mut lengths = vec![20; 70];
        lengths.extend([200; 4]); // 3 × 200² is within the cap, 4 × 200² is not
        lengths.extend([400; 2]); // 400² alone is over the cap: one per batch, never none
        assert_eq!(batches(&lengths), [0..32, 32..64, 64..70, 70..73, 73..74, 74..75, 75..76]);
    }

    #[test]
    fn no_texts_no_batches() {
        assert!(batches(&[]).is_empty());
    }
}
