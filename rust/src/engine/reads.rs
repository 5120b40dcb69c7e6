//! The other reads (get, scan, sessions, sketch, status) and forgetting.

use std::collections::BTreeMap;

use super::state::IndexState;
use super::Engine;
use crate::error::{Error, Result};
use crate::options::DEFAULT_SCAN_CONTEXT;
use crate::records::result_record;
use crate::runtime::block_on;
use crate::search::{assemble_turns, preview, TurnText};
use crate::store::{Filter, StoreStats, ROW_COLUMNS};

/// Characters of the opening ask and the last word in a sketch.
pub const SKETCH_PREVIEW_CHARS: usize = 300;

result_record! {
    /// One exact occurrence of a needle in a session (`Engine::scan`).
    pub struct ScanMatch as "ScanMatch" repr("seq={}, excerpt={:?}", seq, excerpt) {
        pub turn_uuid: String,
        pub seq: i64,
        pub ts: String,
        pub role: String,
        /// The match with `context` characters on each side, whitespace collapsed, "…" where the turn goes on.
        pub excerpt: String,
    }
}

result_record! {
    /// A session with its dates and turn count (`Engine::sessions`).
    pub struct SessionInfo as "SessionInfo" repr("session_id={:?}, last_ts={:?}, turns={}", session_id, last_ts, turns) {
        pub session_id: String,
        pub first_ts: String,
        pub last_ts: String,
        pub turns: usize,
    }
}

result_record! {
    /// A session at a glance (`Engine::sketch`).
    pub struct Sketch as "Sketch" repr("session_id={:?}, turns={}, opening={:?}", session_id, turns, opening) {
        pub session_id: String,
        pub first_ts: String,
        pub last_ts: String,
        pub turns: usize,
        pub chars: usize,
        /// The first user turn (the opening ask), as a preview.
        pub opening: String,
        /// The last turn, as a preview.
        pub last_word: String,
        pub last_role: String,
    }
}

#[derive(Debug, Clone)]
pub struct Status {
    pub home: String,
    /// The stamp of the loaded embedder and of the memory ("" when the memory is empty).
    pub model: String,
    pub memory_model: String,
    /// The analyzer version of the memory's BM25 texts (0 when the memory is empty).
    pub analyzer_version: u32,
    pub dim: usize,
    pub sessions: usize,
    pub store: StoreStats,
}

result_record! {
    /// What `Engine::forget` removed.
    pub struct ForgetReport as "ForgetReport" repr("session_id={:?}, found={}, rows_removed={}", session_id, found, rows_removed) {
        pub session_id: String,
        pub found: bool,
        pub rows_removed: usize,
        pub turns_removed: usize,
    }
}

impl Engine {
    fn session_turns(&self, session_id: &str) -> Result<Vec<TurnText>> {
        let rows = block_on(self.memory.store().scan(&Filter::session(session_id), ROW_COLUMNS))?;
        Ok(assemble_turns(rows))
    }

    /// A session's turns around `turn_uuid` (± `window`), or the whole session; splits stitched back.
    pub fn get(&self, session_id: &str, turn_uuid: Option<&str>, window: usize) -> Result<Vec<TurnText>> {
        let turns = self.session_turns(session_id)?;
        if turns.is_empty() {
            return Err(Error::InvalidInput(format!("session {session_id} not found")));
        }
        let Some(target) = turn_uuid else { return Ok(turns) };
        let centre = turns
            .iter()
            .find(|t| t.turn_uuid == target)
            .map(|t| t.seq)
            .ok_or_else(|| Error::InvalidInput(format!("turn {target} not found in session {session_id}")))?;
        Ok(turns.into_iter().filter(|t| (t.seq - centre).abs() <= window as i64).collect())
    }

    /// Exact substring search within one session: every match, in turn order. It settles questions of
    /// absence that ranked recall cannot.
    pub fn scan(&self, session_id: &str, needle: &str, ignore_case: bool, context: Option<usize>) -> Result<Vec<ScanMatch>> {
        if needle.is_empty() {
            return Err(Error::InvalidInput("the needle is empty".into()));
        }
        let context = context.unwrap_or(DEFAULT_SCAN_CONTEXT);
        let mut out = Vec::new();
        for t in self.session_turns(session_id)? {
            for (start, end) in find_all(&t.text, needle, ignore_case) {
                out.push(ScanMatch {
                    turn_uuid: t.turn_uuid.clone(),
                    seq: t.seq,
                    ts: t.ts.clone(),
                    role: t.role.clone(),
                    excerpt: excerpt(&t.text, start, end, context),
                });
            }
        }
        Ok(out)
    }

