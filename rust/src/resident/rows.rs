//! The resident copy's rows, packed. Pure.
//!
//! Why: a warm service holds every chunk of every memory it serves, for as long as it runs, so the bytes a
//! row costs are what each conversation written adds to the process for good. As `StoredChunk`s a row was
//! a 300-byte struct (kept in a vector that grows by doubling) and nine strings allocated apart, each
//! rounded up by the allocator: about 830 bytes for a 130-character turn. Packed, a row is its id, turn id,
//! time and text end to end in one buffer, its session and labels (role, harness, block type, tool) as
//! numbers into tables of the distinct values, and its numbers: 80 bytes plus those strings.

use std::collections::HashMap;

use crate::chunk::Chunk;
use crate::record::{RowView, StoredChunk};

/// Distinct strings, each stored once and named by its number.
#[derive(Debug, Clone, Default)]
struct Table {
    values: Vec<Box<str>>,
    numbers: HashMap<Box<str>, u32>,
}

impl Table {
    fn number(&mut self, value: &str) -> u32 {
        if let Some(&n) = self.numbers.get(value) {
            return n;
        }
        let n = self.values.len() as u32;
        self.values.push(value.into());
        self.numbers.insert(value.into(), n);
        n
    }

    fn get(&self, n: u32) -> &str {
        &self.values[n as usize]
    }

    fn find(&self, value: &str) -> Option<u32> {
        self.numbers.get(value).copied()
    }
}

/// A row's fixed-size part.
#[derive(Debug, Clone)]
struct Fixed {
    /// Where its strings start in `Rows::bytes`: id, turn id, time, then the text up to the next row's start.
    start: usize,
    /// Lengths of the id, the turn id and the time.
    lens: [u32; 3],
    session: u32,
    /// Numbers in `Rows::labels` of the role, the harness, the block type and the working directory.
    labels: [u32; 4],
    /// The tool's number in `Rows::labels` plus one; 0: no tool.
    tool: u32,
    seq: i64,
    block_idx: i64,
    split_idx: i64,
    ts_ms: Option<i64>,
}

/// Rows numbered in the order they were added, with each session's rows.
#[derive(Debug, Clone, Default)]
pub struct Rows {
    bytes: String,
    fixed: Vec<Fixed>,
    labels: Table,
    sessions: Table,
    /// Per session number: its rows, in the order they were added.
    session_rows: Vec<Vec<u32>>,
}

impl Rows {
    pub fn len(&self) -> usize {
        self.fixed.len()
    }

    pub fn is_empty(&self) -> bool {
        self.fixed.is_empty()
    }

    /// Adds a row (its vector and context are not kept).
    pub fn push(&mut self, r: &StoredChunk) {
        let c = &r.chunk;
        let i = self.fixed.len() as u32;
        let start = self.bytes.len();
        for s in [&c.id, &c.turn_uuid, &c.ts, &c.text] {
            self.bytes.push_str(s);
        }
        let session = self.sessions.number(&c.session_id);
        if session as usize == self.session_rows.len() {
            self.session_rows.push(Vec::new());
        }
        self.session_rows[session as usize].push(i);
        let labels = [
            self.labels.number(&c.role),
            self.labels.number(&c.harness),
            self.labels.number(&c.block_type),
            self.labels.number(&c.workdir),
        ];
        let tool = c.tool_name.as_deref().map_or(0, |t| self.labels.number(t) + 1);
        let lens = [c.id.len() as u32, c.turn_uuid.len() as u32, c.ts.len() as u32];
        let (seq, block_idx, split_idx, ts_ms) = (c.seq, c.block_idx, c.split_idx, r.ts_ms);
        self.fixed.push(Fixed { start, lens, session, labels, tool, seq, block_idx, split_idx, ts_ms });
    }

    /// Row `i`'s id, turn id, time and text.
    fn strings(&self, i: usize) -> [&str; 4] {
        let f = &self.fixed[i];
        let end = self.fixed.get(i + 1).map_or(self.bytes.len(), |n| n.start);
        let [a, b, c] = f.lens.map(|l| l as usize);
        let (id, turn) = (f.start + a, f.start + a + b);
        [&self.bytes[f.start..id], &self.bytes[id..turn], &self.bytes[turn..turn + c], &self.bytes[turn + c..end]]
    }

    pub fn id(&self, i: usize) -> &str {
        self.strings(i)[0]
    }

    pub fn text(&self, i: usize) -> &str {
        self.strings(i)[3]
    }

    pub fn ts(&self, i: usize) -> &str {
        self.strings(i)[2]
    }

