//! The recall pipeline: dense ‖ BM25 (‖ identifier matches) → reciprocal-rank fusion → relevance floor → (rerank) → recency → top k
//! → neighbouring turns. The kernels (`fusion`) are pure; this file only orchestrates them over a `Store`.

pub mod fusion;
mod turns;

pub use turns::{assemble_turns, TurnText};

use std::collections::HashMap;

use crate::analyzer::{fts_query, id_terms};
use crate::chunk::Chunk;
use crate::error::{Error, Result};
use crate::inference::Models;
use crate::options::{Legs as LegChoice, RecallOptions, NEIGHBOR_PREVIEW_CHARS, RERANK_AUTO_POOL_FACTOR, RRF_K};
use crate::resident::{code_query, Resident};
use crate::store::{sql_str, LegResult, Store, StoredChunk, ROW_COLUMNS};
use fusion::{identifier_ranking, recency_factor, rrf_fuse, Ranked};

/// A neighbouring turn of a hit, shown as a short preview.
#[derive(Debug, Clone, PartialEq)]
pub struct Neighbor {
    pub turn_uuid: String,
    pub role: String,
    pub seq: i64,
    pub ts: String,
    pub text: String,
}

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

/// The SQL filter for the options' date range and role / block-type filters, applied before ranking.
pub fn build_filter(opts: &RecallOptions) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(s) = opts.since_ms {
        parts.push(format!("ts_ms >= {s}"));
    }
    if let Some(u) = opts.until_ms {
        parts.push(format!("ts_ms <= {u}"));
    }
    let in_list = |col: &str, vals: &[String]| format!("{col} IN ({})", vals.iter().map(|v| sql_str(v)).collect::<Vec<_>>().join(", "));
    if !opts.roles.is_empty() {
        parts.push(in_list("role", &opts.roles));
    }
    if !opts.block_types.is_empty() {
        parts.push(in_list("block_type", &opts.block_types));
    }
    if parts.is_empty() { None } else { Some(parts.join(" AND ")) }
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let (mut dot, mut na, mut nb) = (0f32, 0f32, 0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 { 0.0 } else { dot / (na.sqrt() * nb.sqrt()) }
}

pub async fn recall(store: &Store, models: &Models, query: &str, opts: &RecallOptions) -> Result<Vec<Hit>> {
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
    let legs = if !opts.exact && store.resident_ready().await? {
        let qv = models.embedder.embed_batch(&[query])?.remove(0);
        store.with_resident(|r| resident_legs(r, query, &qv, candidates, opts))
    } else {
        None
    };
    let legs = match legs {
        Some(l) => l,
        None => match lance_legs(store, models, query, candidates, opts).await? {
            Some(l) => l,
            None => return Ok(Vec::new()),
        },
    };
    let Legs { dense, bm25, mut rows } = legs;
    // Each candidate once (a passage found by both legs is analysed once), BM25's order first.
    let mut listed = std::collections::HashSet::new();
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
        let named: std::collections::HashSet<&str> = id_leg.ids.iter().map(String::as_str).collect();
        pool.retain(|(r, _, _)| named.contains(r.chunk.id.as_str()));
    }

    if use_rerank && !pool.is_empty() {
        let reranker = models.reranker.as_ref().expect("checked above");
        let passages: Vec<&str> = pool.iter().map(|(r, _, _)| r.chunk.text.as_str()).collect();
        let logits = reranker.score(query, &passages)?;
        for ((_, s, _), l) in pool.iter_mut().zip(logits) {
            *s = crate::inference::sigmoid(l) as f64;
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
        attach_neighbors(store, &mut hits, opts.neighbors).await?;
    }
    Ok(hits)
}

/// A passage found by a leg, with its similarity to the query (what the relevance floor compares).
struct Candidate {
    row: StoredChunk,
    similarity: f32,
}

/// What the search legs found: each leg's ranking by chunk id, and the rows behind them.
struct Legs {
    dense: Ranked,
    bm25: Ranked,
    rows: HashMap<String, Candidate>,
}

/// Whether a row passes the options' date range and role / block-type filters: `build_filter` as a
/// predicate, for the resident copy (a row without a time fails any date bound, as NULL does in SQL).
pub fn admits(opts: &RecallOptions, row: &StoredChunk) -> bool {
    let within = |bound: Option<i64>, ok: fn(i64, i64) -> bool| bound.is_none_or(|b| row.ts_ms.is_some_and(|t| ok(t, b)));
    within(opts.since_ms, |t, b| t >= b)
        && within(opts.until_ms, |t, b| t <= b)
        && (opts.roles.is_empty() || opts.roles.contains(&row.chunk.role))
        && (opts.block_types.is_empty() || opts.block_types.contains(&row.chunk.block_type))
}

