//! Term proximity: whether a passage holds the question's neighbouring words together. Pure.
//!
//! BM25 scores words one at a time, so among passages about near twins ("8 Kingsley Street" and "8 Kingsley
//! Lane", "Seraphina Kettleborough" and "Seraphina Brocklehurst", "17 Myrtle Close" and "14 Myrtle Close")
//! the one that shares most words, or repeats one, wins, whichever of them the question named. The question's
//! constraints sit in its neighbouring words: a passage that holds them side by side meets them all. Each pair
//! of words next to each other in the question (after the BM25 analyser: stemmed, stop words out) counts whole
//! where a passage holds it side by side, in either order, and half with one word between ("Magnus E.
//! Lightfoot" for "Magnus Lightfoot"); pairs weigh by the rarity of their rarer word (`pair_weights`), and the
//! share a passage holds earns `options::PAIR_BONUS` in fused units. Measured on the passages fusion kept
//! (tuning history at 10,000 conversations: close hit@1 91 -> 92, reworded hit@3 93 -> 94; held-out
//! household: close hit@1 92 -> 97, reworded hit@3 84 -> 90, at 100,000 conversations 79 -> 81 and 75 -> 83;
//! LoCoMo turn recall@10 +0.2 / +0.2), the
//! sequential-dependence idea of proximity retrieval, in its smallest form.

use std::collections::HashMap;

/// How far apart (in analysed words) a passage may hold a question's pair: next to each other, or with one
/// word between ("Harriet Jolliffe's ferry" against "ferry for Harriet Jolliffe").
pub const PAIR_WINDOW: usize = 2;

/// The question's pairs of neighbouring words, each once, unordered; none for a one-word question.
pub fn question_pairs(terms: &[String]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for w in terms.windows(2) {
        let (a, b) = if w[0] <= w[1] { (&w[0], &w[1]) } else { (&w[1], &w[0]) };
        if a != b && !out.iter().any(|(x, y)| x == a && y == b) {
            out.push((a.clone(), b.clone()));
        }
    }
    out
}

/// How much each pair weighs in `pair_share`: the inverse document frequency of its rarer word (`idf` of a
/// word; `None` where the memory holds it nowhere, so no passage can hold the pair and it weighs nothing).
/// A name's pair ("hatti quarrington") is evidence, a pair of everyday words ("book refer") barely is: equal
/// weights let a passage that shared the everyday pairs outrank the one naming the asked person whole.
pub fn pair_weights(pairs: &[(String, String)], idf: impl Fn(&str) -> Option<f32>) -> Vec<f64> {
    pairs
        .iter()
        .map(|(a, b)| match (idf(a), idf(b)) {
            (Some(x), Some(y)) => f64::from(x.max(y)),
            _ => 0.0,
        })
        .collect()
}

/// The share of `pairs`, by `weights` (empty: equal), that `passage` (its analysed words, in order) holds
/// within `PAIR_WINDOW` words.
pub fn pair_share(pairs: &[(String, String)], weights: &[f64], passage: &[String]) -> f64 {
    let weight = |i: usize| weights.get(i).copied().unwrap_or(1.0);
    let total: f64 = (0..pairs.len()).map(weight).sum();
    if total <= 0.0 {
        return 0.0;
    }
    let mut positions: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, t) in passage.iter().enumerate() {
        if pairs.iter().any(|(a, b)| a == t || b == t) {
            positions.entry(t.as_str()).or_default().push(i);
        }
    }
    // Side by side counts whole; one word between ("Magnus E. Lightfoot" for "Magnus Lightfoot"), half.
    let held = |a: &str, b: &str| match (positions.get(a), positions.get(b)) {
        (Some(pa), Some(pb)) => match pa.iter().flat_map(|&i| pb.iter().map(move |&j| i.abs_diff(j))).min() {
            Some(1) => 1.0,
            Some(d) if d <= PAIR_WINDOW => 0.5,
            _ => 0.0,
        },
        _ => 0.0,
    };
    pairs.iter().enumerate().map(|(i, (a, b))| weight(i) * held(a, b)).sum::<f64>() / total
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn a_question_gives_its_neighbouring_pairs_once() {
        let p = question_pairs(&words("8 kingsley street kingsley"));
        assert_eq!(p, [("8".into(), "kingsley".into()), ("kingsley".into(), "street".into())]);
        assert!(question_pairs(&words("boiler")).is_empty());
    }

    #[test]
    fn the_near_twin_holds_fewer_pairs() {
        let q = question_pairs(&words("who fix drip tap 8 kingsley street"));
        let right = pair_share(&q, &[], &words("kev moorhous fix drip tap 8 kingsley street tidi work"));
        let twin = pair_share(&q, &[], &words("someon look drip tap 8 kingsley lane"));
        assert!(right > twin, "{right} vs {twin}");
        assert_eq!(right, 5.0 / 6.0, "all but (who, fix)");
    }

    #[test]
    fn a_pair_counts_in_either_order_within_the_window() {
        let q = question_pairs(&words("harriet jolliff ferri"));
        assert_eq!(pair_share(&q, &[], &words("book ferri harriet jolliff")), 0.75, "(jolliff, ferri): reversed, two apart: half");
        assert_eq!(pair_share(&q, &[], &words("jolliff ferri harriet jolliff")), 1.0, "both side by side, either order");
        assert_eq!(pair_share(&q, &[], &words("harriet e jolliff ferri")), 0.75, "a middle initial between: half");
        assert_eq!(pair_share(&q, &[], &words("ferri cross book for harriet jolliff")), 0.5);
        assert_eq!(pair_share(&[], &[], &words("anything")), 0.0);
    }

    #[test]
    fn a_rare_pair_weighs_more_than_an_everyday_one() {
        let q = question_pairs(&words("book refer hatti j quarrington"));
        let idf = |w: &str| match w {
            "quarrington" => Some(9.0),
            "hatti" => Some(6.0),
            "absent" => None,
            _ => Some(1.0),
        };
        let w = pair_weights(&q, idf);
        assert_eq!(w, [1.0, 6.0, 6.0, 9.0], "(book refer) (refer hatti) (hatti j) (j quarrington): the rarer word's");
        let name_whole = pair_share(&q, &w, &words("hatti j quarrington ferri book"));
        let everyday = pair_share(&q, &w, &words("book refer ferri hatti m quarrington"));
        assert_eq!(
            (name_whole, everyday),
            (15.0 / 22.0, 4.0 / 22.0),
            "the name's two pairs against (book refer) and half of (refer hatti)"
        );
        assert_eq!(pair_weights(&question_pairs(&words("absent word")), idf), [0.0]);
    }
}