    /// What a filter tests of row `i`.
    pub fn view(&self, i: usize) -> RowView<'_> {
        let f = &self.fixed[i];
        RowView {
            session_id: self.sessions.get(f.session),
            role: self.labels.get(f.labels[0]),
            harness: self.labels.get(f.labels[1]),
            workdir: self.labels.get(f.labels[3]),
            block_type: self.labels.get(f.labels[2]),
            ts_ms: f.ts_ms,
        }
    }

    /// Row `i` as a `StoredChunk` of its own (no vector, no context).
    pub fn get(&self, i: usize) -> StoredChunk {
        let f = &self.fixed[i];
        let [id, turn_uuid, ts, text] = self.strings(i);
        let view = self.view(i);
        StoredChunk {
            chunk: Chunk {
                id: id.into(),
                text: text.into(),
                session_id: view.session_id.into(),
                turn_uuid: turn_uuid.into(),
                seq: f.seq,
                ts: ts.into(),
                role: view.role.into(),
                harness: view.harness.into(),
                workdir: view.workdir.into(),
                block_type: view.block_type.into(),
                tool_name: f.tool.checked_sub(1).map(|t| self.labels.get(t).into()),
                block_idx: f.block_idx,
                split_idx: f.split_idx,
            },
            ts_ms: f.ts_ms,
            ..Default::default()
        }
    }

    /// Row `i`'s turn's place in its session.
    pub fn seq(&self, i: usize) -> i64 {
        self.fixed[i].seq
    }

    /// The rows of the turns just before and after row `i`'s in its session (sequence numbers one less and
    /// one more), in the order they were added.
    pub fn adjacent(&self, i: usize) -> Vec<usize> {
        let f = &self.fixed[i];
        self.session_rows[f.session as usize].iter().map(|&j| j as usize).filter(|&j| self.fixed[j].seq.abs_diff(f.seq) == 1).collect()
    }

    /// The row numbers of a session, in the order they were added (none for a session it has no row of).
    pub fn session(&self, session_id: &str) -> &[u32] {
        self.sessions.find(session_id).map_or(&[], |s| &self.session_rows[s as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, session: &str, text: &str, tool: Option<&str>, ts_ms: Option<i64>) -> StoredChunk {
        StoredChunk {
            chunk: Chunk {
                id: id.into(),
                text: text.into(),
                session_id: session.into(),
                turn_uuid: format!("{session}/{id}"),
                seq: 7,
                ts: "2026-10-01T08:00:00Z".into(),
                role: "assistant".into(),
                harness: "codex".into(),
                workdir: if id.is_empty() { String::new() } else { format!("/src/{session}") },
                block_type: if tool.is_some() { "tool_use" } else { "text" }.into(),
                tool_name: tool.map(Into::into),
                block_idx: 2,
                split_idx: 1,
            },
            ts_ms,
            ..Default::default()
        }
    }

    #[test]
    fn a_packed_row_reads_back_as_it_was_added() {
        let rows_in = [
            row("a", "s1", "the pump seal is leaking", None, Some(5)),
            row("b", "s2", "", Some("bash"), None),
            row("c", "s1", "naïve café — 서버", Some("grep"), Some(-3)),
            row("", "", "x", Some(""), Some(0)),
        ];
        let mut rows = Rows::default();
        rows_in.iter().for_each(|r| rows.push(r));
        assert_eq!(rows.len(), 4);
        for (i, r) in rows_in.iter().enumerate() {
            assert_eq!(rows.get(i), *r, "row {i}");
            assert_eq!((rows.id(i), rows.text(i)), (r.chunk.id.as_str(), r.chunk.text.as_str()));
            let c = &r.chunk;
            let view = RowView {
                session_id: &c.session_id,
                role: &c.role,
                harness: &c.harness,
                workdir: &c.workdir,
                block_type: &c.block_type,
                ts_ms: r.ts_ms,
            };
            assert_eq!(rows.view(i), view);
        }
        assert_eq!(rows.session("s1"), &[0, 2]);
        assert_eq!(rows.session("s2"), &[1]);
        assert!(rows.session("s3").is_empty());
    }

    #[test]
    fn the_adjacent_turns_are_those_one_before_and_one_after_in_the_same_session() {
        let mut rows = Rows::default();
        for (id, session, seq) in [("a", "s1", 1), ("b", "s1", 2), ("c", "s1", 3), ("c2", "s1", 3), ("d", "s1", 5), ("e", "s2", 3)] {
            let mut r = row(id, session, "text", None, None);
            r.chunk.seq = seq;
            rows.push(&r);
        }
        assert_eq!(rows.adjacent(1), [0, 2, 3], "seq 1 and both chunks of seq 3");
        assert_eq!(rows.adjacent(0), [1]);
        assert!(rows.adjacent(4).is_empty(), "seq 5: nothing at 4 or 6");
        assert!(rows.adjacent(5).is_empty(), "another session's seq 2 and 4 do not count");
    }

    #[test]
    fn a_row_costs_far_less_than_a_stored_chunk() {
        // The packed row's fixed part, against the struct alone (its strings, allocated apart, come on top).
        assert!(std::mem::size_of::<Fixed>() * 3 < std::mem::size_of::<StoredChunk>(), "{}", std::mem::size_of::<Fixed>());
    }
}
