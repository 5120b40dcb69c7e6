//! What the BM25 leg sees. Pure (Lance's analyzer is a pure function of the text).
//!
//! Lance's `simple` tokenizer splits on punctuation, so `MT-4471` becomes `mt` + `4471`: a query for it would
//! rank every `MT-…` ticket and every `4471` alike. Rather than a custom tokenizer inside the index, the text
//! given to the index (the `fts` column) and the query both get each identifier once more in a glued form
//! (`mt4471`), a single rare token that only the exact identifier produces. The shown text is untouched.
//!
//! An identifier is a run of letters and digits joined by `-`, `_`, `.` or `/` that contains at least one
//! letter, one digit and one separator: `MT-4471`, `N-11`, `BLD-9W2LNZYG`, `K-047`, `v1.2.3`; not `e-mail`
//! (no digit) nor `3.5` (no letter). Its letters are not CJK: `MT-4471에서` is `MT-4471` followed by a particle.
//!
//! Hangul, Han and Kana are written without spaces between words, and Korean attaches particles to nouns
//! (`서버가`, `서버를`, `서버에서`): the simple tokenizer would index each as one token that a query for `서버`
//! never matches. So each run of those scripts is indexed as its overlapping character bigrams (`서버가` →
//! `서버 버가`; a run of one character as itself), on the stored side and the query side alike: the classic
//! dictionary-free approach to CJK search. Latin words and identifiers are unchanged. The stored `fts`
//! column holds the bigrams, so changing this changes stored tokens: `ANALYZER_VERSION` is stamped into each
//! memory, and a memory of another version is re-tokenised from its stored text when it is opened.
//!
//! A passage is indexed with the month and year its turn was said in ("May 2023", never shown): people ask
//! "what did John adopt in April 2022?" or "what did we decide in March?", and the turn's words rarely name
//! its own date. Only month and year: a bare day number would match every house number and count in a
//! history (measured in benches/HISTORY.md, "The turn's month in BM25").

/// The version of what this module makes of a text for BM25. 1: identifier glue; 2: CJK bigrams; 3: the
/// turn's month and year.
pub const ANALYZER_VERSION: u32 = 3;

use crate::time::{month_words, unit_month_names};
use lance_index::scalar::inverted::tokenizer::document_tokenizer::LanceTokenizer;
use lance_index::scalar::InvertedIndexParams;
use lance_tokenizer::TokenStream;

/// Whether `c` belongs to a script written without spaces between words: Hangul (syllables, jamo and
/// compatibility jamo), Han (CJK unified ideographs, extension A, compatibility), Hiragana and Katakana
/// (with the half-width forms).
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x11FF | 0x3040..=0x309F | 0x30A0..=0x30FF | 0x3130..=0x318F | 0x3400..=0x4DBF | 0x4E00..=0x9FFF
        | 0xA960..=0xA97F | 0xAC00..=0xD7AF | 0xD7B0..=0xD7FF | 0xF900..=0xFAFF | 0xFF66..=0xFF9F)
}

/// A letter or digit of a word as the identifier rule reads it (CJK ends a word: see the module doc).
fn word_char(c: char) -> bool {
    c.is_alphanumeric() && !is_cjk(c)
}

/// `text` with each run of CJK characters replaced by its overlapping bigrams (a one-character run by
/// itself), set off by spaces from what surrounds it; everything else unchanged.
pub fn cjk_bigrams(text: &str) -> String {
    if !text.chars().any(is_cjk) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() * 2);
    let mut run: Vec<char> = Vec::new();
    let flush = |run: &mut Vec<char>, out: &mut String| {
        if run.is_empty() {
            return;
        }
        out.push(' ');
        if run.len() == 1 {
            out.push(run[0]);
        } else {
            for (i, pair) in run.windows(2).enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.extend(pair);
            }
        }
        out.push(' ');
        run.clear();
    };
    for c in text.chars() {
        if is_cjk(c) {
            run.push(c);
        } else {
            flush(&mut run, &mut out);
            out.push(c);
        }
    }
    flush(&mut run, &mut out);
    out
}

