//! Options of every call, each a struct whose defaults are named constants in one place. The CLI, the MCP
//! tool and the HTTP route build these structs; none of them repeats a number.

/// Hits returned by recall.
pub const DEFAULT_K: usize = 8;
/// Passages kept after fusion, for the relevance floor, the identifier guard and the reranker.
pub const DEFAULT_CANDIDATES: usize = 30;
/// Recency half-life in days; 0 turns recency weighting off.
pub const DEFAULT_HALF_LIFE_DAYS: f64 = 30.0;
/// The most of a passage's score that recency can take away: a passage very much older than the half-life
/// keeps 1 - RECENCY_SHARE of it, one a half-life old 1 - RECENCY_SHARE / 2. So recency orders passages of
/// about equal relevance newest first and never buries a clearly better old one (fused scores are
/// `exp(fused)`: the factor subtracts at most about 0.02 in fused units). Multiplying scores by the whole
/// weight, as the reference does with its reranker's probabilities, put recent small talk above every answer
/// older than two months: on the benchmark's year of history, hit@3 at 10,000 conversations fell from 100%
/// to 23%.
pub const RECENCY_SHARE: f64 = 0.02;
/// Neighbouring turns shown on each side of a hit.
pub const DEFAULT_NEIGHBORS: usize = 1;
/// Weight of the dense leg's z-score in the score fusion (BM25's is 1 minus it; `search::fusion`). Chosen on
/// the tuning sets of benches/lab/fusion_lab.py (0.1-0.8 tried): 0.3.
pub const DEFAULT_DENSE_WEIGHT: f64 = 0.3;
/// How deep each search leg looks before fusion, whatever `candidates` is: the legs' score distributions
/// (mean, spread) are taken over this many passages, and a passage strong in one leg but weak in the other
/// still enters the union. Both legs already score every row of the resident copy; this is a top-n.
pub const FUSION_DEPTH: usize = 100;
/// What containing all the identifiers a query names (`MT-4471`) adds in fused units (a share of them adds
/// that share of it).
pub const IDENTIFIER_BONUS: f64 = 0.5;
/// What a passage said near a day the query names in full ("on October 24, 2023") adds in fused units: from
/// `DAY_WINDOW_BEFORE` days before that day to `DAY_WINDOW_AFTER` after ("yesterday I went bowling" is said
/// the day after; a plan is talked over the days before). Chosen on LoCoMo's tuning conversations (0.5-2 and
/// windows of 3-7 days tried in the fusion lab).
pub const DAY_BONUS: f64 = 2.0;
pub const DAY_WINDOW_BEFORE: i64 = 7;
pub const DAY_WINDOW_AFTER: i64 = 2;
/// What holding every neighbouring word pair of the question together adds to a passage's fused score
/// (`search::proximity`): chosen on the tuning history (1.5 to 3 all gained one point of hit@1 and @3 at
/// 10,000 conversations), as large as a named day, so a passage naming the asked entity whole outranks its
/// near twins.
pub const PAIR_BONUS: f64 = 2.0;
/// The turns just before and after each of the `ADJACENT_SOURCES` best passages of a fused ranking join it
/// with `ADJACENT_SHARE` of that passage's score (their own, if higher; `search::adjacent`). In a conversation
/// the answer often sits beside what matched the question: the question asked, the photo described, the
/// topic named one turn earlier ("Got any fave styles?" then "contemporary is my top pick"). A share below 1
/// never lifts a turn above the passage it sits beside, so the first answer stays. Chosen on the tuning sets:
/// 0.2 and 0.3 both took LoCoMo's tuning conversations from turn recall@10 78.3 to 80.4, and 0.3 cost the
/// tuning history a point of close hit@3 at 1,000 conversations where 0.2 did not. Held out at 0.2: LoCoMo's
/// other conversations 75.3 -> 76.8, the household history unchanged at 1,000 and 10,000 (0.3: reworded hit@3
/// 90 -> 88 at 10,000).
pub const ADJACENT_SHARE: f64 = 0.2;
pub const ADJACENT_SOURCES: usize = 10;
/// The memory size (rows) at and below which `RecallOptions::answer_floor` applies as given; above it the floor
/// rises by `answer_floor_per_decade` per tenfold rows. The smallest memory the calibrated floors were chosen
/// on (1,000 synthetic conversations: 6,000 passages; `funes_py.convert.floors`).
pub const ANSWER_FLOOR_BASE_ROWS: usize = 6_000;
/// Characters of a neighbouring turn shown as its preview.
pub const NEIGHBOR_PREVIEW_CHARS: usize = 160;
/// Turns on each side of the target turn returned by `get`.
pub const DEFAULT_GET_WINDOW: usize = 3;
/// Characters of context on each side of a `scan` match.
pub const DEFAULT_SCAN_CONTEXT: usize = 100;

