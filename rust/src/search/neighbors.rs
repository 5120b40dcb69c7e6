//! The turns around each hit, shown as one-line previews.

use std::collections::HashMap;

use super::turns::{assemble_turns, TurnText};
use super::Hit;
use crate::error::Result;
use crate::memory::Memory;
use crate::options::NEIGHBOR_PREVIEW_CHARS;
use crate::record::StoredChunk;
use crate::records::result_record;
use crate::store::{Filter, ROW_COLUMNS};

result_record! {
    /// A neighbouring turn of a hit, shown as a short preview.
    pub struct Neighbor as "Neighbor" repr("role={:?}, seq={}, text={:?}", role, seq, text) {
        pub turn_uuid: String,
        pub role: String,
        pub seq: i64,
        pub ts: String,
        pub text: String,
    }
}

/// Adds the turns within `window` of each hit (not the hit's own turn), one preview per turn, from the
/// resident copy or one Lance scan for all hits.
pub(super) async fn attach(memory: &Memory, hits: &mut [Hit], window: usize) -> Result<()> {
    let w = window as i64;
    let mut sessions: Vec<&str> = hits.iter().map(|h| h.chunk.session_id.as_str()).collect();
    sessions.sort();
    sessions.dedup();
    let resident = memory.resident().map(|r| sessions.iter().flat_map(|s| r.session(s)).collect::<Vec<StoredChunk>>());
    let rows = match resident {
        Some(rows) => rows,
        // One scan for all hits, answered by the session_id index; the seq window is applied here (an OR of
        // per-hit ranges would defeat the index).
        None => memory.store().scan(&Filter::sessions(sessions.iter().copied()), ROW_COLUMNS).await?,
    };
    let mut by_session: HashMap<String, Vec<StoredChunk>> = HashMap::new();
    for r in rows {
        by_session.entry(r.chunk.session_id.clone()).or_default().push(r);
    }
    let turns: HashMap<String, Vec<TurnText>> = by_session.into_iter().map(|(s, rows)| (s, assemble_turns(rows))).collect();
    for h in hits.iter_mut() {
        let Some(ts) = turns.get(&h.chunk.session_id) else { continue };
        h.neighbors = ts
            .iter()
            .filter(|t| t.turn_uuid != h.chunk.turn_uuid && (t.seq - h.chunk.seq).abs() <= w)
            .map(|t| Neighbor {
                turn_uuid: t.turn_uuid.clone(),
                role: t.role.clone(),
                seq: t.seq,
                ts: t.ts.clone(),
                text: preview(&t.text, NEIGHBOR_PREVIEW_CHARS),
            })
            .collect();
    }
    Ok(())
}

/// The first `max` characters of a text on one line, cut at a word boundary, with "…" when cut.
pub fn preview(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    let cut: String = flat.chars().take(max).collect();
    let cut = match cut.rfind(' ') {
        Some(i) if i > max / 2 => &cut[..i],
        _ => cut.as_str(),
    };
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preview_cuts_at_a_word() {
        assert_eq!(preview("a  b\nc", 10), "a b c");
        assert_eq!(preview("alpha beta gamma delta", 12), "alpha beta…");
    }
}
