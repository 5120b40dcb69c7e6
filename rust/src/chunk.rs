//! Turns → chunks. Pure: no I/O, no model.
//!
//! A block is rendered (tool blocks get a `[tool_use name]` / `[tool_result name]` label, inline base64
//! payloads are elided), then split into pieces of at most `MAX_CHARS` code points overlapping by about
//! `OVERLAP`, breaking at a newline or a space past the half-way point. Each piece's id is a hash of its
//! coordinates (session, turn, block index, split index), never of its text: a conversation that is resent
//! with more turns yields the same ids for the old turns, so only the new text is embedded. The formula and
//! constants match the funes CLI so ids agree between the two.

use sha1::{Digest, Sha1};

use crate::ingest::Turn;

pub const MAX_CHARS: usize = 1200;
pub const OVERLAP: usize = 150;

/// One searchable piece of a block, with everything recall needs to show where it came from.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Chunk {
    pub id: String,
    pub text: String,
    pub session_id: String,
    pub turn_uuid: String,
    pub seq: i64,
    pub ts: String,
    pub role: String,
    pub harness: String,
    /// The turn's working directory (its project): "" when the source has none.
    pub workdir: String,
    pub block_type: String,
    pub tool_name: Option<String>,
    pub block_idx: i64,
    pub split_idx: i64,
}

/// The 16-hex-digit chunk id: sha1 of `"{session}:{turn}:{block_idx}:{split_idx}"`.
pub fn chunk_id(session_id: &str, turn_uuid: &str, block_idx: usize, split_idx: usize) -> String {
    let digest = Sha1::digest(format!("{session_id}:{turn_uuid}:{block_idx}:{split_idx}").as_bytes());
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// The text a block is indexed and shown as.
pub fn render_block(block_type: &str, text: &str, tool_name: Option<&str>) -> String {
    let body = elide_data_uris(text);
    let rendered = match block_type {
        "tool_use" | "tool_result" => match tool_name {
            Some(name) if !name.is_empty() => format!("[{block_type} {name}] {body}"),
            _ => format!("[{block_type}] {body}"),
        },
        _ => body,
    };
    rendered.trim().to_string()
}

/// All chunks of a turn. `block_idx` counts every block, so dropping one never renumbers the others.
pub fn chunk_turn(turn: &Turn) -> Vec<Chunk> {
    let mut out = Vec::new();
    for (block_idx, block) in turn.blocks.iter().enumerate() {
        let rendered = render_block(&block.block_type, &block.text, block.tool_name.as_deref());
        for (split_idx, piece) in split(&rendered).into_iter().enumerate() {
            out.push(Chunk {
                id: chunk_id(&turn.session_id, &turn.turn_uuid, block_idx, split_idx),
                text: piece,
                session_id: turn.session_id.clone(),
                turn_uuid: turn.turn_uuid.clone(),
                seq: turn.seq,
                ts: turn.ts.clone(),
                role: turn.role.clone(),
                harness: turn.harness.clone(),
                workdir: turn.workdir.clone().unwrap_or_default(),
                block_type: block.block_type.clone(),
                tool_name: block.tool_name.clone(),
                block_idx: block_idx as i64,
                split_idx: split_idx as i64,
            });
        }
    }
    out
}

/// Characters of the previous turn indexed with each chunk for BM25: the end of the question or remark an
/// answer replies to ("Should we pick option C for the N-11 chiller?" before "Yes, go with C.").
pub const CONTEXT_CHARS: usize = 200;

/// The BM25 context of every turn of some sessions, keyed by (session_id, turn_uuid).
pub struct TurnContexts(std::collections::HashMap<(String, String), String>);

impl TurnContexts {
    /// The context of a chunk's turn; empty for a turn it does not know.
    pub fn of(&self, c: &Chunk) -> String {
        self.0.get(&(c.session_id.clone(), c.turn_uuid.clone())).cloned().unwrap_or_default()
    }
}

/// The BM25 context of every turn among `chunks`: the last `CONTEXT_CHARS` characters of the previous turn
/// of its session (by seq), cut at a word; empty for a session's first turn. `chunks` must hold whole
/// sessions (an index run parses whole files; a rebuild reads every stored row).
pub fn turn_contexts<'a>(chunks: impl IntoIterator<Item = &'a Chunk>) -> TurnContexts {
    let mut turns: std::collections::BTreeMap<(&str, i64, &str), Vec<&Chunk>> = std::collections::BTreeMap::new();
    for c in chunks {
        turns.entry((c.session_id.as_str(), c.seq, c.turn_uuid.as_str())).or_default().push(c);
    }
    let mut out = std::collections::HashMap::new();
    let mut prev: Option<(&str, String)> = None;
    for ((session, _, turn), mut parts) in turns {
        parts.sort_by_key(|c| (c.block_idx, c.split_idx));
        let context = match &prev {
            Some((s, text)) if *s == session => tail_at_word(text, CONTEXT_CHARS),
            _ => String::new(),
        };
        out.insert((session.to_string(), turn.to_string()), context);
        // The turn's end is in its last piece (pieces are up to MAX_CHARS, longer than CONTEXT_CHARS).
        let text = parts.iter().map(|c| c.text.as_str()).collect::<Vec<_>>().join("\n");
        prev = Some((session, text));
    }
    TurnContexts(out)
}

