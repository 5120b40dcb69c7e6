//! The result types whose Python shape differs from the core's, as Python classes: frozen, typed
//! attributes, a readable repr, converted from the core types field by field. The records whose shape is the
//! same are the core's own structs (`crate::records::result_record!`), registered here as they are.

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

#[pyclass(module = "funes_py._funes", name = "Hit", frozen, get_all)]
#[derive(Clone)]
pub struct Hit {
    pub session_id: String,
    pub turn_uuid: String,
    pub seq: i64,
    pub ts: String,
    pub role: String,
    pub harness: String,
    /// The working directory (project) the turn was held in; "" when its source has none.
    pub workdir: String,
    pub block_type: String,
    pub tool_name: Option<String>,
    pub text: String,
    pub score: f64,
    pub similarity: f32,
    pub reranked: bool,
    pub neighbors: Vec<core::Neighbor>,
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
            workdir: c.workdir,
            block_type: c.block_type,
            tool_name: c.tool_name,
            text: c.text,
            score: h.score,
            similarity: h.similarity,
            reranked: h.reranked,
            neighbors: h.neighbors,
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

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<core::Neighbor>()?;
    m.add_class::<Hit>()?;
    m.add_class::<BadLine>()?;
    m.add_class::<IndexReport>()?;
    m.add_class::<core::TurnText>()?;
    m.add_class::<core::ScanMatch>()?;
    m.add_class::<core::SessionInfo>()?;
    m.add_class::<core::Sketch>()?;
    m.add_class::<Status>()?;
    m.add_class::<core::ForgetReport>()?;
    Ok(())
}
