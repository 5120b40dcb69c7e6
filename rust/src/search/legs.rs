//! The search legs of one recall, answered by the resident copy (a warm engine) or by Lance queries (the
//! one-shot path and `exact`). Both return the same `Legs`: each leg's list by chunk id, and the passages.

use std::collections::HashMap;

use crate::analyzer::{fts_query, id_terms};
use crate::error::{Error, Result};
use crate::inference::Models;
use crate::options::{Legs as LegChoice, RecallOptions};
use crate::record::{RowView, StoredChunk};
use crate::resident::{code_query, CodedQuery, Resident};
use crate::store::{Filter, LegResult, Store};

use super::fusion::identifier_share;
use super::proximity::pair_weights;
use super::question::Question;
use super::steps::{Clock, Step};

/// A passage a leg found: a row of the resident copy, read in place and copied out only if fusion keeps it
/// (a recall looks at about 200 passages and keeps 30: copying them all out was a third of its search), or
/// a row Lance returned.
pub(super) enum Row<'r> {
    Resident(&'r Resident, usize),
    Stored(Box<StoredChunk>),
}

impl Row<'_> {
    pub fn id(&self) -> &str {
        match self {
            Row::Resident(r, i) => r.id(*i),
            Row::Stored(s) => &s.chunk.id,
        }
    }

    pub fn text(&self) -> &str {
        match self {
            Row::Resident(r, i) => r.text(*i),
            Row::Stored(s) => &s.chunk.text,
        }
    }

    pub fn ts(&self) -> &str {
        match self {
            Row::Resident(r, i) => r.ts(*i),
            Row::Stored(s) => &s.chunk.ts,
        }
    }

    pub fn into_stored(self) -> StoredChunk {
        match self {
            Row::Resident(r, i) => r.row(i),
            Row::Stored(s) => *s,
        }
    }
}

/// A passage found by a leg, with what fusion weighs: its similarity to the query (also what the relevance
/// floor compares), its BM25 score, and the share of the query's identifiers it names.
pub(super) struct Candidate<'r> {
    pub row: Row<'r>,
    pub similarity: f32,
    pub bm25: f32,
    pub identifiers: f64,
}

/// What the search legs found: every passage once, and each leg's list (positions in `rows`), best first.
pub(super) struct Legs<'r> {
    pub dense: Vec<usize>,
    pub bm25: Vec<usize>,
    pub rows: Vec<Candidate<'r>>,
    /// The turns beside a passage, scored as the legs score theirs (the resident copy's; none on Lance's path).
    pub beside: Option<Beside<'r>>,
    /// The weight of each of the question's word pairs (`proximity::pair_weights`); empty: equal (Lance's
    /// path has no document frequencies at hand).
    pub pair_weights: Vec<f64>,
}

impl Legs<'_> {
    /// The scores each leg gave its own list (cosines, BM25 scores), for the legs' scales.
    pub fn scores(&self) -> (Vec<f32>, Vec<f32>) {
        (self.dense.iter().map(|&p| self.rows[p].similarity).collect(), self.bm25.iter().map(|&p| self.rows[p].bm25).collect())
    }
}

/// Finds and scores the turns beside a passage of the resident copy (`adjacent`): both legs' scores and the
/// identifiers, as `resident_legs` gives its passages, for the rows the recall's filter admits.
pub(super) struct Beside<'r> {
    r: &'r Resident,
    cq: CodedQuery,
    terms: Vec<(String, f32)>,
    wanted: Vec<String>,
    filter: Filter,
}

impl<'r> Beside<'r> {
    /// The turns just before and after `row`'s, one passage of each (of a turn cut in several, the one most
    /// like the question), with their scores.
    pub fn of(&self, row: &Row<'r>) -> Vec<Candidate<'r>> {
        let Row::Resident(_, i) = row else { return Vec::new() };
        let mut best: HashMap<i64, (usize, f32)> = HashMap::new();
        for j in self.r.adjacent(*i) {
            if !self.filter.is_empty() && !self.filter.admits(&self.r.view(j)) {
                continue;
            }
            let cosine = self.r.cosine(j, &self.cq);
            let seq = self.r.seq(j);
            if best.get(&seq).is_none_or(|&(_, c)| cosine > c) {
                best.insert(seq, (j, cosine));
            }
        }
        let mut rows: Vec<usize> = best.into_values().map(|(j, _)| j).collect();
        rows.sort_unstable();
        resident_candidates(self.r, &self.cq, &self.terms, &self.wanted, &rows)
    }
}

/// Rows of the resident copy as candidates: each one's cosine to the query, its BM25 score for `terms` (0
/// where it holds none of them, as for a dense-only question, which has none) and its share of the
/// identifiers `wanted`.
fn resident_candidates<'r>(
    r: &'r Resident,
    cq: &CodedQuery,
    terms: &[(String, f32)],
    wanted: &[String],
    rows: &[usize],
) -> Vec<Candidate<'r>> {
    rows.iter()
        .zip(r.bm25_scores(terms, rows))
        .map(|(&i, bm25)| Candidate {
            similarity: r.cosine(i, cq),
            bm25,
            identifiers: identifier_share(wanted, r.identifiers(i)),
            row: Row::Resident(r, i),
        })
        .collect()
}

