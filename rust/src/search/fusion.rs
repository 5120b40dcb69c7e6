//! Rank fusion and recency: pure functions over ids and numbers, testable without disk or models.

use std::collections::HashMap;

use crate::options::RECENCY_SHARE;

/// One leg's result: ids in rank order, and each one's rank. Equal scores share a rank (competition
/// ranking: 0, 1, 1, 3): a leg that cannot tell two passages apart (the same text, or the same BM25
/// statistics) gives them the same reciprocal-rank score, so what orders them is recency, not the leg's
/// arbitrary order of ties. Without that, two copies of one passage were 1.6% apart in fused score,
/// more than recency may move a score (`RECENCY_SHARE`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ranked {
    pub ids: Vec<String>,
    pub ranks: Vec<usize>,
}

impl Ranked {
    /// `ids` in order with their leg's scores (sorted, either direction): equal neighbours share a rank.
    pub fn by_score(ids: Vec<String>, scores: &[f32]) -> Self {
        let mut ranks: Vec<usize> = Vec::with_capacity(ids.len());
        for i in 0..ids.len() {
            let tied = i > 0 && scores.get(i).is_some() && scores.get(i) == scores.get(i - 1);
            ranks.push(if tied { ranks[i - 1] } else { i });
        }
        Self { ids, ranks }
    }

    /// `ids` in order, every one its own rank.
    pub fn positional(ids: Vec<String>) -> Self {
        let ranks = (0..ids.len()).collect();
        Self { ids, ranks }
    }
}

/// Reciprocal-rank fusion: `score(id) = Σ_lists weight / (k + rank)`, rank 0-based. Ties are broken by the
/// earliest rank seen in any list, then by id, so the order is deterministic (funes leaves ties to a
/// HashMap).
pub fn rrf_fuse(lists: &[(&Ranked, f64)], k: f64) -> Vec<(String, f64)> {
    let mut acc: HashMap<&str, (f64, usize)> = HashMap::new();
    for (list, weight) in lists {
        for (id, &rank) in list.ids.iter().zip(&list.ranks) {
            let e = acc.entry(id.as_str()).or_insert((0.0, usize::MAX));
            e.0 += weight / (k + rank as f64);
            e.1 = e.1.min(rank);
        }
    }
    let mut out: Vec<(&str, f64, usize)> = acc.into_iter().map(|(id, (s, r))| (id, s, r)).collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)).then(a.0.cmp(b.0)));
    out.into_iter().map(|(id, s, _)| (id.to_string(), s)).collect()
}

/// The identifier leg: candidates that contain identifiers the query names (`MT-4471`), most of them first,
/// ties in the given order. An exact identifier is strong evidence that rank fusion of the dense and BM25
/// legs would otherwise dilute (dense similarity barely sees the difference between `MT-4471` and `4471`).
/// `candidates` are (id, identifier terms of its text) in precedence order.
pub fn identifier_ranking(wanted: &[String], candidates: &[(String, Vec<String>)]) -> Vec<String> {
    if wanted.is_empty() {
        return Vec::new();
    }
    let mut scored: Vec<(usize, usize, &str)> = candidates
        .iter()
        .enumerate()
        .map(|(i, (id, have))| (wanted.iter().filter(|w| have.contains(w)).count(), i, id.as_str()))
        .filter(|(n, _, _)| *n > 0)
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut seen = std::collections::HashSet::new();
    scored.into_iter().filter(|(_, _, id)| seen.insert(*id)).map(|(_, _, id)| id.to_string()).collect()
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

    fn list(v: &[&str]) -> Ranked {
        Ranked::positional(ids(v))
    }

    #[test]
    fn rrf_sums_both_legs() {
        let a = list(&["x", "y", "z"]);
        let b = list(&["y", "w"]);
        let fused = rrf_fuse(&[(&a, 1.0), (&b, 1.0)], 60.0);
        assert_eq!(fused[0].0, "y");
        assert!((fused[0].1 - (1.0 / 61.0 + 1.0 / 60.0)).abs() < 1e-12);
        assert_eq!(fused.len(), 4);
    }

    #[test]
    fn rrf_weights_scale_a_list() {
        let a = list(&["x"]);
        let b = list(&["y"]);
        let fused = rrf_fuse(&[(&a, 0.5), (&b, 1.0)], 60.0);
        assert_eq!(fused[0].0, "y");
        assert!((fused[1].1 - 0.5 / 60.0).abs() < 1e-12);
    }

    #[test]
    fn rrf_ties_are_deterministic() {
        let a = list(&["b", "a"]);
        let b = list(&["a", "b"]);
        let f1 = rrf_fuse(&[(&a, 1.0), (&b, 1.0)], 60.0);
        let f2 = rrf_fuse(&[(&b, 1.0), (&a, 1.0)], 60.0);
        assert_eq!(f1, f2);
        assert_eq!(f1[0].0, "a");
    }

    #[test]
    fn equal_scores_share_a_rank() {
        let r = Ranked::by_score(ids(&["a", "b", "c", "d"]), &[0.9, 0.7, 0.7, 0.5]);
        assert_eq!(r.ranks, [0, 1, 1, 3]);
        let fused = rrf_fuse(&[(&r, 1.0)], 60.0);
        assert_eq!(fused[1].1, fused[2].1, "b and c tie: {fused:?}");
        assert!((fused[3].1 - 1.0 / 63.0).abs() < 1e-12);
        // Distances sort the other way; only equality matters.
        assert_eq!(Ranked::by_score(ids(&["a", "b", "c"]), &[0.1, 0.1, 0.4]).ranks, [0, 0, 2]);
        // A leg without scores (NaN, or none at all) ranks by position.
        assert_eq!(Ranked::by_score(ids(&["a", "b"]), &[f32::NAN, f32::NAN]).ranks, [0, 1]);
        assert_eq!(Ranked::by_score(ids(&["a", "b"]), &[]).ranks, [0, 1]);
    }

    #[test]
    fn identifier_leg_prefers_more_identifiers_then_order() {
        let w = ids(&["mt4471", "n11"]);
        let c = vec![
            ("a".to_string(), ids(&["mt4472"])),
            ("b".to_string(), ids(&["mt4471"])),
            ("c".to_string(), ids(&["n11", "mt4471"])),
            ("b".to_string(), ids(&["mt4471"])),
        ];
        assert_eq!(identifier_ranking(&w, &c), ids(&["c", "b"]));
        assert!(identifier_ranking(&[], &c).is_empty());
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
}
