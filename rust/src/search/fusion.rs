//! Score fusion and recency: pure functions over numbers, testable without disk or models.
//!
//! Each leg's score of a passage counts by how far it stands above that leg's own top list, in standard
//! deviations (a z-score), and the two legs are mixed by weight. Rank fusion (RRF, what funes does) threw
//! the scores away: a confident dense match, far above every other passage, counted no more than a weak one
//! that happened to rank first, and was outvoted by BM25 ranks of passages that merely shared a word. On
//! questions worded unlike the stored text (synonyms, restructured sentences) that lost 6-18 points of hit@3;
//! the lab that chose this (benches/lab/fusion_lab.py, benches/lab/fusion_spec.md) reproduces the engine's top k.

use crate::options::{DAY_BONUS, DAY_WINDOW_AFTER, DAY_WINDOW_BEFORE, IDENTIFIER_BONUS, RECENCY_SHARE};

/// How one leg's scores spread over its own top list: mean and population standard deviation. A standard
/// deviation of 0 (one passage, or all equal) counts as 1, so such a list neither explodes nor vanishes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LegScale {
    mean: f64,
    sd: f64,
}

impl LegScale {
    /// The scale of a leg's top scores; `None` when the leg found nothing (or did not run): it then adds
    /// nothing to any passage.
    pub fn of(top: &[f32]) -> Option<Self> {
        if top.is_empty() {
            return None;
        }
        let n = top.len() as f64;
        let mean = top.iter().map(|&x| x as f64).sum::<f64>() / n;
        let var = top.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / n;
        let sd = var.sqrt();
        Some(Self { mean, sd: if sd > 0.0 { sd } else { 1.0 } })
    }

    pub fn z(&self, score: f32) -> f64 {
        (score as f64 - self.mean) / self.sd
    }
}

/// What one passage brings to fusion: its cosine similarity to the query, its BM25 score (0 when it shares no
/// term with the query), and the share of the query's identifiers its text contains (0 when the query names
/// none).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Evidence {
    pub cosine: f32,
    pub bm25: f32,
    pub identifiers: f64,
    /// Said near a day the query names (`near_named_day`).
    pub near_day: bool,
}

/// What each leg's z-score counts for in one recall.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weights {
    pub dense: f64,
    pub bm25: f64,
}

impl Weights {
    /// `dense_weight` for the dense leg, scaled by the share of the question its embedder reads (`dense_read`,
    /// `script::Scripts::share_read`); BM25 keeps `1 − dense_weight`. A dense leg reading none of the question
    /// (an English model asked in Korean) returns noise that spreads like evidence: it then counts for
    /// nothing, and fusion is BM25 with its bonuses instead of BM25 outvoted by noise.
    pub fn of(dense_weight: f64, dense_read: f32) -> Self {
        Self { dense: dense_weight * f64::from(dense_read.clamp(0.0, 1.0)), bm25: 1.0 - dense_weight }
    }
}

/// `exp(w_d·z_dense + w_b·z_bm25 + IDENTIFIER_BONUS·identifiers + day bonus)`, the weights from `Weights`. The
/// exponential keeps the order and makes the score positive, so recency's factor (`recency_factor`) works on
/// any sign: multiplying by `1 − RECENCY_SHARE` is subtracting about `RECENCY_SHARE` in fused units.
pub fn fused_score(e: &Evidence, dense: Option<LegScale>, bm25: Option<LegScale>, w: Weights) -> f64 {
    let d = dense.map_or(0.0, |s| s.z(e.cosine));
    let b = bm25.map_or(0.0, |s| s.z(e.bm25));
    let day = if e.near_day { DAY_BONUS } else { 0.0 };
    (w.dense * d + w.bm25 * b + IDENTIFIER_BONUS * e.identifiers + day).exp()
}

