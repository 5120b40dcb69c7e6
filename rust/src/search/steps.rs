//! Where a recall's time goes: the wall time of each step, summed over every recall of the process, always
//! on. A clock read costs about 20 ns and a recall about a millisecond, so the probes cost nothing worth a
//! build of their own; `benches.probes.cost` reads them (`Engine.recall_steps` in Python) to say where to cut.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// The steps of `search::recall`, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The question's BM25 terms, near words, identifiers, the script share.
    Analyse,
    /// The query's embedding (ONNX Runtime).
    Embed,
    /// Bringing the resident copy up to the dataset's version (a check when nothing changed).
    Resident,
    /// The dense leg's scan.
    Dense,
    /// The BM25 leg.
    Bm25,
    /// Both scores of every passage either leg found, and their rows.
    Union,
    /// Answer floor, z-scores, bonuses, the cut to candidates, relevance floor, guard.
    Fuse,
    Rerank,
    /// Recency, one copy of each text, the cut to k.
    Finish,
    Neighbours,
}

pub const STEPS: [Step; 10] = [
    Step::Analyse,
    Step::Embed,
    Step::Resident,
    Step::Dense,
    Step::Bm25,
    Step::Union,
    Step::Fuse,
    Step::Rerank,
    Step::Finish,
    Step::Neighbours,
];

impl Step {
    pub fn name(self) -> &'static str {
        match self {
            Step::Analyse => "analyse",
            Step::Embed => "embed",
            Step::Resident => "resident",
            Step::Dense => "dense",
            Step::Bm25 => "bm25",
            Step::Union => "union",
            Step::Fuse => "fuse",
            Step::Rerank => "rerank",
            Step::Finish => "finish",
            Step::Neighbours => "neighbours",
        }
    }
}

static NANOS: [AtomicU64; STEPS.len()] = [const { AtomicU64::new(0) }; STEPS.len()];
static RECALLS: AtomicU64 = AtomicU64::new(0);

/// Times consecutive steps of one recall: each `lap` charges the time since the last one to a step.
pub struct Clock {
    last: Instant,
}

impl Clock {
    pub fn start() -> Self {
        RECALLS.fetch_add(1, Ordering::Relaxed);
        Self { last: Instant::now() }
    }

    pub fn lap(&mut self, step: Step) {
        let now = Instant::now();
        let i = STEPS.iter().position(|&s| s == step).unwrap_or(0);
        NANOS[i].fetch_add((now - self.last).as_nanos() as u64, Ordering::Relaxed);
        self.last = now;
    }
}

/// (step, total nanoseconds) for every step, and the number of recalls they were summed over.
pub fn totals() -> (Vec<(&'static str, u64)>, u64) {
    (STEPS.iter().zip(&NANOS).map(|(s, n)| (s.name(), n.load(Ordering::Relaxed))).collect(), RECALLS.load(Ordering::Relaxed))
}

pub fn reset() {
    NANOS.iter().for_each(|n| n.store(0, Ordering::Relaxed));
    RECALLS.store(0, Ordering::Relaxed);
}
