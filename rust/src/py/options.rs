//! `funes_py.RecallOptions` (a frozen Python dataclass) → the core's `RecallOptions`, field by field. The
//! dataclass holds the defaults (from the core's constants) and normalises values (dates to ISO strings,
//! sequences to tuples), so extraction here is by attribute name, and times go through the core's parser.

use pyo3::prelude::*;

use super::to_py;
use crate::engine::{parse_bound, RecallOptions};

#[derive(FromPyObject)]
pub(super) struct RecallArgs {
    k: usize,
    candidates: usize,
    half_life_days: f64,
    neighbors: usize,
    since: Option<String>,
    until: Option<String>,
    sessions: Vec<String>,
    roles: Vec<String>,
    block_types: Vec<String>,
    harnesses: Vec<String>,
    projects: Vec<String>,
    min_similarity: Option<f32>,
    answer_floor: Option<f32>,
    answer_floor_per_decade: f32,
    identifier_guard: bool,
    rerank: Option<bool>,
    now: Option<String>,
    legs: String,
    dense_weight: f64,
    exact: bool,
    keep_repeats: bool,
    near_words: bool,
}

fn bound(s: Option<String>, upper: bool) -> PyResult<Option<i64>> {
    s.map(|s| parse_bound(&s, upper)).transpose().map_err(to_py)
}

impl RecallArgs {
    pub(super) fn into_core(self) -> PyResult<RecallOptions> {
        Ok(RecallOptions {
            k: self.k,
            candidates: self.candidates,
            half_life_days: self.half_life_days,
            neighbors: self.neighbors,
            since_ms: bound(self.since, false)?,
            until_ms: bound(self.until, true)?,
            sessions: self.sessions,
            roles: self.roles,
            block_types: self.block_types,
            harnesses: self.harnesses,
            projects: self.projects,
            min_similarity: self.min_similarity,
            answer_floor: self.answer_floor,
            answer_floor_per_decade: self.answer_floor_per_decade,
            identifier_guard: self.identifier_guard,
            rerank: self.rerank,
            now_ms: bound(self.now, false)?,
            legs: self.legs.parse().map_err(to_py)?,
            dense_weight: self.dense_weight,
            exact: self.exact,
            keep_repeats: self.keep_repeats,
            near_words: self.near_words,
        })
    }
}

/// `RecallOptions.answer_floor_at(rows)`: the core's formula, so a report or a bench never repeats it.
#[pyfunction]
pub(super) fn answer_floor_at(options: RecallArgs, rows: usize) -> PyResult<Option<f32>> {
    Ok(options.into_core()?.answer_floor_at(rows))
}

/// `since`/`until` of `sessions()`, through the same parser.
pub(super) fn bounds(since: Option<String>, until: Option<String>) -> PyResult<(Option<i64>, Option<i64>)> {
    Ok((bound(since, false)?, bound(until, true)?))
}
