//! The result types as Python classes: frozen, typed attributes, a readable repr. Converted from the core
//! types field by field.

use pyo3::prelude::*;

use crate::engine as core;

macro_rules! repr {
    ($ty:ident, $fmt:literal, $($f:ident),+) => {
        #[pymethods]
        impl $ty {
            fn __repr__(&self) -> String {
                format!(concat!(stringify!($ty), "(", $fmt, ")"), $(self.$f),+)
            }
        }
    };
}

#[pyclass(module = "funes_py._funes", name = "Neighbor", frozen, get_all)]
#[derive(Clone)]
pub struct Neighbor {
    pub turn_uuid: String,
    pub role: String,
    pub seq: i64,
    pub ts: String,
    pub text: String,
}
repr!(Neighbor, "role={:?}, seq={}, text={:?}", role, seq, text);

#[pyclass(module = "funes_py._funes", name = "Hit", frozen, get_all)]
#[derive(Clone)]
pub struct Hit {
    pub session_id: String,
    pub turn_uuid: String,
    pub seq: i64,
    pub ts: String,
    pub role: String,
    pub harness: String,
    pub block_type: String,
    pub tool_name: Option<String>,
    pub text: String,
    pub score: f64,
    pub similarity: f32,
    pub reranked: bool,
    pub neighbors: Vec<Neighbor>,
}
repr!(Hit, "ts={:?}, role={:?}, score={:.4}, text={:?}", ts, role, score, text);

impl From<core::Hit> for Hit {
    fn from(h: core::Hit) -> Self {
        let c = h.chunk;
        Hit {
            session_id: c.session_id,
            turn_uuid: c.turn_uuid,
            seq: c.seq,
            ts: c.ts,
            role: c.role,
            harness: c.harness,
            block_type: c.block_type,
            tool_name: c.tool_name,
            text: c.text,
            score: h.score,
            similarity: h.similarity,
            reranked: h.reranked,
            neighbors: h
                .neighbors
                .into_iter()
                .map(|n| Neighbor { turn_uuid: n.turn_uuid, role: n.role, seq: n.seq, ts: n.ts, text: n.text })
                .collect(),
        }
    }
}

#[pyclass(module = "funes_py._funes", name = "BadLine", frozen, get_all)]
#[derive(Clone)]
pub struct BadLine {
    pub file: String,
    pub line: usize,
    pub reason: String,
}
repr!(BadLine, "file={:?}, line={}, reason={:?}", file, line, reason);

#[pyclass(module = "funes_py._funes", name = "IndexReport", frozen, get_all)]
#[derive(Clone)]
pub struct IndexReport {
    pub files: usize,
    pub files_unchanged: usize,
    pub turns: usize,
    pub chunks_added: usize,
    pub chunks_skipped: usize,
    pub texts_embedded: usize,
    pub bad_lines: Vec<BadLine>,
    pub unreadable: Vec<(String, String)>,
    pub seconds: f64,
}
repr!(IndexReport, "files={}, turns={}, chunks_added={}, chunks_skipped={}", files, turns, chunks_added, chunks_skipped);

impl From<core::IndexReport> for IndexReport {
    fn from(r: core::IndexReport) -> Self {
        IndexReport {
            files: r.files,
            files_unchanged: r.files_unchanged,
            turns: r.turns,
            chunks_added: r.chunks_added,
            chunks_skipped: r.chunks_skipped,
            texts_embedded: r.texts_embedded,
            bad_lines: r
                .bad_lines
                .into_iter()
                .map(|b| BadLine { file: b.file.display().to_string(), line: b.line, reason: b.reason })
                .collect(),
            unreadable: r.unreadable.into_iter().map(|(p, e)| (p.display().to_string(), e)).collect(),
            seconds: r.seconds,
        }
    }
}

#[pyclass(module = "funes_py._funes", name = "Turn", frozen, get_all)]
#[derive(Clone)]
pub struct Turn {
    pub session_id: String,
    pub turn_uuid: String,
    pub seq: i64,
    pub ts: String,
    pub role: String,
    pub text: String,
    pub block_types: Vec<String>,
}
repr!(Turn, "seq={}, role={:?}, text={:?}", seq, role, text);

impl From<core::TurnText> for Turn {
    fn from(t: core::TurnText) -> Self {
        Turn {
            session_id: t.session_id,
            turn_uuid: t.turn_uuid,
            seq: t.seq,
            ts: t.ts,
            role: t.role,
            text: t.text,
            block_types: t.block_types,
        }
    }
}

