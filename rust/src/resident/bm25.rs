//! BM25 over an in-memory inverted index. Pure.
//!
//! The scoring is Lance's (`lance-index`, `scalar::inverted::scorer`): k1 = 1.2, b = 0.75,
//! idf = ln(1 + (N − n + 0.5) / (n + 0.5)), document length in terms after analysis. Terms come from the
//! same analyzer as Lance's FTS index (`analyzer::Bm25Analyzer`), so a passage ranks here as it does there.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

const K1: f32 = 1.2;
const B: f32 = 0.75;

/// Postings of a growing set of documents, numbered in the order they were added.
#[derive(Debug, Clone, Default)]
pub struct Bm25Index {
    terms: HashMap<String, u32, BuildHasherDefault<Fnv1a>>,
    /// Per term id: (document, term frequency), documents in increasing order.
    postings: Vec<Vec<(u32, u32)>>,
    doc_len: Vec<u32>,
    total_len: u64,
}

fn idf(docs_with_term: usize, docs: usize) -> f32 {
    let (n, big_n) = (docs_with_term as f32, docs as f32);
    ((big_n - n + 0.5) / (n + 0.5) + 1.0).ln()
}

/// FNV-1a: terms are short strings, looked up once per distinct term of every document while a memory is
/// loaded; std's SipHash (built against hash flooding, which a user's own memory cannot mount) cost several
/// times more there.
#[derive(Default)]
pub struct Fnv1a(u64);