#[derive(Debug, Clone, PartialEq)]
pub struct RecallOptions {
    pub k: usize,
    pub candidates: usize,
    pub half_life_days: f64,
    pub neighbors: usize,
    /// Inclusive lower bound on the turn time, milliseconds since the epoch.
    pub since_ms: Option<i64>,
    /// Inclusive upper bound on the turn time, milliseconds since the epoch.
    pub until_ms: Option<i64>,
    /// Only these sessions (empty: all). An archive searching one conversation uses it.
    pub sessions: Vec<String>,
    /// Only these roles (empty: all).
    pub roles: Vec<String>,
    /// Only these block types (empty: all).
    pub block_types: Vec<String>,
    /// Only turns written by these harnesses (`claude-code`, `gateway`, ...; empty: all).
    pub harnesses: Vec<String>,
    /// Only turns held in these working directories (a coding agent's projects), exactly (empty: all).
    pub projects: Vec<String>,
    /// Relevance floor: candidates whose cosine similarity to the query is below it are dropped, so recall
    /// can say "nothing relevant". `None`: no floor.
    pub min_similarity: Option<f32>,
    /// Answer floor: when the query names no identifier and no passage found reaches this cosine
    /// similarity, recall returns nothing. A question about something never discussed still has nearest
    /// passages, but none of them is near: this reads the best of them, where `min_similarity` reads each.
    /// A passage holding every term of the query (a keyword search) overrules it. `None`: off.
    pub answer_floor: Option<f32>,
    /// How much the answer floor rises per tenfold rows above `ANSWER_FLOOR_BASE_ROWS` (`answer_floor_at`).
    /// The best cosine of passages that do not answer a question grows with the number of passages it is the
    /// best of, so a floor fixed for one size says "nothing" less often the larger the memory. 0: fixed.
    pub answer_floor_per_decade: f32,
    /// Relevance guard: when the query names identifiers (`MT-4471`, `P-003`), drop passages that contain
    /// none of them. A question about a machine or ticket never discussed then returns nothing, instead of
    /// the nearest fact about another one.
    pub identifier_guard: bool,
    /// Cross-encoder rerank: `None` = automatic (on when a reranker is loaded and the pool is at least
    /// `RERANK_AUTO_POOL_FACTOR` × k), `Some(true/false)` forces it.
    pub rerank: Option<bool>,
    /// Reference time for recency, milliseconds since the epoch (`None`: now). Benchmarks pin it.
    pub now_ms: Option<i64>,
    /// Which search legs run (benchmarks compare them; users keep both).
    pub legs: Legs,
    /// Weight of the dense leg in the fusion (the lexical legs weigh 1).
    pub dense_weight: f64,
    /// Exact dense search even where a vector index exists (slower on large memories, never approximate).
    pub exact: bool,
    /// Return every copy of a passage said more than once. Off: the best-ranked copy of each text (after
    /// recency, so the latest of equals) stands for the others (`search::repeats`).
    pub keep_repeats: bool,
    /// BM25 also asks for the near words of the query's words (`thesaurus`: the embedder's table, weighted
    /// `NEAR_WORD_WEIGHT` × cosine, from `NEAR_WORD_MIN_COSINE`). Nothing changes with an embedder without one.
    pub near_words: bool,
}

/// The least cosine of a near word BM25 asks for (`thesaurus::Thesaurus::expand`), and the weight of a near
/// word of cosine 1 against a query word's 1. Chosen in the fusion lab on its tuning sets: the least
/// cosine at which no tuning set lost a question (0.5 cost one), `benches/lab/fusion_lab.py --meaning`; figures
/// in `benches/HISTORY.md` ("Query words by meaning, in the lab").
pub const NEAR_WORD_MIN_COSINE: f32 = 0.55;
pub const NEAR_WORD_WEIGHT: f32 = 0.5;

/// The search legs of a recall.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Legs {
    #[default]
    Hybrid,
    Dense,
    Bm25,
}

