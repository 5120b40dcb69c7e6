//! What the BM25 leg sees. Pure (Lance's analyzer is a pure function of the text).
//!
//! Lance's `simple` tokenizer splits on punctuation, so `MT-4471` becomes `mt` + `4471`: a query for it would
//! rank every `MT-…` ticket and every `4471` alike. Rather than a custom tokenizer inside the index, the text
//! given to the index (the `fts` column) and the query both get each identifier once more in a glued form
//! (`mt4471`), a single rare token that only the exact identifier produces. The shown text is untouched.
//!
//! An identifier is a run of letters and digits joined by `-`, `_`, `.` or `/` that contains at least one
//! letter, one digit and one separator: `MT-4471`, `N-11`, `BLD-9W2LNZYG`, `K-047`, `v1.2.3`; not `e-mail`
//! (no digit) nor `3.5` (no letter).

use lance_index::scalar::inverted::tokenizer::document_tokenizer::LanceTokenizer;
use lance_index::scalar::InvertedIndexParams;
use lance_tokenizer::TokenStream;

/// The glued forms of the identifiers in `text`, lower-cased, in order of appearance, without repeats.
pub fn identifier_tokens(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let bytes: Vec<char> = text.chars().collect();
    let n = bytes.len();
    let mut i = 0;
    while i < n {
        if !bytes[i].is_alphanumeric() {
            i += 1;
            continue;
        }
        // Read one candidate: alnum runs joined by single separators.
        let start = i;
        let mut end = i;
        let mut seps = 0;
        loop {
            while end < n && bytes[end].is_alphanumeric() {
                end += 1;
            }
            if end + 1 < n && "-_./".contains(bytes[end]) && bytes[end + 1].is_alphanumeric() {
                seps += 1;
                end += 1;
                continue;
            }
            break;
        }
        let cand = &bytes[start..end];
        if seps > 0 && cand.iter().any(|c| c.is_ascii_digit()) && cand.iter().any(|c| c.is_alphabetic()) {
            let glued: String = cand.iter().filter(|c| c.is_alphanumeric()).flat_map(|c| c.to_lowercase()).collect();
            if glued.chars().count() <= 40 && !out.contains(&glued) {
                out.push(glued);
            }
        }
        i = end.max(i + 1);
    }
    out
}

/// Identifier terms for the relevance guard: the glued identifiers plus plain words that mix letters with
/// at least two digits (`N11`, `P003`; not `4pm` or `mp3`), lower-cased.
pub fn id_terms(text: &str) -> Vec<String> {
    let mut out = identifier_tokens(text);
    for w in text.split(|c: char| !c.is_alphanumeric()) {
        let digits = w.chars().filter(|c| c.is_ascii_digit()).count();
        if digits >= 2 && w.chars().any(|c| c.is_alphabetic()) {
            let l = w.to_lowercase();
            if !out.contains(&l) {
                out.push(l);
            }
        }
    }
    out
}

/// The text stored in the `fts` column: the passage's context (the end of the turn before it, see
/// `chunk::turn_contexts`), the passage, then the glued identifiers of both.
pub fn fts_document(text: &str, context: &str) -> String {
    let body = if context.is_empty() { text.to_string() } else { format!("{context}\n{text}") };
    let ids = identifier_tokens(&body);
    if ids.is_empty() {
        return body;
    }
    format!("{body}\n{}", ids.join(" "))
}

/// The BM25 query: the user's words plus the glued form of each identifier in them. Characters that the
/// full-text query parser could read as syntax are replaced by spaces, so a query is always plain words.
pub fn fts_query(query: &str) -> String {
    let ids = identifier_tokens(query);
    let plain: String = query.chars().map(|c| if c.is_alphanumeric() || c.is_whitespace() { c } else { ' ' }).collect();
    let mut words: Vec<&str> = plain.split_whitespace().collect();
    words.extend(ids.iter().map(String::as_str));
    words.join(" ")
}