impl Hasher for Fnv1a {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 { 0xcbf2_9ce4_8422_2325 } else { self.0 };
        for &b in bytes {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

/// A document's distinct terms with their counts, and its length in terms: what `push_counts` adds. Taken
/// apart from the index so that loading a memory can do it on several threads.
pub fn term_counts(mut terms: Vec<String>) -> (Vec<(String, u32)>, u32) {
    let len = terms.len() as u32;
    terms.sort_unstable();
    let mut counts: Vec<(String, u32)> = Vec::with_capacity(terms.len());
    for t in terms {
        match counts.last_mut() {
            Some((last, n)) if *last == t => *n += 1,
            _ => counts.push((t, 1)),
        }
    }
    (counts, len)
}

/// Documents whose scores `lower_bound` ranks, per document wanted.
const BOUND_SAMPLE_PER_DOC: usize = 8;

/// A lower bound of the `n`-th best score that the documents `allow` accepts will have (scores only grow):
/// the `n`-th best among the first documents found, which the rarest terms found, so likely the best. Cheap
/// however many documents the common terms have touched. `None`: too few documents to tell.
fn lower_bound(touched: &[u32], score: &[f32], n: usize, allow: &dyn Fn(usize) -> bool) -> Option<f32> {
    let first = &touched[..touched.len().min(BOUND_SAMPLE_PER_DOC * n)];
    let mut s: Vec<f32> = first.iter().map(|&d| d as usize).filter(|&d| allow(d)).map(|d| score[d]).collect();
    if s.len() < n {
        return None;
    }
    let (_, nth, _) = s.select_nth_unstable_by(n - 1, |a, b| b.total_cmp(a));
    Some(*nth)
}

impl Bm25Index {
    pub fn len(&self) -> usize {
        self.doc_len.len()
    }

    pub fn is_empty(&self) -> bool {
        self.doc_len.is_empty()
    }

    /// A term's inverse document frequency, as the scores use it; `None` for a term no document holds.
    pub fn term_idf(&self, term: &str) -> Option<f32> {
        let id = *self.terms.get(term)?;
        Some(idf(self.postings[id as usize].len(), self.len()))
    }

    /// Adds the next document, given its analysed terms.
    pub fn push(&mut self, terms: &[String]) {
        let (counts, len) = term_counts(terms.to_vec());
        self.push_counts(counts, len);
    }

    /// Adds the next document, given `term_counts` of its analysed terms.
    pub fn push_counts(&mut self, counts: Vec<(String, u32)>, len: u32) {
        let doc = self.doc_len.len() as u32;
        for (t, n) in counts {
            let id = match self.terms.get(t.as_str()) {
                Some(&id) => id,
                None => {
                    let id = self.postings.len() as u32;
                    self.terms.insert(t, id);
                    self.postings.push(Vec::new());
                    id
                }
            };
            self.postings[id as usize].push((doc, n));
        }
        self.doc_len.push(len);
        self.total_len += len as u64;
    }

    /// The `n` best documents for the query terms among those `allow` accepts, best first, with their BM25
    /// scores. Documents sharing no term with the query are not returned.
    ///
    /// Exact, with MaxScore pruning (as in Lucene): terms go rarest first, and before a long posting list a
    /// lower bound of the `n`-th best score is compared with what the remaining terms could still add to a
    /// document they alone contain (each term at most `idf × (k1 + 1)`). Once that cannot reach the `n`-th best, no new
    /// document can enter the top, and the remaining lists only add to documents already found. Korean and
    /// Japanese queries are many character bigrams, some in most documents (particles such as `에서`): walking
    /// those lists in full was most of a recall's search time.
    pub fn top(&self, query: &[(String, f32)], n: usize, allow: &dyn Fn(usize) -> bool) -> Vec<(usize, f32)> {
        let docs = self.len();
        if docs == 0 || n == 0 {
            return Vec::new();
        }
        let avgdl = self.total_len as f32 / docs as f32;
        let mut lists: Vec<(&[(u32, u32)], f32)> = query
            .iter()
            .filter_map(|(t, weight)| Some((self.terms.get(t)?, weight)))
            .map(|(&id, weight)| {
                let list = self.postings[id as usize].as_slice();
                (list, weight * idf(list.len(), docs) * (K1 + 1.0))
            })
            .collect();
        lists.sort_by(|a, b| b.1.total_cmp(&a.1));
        let mut rest: f32 = lists.iter().map(|l| l.1).sum();
        // Dense accumulators: a 60,000-row memory costs a 240 KB buffer, cheaper than hashing every posting.
        let mut score = vec![0f32; docs];
        let mut touched: Vec<u32> = Vec::new();
        let mut closed = false;
        for (list, w) in lists {
            let add = |d: u32, tf: u32| {
                let tf = tf as f32;
                w * tf / (tf + K1 * (1.0 - B + B * self.doc_len[d as usize] as f32 / avgdl))
            };
            if !closed && list.len() > touched.len() {
                closed = lower_bound(&touched, &score, n, allow).is_some_and(|theta| theta > rest);
            }
            rest -= w;
            if !closed {
                for &(d, tf) in list {
                    let slot = &mut score[d as usize];
                    if *slot == 0.0 {
                        touched.push(d);
                    }
                    *slot += add(d, tf);
                }
            } else if touched.len() * (usize::BITS - list.len().leading_zeros()) as usize <= list.len() {
                for &d in &touched {
                    if let Ok(i) = list.binary_search_by_key(&d, |&(doc, _)| doc) {
                        score[d as usize] += add(d, list[i].1);
                    }
                }
            } else {
                for &(d, tf) in list {
                    if score[d as usize] != 0.0 {
                        score[d as usize] += add(d, tf);
                    }
                }
            }
        }
        // Only documents scoring at least a lower bound of the n-th best can be in the top n: the common terms
        // may have touched most of the memory, and all of them would have to be sorted otherwise.
        let theta = lower_bound(&touched, &score, n, allow).unwrap_or(0.0);
        let scored: Vec<(usize, f32)> =
            touched.into_iter().map(|d| d as usize).filter(|&d| score[d] >= theta && allow(d)).map(|d| (d, score[d])).collect();
        super::dense::top_n(scored, n)
    }

    /// The BM25 score of each of `docs` for the query terms (0 for a document sharing no term), exactly as
    /// `top` computes it: fusion needs the score of passages only the dense leg found.
    pub fn scores(&self, query: &[(String, f32)], docs: &[usize]) -> Vec<f32> {
        let total = self.len();
        if total == 0 {
            return vec![0.0; docs.len()];
        }
        let avgdl = self.total_len as f32 / total as f32;
        let lists: Vec<(&Vec<(u32, u32)>, f32)> =
            query.iter().filter_map(|(t, weight)| Some((&self.postings[*self.terms.get(t)? as usize], *weight))).collect();
        docs.iter()
            .map(|&d| {
                let norm = K1 * (1.0 - B + B * self.doc_len[d] as f32 / avgdl);
                lists
                    .iter()
                    .filter_map(|(list, weight)| {
                        let i = list.binary_search_by_key(&(d as u32), |&(doc, _)| doc).ok()?;
                        let tf = list[i].1 as f32;
                        Some(weight * idf(list.len(), total) * (K1 + 1.0) * tf / (tf + norm))
                    })
                    .sum()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    /// A query's terms, each weighing 1.
    fn q(s: &str) -> Vec<(String, f32)> {
        s.split_whitespace().map(|t| (t.to_string(), 1.0)).collect()
    }

    #[test]
    fn rare_terms_and_repeats_rank_higher() {
        let mut ix = Bm25Index::default();
        ix.push(&terms("pump seal leak"));
        ix.push(&terms("pump motor"));
        ix.push(&terms("pump seal seal"));
        ix.push(&terms("weather talk"));
        let top = ix.top(&q("seal"), 10, &|_| true);
        assert_eq!(top.iter().map(|x| x.0).collect::<Vec<_>>(), vec![2, 0]);
        assert!(top[0].1 > top[1].1);
        // "pump" is in three of four documents: it matches, but weighs less than "seal".
        let both = ix.top(&q("pump seal"), 10, &|_| true);
        assert_eq!(both.len(), 3);
        assert_eq!(both[2].0, 1);
        assert!(ix.top(&q("absent"), 10, &|_| true).is_empty());
    }

    #[test]
    fn scores_follow_the_lance_formula() {
        let mut ix = Bm25Index::default();
        ix.push(&terms("a b"));
        ix.push(&terms("b c d e"));
        let s = ix.top(&q("a"), 1, &|_| true)[0].1;
        // N = 2, n = 1, dl = 2, avgdl = 3.
        let expected = idf(1, 2) * 2.2 * 1.0 / (1.0 + 1.2 * (0.25 + 0.75 * 2.0 / 3.0));
        assert!((s - expected).abs() < 1e-6);
    }

    #[test]
    fn scores_of_given_documents_equal_the_top_lists() {
        let mut idx = Bm25Index::default();
        for d in ["pump seal leak", "seal", "motor bearing", "pump pump motor"] {
            idx.push(&terms(d));
        }
        let query = q("pump seal");
        let top = idx.top(&query, 10, &|_| true);
        let docs: Vec<usize> = top.iter().map(|&(d, _)| d).chain([2]).collect();
        let scores = idx.scores(&query, &docs);
        for (&(_, want), got) in top.iter().zip(&scores) {
            assert!((want - got).abs() < 1e-6, "{want} vs {got}");
        }
        assert_eq!(scores[top.len()], 0.0, "shares no term");
    }

    #[test]
    fn pruning_keeps_the_exact_top() {
        // Term frequencies fall off like natural language (Zipf: term k about 1/(k+1) as often as the first),
        // so some terms are in most documents (like Korean particle bigrams) and the pruning's decisions fall
        // on both sides of the bound. The pruned top must equal scoring every document.
        let mut x = 42u64;
        let mut next = |m: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        let cumulative: Vec<f64> = (0..500)
            .scan(0.0, |acc, k| {
                *acc += 1.0 / (k as f64 + 1.0);
                Some(*acc)
            })
            .collect();
        let word = |r: u64| {
            let u = r as f64 / 1e9 * cumulative[499];
            format!("t{}", cumulative.partition_point(|&c| c < u))
        };
        let mut ix = Bm25Index::default();
        for _ in 0..3_000 {
            let len = 3 + next(20);
            let doc: Vec<String> = (0..len).map(|_| word(next(1_000_000_000))).collect();
            ix.push(&doc);
        }
        let all: Vec<usize> = (0..ix.len()).collect();
        for q in 0..200 {
            // Half the queries in natural proportions, half of terms of middling frequency, where a document
            // with several of the commoner terms can outrank one with only the rarest.
            // Every third query also weighs its terms below 1, as near words are (`thesaurus`).
            let mut query: Vec<(String, f32)> = Vec::new();
            for _ in 0..2 + q % 8 {
                let t = if q % 2 == 0 { word(next(1_000_000_000)) } else { format!("t{}", 3 + next(40)) };
                let weight = if q % 3 == 1 { 0.2 + next(80) as f32 / 100.0 } else { 1.0 };
                query.push((t, weight));
            }
            assert!(!ix.top(&query, 1, &|_| true).is_empty(), "query {q} matches something");
            let n = [1, 8, 30, 100][q % 4];
            let allow = |d: usize| q % 3 != 0 || d.is_multiple_of(2);
            let brute: Vec<(usize, f32)> = all.iter().copied().zip(ix.scores(&query, &all)).filter(|&(d, s)| s > 0.0 && allow(d)).collect();
            let want = crate::resident::dense::top_n(brute, n);
            let got = ix.top(&query, n, &allow);
            assert_eq!(got.len(), want.len(), "query {q}");
            for (g, w) in got.iter().zip(&want) {
                assert!((g.1 - w.1).abs() < 1e-4, "query {q}: {got:?} vs {want:?}");
            }
            // Same documents, up to ties broken by float rounding of equal scores.
            let ids = |v: &[(usize, f32)]| v.iter().map(|x| x.0).collect::<std::collections::BTreeSet<_>>();
            let boundary = want.last().map_or(0.0, |w| w.1);
            let differing: Vec<_> = ids(&got).symmetric_difference(&ids(&want)).copied().collect();
            assert!(differing.iter().all(|&d| (ix.scores(&query, &[d])[0] - boundary).abs() < 1e-4), "query {q}");
        }
    }

    #[test]
    fn a_weighted_term_adds_its_weight_times_its_score() {
        let mut ix = Bm25Index::default();
        for d in ["choice made", "decision taken", "decision", "weather"] {
            ix.push(&terms(d));
        }
        let own = ix.scores(&q("decision"), &[1])[0];
        let near = ix.top(&[("choice".to_string(), 1.0), ("decision".to_string(), 0.37)], 10, &|_| true);
        let got: std::collections::HashMap<usize, f32> = near.into_iter().collect();
        assert!((got[&1] - 0.37 * own).abs() < 1e-6, "{got:?}");
        assert!(got[&0] > got[&2], "the query's own word outweighs a near word: {got:?}");
    }

    #[test]
    fn filter_applies_before_the_limit() {
        let mut ix = Bm25Index::default();
        for _ in 0..5 {
            ix.push(&terms("x"));
        }
        let top = ix.top(&q("x"), 2, &|d| d >= 3);
        assert_eq!(top.iter().map(|x| x.0).collect::<Vec<_>>(), vec![3, 4]);
    }
}
