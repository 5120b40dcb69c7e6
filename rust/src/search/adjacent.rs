//! The turns beside the best passages of a fused ranking join it (`options::ADJACENT_SHARE`): in a
//! conversation the answer often sits one turn after what matched the question. Pure: which turns are
//! beside a passage, and their own scores, are the caller's (`legs::Beside`).

use std::collections::HashMap;

use crate::options::{ADJACENT_SHARE, ADJACENT_SOURCES};
use crate::record::id_key;

/// Adds to `pool` (best first) the passages `beside` gives for each of its first `ADJACENT_SOURCES`, each at
/// the higher of its own score and `ADJACENT_SHARE` of its source's; one already in the pool rises to that
/// if it is higher. `key` tells passages apart (their chunk ids), `score` reaches an item's score. The
/// order of what was added is the caller's to restore.
pub(super) fn join<T>(pool: &mut Vec<T>, beside: impl Fn(&T) -> Vec<T>, key: impl Fn(&T) -> &str, score: impl Fn(&mut T) -> &mut f64) {
    let sources = pool.len().min(ADJACENT_SOURCES);
    let shares: Vec<f64> = pool[..sources].iter_mut().map(|t| *score(t) * ADJACENT_SHARE).collect();
    let mut at: HashMap<u64, usize> = pool.iter().enumerate().map(|(i, t)| (id_key(key(t)), i)).collect();
    for (s, share) in shares.into_iter().enumerate() {
        for mut t in beside(&pool[s]) {
            let lifted = score(&mut t).max(share);
            match at.get(&id_key(key(&t))) {
                Some(&i) => {
                    let have = score(&mut pool[i]);
                    *have = have.max(lifted);
                }
                None => {
                    *score(&mut t) = lifted;
                    at.insert(id_key(key(&t)), pool.len());
                    pool.push(t);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Passages named by a 16-hex-digit id (as chunk ids are), in a line: each one's neighbours are the ids
    /// one less and one more, with the own scores `own` gives.
    fn run(pool: &[(u64, f64)], own: impl Fn(u64) -> f64) -> Vec<(u64, f64)> {
        let mut pool: Vec<(String, f64)> = pool.iter().map(|&(id, s)| (format!("{id:016x}"), s)).collect();
        let beside = |t: &(String, f64)| {
            let id = u64::from_str_radix(&t.0, 16).unwrap();
            [id - 1, id + 1].into_iter().map(|n| (format!("{n:016x}"), own(n))).collect()
        };
        join(&mut pool, beside, |t| t.0.as_str(), |t| &mut t.1);
        let mut out: Vec<(u64, f64)> = pool.into_iter().map(|(id, s)| (u64::from_str_radix(&id, 16).unwrap(), s)).collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        out
    }

    #[test]
    fn the_turns_beside_a_strong_match_join_at_its_share() {
        let out = run(&[(10, 10.0), (50, 1.0)], |_| 0.1);
        assert_eq!(out[0], (10, 10.0), "the source keeps its place: a share below 1 never lifts a turn above it");
        assert_eq!(&out[1..3], &[(9, 10.0 * ADJACENT_SHARE), (11, 10.0 * ADJACENT_SHARE)]);
        assert!(out.contains(&(49, 1.0 * ADJACENT_SHARE)) && out.contains(&(51, 1.0 * ADJACENT_SHARE)));
        assert_eq!(out.len(), 6);
    }

    #[test]
    fn a_turn_keeps_its_own_score_when_higher_and_is_never_listed_twice() {
        let out = run(&[(10, 10.0), (11, 8.0), (12, 0.5)], |n| if n == 9 { 9.0 } else { 0.1 });
        assert_eq!(out.iter().filter(|t| t.0 == 11).count(), 1);
        assert!(out.contains(&(9, 9.0)), "its own 9.0 beats the share of 3.0");
        assert!(out.contains(&(12, 8.0 * ADJACENT_SHARE)), "already in the pool at 0.5: rises to its neighbour's share");
        assert!(out.contains(&(11, 8.0)), "beside 10, but its own score is higher");
    }

    #[test]
    fn only_the_first_sources_bring_their_neighbours() {
        let pool: Vec<(u64, f64)> = (0..ADJACENT_SOURCES as u64 + 5).map(|i| (100 + 10 * i, 100.0 - i as f64)).collect();
        let out = run(&pool, |_| 0.0);
        assert_eq!(out.len(), pool.len() + 2 * ADJACENT_SOURCES);
        let last = 100 + 10 * (ADJACENT_SOURCES as u64 + 4);
        assert!(!out.iter().any(|t| t.0 == last + 1), "a source past the first ADJACENT_SOURCES brings none");
    }
}