/// Whether a passage said on `said` falls in the window of one of the `days` a query names: from
/// `DAY_WINDOW_BEFORE` days before it to `DAY_WINDOW_AFTER` after.
pub fn near_named_day(said: chrono::NaiveDate, days: &[chrono::NaiveDate]) -> bool {
    days.iter().any(|&d| (-DAY_WINDOW_BEFORE..=DAY_WINDOW_AFTER).contains(&(said - d).num_days()))
}

/// The share of the identifiers the query names (`wanted`, glued forms such as `mt4471`) that a passage's
/// text contains (`have`). An exact identifier is strong evidence that dense similarity barely sees (`MT-4471`
/// and `MT-4472` embed alike). 0 when the query names none.
pub fn identifier_share(wanted: &[String], have: &[String]) -> f64 {
    if wanted.is_empty() {
        return 0.0;
    }
    wanted.iter().filter(|w| have.contains(w)).count() as f64 / wanted.len() as f64
}

/// What a passage's score is multiplied by for its age: `1 - RECENCY_SHARE * (1 - recency_weight)`
/// (see `RECENCY_SHARE` for why not the weight itself).
pub fn recency_factor(ts_ms: Option<i64>, now_ms: i64, half_life_days: f64) -> f64 {
    1.0 - RECENCY_SHARE * (1.0 - recency_weight(ts_ms, now_ms, half_life_days))
}