impl std::str::FromStr for Legs {
    type Err = crate::error::Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "hybrid" => Ok(Legs::Hybrid),
            "dense" => Ok(Legs::Dense),
            "bm25" => Ok(Legs::Bm25),
            other => Err(crate::error::Error::InvalidInput(format!("legs must be hybrid, dense or bm25, not {other:?}"))),
        }
    }
}

/// The reference's rule: rerank automatically when the pool is at least 4 × k.
pub const RERANK_AUTO_POOL_FACTOR: usize = 4;

impl Default for RecallOptions {
    fn default() -> Self {
        Self {
            k: DEFAULT_K,
            candidates: DEFAULT_CANDIDATES,
            half_life_days: DEFAULT_HALF_LIFE_DAYS,
            neighbors: DEFAULT_NEIGHBORS,
            since_ms: None,
            until_ms: None,
            sessions: Vec::new(),
            roles: Vec::new(),
            block_types: Vec::new(),
            harnesses: Vec::new(),
            projects: Vec::new(),
            min_similarity: None,
            answer_floor: None,
            answer_floor_per_decade: 0.0,
            identifier_guard: false,
            rerank: None,
            now_ms: None,
            legs: Legs::Hybrid,
            dense_weight: DEFAULT_DENSE_WEIGHT,
            exact: false,
            keep_repeats: false,
            near_words: true,
        }
    }
}

impl RecallOptions {
    /// The answer floor for a memory of `rows` passages: `answer_floor`, raised by `answer_floor_per_decade`
    /// per tenfold rows above `ANSWER_FLOOR_BASE_ROWS` (never lowered below it).
    pub fn answer_floor_at(&self, rows: usize) -> Option<f32> {
        let decades = (rows.max(ANSWER_FLOOR_BASE_ROWS) as f64 / ANSWER_FLOOR_BASE_ROWS as f64).log10();
        self.answer_floor.map(|f| f + self.answer_floor_per_decade * decades as f32)
    }
}

/// Whether an engine keeps a resident copy of its memory for recall (see `resident`).
pub const DEFAULT_RESIDENT: bool = true;

/// What opening a memory does when it was embedded with another model than the one loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnModelMismatch {
    /// Fail with `Error::ModelMismatch`, which names both models and the rebuild command (the library and
    /// the CLI: a user decides whether re-embedding a large memory is worth it).
    #[default]
    Refuse,
    /// Re-embed the stored text with the loaded model, then open (the service: one tenant's memory must not
    /// stay unavailable after an operator changed the model or an upgrade changed its fingerprint).
    Rebuild,
}

impl std::str::FromStr for OnModelMismatch {
    type Err = crate::error::Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "refuse" => Ok(Self::Refuse),
            "rebuild" => Ok(Self::Rebuild),
            other => Err(crate::error::Error::InvalidInput(format!("on_model_mismatch must be refuse or rebuild, not {other:?}"))),
        }
    }
}

/// Options of an open memory.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineOptions {
    /// Answer recall from a copy of the memory in RAM (built by the first recall, kept in step with
    /// writes). Right for anything that recalls more than once (a server, a notebook); a process that
    /// answers one query and exits (the CLI) is faster without it, as loading the copy costs a full scan.
    pub resident: bool,
    pub on_model_mismatch: OnModelMismatch,
}

impl Default for EngineOptions {
    fn default() -> Self {
        Self { resident: DEFAULT_RESIDENT, on_model_mismatch: OnModelMismatch::Refuse }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_floor_rises_with_the_memory_past_its_base_size() {
        let o = RecallOptions { answer_floor: Some(0.4), answer_floor_per_decade: 0.03, ..Default::default() };
        let at = |rows| o.answer_floor_at(rows).unwrap();
        assert_eq!(at(0), 0.4, "a small memory keeps the floor as given");
        assert_eq!(at(ANSWER_FLOOR_BASE_ROWS), 0.4);
        assert!((at(ANSWER_FLOOR_BASE_ROWS * 10) - 0.43).abs() < 1e-6);
        assert!((at(ANSWER_FLOOR_BASE_ROWS * 100) - 0.46).abs() < 1e-6);
        assert_eq!(RecallOptions { answer_floor_per_decade: 0.03, ..Default::default() }.answer_floor_at(1 << 30), None, "off stays off");
        let fixed = RecallOptions { answer_floor: Some(0.4), ..Default::default() };
        assert_eq!(fixed.answer_floor_at(1 << 30), Some(0.4));
    }
}
