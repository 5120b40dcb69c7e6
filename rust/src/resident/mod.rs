//! A resident copy of one memory for a warm engine: every chunk's fields, int8 codes of its vector and a
//! BM25 inverted index, in RAM. Pure: `store` fills it and keeps it in step; `search` queries it.
//!
//! Why: each Lance query costs 10–25 ms on two cores whatever the memory's size (planning, reading index
//! pages, re-reading vectors to refine, fetching columns), and a recall makes three of them (dense, BM25,
//! neighbouring turns). From RAM the same work is an exhaustive int8 scan (about 2 ms at 60,000 rows),
//! a BM25 pass over a few posting lists (under 1 ms) and a map lookup. Lance stays the memory of record and
//! answers every one-shot caller (the CLI), which would pay more to load a copy than to query the indexes.
//!
//! Cost: about 0.4 KB per chunk for the codes (384 dimensions) and postings, about 0.1 KB for its packed
//! fields (`rows`), plus the text itself.

pub mod bm25;
pub mod dense;
pub mod rows;

use crate::analyzer::{id_terms, with_bm25_analyzer};
use crate::record::{RowView, StoredChunk};
use bm25::{term_counts, Bm25Index};
use dense::{encode, Int8Vectors};
use rows::Rows;

/// A query vector coded for the resident scan.
pub type CodedQuery = (Vec<i8>, f32);

pub fn code_query(v: &[f32]) -> CodedQuery {
    encode(v)
}

/// A query's BM25 terms, as the index analysed the documents, each weighing 1: what tests ask the BM25 leg
/// with. A recall analyses its question once in `search::question`, near words included.
#[cfg(test)]
pub fn query_terms(query: &str) -> Vec<(String, f32)> {
    with_bm25_analyzer(|a| a.query(query)).into_iter().map(|t| (t, 1.0)).collect()
}

/// The copy of a memory as of one Lance version.
#[derive(Debug, Clone)]
pub struct Resident {
    /// The Lance version this copy reflects; `store` compares it with the dataset's.
    pub version: u64,
    /// Every chunk's fields, packed, with each session's rows (for neighbouring turns); the codes stand
    /// for the vectors.
    rows: Rows,
    vectors: Int8Vectors,
    bm25: Bm25Index,
    /// Each row's identifier terms (`analyzer::id_terms` of its text), for fusion's identifier bonus: taken
    /// once here rather than from up to 200 passages in every recall that names an identifier.
    identifiers: Vec<Box<[String]>>,
}

/// Rows coded and analysed, ready to be added: the slow part of an addition, done outside any lock.
pub struct Prepared {
    rows: Vec<StoredChunk>,
    codes: Vec<CodedQuery>,
    /// Each row's distinct BM25 terms with their counts, and its length in terms (`bm25::term_counts`).
    terms: Vec<(Vec<(String, u32)>, u32)>,
    identifiers: Vec<Box<[String]>>,
}

impl Prepared {
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}

/// Codes and analyses rows (their vectors are consumed); `fts` is each row's `fts` column text, what
/// Lance's BM25 index holds for it.
pub fn prepare(rows: Vec<StoredChunk>, fts: Vec<String>) -> Prepared {
    let mut rows = rows;
    let codes = rows.iter_mut().map(|r| encode(&std::mem::take(&mut r.vector))).collect();
    let (terms, identifiers) = analyse(&rows, &fts);
    for r in rows.iter_mut() {
        r.context = String::new(); // in the terms now
    }
    Prepared { rows, codes, terms, identifiers }
}

/// A batch smaller than this is analysed on the calling thread: threads would cost more than they save.
const PARALLEL_MIN_ROWS: usize = 256;
/// At most this many threads analyse one batch.
const MAX_ANALYSE_THREADS: usize = 8;

/// Each row's BM25 term counts and identifier terms. Analysis (tokenising and stemming the text and its
/// context, counting terms) was about half the cost of loading a memory into RAM: a tenant's first recall
/// after its memory is opened waits for all of it, so a large batch is split across the machine's cores.
type Analysed = (Vec<(Vec<(String, u32)>, u32)>, Vec<Box<[String]>>);

