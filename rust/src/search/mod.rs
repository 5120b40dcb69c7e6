//! The recall pipeline: dense ‖ BM25 → answer floor → score fusion (with identifier and named-day bonuses)
//! → the turns beside the best (`adjacent`) → relevance floor → identifier guard → (rerank) → recency → one
//! copy of each text → top k → neighbouring turns. The kernels (`adjacent`, `fusion`, `repeats`) are pure;
//! `legs` runs the search legs on the resident copy or as Lance queries; this file only orchestrates.

mod adjacent;
pub mod fusion;
mod legs;
mod neighbors;
mod proximity;
mod question;
mod repeats;
pub mod steps;
mod turns;

pub use neighbors::{preview, Neighbor};
pub use turns::{assemble_turns, TurnText};

use std::collections::HashSet;

use crate::analyzer::{fts_document, with_bm25_analyzer};
use crate::chunk::Chunk;
use crate::error::{Error, Result};
use crate::inference::{sigmoid, Models};
use crate::memory::Memory;
use crate::options::{RecallOptions, FUSION_DEPTH, PAIR_BONUS, RERANK_AUTO_POOL_FACTOR};
use crate::record::StoredChunk;
use crate::store::Filter;
use crate::time::{days_named, written_day};
use fusion::{fused_score, near_named_day, recency_factor, Evidence, LegScale, Weights};
use legs::{lance_legs, resident_legs, Candidate, Legs, Row};
use proximity::pair_share;
use question::Question;
use steps::{Clock, Step};

#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub chunk: Chunk,
    /// The final score: the fused score (`search::fusion`; or the reranker's probability) times the recency
    /// factor. Comparable within one recall only.
    pub score: f64,
    /// Cosine similarity of the passage to the query: what the relevance floor compares.
    pub similarity: f32,
    /// Whether the cross-encoder ranked this hit.
    pub reranked: bool,
    pub neighbors: Vec<Neighbor>,
}

pub async fn recall(memory: &Memory, models: &Models, query: &str, opts: &RecallOptions) -> Result<Vec<Hit>> {
    recall_embedded(memory, models, query, None, opts).await
}

/// The queries' vectors as `recall` makes each (`recall_many`; batched where that leaves every vector as it
/// is alone: one pass over many short queries costs about what a pass over one does). Empty queries are
/// refused first, as `recall` refuses one.
pub fn embed_questions(models: &Models, queries: &[&str]) -> Result<Vec<Vec<f32>>> {
    if queries.iter().any(|q| q.trim().is_empty()) {
        return Err(Error::InvalidInput("a query is empty".into()));
    }
    let trimmed: Vec<&str> = queries.iter().map(|q| q.trim()).collect();
    models.embedder.embed_queries_as_alone(&trimmed)
}

/// `recall` with the query's vector already made (`embed_questions`), or made here (`None`).
pub async fn recall_embedded(
    memory: &Memory,
    models: &Models,
    query: &str,
    vector: Option<Vec<f32>>,
    opts: &RecallOptions,
) -> Result<Vec<Hit>> {
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
    let mut clock = Clock::start();
    let filter = Filter::recall(opts);
    let resident = if opts.exact { None } else { memory.ensure_resident().await? };
    clock.lap(Step::Resident);
    let depth = FUSION_DEPTH.max(candidates);
    // The memory's size sets the answer floor when it grows with it (on the Lance path it is counted only then).
    let grows = opts.answer_floor.is_some() && opts.answer_floor_per_decade != 0.0;
    let question = Question::analyse(query, models, opts);
    clock.lap(Step::Analyse);
    let legs_on_lance = resident.is_none();
    // The resident copy stays read-locked until fusion has copied out the passages it keeps.
    let (legs, rows) = match &resident {
        Some(r) => {
            let qv = match vector {
                Some(v) => v,
                None => models.embedder.embed_query(query)?,
            };
            clock.lap(Step::Embed);
            (resident_legs(r, &question, &qv, depth, &filter, opts.legs, &mut clock), r.len())
        }
        // Lance's legs run as concurrent tasks with the embedding: their time is charged to `union` whole.
        None => match lance_legs(memory.store(), models, &question, vector, depth, filter, opts).await? {
            Some(l) => (l, if grows { memory.store().count(&Filter::default()).await? } else { 0 }),
            None => return Ok(Vec::new()),
        },
    };
    if legs_on_lance {
        clock.lap(Step::Union);
    }
    let mut pool = fuse(legs, &question, candidates, opts.answer_floor_at(rows), opts);
    drop(resident);
    clock.lap(Step::Fuse);

    if use_rerank && !pool.is_empty() {
        // Copies of a text get its one score: the cross-encoder's work stays `candidates` pairs.
        let (passages, text_of_row) = repeats::distinct_texts(&pool, |(r, _, _)| r.chunk.text.as_str());
        let logits = models.rerank_scores(query, &passages)?;
        let scores: Vec<f64> = text_of_row.iter().map(|&i| sigmoid(logits[i]) as f64).collect();
        for ((_, s, _), score) in pool.iter_mut().zip(scores) {
            *s = score;
        }
        clock.lap(Step::Rerank);
    }
    let now = opts.now_ms.unwrap_or_else(|| chrono::Utc::now().timestamp_millis());
    for (r, s, _) in pool.iter_mut() {
        *s *= recency_factor(r.ts_ms, now, opts.half_life_days);
    }
    // Ids compared only on a tie (as in `best_first`).
    pool.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.chunk.id.cmp(&b.0.chunk.id)));
    if !opts.keep_repeats {
        pool = repeats::first_of_each_text(pool, |(r, _, _)| r.chunk.text.as_str());
    }
    pool.truncate(opts.k);
    clock.lap(Step::Finish);

    let mut hits: Vec<Hit> = pool
        .into_iter()
        .map(|(r, score, similarity)| Hit { chunk: r.chunk, score, similarity, reranked: use_rerank, neighbors: Vec::new() })
        .collect();
    if opts.neighbors > 0 && !hits.is_empty() {
        neighbors::attach(memory, &mut hits, opts.neighbors).await?;
    }
    clock.lap(Step::Neighbours);
    Ok(hits)
}