/// Recency weight `0.5^(age_days / half_life)`. Off (1.0) when the half-life is 0 or less or the time is
/// unknown; a future time counts as now.
pub fn recency_weight(ts_ms: Option<i64>, now_ms: i64, half_life_days: f64) -> f64 {
    match ts_ms {
        Some(ts) if half_life_days > 0.0 => {
            let age_days = ((now_ms - ts).max(0) as f64) / 86_400_000.0;
            0.5f64.powf(age_days / half_life_days)
        }
        _ => 1.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn ev(cosine: f32, bm25: f32) -> Evidence {
        Evidence { cosine, bm25, identifiers: 0.0, near_day: false }
    }

    #[test]
    fn a_leg_scale_is_its_lists_mean_and_spread() {
        let s = LegScale::of(&[1.0, 3.0]).unwrap();
        assert_eq!((s.z(2.0), s.z(3.0), s.z(0.0)), (0.0, 1.0, -2.0));
        assert_eq!(LegScale::of(&[]), None, "a leg that found nothing adds nothing");
        assert!((LegScale::of(&[0.4, 0.4]).unwrap().z(0.9) - 0.5).abs() < 1e-6, "no spread counts as 1");
    }

    #[test]
    fn scores_count_not_ranks() {
        // A leads BM25 by a hair and is second in dense; B is second in BM25 and far ahead in dense.
        let dense = LegScale::of(&[0.80, 0.50, 0.40, 0.39, 0.38]);
        let bm25 = LegScale::of(&[6.0, 5.95, 3.0, 2.9, 2.8]);
        let a = fused_score(&ev(0.50, 6.0), dense, bm25, Weights::of(0.3, 1.0));
        let b = fused_score(&ev(0.80, 5.95), dense, bm25, Weights::of(0.3, 1.0));
        assert!(b > a, "{b} vs {a}");
        // Rank fusion put A first: 0.3/61 + 1/60 (0.02159) against 0.3/60 + 1/61 (0.02139).
    }

    #[test]
    fn the_dense_weight_mixes_the_legs() {
        let (dense, bm25) = (LegScale::of(&[0.2, 0.6]), LegScale::of(&[1.0, 3.0]));
        let e = ev(0.6, 1.0); // +1 sd dense, -1 sd BM25
        assert!((fused_score(&e, dense, bm25, Weights::of(0.3, 1.0)).ln() - (0.3 - 0.7)).abs() < 1e-9);
        assert!((fused_score(&e, dense, None, Weights::of(0.3, 1.0)).ln() - 0.3).abs() < 1e-9, "BM25 off: only dense counts");
        assert!((fused_score(&e, None, bm25, Weights::of(0.3, 1.0)).ln() + 0.7).abs() < 1e-9);
    }

    #[test]
    fn a_dense_leg_that_reads_none_of_the_question_counts_for_nothing() {
        let (dense, bm25) = (LegScale::of(&[0.2, 0.6]), LegScale::of(&[1.0, 3.0]));
        let noise_leader = ev(0.6, 1.0); // +1 sd dense, -1 sd BM25
        let bm25_leader = ev(0.2, 3.0); // -1 sd dense, +1 sd BM25
        let read = Weights::of(0.3, 1.0);
        let unread = Weights::of(0.3, 0.0);
        assert_eq!(unread, Weights { dense: 0.0, bm25: 0.7 });
        assert!(fused_score(&bm25_leader, dense, bm25, unread) > fused_score(&noise_leader, dense, bm25, unread));
        assert!((fused_score(&noise_leader, dense, bm25, unread).ln() + 0.7).abs() < 1e-9, "BM25's part unchanged");
        let half = Weights::of(0.3, 0.5);
        assert!((half.dense - 0.15).abs() < 1e-12 && read.dense == 0.3);
    }

    #[test]
    fn identifiers_add_their_share_of_the_bonus() {
        let w = ids(&["mt4471", "n11"]);
        assert_eq!(identifier_share(&w, &ids(&["n11", "mt4471"])), 1.0);
        assert_eq!(identifier_share(&w, &ids(&["mt4472", "n11"])), 0.5);
        assert_eq!(identifier_share(&[], &ids(&["mt4471"])), 0.0);
        let plain = fused_score(&ev(0.5, 1.0), None, None, Weights::of(0.3, 1.0));
        let named = fused_score(&Evidence { identifiers: 0.5, ..ev(0.5, 1.0) }, None, None, Weights::of(0.3, 1.0));
        assert!((named.ln() - plain.ln() - 0.5 * IDENTIFIER_BONUS).abs() < 1e-9);
    }

    #[test]
    fn recency_takes_at_most_its_share() {
        let day = 86_400_000;
        let now = 1_000 * day;
        assert_eq!(recency_factor(Some(now), now, 30.0), 1.0);
        assert!((recency_factor(Some(now - 30 * day), now, 30.0) - (1.0 - RECENCY_SHARE / 2.0)).abs() < 1e-12);
        assert!((recency_factor(Some(0), now, 30.0) - (1.0 - RECENCY_SHARE)).abs() < 1e-9);
        assert_eq!(recency_factor(Some(0), now, 0.0), 1.0, "half-life 0: off");
        assert_eq!(recency_factor(None, now, 30.0), 1.0, "no time: fresh");
    }

    #[test]
    fn recency_halves_per_half_life() {
        let day = 86_400_000;
        assert!((recency_weight(Some(0), 30 * day, 30.0) - 0.5).abs() < 1e-12);
        assert_eq!(recency_weight(Some(40 * day), 30 * day, 30.0), 1.0);
        assert_eq!(recency_weight(None, 30 * day, 30.0), 1.0);
        assert_eq!(recency_weight(Some(0), 30 * day, 0.0), 1.0);
    }

    #[test]
    fn a_passage_said_near_a_named_day_gains_the_day_bonus() {
        let d = |m, day| chrono::NaiveDate::from_ymd_opt(2023, m, day).unwrap();
        let asked = [d(10, 24)];
        assert!(near_named_day(d(10, 24), &asked) && near_named_day(d(10, 17), &asked) && near_named_day(d(10, 26), &asked));
        assert!(!near_named_day(d(10, 16), &asked) && !near_named_day(d(10, 27), &asked) && !near_named_day(d(10, 24), &[]));
        let plain = fused_score(&ev(0.5, 1.0), None, None, Weights::of(0.3, 1.0));
        let near = fused_score(&Evidence { near_day: true, ..ev(0.5, 1.0) }, None, None, Weights::of(0.3, 1.0));
        assert!((near.ln() - plain.ln() - DAY_BONUS).abs() < 1e-9);
    }
}