    /// Sessions, newest first, with first and last time and turn count; `since`/`until` (ms) keep sessions
    /// with a turn in that range.
    pub fn sessions(&self, since_ms: Option<i64>, until_ms: Option<i64>) -> Result<Vec<SessionInfo>> {
        let filter = Filter::dates(since_ms, until_ms);
        let rows = block_on(self.memory.store().scan(&filter, &["session_id", "turn_uuid", "ts", "ts_ms"]))?;
        // (first key, first ts, last key, last ts, turns)
        let mut acc: BTreeMap<String, (i64, String, i64, String, std::collections::HashSet<String>)> = BTreeMap::new();
        for r in rows {
            let key = r.ts_ms.unwrap_or(i64::MIN);
            let e = acc
                .entry(r.chunk.session_id.clone())
                .or_insert_with(|| (key, r.chunk.ts.clone(), key, r.chunk.ts.clone(), Default::default()));
            if key < e.0 {
                (e.0, e.1) = (key, r.chunk.ts.clone());
            }
            if key > e.2 {
                (e.2, e.3) = (key, r.chunk.ts.clone());
            }
            e.4.insert(r.chunk.turn_uuid);
        }
        let mut out: Vec<(i64, SessionInfo)> = acc
            .into_iter()
            .map(|(sid, (_, first, lk, last, turns))| {
                (lk, SessionInfo { session_id: sid, first_ts: first, last_ts: last, turns: turns.len() })
            })
            .collect();
        out.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.session_id.cmp(&b.1.session_id)));
        Ok(out.into_iter().map(|(_, s)| s).collect())
    }

    /// What a session was about: its opening ask, its last word, its size and dates.
    pub fn sketch(&self, session_id: &str) -> Result<Sketch> {
        let turns = self.session_turns(session_id)?;
        let (Some(first), Some(last)) = (turns.first(), turns.last()) else {
            return Err(Error::InvalidInput(format!("session {session_id} not found")));
        };
        let opening = turns.iter().find(|t| t.role == "user").unwrap_or(first);
        Ok(Sketch {
            session_id: session_id.to_string(),
            first_ts: first.ts.clone(),
            last_ts: last.ts.clone(),
            turns: turns.len(),
            chars: turns.iter().map(|t| t.text.chars().count()).sum(),
            opening: preview(&opening.text, SKETCH_PREVIEW_CHARS),
            last_word: preview(&last.text, SKETCH_PREVIEW_CHARS),
            last_role: last.role.clone(),
        })
    }

    pub fn status(&self) -> Result<Status> {
        let spec = self.models.embedder.spec();
        let store = block_on(self.memory.store().stats())?;
        let memory_model = block_on(self.memory.store().model_stamp())?.map(|(s, _)| s).unwrap_or_default();
        let sessions = if store.rows == 0 {
            0
        } else {
            let rows = block_on(self.memory.store().scan(&Filter::default(), &["session_id"]))?;
            rows.iter().map(|r| r.chunk.session_id.as_str()).collect::<std::collections::HashSet<_>>().len()
        };
        let analyzer_version = block_on(self.memory.store().analyzer_version())?.unwrap_or(0);
        Ok(Status { home: self.home.to_string(), model: spec.stamp(), memory_model, analyzer_version, dim: spec.dim, sessions, store })
    }

    /// Deletes a session and makes it physically gone: rows deleted, fragments rewritten, indexes rebuilt,
    /// old versions pruned; and the change stamps of source files that no longer exist are dropped (a
    /// caller forgetting a conversation deletes its file first: the file's name often is the session id).
    pub fn forget(&self, session_id: &str) -> Result<ForgetReport> {
        let _lock = self.lock_for_writing()?;
        let filter = Filter::session(session_id);
        let turns = block_on(self.memory.store().scan(&filter, &["turn_uuid"]))?
            .into_iter()
            .map(|r| r.chunk.turn_uuid)
            .collect::<std::collections::HashSet<_>>()
            .len();
        let rows_removed = block_on(self.memory.purge(&filter))?;
        IndexState::forget_missing(self.home.state_dir())?;
        Ok(ForgetReport { session_id: session_id.to_string(), found: rows_removed > 0, rows_removed, turns_removed: turns })
    }
}

/// Byte ranges of every non-overlapping match. Case folding is per character and only where a character
/// lower-cases to exactly one character, so byte offsets map back to the original text.
pub fn find_all(haystack: &str, needle: &str, ignore_case: bool) -> Vec<(usize, usize)> {
    let fold = |c: char| -> char {
        if !ignore_case {
            return c;
        }
        let mut l = c.to_lowercase();
        match (l.next(), l.next()) {
            (Some(x), None) => x,
            _ => c,
        }
    };
    let hay: Vec<(usize, char)> = haystack.char_indices().map(|(i, c)| (i, fold(c))).collect();
    let nee: Vec<char> = needle.chars().map(fold).collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i + nee.len() <= hay.len() {
        if hay[i..i + nee.len()].iter().map(|(_, c)| *c).eq(nee.iter().copied()) {
            let start = hay[i].0;
            let end = hay.get(i + nee.len()).map(|(b, _)| *b).unwrap_or(haystack.len());
            out.push((start, end));
            i += nee.len();
        } else {
            i += 1;
        }
    }
    out
}

fn excerpt(text: &str, start: usize, end: usize, context: usize) -> String {
    let before: String = text[..start].chars().rev().take(context).collect::<Vec<_>>().into_iter().rev().collect();
    let after: String = text[end..].chars().take(context).collect();
    let flat = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = String::new();
    if before.len() < start {
        out.push_str("… ");
    }
    out.push_str(&flat(&format!("{before}{}{after}", &text[start..end])));
    if end + after.len() < text.len() {
        out.push_str(" …");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_match_case_insensitively() {
        assert_eq!(find_all("MT-4471 and mt-4471", "mt-4471", true), vec![(0, 7), (12, 19)]);
        assert_eq!(find_all("MT-4471 and mt-4471", "mt-4471", false), vec![(12, 19)]);
        assert!(find_all("abc", "abcd", true).is_empty());
    }

    #[test]
    fn excerpt_marks_cut_ends() {
        let t = "one two three four five";
        let (s, e) = find_all(t, "three", false)[0];
        assert_eq!(excerpt(t, s, e, 4), "… two three fou …");
        assert_eq!(excerpt(t, s, e, 100), "one two three four five");
    }
}
