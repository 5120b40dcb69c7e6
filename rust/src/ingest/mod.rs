//! Transcripts in, `Turn`s out. The input is `.funes.jsonl`: one JSON object per line, one message each.
//! A line that is not valid JSON or lacks a required field is skipped and reported with its file and line
//! number; the rest of the file is kept.

pub mod files;

use serde::Deserialize;
use std::path::{Path, PathBuf};

/// One content block of a message.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Block {
    pub block_type: String,
    pub text: String,
    #[serde(default)]
    pub tool_name: Option<String>,
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Turn {
    pub session_id: String,
    pub turn_uuid: String,
    pub seq: i64,
    pub ts: String,
    pub role: String,
    #[serde(default)]
    pub harness: String,
    /// The working directory the conversation was held in (a coding agent's project; none for a chat app).
    #[serde(default)]
    pub workdir: Option<String>,
    pub blocks: Vec<Block>,
}

/// A skipped line, with its place.
#[derive(Debug, Clone, PartialEq)]
pub struct BadLine {
    pub file: PathBuf,
    /// 1-based line number.
    pub line: usize,
    pub reason: String,
}

#[derive(Debug, Default)]
pub struct ParsedFile {
    pub turns: Vec<Turn>,
    pub bad_lines: Vec<BadLine>,
}

/// Parses one line. `Ok(None)` for a blank line.
pub fn parse_line(line: &str) -> std::result::Result<Option<Turn>, String> {
    let trimmed = line.trim();
    if trimmed.is_empty() {
        return Ok(None);
    }
    let turn: Turn = serde_json::from_str(trimmed).map_err(|e| {
        // serde's message names the missing field or the JSON fault; its column is more use than its line.
        let msg = e.to_string();
        match msg.find(" at line ") {
            Some(i) => msg[..i].to_string(),
            None => msg,
        }
    })?;
    if turn.session_id.trim().is_empty() {
        return Err("empty field `session_id`".into());
    }
    if turn.turn_uuid.trim().is_empty() {
        return Err("empty field `turn_uuid`".into());
    }
    Ok(Some(turn))
}

/// Parses a whole file. Invalid UTF-8 is decoded lossily (a bad byte must not cost the file).
pub fn parse_bytes(file: &Path, bytes: &[u8]) -> ParsedFile {
    let text = String::from_utf8_lossy(bytes);
    parse_lines(file, text.lines().enumerate().map(|(i, line)| (i + 1, line)))
}

/// Parses lines, each with its place in `source` (a line number, or a record's number in an export that an
/// adapter turned into lines): the good ones become turns, the others bad lines with that place.
pub fn parse_lines<'a>(source: &Path, lines: impl IntoIterator<Item = (usize, &'a str)>) -> ParsedFile {
    let mut out = ParsedFile::default();
    for (place, line) in lines {
        match parse_line(line) {
            Ok(Some(turn)) => out.turns.push(turn),
            Ok(None) => {}
            Err(reason) => out.bad_lines.push(BadLine { file: source.to_path_buf(), line: place, reason }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{"session_id":"s1","turn_uuid":"t1","seq":0,"ts":"2026-10-08T09:14:00Z","role":"user","harness":"chat","blocks":[{"block_type":"text","text":"hello"}]}"#;

    #[test]
    fn parses_a_good_line() {
        let t = parse_line(GOOD).unwrap().unwrap();
        assert_eq!(t.session_id, "s1");
        assert_eq!(t.blocks[0].text, "hello");
        assert_eq!(t.blocks[0].tool_name, None);
    }

    #[test]
    fn reports_bad_lines_with_their_place_and_keeps_the_rest() {
        let src = format!("{GOOD}\nnot json\n\n{{\"session_id\":\"s1\"}}\n{}\n", GOOD.replace("t1", "t2"));
        let parsed = parse_bytes(Path::new("a.funes.jsonl"), src.as_bytes());
        assert_eq!(parsed.turns.len(), 2);
        assert_eq!(parsed.bad_lines.len(), 2);
        assert_eq!(parsed.bad_lines[0].line, 2);
        assert_eq!(parsed.bad_lines[1].line, 4);
        assert!(parsed.bad_lines[1].reason.contains("missing field"), "{}", parsed.bad_lines[1].reason);
    }

    #[test]
    fn empty_ids_are_refused() {
        let line = GOOD.replace("\"s1\"", "\"  \"");
        assert!(parse_line(&line).unwrap_err().contains("session_id"));
    }
}
