//! Stored chunks → whole turns: group by turn, order blocks, stitch the splits of each block back together.
//! Used by `get`, `scan`, `sketch` and the neighbour previews.

use std::collections::BTreeMap;

use crate::chunk::stitch;
use crate::record::StoredChunk;
use crate::records::result_record;

result_record! {
    /// One turn of a session, its blocks and splits stitched back (`Engine::get`; Python's `Turn`).
    pub struct TurnText as "Turn" repr("seq={}, role={:?}, text={:?}", seq, role, text) {
        pub session_id: String,
        pub turn_uuid: String,
        pub seq: i64,
        pub ts: String,
        pub role: String,
        /// Block texts in order, joined by a blank line.
        pub text: String,
        /// The block types present, in order.
        pub block_types: Vec<String>,
    }
}

/// Rows of one or more sessions → their turns ordered by (session, seq, turn).
pub fn assemble_turns(rows: Vec<StoredChunk>) -> Vec<TurnText> {
    let mut turns: BTreeMap<(String, i64, String), Vec<StoredChunk>> = BTreeMap::new();
    for r in rows {
        turns.entry((r.chunk.session_id.clone(), r.chunk.seq, r.chunk.turn_uuid.clone())).or_default().push(r);
    }
    turns
        .into_values()
        .map(|mut rows| {
            rows.sort_by_key(|r| (r.chunk.block_idx, r.chunk.split_idx));
            let mut blocks: Vec<(i64, String, String)> = Vec::new();
            for r in &rows {
                match blocks.last_mut() {
                    Some((idx, _, text)) if *idx == r.chunk.block_idx => *text = stitch(text, &r.chunk.text),
                    _ => blocks.push((r.chunk.block_idx, r.chunk.block_type.clone(), r.chunk.text.clone())),
                }
            }
            let first = &rows[0].chunk;
            TurnText {
                session_id: first.session_id.clone(),
                turn_uuid: first.turn_uuid.clone(),
                seq: first.seq,
                ts: first.ts.clone(),
                role: first.role.clone(),
                text: blocks.iter().map(|(_, _, t)| t.as_str()).collect::<Vec<_>>().join("\n\n"),
                block_types: blocks.into_iter().map(|(_, bt, _)| bt).collect(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::{chunk_turn, split};
    use crate::ingest::{Block, Turn};

    #[test]
    fn a_split_turn_is_reassembled_exactly() {
        let long: String = (0..600).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" ");
        assert!(split(&long).len() > 1);
        let turn = Turn {
            session_id: "s".into(),
            turn_uuid: "t".into(),
            seq: 0,
            ts: "x".into(),
            role: "user".into(),
            harness: "h".into(),
            workdir: None,
            blocks: vec![
                Block { block_type: "text".into(), text: long.clone(), tool_name: None },
                Block { block_type: "text".into(), text: "second".into(), tool_name: None },
            ],
        };
        let mut rows: Vec<StoredChunk> = chunk_turn(&turn).into_iter().map(|c| StoredChunk { chunk: c, ..Default::default() }).collect();
        rows.reverse();
        let turns = assemble_turns(rows);
        assert_eq!(turns.len(), 1);
        assert_eq!(turns[0].text, format!("{long}\n\nsecond"));
    }
}
