//! The recall pipeline: dense ‖ BM25 (‖ identifier matches) → reciprocal-rank fusion → relevance floor →
//! (rerank) → recency → top k → neighbouring turns. The kernels (`fusion`) are pure; `legs` runs the search
//! legs on the resident copy or as Lance queries; this file only orchestrates.

pub mod fusion;
mod legs;
mod neighbors;
mod turns;

pub use neighbors::{preview, Neighbor};
pub use turns::{assemble_turns, TurnText};

use std::collections::HashSet;

use crate::analyzer::id_terms;
use crate::chunk::Chunk;
use crate::error::{Error, Result};
use crate::inference::{sigmoid, Models};
use crate::memory::Memory;
use crate::options::{Legs as LegChoice, RecallOptions, RERANK_AUTO_POOL_FACTOR, RRF_K};
use crate::record::StoredChunk;
use crate::store::Filter;
use fusion::{identifier_ranking, recency_factor, rrf_fuse, Ranked};
use legs::{lance_legs, resident_legs, Legs};

#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub chunk: Chunk,
    /// The final score: fused rank score (or the reranker's probability) times the recency factor.
    pub score: f64,
    /// Cosine similarity of the passage to the query: what the relevance floor compares.
    pub similarity: f32,
    /// Whether the cross-encoder ranked this hit.
    pub reranked: bool,
    pub neighbors: Vec<Neighbor>,
}

pub async fn recall(memory: &Memory, models: &Models, query: &str, opts: &RecallOptions) -> Result<Vec<Hit>> {
    let query = query.trim();
    if query.is_empty() {
        return Err(Error::InvalidInput("the query is empty".into()));
    }
    if opts.k == 0 {
        return Ok(Vec::new());
    }
    let candidates = opts.candidates.max(opts.k);
    let use_rerank = match (opts.rerank, &models.reranker) {
        (Some(true), None) => return Err(Error::InvalidInput("rerank was asked for but no reranker is loaded".into())),
        (Some(force), Some(_)) => force,
        (None, Some(_)) => candidates >= RERANK_AUTO_POOL_FACTOR * opts.k,
        (_, None) => false,
    };
    let filter = Filter::recall(opts);
    let resident = if opts.exact { None } else { memory.ensure_resident().await? };
    let legs = match resident {
        Some(r) => {
            let qv = models.embedder.embed_query(query)?;
            resident_legs(&r, query, &qv, candidates, &filter, opts.legs)
        }
        None => match lance_legs(memory.store(), models, query, candidates, filter, opts).await? {
            Some(l) => l,
            None => return Ok(Vec::new()),
        },
    };
    let mut pool = fuse(legs, query, candidates, opts);

    if use_rerank && !pool.is_empty() {
        let passages: Vec<&str> = pool.iter().map(|(r, _, _)| r.chunk.text.as_str()).collect();
        let logits = models.rerank_scores(query, &passages)?;
        for ((_, s, _), l) in pool.iter_mut().zip(logits) {
            *s = sigmoid(l) as f64;
        }
    }
    let now = opts.now_ms.unwrap_or_else(|| chrono::Utc::now().timestamp_millis());
    for (r, s, _) in pool.iter_mut() {
        *s *= recency_factor(r.ts_ms, now, opts.half_life_days);
    }
    pool.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.chunk.id.cmp(&b.0.chunk.id)));
    pool.truncate(opts.k);

    let mut hits: Vec<Hit> = pool
        .into_iter()
        .map(|(r, score, similarity)| Hit { chunk: r.chunk, score, similarity, reranked: use_rerank, neighbors: Vec::new() })
        .collect();
    if opts.neighbors > 0 && !hits.is_empty() {
        neighbors::attach(memory, &mut hits, opts.neighbors).await?;
    }
    Ok(hits)
}

/// The legs' rankings (plus the identifier leg) fused into one pool of at most `candidates` passages, each
/// with its fused score and its similarity to the query, after the relevance floor and the identifier guard.
fn fuse(legs: Legs, query: &str, candidates: usize, opts: &RecallOptions) -> Vec<(StoredChunk, f64, f32)> {
    let Legs { dense, bm25, mut rows } = legs;
    // Each candidate once (a passage found by both legs is analysed once), BM25's order first.
    let mut listed = HashSet::new();
    let terms: Vec<(String, Vec<String>)> = bm25
        .ids
        .iter()
        .chain(&dense.ids)
        .filter(|id| listed.insert(id.as_str()))
        .filter_map(|id| rows.get(id).map(|c| (id.clone(), id_terms(&c.row.chunk.text))))
        .collect();
    let wanted = id_terms(query);
    // The identifier leg is lexical evidence: it runs with BM25, not in a dense-only comparison.
    let id_ids = if opts.legs == LegChoice::Dense { Vec::new() } else { identifier_ranking(&wanted, &terms) };
    let id_leg = Ranked::positional(id_ids);
    let mut pool: Vec<(StoredChunk, f64, f32)> = rrf_fuse(&[(&dense, opts.dense_weight), (&bm25, 1.0), (&id_leg, 1.0)], RRF_K)
        .into_iter()
        .take(candidates)
        .filter_map(|(id, s)| rows.remove(&id).map(|c| (c.row, s, c.similarity)))
        .filter(|(_, _, sim)| opts.min_similarity.is_none_or(|floor| *sim >= floor))
        .collect();
    if opts.identifier_guard && !wanted.is_empty() {
        let named: HashSet<&str> = id_leg.ids.iter().map(String::as_str).collect();
        pool.retain(|(r, _, _)| named.contains(r.chunk.id.as_str()));
    }
    pool
}
