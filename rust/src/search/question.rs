//! A question analysed once for every part of a recall that reads it: its own BM25 terms (the resident BM25
//! leg, the near words' skip list, the lexical-match check of the answer floor), its near words, and the
//! identifiers it names.

use crate::analyzer::{id_terms, with_bm25_analyzer};
use crate::inference::Models;
use crate::options::{Legs as LegChoice, RecallOptions, NEAR_WORD_MIN_COSINE, NEAR_WORD_WEIGHT};
use crate::thesaurus::NearTerm;

use super::proximity::question_pairs;

pub(super) struct Question<'q> {
    /// As asked, trimmed: what the embedder and Lance's query parser read.
    pub text: &'q str,
    /// Its own BM25 terms, each once (`Bm25Analyzer::query`).
    pub terms: Vec<String>,
    /// The near words BM25 also asks for (`thesaurus`); none when `near_words` is off.
    pub near: Vec<NearTerm>,
    /// The identifiers it names (`id_terms`, glued forms such as `mt4471`).
    pub wanted: Vec<String>,
    /// The share of its letters the embedder reads (`script`): what the dense leg's weight is scaled by.
    pub dense_read: f32,
    /// Its pairs of neighbouring words (`proximity`), which a passage that meets all its constraints holds.
    pub pairs: Vec<(String, String)>,
}

impl<'q> Question<'q> {
    /// In a dense-only comparison nothing lexical counts: no terms, near words or identifiers.
    pub fn analyse(text: &'q str, models: &Models, opts: &RecallOptions) -> Self {
        if opts.legs == LegChoice::Dense {
            return Self { text, terms: Vec::new(), near: Vec::new(), wanted: Vec::new(), dense_read: 1.0, pairs: Vec::new() };
        }
        let (terms, words) = with_bm25_analyzer(|a| (a.query(text), a.document(text)));
        let near =
            if opts.near_words { models.thesaurus.expand_terms(text, &terms, NEAR_WORD_MIN_COSINE, NEAR_WORD_WEIGHT) } else { Vec::new() };
        // Only a fused ranking weighs the legs: a comparison of one leg keeps it whatever it reads.
        let dense_read = if opts.legs == LegChoice::Hybrid { models.embedder.share_read(text) } else { 1.0 };
        Self { text, wanted: id_terms(text), terms, near, dense_read, pairs: question_pairs(&words) }
    }

    /// What the resident BM25 asks for: the question's own terms at weight 1, its near words' at theirs.
    pub fn weighted_terms(&self) -> Vec<(String, f32)> {
        let own = self.terms.iter().map(|t| (t.clone(), 1.0));
        own.chain(self.near.iter().map(|n| (n.term.clone(), n.weight))).collect()
    }

    /// The near words as Lance's query parser takes them: each word as written, with its weight.
    pub fn near_words(&self) -> Vec<(String, f32)> {
        self.near.iter().map(|n| (n.word.clone(), n.weight)).collect()
    }
}