#[pyclass(module = "funes_py._funes", name = "ScanMatch", frozen, get_all)]
#[derive(Clone)]
pub struct ScanMatch {
    pub turn_uuid: String,
    pub seq: i64,
    pub ts: String,
    pub role: String,
    pub excerpt: String,
}
repr!(ScanMatch, "seq={}, excerpt={:?}", seq, excerpt);

impl From<core::ScanMatch> for ScanMatch {
    fn from(m: core::ScanMatch) -> Self {
        ScanMatch { turn_uuid: m.turn_uuid, seq: m.seq, ts: m.ts, role: m.role, excerpt: m.excerpt }
    }
}

#[pyclass(module = "funes_py._funes", name = "SessionInfo", frozen, get_all)]
#[derive(Clone)]
pub struct SessionInfo {
    pub session_id: String,
    pub first_ts: String,
    pub last_ts: String,
    pub turns: usize,
}
repr!(SessionInfo, "session_id={:?}, last_ts={:?}, turns={}", session_id, last_ts, turns);

impl From<core::SessionInfo> for SessionInfo {
    fn from(s: core::SessionInfo) -> Self {
        SessionInfo { session_id: s.session_id, first_ts: s.first_ts, last_ts: s.last_ts, turns: s.turns }
    }
}

#[pyclass(module = "funes_py._funes", name = "Sketch", frozen, get_all)]
#[derive(Clone)]
pub struct Sketch {
    pub session_id: String,
    pub first_ts: String,
    pub last_ts: String,
    pub turns: usize,
    pub chars: usize,
    pub opening: String,
    pub last_word: String,
    pub last_role: String,
}
repr!(Sketch, "session_id={:?}, turns={}, opening={:?}", session_id, turns, opening);

impl From<core::Sketch> for Sketch {
    fn from(s: core::Sketch) -> Self {
        Sketch {
            session_id: s.session_id,
            first_ts: s.first_ts,
            last_ts: s.last_ts,
            turns: s.turns,
            chars: s.chars,
            opening: s.opening,
            last_word: s.last_word,
            last_role: s.last_role,
        }
    }
}

#[pyclass(module = "funes_py._funes", name = "Status", frozen, get_all)]
#[derive(Clone)]
pub struct Status {
    pub home: String,
    pub model: String,
    pub memory_model: String,
    pub analyzer_version: u32,
    pub dim: usize,
    pub rows: usize,
    pub sessions: usize,
    pub version: u64,
    pub fragments: usize,
    pub fts_indexed: bool,
    pub fts_unindexed_rows: usize,
    pub vector_indexed: bool,
    pub vector_unindexed_rows: usize,
    pub disk_bytes: u64,
}
repr!(Status, "model={:?}, rows={}, sessions={}, disk_bytes={}", model, rows, sessions, disk_bytes);

impl From<core::Status> for Status {
    fn from(s: core::Status) -> Self {
        let st = s.store;
        Status {
            home: s.home,
            model: s.model,
            memory_model: s.memory_model,
            analyzer_version: s.analyzer_version,
            dim: s.dim,
            rows: st.rows,
            sessions: s.sessions,
            version: st.version,
            fragments: st.fragments,
            fts_indexed: st.fts_indexed,
            fts_unindexed_rows: st.fts_unindexed_rows,
            vector_indexed: st.vector_indexed,
            vector_unindexed_rows: st.vector_unindexed_rows,
            disk_bytes: st.disk_bytes,
        }
    }
}

#[pyclass(module = "funes_py._funes", name = "ForgetReport", frozen, get_all)]
#[derive(Clone)]
pub struct ForgetReport {
    pub session_id: String,
    pub found: bool,
    pub rows_removed: usize,
    pub turns_removed: usize,
}
repr!(ForgetReport, "session_id={:?}, found={}, rows_removed={}", session_id, found, rows_removed);

impl From<core::ForgetReport> for ForgetReport {
    fn from(r: core::ForgetReport) -> Self {
        ForgetReport { session_id: r.session_id, found: r.found, rows_removed: r.rows_removed, turns_removed: r.turns_removed }
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Neighbor>()?;
    m.add_class::<Hit>()?;
    m.add_class::<BadLine>()?;
    m.add_class::<IndexReport>()?;
    m.add_class::<Turn>()?;
    m.add_class::<ScanMatch>()?;
    m.add_class::<SessionInfo>()?;
    m.add_class::<Sketch>()?;
    m.add_class::<Status>()?;
    m.add_class::<ForgetReport>()?;
    Ok(())
}