fn analyse(rows: &[StoredChunk], fts: &[String]) -> Analysed {
    fn serial(rows: &[StoredChunk], fts: &[String]) -> Analysed {
        let terms = with_bm25_analyzer(|a| fts.iter().map(|f| term_counts(a.document(f))).collect());
        (terms, rows.iter().map(|r| id_terms(&r.chunk.text).into_boxed_slice()).collect())
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(MAX_ANALYSE_THREADS);
    if threads < 2 || rows.len() < PARALLEL_MIN_ROWS {
        return serial(rows, fts);
    }
    let per = rows.len().div_ceil(threads);
    std::thread::scope(|s| {
        let parts: Vec<_> = rows.chunks(per).zip(fts.chunks(per)).map(|(r, f)| s.spawn(move || serial(r, f))).collect();
        let (mut terms, mut identifiers) = (Vec::with_capacity(rows.len()), Vec::with_capacity(rows.len()));
        for part in parts {
            let (t, i) = part.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            terms.extend(t);
            identifiers.extend(i);
        }
        (terms, identifiers)
    })
}

impl Resident {
    pub fn new(dim: usize, version: u64) -> Self {
        Self { version, rows: Rows::default(), vectors: Int8Vectors::new(dim), bm25: Bm25Index::default(), identifiers: Vec::new() }
    }

    pub fn dim(&self) -> usize {
        self.vectors.dim()
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Adds prepared rows (vectors of another dimension are a caller bug: the memory is stamped with one).
    pub fn extend(&mut self, p: Prepared) {
        self.identifiers.extend(p.identifiers);
        for ((row, (codes, scale)), (counts, len)) in p.rows.iter().zip(p.codes).zip(p.terms) {
            self.vectors.push(&codes, scale);
            self.bm25.push_counts(counts, len);
            self.rows.push(row);
        }
    }

    /// Row `i` as a `StoredChunk` of its own, without vector or context.
    pub fn row(&self, i: usize) -> StoredChunk {
        self.rows.get(i)
    }

    pub fn id(&self, i: usize) -> &str {
        self.rows.id(i)
    }

    /// Row `i`'s text and time, read in place.
    pub fn text(&self, i: usize) -> &str {
        self.rows.text(i)
    }

    pub fn ts(&self, i: usize) -> &str {
        self.rows.ts(i)
    }

    /// Dense leg: the `n` rows nearest the query that `admit` accepts (all: `None`), best first, with cosine estimates.
    pub fn dense(&self, query: &CodedQuery, n: usize, admit: Option<&dyn Fn(&RowView) -> bool>) -> Vec<(usize, f32)> {
        match admit {
            Some(admit) => self.vectors.top(query, n, Some(&|i| admit(&self.rows.view(i)))),
            None => self.vectors.top(query, n, None),
        }
    }

    /// BM25 leg: the `n` best rows for the query's weighted terms that `admit` accepts (all: `None`), best
    /// first, with BM25 scores.
    pub fn bm25(&self, terms: &[(String, f32)], n: usize, admit: Option<&dyn Fn(&RowView) -> bool>) -> Vec<(usize, f32)> {
        match admit {
            Some(admit) => self.bm25.top(terms, n, &|i| admit(&self.rows.view(i))),
            // No filter: no row's fields are looked at (a common term touches thousands of rows).
            None => self.bm25.top(terms, n, &|_| true),
        }
    }

    /// A term's inverse document frequency in this memory (`None`: no row holds it).
    pub fn term_idf(&self, term: &str) -> Option<f32> {
        self.bm25.term_idf(term)
    }

    /// The BM25 scores of rows `rows` for the query's terms (0 where a row shares none of them).
    pub fn bm25_scores(&self, terms: &[(String, f32)], rows: &[usize]) -> Vec<f32> {
        self.bm25.scores(terms, rows)
    }

    /// Row `i`'s identifier terms (`analyzer::id_terms` of its text).
    pub fn identifiers(&self, i: usize) -> &[String] {
        &self.identifiers[i]
    }

    /// The cosine estimate between row `i` and the query.
    pub fn cosine(&self, i: usize, query: &CodedQuery) -> f32 {
        self.vectors.cosine(i, query)
    }

    /// What a filter tests of row `i`.
    pub fn view(&self, i: usize) -> RowView<'_> {
        self.rows.view(i)
    }

    /// Row `i`'s turn's place in its session.
    pub fn seq(&self, i: usize) -> i64 {
        self.rows.seq(i)
    }

    /// The rows of the turns just before and after row `i`'s, in its session.
    pub fn adjacent(&self, i: usize) -> Vec<usize> {
        self.rows.adjacent(i)
    }

    /// Every row of a session, in the order they were added.
    pub fn session(&self, session_id: &str) -> Vec<StoredChunk> {
        self.rows.session(session_id).iter().map(|&i| self.rows.get(i as usize)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::Chunk;

    fn row(id: &str, session: &str, seq: i64, text: &str, vector: Vec<f32>) -> StoredChunk {
        StoredChunk {
            chunk: Chunk {
                id: id.into(),
                text: text.into(),
                session_id: session.into(),
                turn_uuid: format!("{session}-{seq}"),
                seq,
                role: "user".into(),
                ..Default::default()
            },
            ts_ms: Some(seq),
            vector,
            context: String::new(),
        }
    }

    fn prepare_rows(rows: Vec<StoredChunk>) -> Prepared {
        let fts = rows.iter().map(|r| crate::analyzer::fts_document(&r.chunk.text, &r.context, &r.chunk.ts)).collect();
        prepare(rows, fts)
    }

    #[test]
    fn both_legs_and_sessions_answer_from_ram() {
        let mut r = Resident::new(3, 7);
        r.extend(prepare_rows(vec![
            row("a", "s1", 1, "the pump seal is leaking", vec![1.0, 0.0, 0.0]),
            row("b", "s1", 2, "ticket MT-4471 is open for it", vec![0.0, 1.0, 0.0]),
        ]));
        r.extend(prepare_rows(vec![row("c", "s2", 1, "ticket MT-4472 for the motor", vec![0.0, 0.0, 1.0])]));
        assert_eq!(r.len(), 3);
        assert!(r.row(0).vector.is_empty(), "vectors are dropped once coded");
        let q = code_query(&[0.1, 0.9, 0.0]);
        assert_eq!(r.dense(&q, 1, None)[0].0, 1);
        let terms = query_terms;
        assert_eq!(r.bm25(&terms("MT-4471"), 3, None)[0].0, 1);
        assert_eq!(r.bm25(&terms("leaking pumps"), 3, None).iter().map(|x| x.0).collect::<Vec<_>>(), vec![0]);
        assert_eq!(r.bm25(&terms("MT-4471"), 3, Some(&|c: &RowView| c.session_id == "s2"))[0].0, 2);
        assert_eq!(r.session("s1").iter().map(|c| c.chunk.id.as_str()).collect::<Vec<_>>(), vec!["a", "b"]);
        assert!(r.session("nope").is_empty());
        assert!((r.cosine(0, &code_query(&[1.0, 0.0, 0.0])) - 1.0).abs() < 1e-3);
    }

    #[test]
    fn a_large_batch_is_analysed_in_parts_and_in_order() {
        // Enough rows for several threads, each with its own terms: a part joined out of order, or a row
        // analysed twice or not at all, shows up as a row with another row's terms.
        let n = PARALLEL_MIN_ROWS * 3 + 7;
        let rows: Vec<_> = (0..n).map(|i| row(&format!("r{i}"), "s", i as i64, &format!("valve V-{i} torque"), vec![])).collect();
        let fts: Vec<String> = rows.iter().map(|r| crate::analyzer::fts_document(&r.chunk.text, "", "")).collect();
        let (terms, identifiers) = analyse(&rows, &fts);
        assert_eq!((terms.len(), identifiers.len()), (n, n));
        for (i, (t, ids)) in terms.iter().zip(&identifiers).enumerate() {
            let serial = with_bm25_analyzer(|a| term_counts(a.document(&fts[i])));
            assert_eq!(t, &serial, "row {i}");
            assert!(ids.iter().any(|x| x.contains(&format!("{i}"))), "row {i}: {ids:?}");
        }
    }
}