/// Both legs over the resident copy: an exhaustive int8 scan and an in-memory BM25, on this thread.
fn resident_legs(r: &Resident, query: &str, qv: &[f32], candidates: usize, opts: &RecallOptions) -> Legs {
    let cq = code_query(qv);
    let admit = |row: &StoredChunk| admits(opts, row);
    let filtered = build_filter(opts).is_some();
    let dense = if opts.legs != LegChoice::Bm25 { r.dense(&cq, candidates, filtered.then_some(&admit as _)) } else { Vec::new() };
    let bm25 = if opts.legs != LegChoice::Dense { r.bm25(query, candidates, &admit) } else { Vec::new() };
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
async fn lance_legs(
    store: &Store,
    models: &Models,
    query: &str,
    candidates: usize,
    opts: &RecallOptions,
) -> Result<Option<Legs>> {
    let Some(searcher) = store.searcher().await else { return Ok(None) };
    let filter = build_filter(opts);
    let join = |e: tokio::task::JoinError| Error::Storage(format!("search task failed: {e}"));
    let bm25_task = (opts.legs != LegChoice::Dense)
        .then(|| tokio::spawn(searcher.clone().bm25(fts_query(query), candidates, filter.clone())));
    let qv = models.embedder.embed_batch(&[query])?.remove(0);
    let dense_task = (opts.legs != LegChoice::Bm25)
        .then(|| tokio::spawn(searcher.dense(qv.clone(), candidates, filter.clone(), opts.exact)));
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

/// Adds the turns within `window` of each hit (not the hit's own turn), one preview per turn, fetched in one
/// scan for all hits.
async fn attach_neighbors(store: &Store, hits: &mut [Hit], window: usize) -> Result<()> {
    let w = window as i64;
    // One scan for all hits: `session_id IN (...)` is answered by the session_id index; the seq window is
    // applied here (an OR of per-hit ranges would defeat the index).
    let mut sessions: Vec<&str> = hits.iter().map(|h| h.chunk.session_id.as_str()).collect();
    sessions.sort();
    sessions.dedup();
    let resident = store.with_resident(|r| sessions.iter().flat_map(|s| r.session(s)).cloned().collect::<Vec<StoredChunk>>());
    let rows = match resident {
        Some(rows) => rows,
        None => {
            let quoted: Vec<String> = sessions.iter().map(|s| sql_str(s)).collect();
            store.scan(Some(format!("session_id IN ({})", quoted.join(", "))), ROW_COLUMNS).await?
        }
    };
    let mut by_session: HashMap<String, Vec<StoredChunk>> = HashMap::new();
    for r in rows {
        by_session.entry(r.chunk.session_id.clone()).or_default().push(r);
    }
    let turns: HashMap<String, Vec<TurnText>> = by_session.into_iter().map(|(s, rows)| (s, assemble_turns(rows))).collect();
    for h in hits.iter_mut() {
        let Some(ts) = turns.get(&h.chunk.session_id) else { continue };
        h.neighbors = ts
            .iter()
            .filter(|t| t.turn_uuid != h.chunk.turn_uuid && (t.seq - h.chunk.seq).abs() <= w)
            .map(|t| Neighbor {
                turn_uuid: t.turn_uuid.clone(),
                role: t.role.clone(),
                seq: t.seq,
                ts: t.ts.clone(),
                text: preview(&t.text, NEIGHBOR_PREVIEW_CHARS),
            })
            .collect();
    }
    Ok(())
}

/// The first `max` characters of a text on one line, cut at a word boundary, with "…" when cut.
pub fn preview(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    let cut: String = flat.chars().take(max).collect();
    let cut = match cut.rfind(' ') {
        Some(i) if i > max / 2 => &cut[..i],
        _ => cut.as_str(),
    };
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_combines_dates_roles_and_types() {
        let opts = RecallOptions {
            since_ms: Some(1),
            until_ms: Some(2),
            roles: vec!["user".into()],
            block_types: vec!["text".into(), "tool_use".into()],
            ..Default::default()
        };
        assert_eq!(
            build_filter(&opts).unwrap(),
            "ts_ms >= 1 AND ts_ms <= 2 AND role IN ('user') AND block_type IN ('text', 'tool_use')"
        );
        assert_eq!(build_filter(&RecallOptions::default()), None);
    }

    #[test]
    fn preview_cuts_at_a_word() {
        assert_eq!(preview("a  b\nc", 10), "a b c");
        assert_eq!(preview("alpha beta gamma delta", 12), "alpha beta…");
    }

    #[test]
    fn cosine_of_parallel_vectors_is_one() {
        assert!((cosine(&[1.0, 2.0], &[2.0, 4.0]) - 1.0).abs() < 1e-6);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
    }
}
