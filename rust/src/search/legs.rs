//! The search legs of one recall, answered by the resident copy (a warm engine) or by Lance queries (the
//! one-shot path and `exact`). Both return the same `Legs`: each leg's list by chunk id, and the passages.

use std::collections::HashMap;

use crate::analyzer::{fts_query, id_terms};
use crate::error::{Error, Result};
use crate::inference::Models;
use crate::options::{Legs as LegChoice, RecallOptions};
use crate::record::{RowView, StoredChunk};
use crate::resident::{code_query, Resident};
use crate::store::{Filter, LegResult, Store};

use super::fusion::identifier_share;
use super::question::Question;
use super::steps::{Clock, Step};

/// A passage found by a leg, with what fusion weighs: its similarity to the query (also what the relevance
/// floor compares), its BM25 score, and the share of the query's identifiers it names.
pub(super) struct Candidate {
    pub row: StoredChunk,
    pub similarity: f32,
    pub bm25: f32,
    pub identifiers: f64,
}

/// What the search legs found: each leg's list by chunk id, best first, and every listed passage once.
pub(super) struct Legs {
    pub dense: Vec<String>,
    pub bm25: Vec<String>,
    pub rows: HashMap<String, Candidate>,
}

impl Legs {
    /// The scores each leg gave its own list (cosines, BM25 scores), for the legs' scales.
    pub fn scores(&self) -> (Vec<f32>, Vec<f32>) {
        let of = |ids: &[String], f: &dyn Fn(&Candidate) -> f32| ids.iter().filter_map(|id| self.rows.get(id)).map(f).collect();
        (of(&self.dense, &|c| c.similarity), of(&self.bm25, &|c| c.bm25))
    }
}

/// Both legs over the resident copy (an exhaustive int8 scan and an in-memory BM25, on this thread), each
/// `depth` deep; every passage of the union gets both scores exactly, and its share of the identifiers the
/// question names.
pub(super) fn resident_legs(
    r: &Resident,
    q: &Question,
    qv: &[f32],
    depth: usize,
    filter: &Filter,
    which: LegChoice,
    clock: &mut Clock,
) -> Legs {
    let cq = code_query(qv);
    let admit = |row: &RowView| filter.admits(row);
    let filtered = !filter.is_empty();
    let terms = q.weighted_terms(); // none for a dense-only question (`Question::analyse`)
    let dense = if which != LegChoice::Bm25 { r.dense(&cq, depth, filtered.then_some(&admit as _)) } else { Vec::new() };
    clock.lap(Step::Dense);
    let bm25 = if which != LegChoice::Dense { r.bm25(&terms, depth, &admit) } else { Vec::new() };
    clock.lap(Step::Bm25);
    let mut union: Vec<usize> = Vec::with_capacity(dense.len() + bm25.len());
    let mut seen = std::collections::HashSet::new();
    union.extend(bm25.iter().chain(&dense).map(|&(i, _)| i).filter(|&i| seen.insert(i)));
    let bm25_of = if which != LegChoice::Dense { r.bm25_scores(&terms, &union) } else { vec![0.0; union.len()] };
    let rows = union
        .iter()
        .zip(bm25_of)
        .map(|(&i, bm25)| {
            let row = r.row(i);
            let identifiers = identifier_share(&q.wanted, r.identifiers(i));
            (row.chunk.id.clone(), Candidate { similarity: r.cosine(i, &cq), bm25, identifiers, row })
        })
        .collect();
    let ids = |found: &[(usize, f32)]| found.iter().map(|&(i, _)| r.id(i).to_owned()).collect();
    let legs = Legs { dense: ids(&dense), bm25: ids(&bm25), rows };
    clock.lap(Step::Union);
    legs
}

/// Both legs as Lance queries, each its own task on the runtime's workers. The BM25 leg starts first, so it
/// overlaps the query embedding, which is CPU work on the calling thread. `None`: the memory has no data.
/// Lance gives no BM25 score for a passage outside its BM25 list: 0 when the list is shorter than `depth`
/// (every matching passage is in it), else the list's lowest score (an upper bound of the true one).
pub(super) async fn lance_legs(
    store: &Store,
    models: &Models,
    q: &Question<'_>,
    depth: usize,
    filter: Filter,
    opts: &RecallOptions,
) -> Result<Option<Legs>> {
    let Some(searcher) = store.searcher().await? else { return Ok(None) };
    let join = |e: tokio::task::JoinError| Error::storage(format!("search task failed: {e}"));
    let bm25_task = (opts.legs != LegChoice::Dense)
        .then(|| tokio::spawn(searcher.clone().bm25(fts_query(q.text), q.near_words(), depth, filter.clone())));
    let qv = models.embedder.embed_query(q.text)?;
    let dense_task = (opts.legs != LegChoice::Bm25).then(|| tokio::spawn(searcher.dense(qv.clone(), depth, filter, opts.exact)));
    let dense = match dense_task {
        Some(t) => t.await.map_err(join)??,
        None => LegResult::default(),
    };
    let bm25 = match bm25_task {
        Some(t) => t.await.map_err(join)??,
        None => LegResult::default(),
    };
    let unlisted = if bm25.rows.len() < depth { 0.0 } else { bm25.scores.iter().copied().fold(f32::INFINITY, f32::min) };
    let ids = |leg: &LegResult| leg.rows.iter().map(|r| r.chunk.id.clone()).collect();
    let (dense_ids, bm25_ids) = (ids(&dense), ids(&bm25));
    let mut rows = HashMap::new();
    let scored = bm25.rows.into_iter().zip(bm25.scores.into_iter().map(|s| if s.is_nan() { 0.0 } else { s }));
    for (r, bm25) in scored.chain(dense.rows.into_iter().map(|r| (r, unlisted))) {
        let similarity = cosine(&qv, &r.vector);
        let identifiers = if q.wanted.is_empty() { 0.0 } else { identifier_share(&q.wanted, &id_terms(&r.chunk.text)) };
        rows.entry(r.chunk.id.clone()).or_insert(Candidate { row: r, similarity, bm25, identifiers });
    }
    Ok(Some(Legs { dense: dense_ids, bm25: bm25_ids, rows }))
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