/// Fusion's pool by score, best first; ties go to the chunk id (unique: the order is total, so an unstable
/// sort gives the same order). The id is read only on a tie: `Ordering::then` takes its argument made, and
/// every comparison found both resident rows' ids.
fn best_first(pool: &mut [(Row, f64, f32, bool)]) {
    pool.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.id().cmp(b.0.id())));
}

/// Whether BM25's best passage holds every term of the question: a keyword search ("Lisbon chiller")
/// matched word for word, whatever the cosine, which the answer floor must not overrule. Its own words: not
/// its context nor its month.
fn lexical_match(legs: &Legs, question: &Question) -> bool {
    let Some(top) = legs.bm25.first().map(|&p| &legs.rows[p]) else { return false };
    let have: HashSet<String> = with_bm25_analyzer(|a| a.document(&fts_document(top.row.text(), "", ""))).into_iter().collect();
    !question.terms.is_empty() && question.terms.iter().all(|t| have.contains(t))
}

/// The legs' passages fused into one pool of the best `candidates` distinct texts with their copies (with
/// `keep_repeats`: the best `candidates` passages), each with its fused score and its similarity to the
/// query, after the answer floor (`answer_floor`: `RecallOptions::answer_floor_at` this memory's size), the
/// relevance floor and the identifier guard. Ties go to the chunk id.
fn fuse<'r>(
    legs: Legs<'r>,
    question: &Question,
    candidates: usize,
    answer_floor: Option<f32>,
    opts: &RecallOptions,
) -> Vec<(StoredChunk, f64, f32)> {
    let (dense_top, bm25_top) = legs.scores();
    let best = legs.rows.iter().map(|c| c.similarity).fold(f32::NEG_INFINITY, f32::max);
    let wanted = &question.wanted;
    if answer_floor.is_some_and(|floor| wanted.is_empty() && best < floor) && !lexical_match(&legs, question) {
        return Vec::new();
    }
    let (dense, bm25) = (LegScale::of(&dense_top), LegScale::of(&bm25_top));
    let weights = Weights::of(opts.dense_weight, question.dense_read);
    let days = days_named(question.text);
    let pair_weights = legs.pair_weights;
    let scored = |c: Candidate<'r>| {
        let near_day = !days.is_empty() && written_day(c.row.ts()).is_some_and(|d| near_named_day(d, &days));
        let evidence = Evidence { cosine: c.similarity, bm25: c.bm25, identifiers: c.identifiers, near_day };
        let score = fused_score(&evidence, dense, bm25, weights);
        (c.row, score, c.similarity, c.identifiers > 0.0)
    };
    let mut pool: Vec<(Row, f64, f32, bool)> = legs.rows.into_iter().map(scored).collect();
    best_first(&mut pool);
    if let Some(beside) = &legs.beside {
        adjacent::join(&mut pool, |t| beside.of(&t.0).into_iter().map(scored).collect(), |t| t.0.id(), |t| &mut t.1);
        best_first(&mut pool);
    }
    if opts.keep_repeats {
        pool.truncate(candidates);
    } else {
        pool = repeats::first_n_texts(pool, candidates, |(r, ..)| r.text());
    }
    // Near twins told apart: the passages kept, by the share of the question's neighbouring word pairs each
    // holds together (`proximity`). On the kept ones only: analysing a passage costs a few microseconds.
    if !question.pairs.is_empty() {
        with_bm25_analyzer(|a| {
            for (row, score, ..) in pool.iter_mut() {
                *score *= (PAIR_BONUS * pair_share(&question.pairs, &pair_weights, &a.document(row.text()))).exp();
            }
        });
        best_first(&mut pool);
    }
    pool.retain(|(_, _, sim, named)| {
        opts.min_similarity.is_none_or(|floor| *sim >= floor) && !(opts.identifier_guard && !wanted.is_empty() && !named)
    });
    pool.into_iter().map(|(row, score, sim, _)| (row.into_stored(), score, sim)).collect()
}
