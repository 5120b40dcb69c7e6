//! The search legs of one recall, answered by the resident copy (a warm engine) or by Lance queries (the
//! one-shot path and `exact`). Both return the same `Legs`: each leg's ranking by chunk id, and the rows.

use std::collections::HashMap;

use super::fusion::Ranked;
use crate::analyzer::fts_query;
use crate::error::{Error, Result};
use crate::inference::Models;
use crate::options::{Legs as LegChoice, RecallOptions};
use crate::record::StoredChunk;
use crate::resident::{code_query, Resident};
use crate::store::{Filter, LegResult, Store};

/// A passage found by a leg, with its similarity to the query (what the relevance floor compares).
pub(super) struct Candidate {
    pub row: StoredChunk,
    pub similarity: f32,
}

/// What the search legs found: each leg's ranking by chunk id, and the rows behind them.
pub(super) struct Legs {
    pub dense: Ranked,
    pub bm25: Ranked,
    pub rows: HashMap<String, Candidate>,
}

/// Both legs over the resident copy: an exhaustive int8 scan and an in-memory BM25, on this thread.
pub(super) fn resident_legs(r: &Resident, query: &str, qv: &[f32], candidates: usize, filter: &Filter, which: LegChoice) -> Legs {
    let cq = code_query(qv);
    let admit = |row: &StoredChunk| filter.admits(row);
    let filtered = !filter.is_empty();
    let dense = if which != LegChoice::Bm25 { r.dense(&cq, candidates, filtered.then_some(&admit as _)) } else { Vec::new() };
    let bm25 = if which != LegChoice::Dense { r.bm25(query, candidates, &admit) } else { Vec::new() };
    let mut rows = HashMap::new();
    let mut ranked = |found: &[(usize, f32)]| -> Ranked {
        let ids = found
            .iter()
            .map(|&(i, _)| {
                let row = r.row(i);
                rows.entry(row.chunk.id.clone()).or_insert_with(|| Candidate { row: row.clone(), similarity: r.cosine(i, &cq) });
                row.chunk.id.clone()
            })
            .collect();
        Ranked::by_score(ids, &found.iter().map(|&(_, s)| s).collect::<Vec<_>>())
    };
    let dense = ranked(&dense);
    let bm25 = ranked(&bm25);
    Legs { dense, bm25, rows }
}

/// Both legs as Lance queries, each its own task on the runtime's workers. The BM25 leg starts first, so it
/// overlaps the query embedding, which is CPU work on the calling thread. `None`: the memory has no data.
pub(super) async fn lance_legs(
    store: &Store,
    models: &Models,
    query: &str,
    candidates: usize,
    filter: Filter,
    opts: &RecallOptions,
) -> Result<Option<Legs>> {
    let Some(searcher) = store.searcher().await? else { return Ok(None) };
    let join = |e: tokio::task::JoinError| Error::storage(format!("search task failed: {e}"));
    let bm25_task =
        (opts.legs != LegChoice::Dense).then(|| tokio::spawn(searcher.clone().bm25(fts_query(query), candidates, filter.clone())));
    let qv = models.embedder.embed_query(query)?;
    let dense_task = (opts.legs != LegChoice::Bm25).then(|| tokio::spawn(searcher.dense(qv.clone(), candidates, filter, opts.exact)));
    let dense = match dense_task {
        Some(t) => t.await.map_err(join)??,
        None => LegResult::default(),
    };
    let bm25 = match bm25_task {
        Some(t) => t.await.map_err(join)??,
        None => LegResult::default(),
    };
    let ranked = |leg: &LegResult| Ranked::by_score(leg.rows.iter().map(|r| r.chunk.id.clone()).collect(), &leg.scores);
    let (dense_ranked, bm25_ranked) = (ranked(&dense), ranked(&bm25));
    let mut rows = HashMap::new();
    for r in bm25.rows.into_iter().chain(dense.rows) {
        let similarity = cosine(&qv, &r.vector);
        rows.entry(r.chunk.id.clone()).or_insert(Candidate { row: r, similarity });
    }
    Ok(Some(Legs { dense: dense_ranked, bm25: bm25_ranked, rows }))
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let (mut dot, mut na, mut nb) = (0f32, 0f32, 0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_of_parallel_vectors_is_one() {
        assert!((cosine(&[1.0, 2.0], &[2.0, 4.0]) - 1.0).abs() < 1e-6);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
    }
}