/// Lance's BM25 analyzer with the parameters the FTS index is built with (`store` builds it with the
/// defaults): the simple tokenizer, lower case, English stemming and stop words, ASCII folding, tokens of at
/// most 40 characters. The resident BM25 (`resident::bm25`) tokenizes with it, so both BM25 implementations
/// see exactly the same terms.
pub struct Bm25Analyzer(Box<dyn LanceTokenizer>);

impl Bm25Analyzer {
    pub fn new() -> Self {
        Self(InvertedIndexParams::default().build().expect("the default FTS parameters are valid"))
    }

    /// The terms a stored passage contributes to the index, from its `fts` text (`fts_document`).
    pub fn document(&mut self, fts_text: &str) -> Vec<String> {
        collect(self.0.token_stream_for_doc(fts_text))
    }

    /// The terms of a query (its `fts_query` form), each once.
    pub fn query(&mut self, query: &str) -> Vec<String> {
        let mut terms = collect(self.0.token_stream_for_search(&fts_query(query)));
        let mut seen = std::collections::HashSet::new();
        terms.retain(|t| seen.insert(t.clone()));
        terms
    }
}

impl Default for Bm25Analyzer {
    fn default() -> Self {
        Self::new()
    }
}

fn collect(mut stream: lance_tokenizer::BoxTokenStream<'_>) -> Vec<String> {
    let mut out = Vec::new();
    while stream.advance() {
        out.push(stream.token().text.clone());
    }
    out
}

thread_local! {
    static BM25_ANALYZER: std::cell::RefCell<Bm25Analyzer> = std::cell::RefCell::new(Bm25Analyzer::new());
}

/// Runs `f` with this thread's analyzer (building one costs its stemmer and stop-word list; a query should
/// not pay that).
pub fn with_bm25_analyzer<R>(f: impl FnOnce(&mut Bm25Analyzer) -> R) -> R {
    BM25_ANALYZER.with(|a| f(&mut a.borrow_mut()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bm25_analyzer_stems_drops_stop_words_and_keeps_glued_ids() {
        let mut a = Bm25Analyzer::new();
        let doc = a.document(&fts_document("The pumps were leaking at MT-4471", ""));
        assert!(doc.contains(&"pump".to_string()), "{doc:?}");
        assert!(doc.contains(&"mt4471".to_string()), "{doc:?}");
        assert!(!doc.contains(&"the".to_string()), "{doc:?}");
        assert_eq!(a.query("leaking pump pump MT-4471?"), vec!["leak", "pump", "mt", "4471", "mt4471"]);
    }

    #[test]
    fn glues_identifiers() {
        assert_eq!(
            identifier_tokens("ticket MT-4471 blocks N-11; see BLD-9W2LNZYG and K-047."),
            vec!["mt4471", "n11", "bld9w2lnzyg", "k047"]
        );
    }

    #[test]
    fn ignores_plain_words_and_numbers() {
        assert!(identifier_tokens("an e-mail about 4471 and 3.5 percent").is_empty());
    }

    #[test]
    fn distinct_ids_give_distinct_tokens() {
        let a = identifier_tokens("MT-4471");
        let b = identifier_tokens("MT-4472");
        assert_ne!(a, b);
        assert!(!fts_document("ticket 4471 and MT-4472", "").contains("mt4471"));
    }

    #[test]
    fn query_is_plain_words_plus_glued_ids() {
        assert_eq!(fts_query("what about MT-4471?"), "what about MT 4471 mt4471");
        assert_eq!(fts_query("-k 100"), "k 100");
        assert_eq!(fts_query("\"quoted\" AND (x)"), "quoted AND x");
    }

    #[test]
    fn id_terms_cover_glued_and_plain_forms() {
        assert_eq!(id_terms("ask about N11 and MT-4471 at 4pm"), vec!["mt4471", "n11"]);
        assert!(id_terms("meet at 4pm with the mp3 file").is_empty());
    }

    #[test]
    fn document_keeps_text_and_appends_ids() {
        assert_eq!(fts_document("no ids", ""), "no ids");
        assert_eq!(fts_document("fix N-11 now", ""), "fix N-11 now\nn11");
        assert_eq!(fts_document("Yes, C.", "Pick C for N-11?"), "Pick C for N-11?\nYes, C.\nn11");
    }
}