/// The last `max` characters of a text, starting at a word.
fn tail_at_word(text: &str, max: usize) -> String {
    let n = text.chars().count();
    if n <= max {
        return text.trim().to_string();
    }
    let tail: String = text.chars().skip(n - max).collect();
    match tail.find(char::is_whitespace) {
        Some(i) => tail[i..].trim().to_string(),
        None => tail.trim().to_string(),
    }
}

/// Splits text into overlapping pieces of at most `MAX_CHARS` code points.
pub fn split(text: &str) -> Vec<String> {
    let text = text.trim();
    if text.is_empty() {
        return Vec::new();
    }
    let chars: Vec<char> = text.chars().collect();
    let n = chars.len();
    if n <= MAX_CHARS {
        return vec![text.to_string()];
    }
    let mut out = Vec::new();
    let mut start = 0;
    loop {
        let mut end = (start + MAX_CHARS).min(n);
        if end < n {
            let half = start + MAX_CHARS / 2;
            let last = |c: char| (start..end).rev().find(|&i| chars[i] == c);
            let brk = match last('\n') {
                Some(i) if i > half => Some(i),
                _ => last(' ').filter(|&i| i > half),
            };
            if let Some(i) = brk {
                end = i;
            }
        }
        let piece: String = chars[start..end].iter().collect();
        let piece = piece.trim();
        if !piece.is_empty() {
            out.push(piece.to_string());
        }
        if end >= n {
            break;
        }
        start = (end.saturating_sub(OVERLAP)).max(start + 1);
    }
    out
}

/// Joins consecutive splits of one block, removing their shared overlap once. The overlap searched is
/// capped at `OVERLAP` so periodic text cannot swallow real content.
pub fn stitch(a: &str, b: &str) -> String {
    let ac: Vec<char> = a.chars().collect();
    let bc: Vec<char> = b.chars().collect();
    let max = OVERLAP.min(ac.len()).min(bc.len());
    let k = (1..=max).rev().find(|&k| ac[ac.len() - k..] == bc[..k]).unwrap_or(0);
    let mut s = a.to_string();
    s.extend(&bc[k..]);
    s
}