/// Both legs over the resident copy (an exhaustive int8 scan and an in-memory BM25, on this thread), each
/// `depth` deep; every passage of the union gets both scores exactly, and its share of the identifiers the
/// question names.
pub(super) fn resident_legs<'r>(
    r: &'r Resident,
    q: &Question,
    qv: &[f32],
    depth: usize,
    filter: &Filter,
    which: LegChoice,
    clock: &mut Clock,
) -> Legs<'r> {
    let cq = code_query(qv);
    let admit = |row: &RowView| filter.admits(row);
    let filtered = !filter.is_empty();
    let terms = q.weighted_terms(); // none for a dense-only question (`Question::analyse`)
    let dense = if which != LegChoice::Bm25 { r.dense(&cq, depth, filtered.then_some(&admit as _)) } else { Vec::new() };
    clock.lap(Step::Dense);
    let bm25 = if which != LegChoice::Dense { r.bm25(&terms, depth, filtered.then_some(&admit as _)) } else { Vec::new() };
    clock.lap(Step::Bm25);
    let mut union: Vec<usize> = Vec::with_capacity(dense.len() + bm25.len());
    let mut position = HashMap::with_capacity(dense.len() + bm25.len());
    for &(i, _) in bm25.iter().chain(&dense) {
        position.entry(i).or_insert_with(|| {
            union.push(i);
            union.len() - 1
        });
    }
    let rows = resident_candidates(r, &cq, &terms, &q.wanted, &union);
    let positions = |found: &[(usize, f32)]| found.iter().map(|(i, _)| position[i]).collect();
    let pair_weights = pair_weights(&q.pairs, |t| r.term_idf(t));
    let beside = (which == LegChoice::Hybrid).then(|| Beside { r, cq, terms, wanted: q.wanted.clone(), filter: filter.clone() });
    let legs = Legs { dense: positions(&dense), bm25: positions(&bm25), rows, pair_weights, beside };
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
    vector: Option<Vec<f32>>,
    depth: usize,
    filter: Filter,
    opts: &RecallOptions,
) -> Result<Option<Legs<'static>>> {
    let Some(searcher) = store.searcher().await? else { return Ok(None) };
    let join = |e: tokio::task::JoinError| Error::storage(format!("search task failed: {e}"));
    let bm25_task = (opts.legs != LegChoice::Dense)
        .then(|| tokio::spawn(searcher.clone().bm25(fts_query(q.text), q.near_words(), depth, filter.clone())));
    let qv = match vector {
        Some(v) => v,
        None => models.embedder.embed_query(q.text)?,
    };
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
    let (dense_ids, bm25_ids): (Vec<String>, Vec<String>) =
        (dense.rows.iter().map(|r| r.chunk.id.clone()).collect(), bm25.rows.iter().map(|r| r.chunk.id.clone()).collect());
    let mut rows: Vec<Candidate<'static>> = Vec::new();
    let mut position: HashMap<String, usize> = HashMap::new();
    let scored = bm25.rows.into_iter().zip(bm25.scores.into_iter().map(|s| if s.is_nan() { 0.0 } else { s }));
    for (r, bm25) in scored.chain(dense.rows.into_iter().map(|r| (r, unlisted))) {
        if position.contains_key(&r.chunk.id) {
            continue;
        }
        let similarity = cosine(&qv, &r.vector);
        let identifiers = if q.wanted.is_empty() { 0.0 } else { identifier_share(&q.wanted, &id_terms(&r.chunk.text)) };
        position.insert(r.chunk.id.clone(), rows.len());
        rows.push(Candidate { row: Row::Stored(Box::new(r)), similarity, bm25, identifiers });
    }
    let positions = |ids: &[String]| ids.iter().map(|id| position[id]).collect();
    Ok(Some(Legs { dense: positions(&dense_ids), bm25: positions(&bm25_ids), rows, pair_weights: Vec::new(), beside: None }))
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
