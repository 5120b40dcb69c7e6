//! The search legs as Lance queries (the one-shot path, and `exact`): dense nearest neighbours and BM25,
//! each prefiltered by a `Filter`.

use futures::TryStreamExt;
use lancedb::index::scalar::{BooleanQuery, FullTextSearchQuery, MatchQuery, Occur};
use lancedb::query::{ExecutableQuery, QueryBase, Select};
use lancedb::{DistanceType, Table};

use super::indexes::has_index;
use super::{schema, Filter, ROW_COLUMNS};
use crate::error::{Error, Result};
use crate::record::StoredChunk;

/// Partitions probed per query and the refine factor (exact re-scoring of the best PQ candidates). A
/// refine factor of 10 gave the same hit@1/3/8 as exact search at 18,000 and 60,000 rows; 4 lost a point.
pub const NPROBES: usize = 24;
pub const REFINE_FACTOR: u32 = 10;

/// One search leg's result: rows in rank order with the leg's raw score (cosine distance or BM25); NaN where
/// the leg gave none (fusion counts it as 0).
#[derive(Default)]
pub struct LegResult {
    pub rows: Vec<StoredChunk>,
    pub scores: Vec<f32>,
}

/// The dataset as one search sees it. Owns its handle, so each leg can run as a `'static` task on the
/// runtime's workers, in parallel with each other and with the query embedding on the caller's thread.
#[derive(Clone)]
pub struct Searcher(Table);

impl Searcher {
    pub(super) fn new(t: Table) -> Self {
        Self(t)
    }

    /// Dense leg: nearest neighbours by cosine distance, prefiltered.
    pub async fn dense(self, query: Vec<f32>, limit: usize, filter: Filter, exact: bool) -> Result<LegResult> {
        let t = self.0;
        let mut cols: Vec<&str> = ROW_COLUMNS.to_vec();
        cols.push("vector");
        let mut q = t
            .query()
            .nearest_to(query.as_slice())?
            .distance_type(DistanceType::Cosine)
            .nprobes(NPROBES)
            .refine_factor(REFINE_FACTOR)
            .limit(limit)
            .select(Select::columns(&cols));
        if exact {
            q = q.bypass_vector_index();
        }
        if let Some(sql) = filter.to_sql() {
            q = q.only_if(sql);
        }
        let batches: Vec<_> = q.execute().await?.try_collect().await?;
        collect_leg(&batches, "_distance")
    }

    /// BM25 leg over the `fts` column, prefiltered: the query's words, and `near` words each weighted (a
    /// query word weighs 1; Lance sums the clauses' BM25 scores, each times its boost). A memory without an
    /// FTS index yet (its first write still running, or every row forgotten) has no keyword matches.
    pub async fn bm25(self, query: String, near: Vec<(String, f32)>, limit: usize, filter: Filter) -> Result<LegResult> {
        let t = self.0;
        if query.trim().is_empty() || !has_index(&t, "fts").await? {
            return Ok(LegResult::default());
        }
        let mut cols: Vec<&str> = ROW_COLUMNS.to_vec();
        cols.push("vector");
        let column = Some("fts".to_string());
        let fts = if near.is_empty() {
            FullTextSearchQuery::new(query).with_column("fts".to_string())?
        } else {
            let clause =
                |terms: String, boost: f32| (Occur::Should, MatchQuery::new(terms).with_column(column.clone()).with_boost(boost).into());
            let clauses = std::iter::once(clause(query, 1.0)).chain(near.into_iter().map(|(w, b)| clause(w, b)));
            FullTextSearchQuery::new_query(BooleanQuery::new(clauses).into())
        };
        let mut q = t.query().full_text_search(fts).limit(limit).select(Select::columns(&cols));
        if let Some(sql) = filter.to_sql() {
            q = q.only_if(sql);
        }
        let batches: Vec<_> = q.execute().await?.try_collect().await?;
        collect_leg(&batches, "_score")
    }
}

fn collect_leg(batches: &[arrow_array::RecordBatch], score_col: &str) -> Result<LegResult> {
    let mut rows = Vec::new();
    let mut scores = Vec::new();
    for b in batches {
        let n = b.num_rows();
        rows.extend(schema::from_batch(b)?);
        scores.extend(schema::f32_column(b, score_col).unwrap_or_else(|| vec![f32::NAN; n]));
    }
    if rows.len() != scores.len() {
        return Err(Error::storage(format!("{} rows but {} scores from a search leg", rows.len(), scores.len())));
    }
    Ok(LegResult { rows, scores })
}