/// The glued forms of the identifiers in `text`, lower-cased, in order of appearance, without repeats.
pub fn identifier_tokens(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let bytes: Vec<char> = text.chars().collect();
    let n = bytes.len();
    let mut i = 0;
    while i < n {
        if !word_char(bytes[i]) {
            i += 1;
            continue;
        }
        // Read one candidate: alnum runs joined by single separators.
        let start = i;
        let mut end = i;
        let mut seps = 0;
        loop {
            while end < n && word_char(bytes[end]) {
                end += 1;
            }
            if end + 1 < n && "-_./".contains(bytes[end]) && word_char(bytes[end + 1]) {
                seps += 1;
                end += 1;
                continue;
            }
            break;
        }
        let cand = &bytes[start..end];
        if seps > 0 && cand.iter().any(|c| c.is_ascii_digit()) && cand.iter().any(|c| c.is_alphabetic()) {
            let glued: String = cand.iter().filter(|c| word_char(**c)).flat_map(|c| c.to_lowercase()).collect();
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
    for w in text.split(|c: char| !word_char(c)) {
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

/// The text stored in the `fts` column: the month and year of the passage's turn (`ts`, see
/// `time::month_words`; nothing when it is not a time), the passage's context (the end of the turn before
/// it, see `chunk::turn_contexts`), the passage (CJK runs as bigrams), then the glued identifiers of both.
pub fn fts_document(text: &str, context: &str, ts: &str) -> String {
    let body = if context.is_empty() { text.to_string() } else { format!("{context}\n{text}") };
    let ids = identifier_tokens(&body);
    let date = month_words(ts);
    let mut out = if date.is_empty() { cjk_bigrams(&body) } else { format!("{date}\n{}", cjk_bigrams(&body)) };
    if !ids.is_empty() {
        out = format!("{out}\n{}", ids.join(" "));
    }
    out
}

/// The BM25 query: the user's words plus the glued form of each identifier in them, plus the English name of
/// each month named in the unit form ("2023년 5월" asks for "May" too: passages are indexed with their month
/// in English, `fts_document`). Characters that the full-text query parser could read as syntax are replaced
/// by spaces, so a query is always plain words.
pub fn fts_query(query: &str) -> String {
    let ids = identifier_tokens(query);
    let plain: String = cjk_bigrams(query).chars().map(|c| if c.is_alphanumeric() || c.is_whitespace() { c } else { ' ' }).collect();
    let mut words: Vec<&str> = plain.split_whitespace().collect();
    words.extend(ids.iter().map(String::as_str));
    words.extend(unit_month_names(query));
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
        let doc = a.document(&fts_document("The pumps were leaking at MT-4471", "", ""));
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
        assert!(!fts_document("ticket 4471 and MT-4472", "", "").contains("mt4471"));
    }

    #[test]
    fn query_is_plain_words_plus_glued_ids() {
        assert_eq!(fts_query("what about MT-4471?"), "what about MT 4471 mt4471");
        assert_eq!(fts_query("-k 100"), "k 100");
        assert_eq!(fts_query("\"quoted\" AND (x)"), "quoted AND x");
    }

    #[test]
    fn a_month_named_in_korean_asks_for_the_month_words_passages_carry() {
        let mut a = Bm25Analyzer::new();
        let may = a.document(&fts_document("입양 서류를 냈어", "", "2023-05-21T10:00:00Z"));
        let asked = a.query("2023년 5월에 뭘 입양했지?");
        for term in ["may", "2023"] {
            assert!(may.contains(&term.to_string()) && asked.contains(&term.to_string()), "{term}: {may:?} {asked:?}");
        }
        assert!(!a.query("5개월 전에 뭘 입양했지?").contains(&"may".to_string()), "개월 is a count of months");
    }

    #[test]
    fn id_terms_cover_glued_and_plain_forms() {
        assert_eq!(id_terms("ask about N11 and MT-4471 at 4pm"), vec!["mt4471", "n11"]);
        assert!(id_terms("meet at 4pm with the mp3 file").is_empty());
    }

    #[test]
    fn cjk_runs_become_bigrams_and_latin_is_untouched() {
        assert_eq!(cjk_bigrams("plain text"), "plain text");
        assert_eq!(cjk_bigrams("서버가 죽었다").split_whitespace().collect::<Vec<_>>(), ["서버", "버가", "죽었", "었다"]);
        assert_eq!(cjk_bigrams("MT-4471에서").split_whitespace().collect::<Vec<_>>(), ["MT-4471", "에서"]);
        assert_eq!(cjk_bigrams("東京").trim(), "東京");
        assert_eq!(cjk_bigrams("a 가 b").split_whitespace().collect::<Vec<_>>(), ["a", "가", "b"]);
    }

    #[test]
    fn identifiers_end_where_hangul_begins() {
        assert_eq!(identifier_tokens("MT-4471에서 P-003을"), vec!["mt4471", "p003"]);
        assert_eq!(id_terms("P003을 확인"), vec!["p003"]);
    }

    #[test]
    fn a_bare_korean_noun_finds_it_with_a_particle() {
        let mut a = Bm25Analyzer::new();
        let doc = a.document(&fts_document("어제 서버가 멈췄고 서버에서 로그를 봤다", "", ""));
        for term in a.query("서버") {
            assert!(doc.contains(&term), "{term} not in {doc:?}");
        }
        assert!(a.query("서버 로그").iter().all(|t| doc.contains(t)));
    }

    #[test]
    fn document_keeps_text_and_appends_ids() {
        assert_eq!(fts_document("no ids", "", ""), "no ids");
        assert_eq!(fts_document("fix N-11 now", "", ""), "fix N-11 now\nn11");
        assert_eq!(fts_document("Yes, C.", "Pick C for N-11?", ""), "Pick C for N-11?\nYes, C.\nn11");
    }

    #[test]
    fn a_passage_is_found_by_the_month_it_was_said_in() {
        let doc = fts_document("We adopted a puppy, N-11 is her tag.", "Any news?", "2022-04-09T10:00:00Z");
        assert_eq!(doc, "April 2022\nAny news?\nWe adopted a puppy, N-11 is her tag.\nn11");
        let mut a = Bm25Analyzer::new();
        let have = a.document(&doc);
        let asked = a.query("What did John adopt in April 2022?");
        for t in ["april", "2022"].map(String::from) {
            assert!(asked.contains(&t) && have.contains(&t), "{t}: asked {asked:?}, indexed {have:?}");
        }
        assert!(!a.document(&fts_document("We adopted a puppy.", "", "2022-05-09")).contains(&"april".to_string()));
    }
}