/// Replaces the payload of each inline `data:<type>;base64,<payload>` URI with `[elided]`: a pasted image is
/// megabytes of noise for both search legs.
pub fn elide_data_uris(text: &str) -> String {
    const MARKER: &str = ";base64,";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(m) = rest.find(MARKER) {
        let (head, tail) = rest.split_at(m);
        let payload_len = tail[MARKER.len()..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '+' || c == '/' || c == '='))
            .unwrap_or(tail.len() - MARKER.len());
        let is_uri = head.rfind("data:").is_some_and(|d| {
            let before_ok = head[..d].chars().next_back().is_none_or(|c| !(c.is_alphanumeric() || "+-.".contains(c)));
            let media = &head[d + 5..];
            before_ok && !media.contains(|c: char| c.is_whitespace() || ",\"'".contains(c))
        });
        out.push_str(head);
        out.push_str(MARKER);
        if is_uri && payload_len > 0 {
            out.push_str("[elided]");
            rest = &tail[MARKER.len() + payload_len..];
        } else {
            rest = &tail[MARKER.len()..];
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piece(session: &str, turn: &str, seq: i64, split_idx: i64, text: &str) -> Chunk {
        Chunk {
            id: format!("{turn}-{split_idx}"),
            text: text.into(),
            session_id: session.into(),
            turn_uuid: turn.into(),
            seq,
            split_idx,
            ..Default::default()
        }
    }

    #[test]
    fn a_turn_is_indexed_with_the_end_of_the_turn_before() {
        let long = format!("{} Should we pick option C for the N-11 chiller?", "filler ".repeat(80));
        let chunks = vec![
            piece("s", "t2", 2, 0, "Yes, go with C."),
            piece("s", "t1", 1, 0, &long),
            piece("s", "t0", 0, 0, "Morning!"),
            piece("other", "u0", 5, 0, "Another session."),
        ];
        let ctx = turn_contexts(&chunks);
        assert_eq!(ctx.of(&chunks[2]), "");
        assert_eq!(ctx.of(&chunks[1]), "Morning!");
        let c2 = ctx.of(&chunks[0]);
        assert!(c2.ends_with("Should we pick option C for the N-11 chiller?"), "{c2}");
        assert!(c2.chars().count() <= CONTEXT_CHARS && c2.starts_with("filler"), "cut at a word: {c2}");
        assert_eq!(ctx.of(&chunks[3]), "", "no context across sessions");
        assert_eq!(ctx.of(&piece("s", "unknown", 9, 0, "x")), "");
    }
    use crate::ingest::Block;

    #[test]
    fn ids_are_stable_16_hex_and_coordinate_based() {
        let a = chunk_id("s", "t", 0, 0);
        assert_eq!(a.len(), 16);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(a, chunk_id("s", "t", 0, 0));
        assert_ne!(a, chunk_id("s", "t", 0, 1));
        assert_ne!(a, chunk_id("s", "t", 1, 0));
        // sha1("s:t:0:0") — pinned so ids never drift between releases.
        assert_eq!(a, "048507d5f9dfe65e");
    }

    #[test]
    fn short_text_is_one_piece_and_empty_is_none() {
        assert_eq!(split("  hello  "), vec!["hello"]);
        assert!(split("   ").is_empty());
    }

    #[test]
    fn long_text_splits_within_max_with_overlap_and_stitches_back() {
        let words: Vec<String> = (0..800).map(|i| format!("word{i}")).collect();
        let text = words.join(" ");
        let pieces = split(&text);
        assert!(pieces.len() > 2);
        for p in &pieces {
            assert!(p.chars().count() <= MAX_CHARS);
        }
        for w in pieces.windows(2) {
            let tail: String = w[0].chars().rev().take(40).collect::<Vec<_>>().into_iter().rev().collect();
            assert!(w[1].contains(tail.split(' ').next_back().unwrap()), "pieces must overlap");
        }
        let joined = pieces.iter().skip(1).fold(pieces[0].clone(), |acc, p| stitch(&acc, p));
        assert_eq!(joined, text);
    }

    #[test]
    fn breaks_at_newline_past_half() {
        let text = format!("{}\n{}", "a".repeat(900), "b".repeat(900));
        let pieces = split(&text);
        assert_eq!(pieces[0], "a".repeat(900));
    }

    #[test]
    fn stitch_never_over_merges_periodic_text() {
        let a = "ab".repeat(200);
        let b = "ab".repeat(200);
        let s = stitch(&a, &b);
        assert_eq!(s.len(), 800 - 150);
    }

    #[test]
    fn tool_blocks_are_labelled() {
        assert_eq!(render_block("tool_use", "{\"x\":1}", Some("Bash")), "[tool_use Bash] {\"x\":1}");
        assert_eq!(render_block("tool_result", "ok", None), "[tool_result] ok");
        assert_eq!(render_block("text", " hi ", None), "hi");
    }

    #[test]
    fn data_uris_are_elided_and_lookalikes_kept() {
        let t = "see data:image/png;base64,iVBORw0KGgo+/== end";
        assert_eq!(elide_data_uris(t), "see data:image/png;base64,[elided] end");
        let meta = "metadata:x;base64,AAAA";
        assert_eq!(elide_data_uris(meta), meta);
        assert_eq!(elide_data_uris("no uri here"), "no uri here");
    }

    #[test]
    fn chunk_turn_keeps_coordinates_and_metadata() {
        let turn = Turn {
            session_id: "s".into(),
            turn_uuid: "t".into(),
            seq: 3,
            ts: "2026-10-08T09:14:00Z".into(),
            role: "assistant".into(),
            harness: "chat".into(),
            workdir: Some("/src/app".into()),
            blocks: vec![
                Block { block_type: "text".into(), text: "   ".into(), tool_name: None },
                Block { block_type: "tool_use".into(), text: "{}".into(), tool_name: Some("Bash".into()) },
            ],
        };
        let chunks = chunk_turn(&turn);
        assert_eq!(chunks.len(), 1);
        assert_eq!(chunks[0].block_idx, 1, "an empty block still counts");
        assert_eq!(chunks[0].id, chunk_id("s", "t", 1, 0));
        assert_eq!(chunks[0].seq, 3);
        assert_eq!(chunks[0].text, "[tool_use Bash] {}");
        assert_eq!(chunks[0].workdir, "/src/app", "the turn's project goes with each of its chunks");
    }
}
