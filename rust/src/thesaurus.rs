//! A model's near words: for each word of its vocabulary, the words nearest it in the model's own space (each
//! word embedded alone), with their cosine. BM25 also asks for the near words of a query's words, weighted
//! below the query's own, so a question in other words than the stored ones can still match a word
//! ("choice" finds "decision", "dripping" finds "leak"). The dense leg alone carried every synonym before.
//!
//! The table is built once per model, beside it (`thesaurus.tsv`, written by `funes_py.convert.thesaurus`
//! from the model's own whole-word tokens), one line per word: the word, then `near:cosine` fields, tab
//! separated, nearest first. A model without one expands nothing. Pure: parsing and expansion, no disk.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use crate::analyzer::with_bm25_analyzer;
use crate::error::{Error, Result};

/// The table's file name in a model directory.
pub const FILE: &str = "thesaurus.tsv";

/// Near words by word (lower case), nearest first: the table's text, and where each word's fields lie in it.
/// A table holds about 21,000 words and 200,000 fields; a question reads a few, so fields are parsed when read
/// (`near`), not at load, where every one-shot process would pay for all of them.
#[derive(Debug, Default, Clone)]
pub struct Thesaurus {
    text: String,
    fields: HashMap<String, Range<usize>>,
}

/// A word BM25 also asks for: as written (what Lance's query parser analyses), its BM25 term (what the
/// resident index holds), and its weight (a query's own terms weigh 1).
#[derive(Debug, Clone, PartialEq)]
pub struct NearTerm {
    pub word: String,
    pub term: String,
    pub weight: f32,
}

impl Thesaurus {
    /// Reads a table; a malformed field is an error naming its line (a model's table is written by the
    /// converter, so a broken one is a broken model, not input to skip).
    pub fn parse(text: &str) -> Result<Self> {
        let mut fields = HashMap::new();
        let mut start = 0;
        for (n, raw) in text.split_inclusive('\n').enumerate() {
            let line_start = start;
            start += raw.len();
            let line = raw.strip_suffix('\n').map_or(raw, |l| l.strip_suffix('\r').unwrap_or(l));
            let (word, rest) = line.split_once('\t').map_or((line, None), |(w, r)| (w, Some(r)));
            if word.trim().is_empty() {
                continue;
            }
            let Some(rest) = rest else {
                fields.insert(word.trim().to_lowercase(), 0..0);
                continue;
            };
            if let Some(f) = rest.split('\t').find(|f| field(f).is_none()) {
                return Err(Error::model(format!("{FILE} line {}: {f:?} is not word:cosine", n + 1)));
            }
            let at = line_start + word.len() + 1;
            fields.insert(word.trim().to_lowercase(), at..at + rest.len());
        }
        Ok(Self { text: text.to_string(), fields })
    }

    /// The near words of a listed word with their cosines, nearest first (`parse` checked every field).
    fn near(&self, word: &str) -> Option<impl Iterator<Item = (&str, f32)>> {
        let range = self.fields.get(word)?.clone();
        Some(self.text[range].split('\t').filter_map(field))
    }

    /// How many words have near words listed.
    pub fn len(&self) -> usize {
        self.fields.len()
    }

    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// The near words of the query's words: every listed near word of cosine at least `min_cosine`, weighted
    /// `weight` × its cosine (the best weight where two query words share one), except those whose term the
    /// query has already. Query words are plain ASCII words of three letters or more that are not stop words;
    /// names and identifiers are rarely on the list, and expand nothing when they are not.
    pub fn expand(&self, query: &str, min_cosine: f32, weight: f32) -> Vec<NearTerm> {
        let own = with_bm25_analyzer(|a| a.query(query));
        self.expand_terms(query, &own, min_cosine, weight)
    }

    /// `expand` for a query whose own BM25 terms (`Bm25Analyzer::query`) are known already: a recall
    /// analyses its question once for every part that reads it.
    pub fn expand_terms(&self, query: &str, own: &[String], min_cosine: f32, weight: f32) -> Vec<NearTerm> {
        if self.fields.is_empty() {
            return Vec::new();
        }
        with_bm25_analyzer(|a| {
            let mut out: Vec<NearTerm> = Vec::new();
            for w in words(query) {
                let Some(list) = self.near(&w) else { continue };
                if a.query(&w).is_empty() {
                    continue; // a stop word
                }
                for (near, cosine) in list.filter(|&(_, c)| c >= min_cosine) {
                    let Some(term) = a.query(near).into_iter().next() else { continue };
                    if own.contains(&term) {
                        continue;
                    }
                    let w = weight * cosine;
                    match out.iter_mut().find(|t| t.term == term) {
                        Some(t) => t.weight = t.weight.max(w),
                        None => out.push(NearTerm { word: near.to_string(), term, weight: w }),
                    }
                }
            }
            out
        })
    }
}

/// One `near:cosine` field of a table line.
fn field(f: &str) -> Option<(&str, f32)> {
    let (w, c) = f.rsplit_once(':')?;
    Some((w, c.parse().ok()?))
}

/// The plain words of a text a table can list: runs of letters and digits that are ASCII letters only,
/// three or more, lower-cased, each once, in order; not names (`is_name`).
fn words(text: &str) -> Vec<String> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let mut start = 0;
    for w in text.split(|c: char| !c.is_alphanumeric()) {
        let at = start;
        start += w.len() + text[start + w.len()..].chars().next().map_or(0, char::len_utf8);
        if w.len() >= 3 && w.bytes().all(|b| b.is_ascii_alphabetic()) && !is_name(&text[..at], w) {
            let lower = w.to_lowercase();
            if seen.insert(lower.clone()) {
                out.push(lower);
            }
        }
    }
    out
}

/// Whether `word`, written after `before`, is a name: capitalised where a sentence does not start (not
/// first, nor after `.`, `?`, `!` or `:`). A name's near words are other names or noise ("59 Elder Avenue"
/// asked BM25 for heir, senior, older, street, boulevard and road; at 100,000 conversations the near twins
/// that matched them pushed the answer out of the top 8).
fn is_name(before: &str, word: &str) -> bool {
    let capital = word.chars().next().is_some_and(char::is_uppercase);
    let sentence_start = before.trim_end().chars().next_back().is_none_or(|c| ".?!:\n\"'(".contains(c));
    capital && !sentence_start
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_not_expanded() {
        assert_eq!(words("Who fixed the tap at 59 Elder Avenue?"), ["who", "fixed", "the", "tap"]);
        assert_eq!(words("Booking for Hattie Quarrington. Which ferry?"), ["booking", "for", "which", "ferry"]);
        assert_eq!(words("Elder care: Choice of home"), ["elder", "care", "choice", "home"], "sentence starts are words");
    }

    const TABLE: &str = "choice\tdecision:0.74\toption:0.68\tpick:0.67\tthe:0.60\tdecided:0.52\tfar:0.41\n\
                         lamps\tlight:0.74\tlamp:0.70\n\
                         dripping\tleak:0.61\tleaking:0.59\n";

    #[test]
    fn a_query_word_asks_for_its_near_words_weighted_by_their_cosine() {
        let t = Thesaurus::parse(TABLE).unwrap();
        assert_eq!(t.len(), 3);
        let near = t.expand("What was our choice on the lamps?", 0.5, 0.5);
        let got: Vec<(&str, &str, f32)> = near.iter().map(|n| (n.word.as_str(), n.term.as_str(), n.weight)).collect();
        // "decided" stems as "decision" does not ("decid" against "decis"); "the" is a stop word; "far" is
        // below the cosine; "lamp" is the query's own term.
        assert_eq!(
            got,
            vec![
                ("decision", "decis", 0.37),
                ("option", "option", 0.34),
                ("pick", "pick", 0.335),
                ("decided", "decid", 0.26),
                ("light", "light", 0.37)
            ]
        );
        // "leaking" is "leak" as BM25 reads it: one term, at the better weight.
        let drip = t.expand("the tap is dripping", 0.5, 0.5);
        assert_eq!(drip, vec![NearTerm { word: "leak".into(), term: "leak".into(), weight: 0.305 }]);
        assert!(t.expand("The pump leaks", 0.5, 0.5).is_empty(), "only listed words expand");
    }

    #[test]
    fn two_query_words_sharing_a_near_word_keep_its_best_weight() {
        let t = Thesaurus::parse("choice\tdecision:0.74\noption\tdecision:0.6\n").unwrap();
        assert_eq!(t.expand("choice or option", 0.5, 1.0), vec![NearTerm { word: "decision".into(), term: "decis".into(), weight: 0.74 }]);
    }

    #[test]
    fn a_malformed_table_names_its_line() {
        let err = Thesaurus::parse("choice\tdecision:0.74\nlamps\tlight=0.7\n").unwrap_err().to_string();
        assert!(err.contains("line 2") && err.contains("light=0.7"), "{err}");
        assert!(Thesaurus::parse("").unwrap().expand("any choice", 0.5, 0.5).is_empty());
        // Windows line ends, and a listed word with no near words.
        let t = Thesaurus::parse("choice\tdecision:0.74\r\nlamps\r\n").unwrap();
        assert_eq!((t.len(), t.expand("choice of lamps", 0.5, 1.0).len()), (2, 1));
    }
}
