//! `Models` and `Engine` for Python: extract, release the GIL, call the facade, convert.

use std::path::PathBuf;
use std::sync::Arc;

use numpy::{IntoPyArray, PyArray2};
use pyo3::prelude::*;

use super::classes;
use super::to_py;
use crate::engine as core;
use crate::inference::{self, CrossEncoder, Embedder};
use crate::options::{parse_time_bound, EngineOptions, RecallOptions, DEFAULT_GET_WINDOW, DEFAULT_RESIDENT};

/// Rows of vectors → a (n, dim) float32 array, moved without a copy.
fn matrix(py: Python<'_>, rows: Vec<Vec<f32>>, dim: usize) -> PyResult<Bound<'_, PyArray2<f32>>> {
    let n = rows.len();
    let flat: Vec<f32> = rows.into_iter().flatten().collect();
    let arr = numpy::ndarray::Array2::from_shape_vec((n, dim), flat).map_err(|e| to_py(crate::Error::Model(e.to_string())))?;
    Ok(arr.into_pyarray(py))
}

/// The loaded models, shared by every engine that is given them. Loaded once per process.
#[pyclass(module = "funes_py._funes", name = "Models", frozen)]
pub struct Models {
    pub inner: Arc<inference::Models>,
}

#[pymethods]
impl Models {
    /// Loads converted model directories (see `funes_py.convert`): the embedder with `pool` one-thread
    /// sessions (plus one with `query_threads` threads for single queries), the reranker with one session
    /// using every core.
    #[staticmethod]
    #[pyo3(signature = (embedder_dir, reranker_dir=None, pool=2, query_threads=inference::DEFAULT_QUERY_THREADS))]
    fn from_dirs(
        py: Python<'_>,
        embedder_dir: PathBuf,
        reranker_dir: Option<PathBuf>,
        pool: usize,
        query_threads: usize,
    ) -> PyResult<Self> {
        let models = py
            .detach(|| -> crate::Result<_> {
                let embedder = Embedder::load(&embedder_dir, pool, query_threads)?;
                let reranker = reranker_dir.map(|d| CrossEncoder::load(&d, inference::cores())).transpose()?;
                Ok(inference::Models { embedder, reranker })
            })
            .map_err(to_py)?;
        Ok(Self { inner: Arc::new(models) })
    }

    #[getter]
    fn embedder_name(&self) -> String {
        self.inner.embedder.spec().name.clone()
    }

    /// "name@fingerprint", as stamped into each memory.
    #[getter]
    fn embedder_stamp(&self) -> String {
        self.inner.embedder.spec().stamp()
    }

    #[getter]
    fn dim(&self) -> usize {
        self.inner.embedder.dim()
    }

    #[getter]
    fn reranker_name(&self) -> Option<String> {
        self.inner.reranker.as_ref().map(|r| r.spec().name.clone())
    }

    /// Embeds texts → float32 array of shape (len(texts), dim).
    fn embed<'py>(&self, py: Python<'py>, texts: Vec<String>) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let models = self.inner.clone();
        let rows = py
            .detach(|| {
                let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
                models.embedder.embed_many(&refs, &|_| {})
            })
            .map_err(to_py)?;
        matrix(py, rows, self.inner.embedder.dim())
    }

    /// Raw cross-encoder logits for (query, passage) pairs.
    fn rerank_scores(&self, py: Python<'_>, query: String, passages: Vec<String>) -> PyResult<Vec<f32>> {
        let models = self.inner.clone();
        py.detach(|| {
            let r = models.reranker.as_ref().ok_or_else(|| crate::Error::InvalidInput("no reranker is loaded".into()))?;
            let refs: Vec<&str> = passages.iter().map(String::as_str).collect();
            r.score(&query, &refs)
        })
        .map_err(to_py)
    }
}

/// One open memory. Safe to share between threads: every call releases the GIL.
#[pyclass(module = "funes_py._funes", name = "Engine", frozen)]
pub struct Engine {
    inner: Arc<core::Engine>,
}

fn bound(s: Option<String>, upper: bool) -> PyResult<Option<i64>> {
    s.map(|s| parse_time_bound(&s, upper)).transpose().map_err(to_py)
}

#[pymethods]
impl Engine {
    #[new]
    #[pyo3(signature = (home, models, resident=DEFAULT_RESIDENT))]
    fn new(py: Python<'_>, home: PathBuf, models: &Models, resident: bool) -> PyResult<Self> {
        let m = models.inner.clone();
        let opts = EngineOptions { resident };
        let inner = py.detach(|| core::Engine::open(&home, m, &opts)).map_err(to_py)?;
        Ok(Self { inner: Arc::new(inner) })
    }

    /// Re-embeds a memory's stored text with `models` (after a model change) and opens it.
    #[staticmethod]
    fn rebuild(py: Python<'_>, home: PathBuf, models: &Models) -> PyResult<(Self, usize)> {
        let m = models.inner.clone();
        let opts = EngineOptions::default();
        let (inner, n) = py.detach(|| core::Engine::rebuild(&home, m, &opts, &|_, _| {})).map_err(to_py)?;
        Ok((Self { inner: Arc::new(inner) }, n))
    }

    #[getter]
    fn home(&self) -> String {
        self.inner.home().display().to_string()
    }

    /// Indexes a file or a directory. `progress(done, total)` is called (with the GIL) as chunks embed.
    #[pyo3(signature = (path, progress=None))]
    fn index(&self, py: Python<'_>, path: PathBuf, progress: Option<Py<PyAny>>) -> PyResult<classes::IndexReport> {
        let inner = self.inner.clone();
        let report = py
            .detach(|| {
                let cb = |done: usize, total: usize| {
                    if let Some(p) = &progress {
                        Python::attach(|py| {
                            let _ = p.call1(py, (done, total));
                        });
                    }
                };
                inner.index(&path, &cb)
            })
            .map_err(to_py)?;
        Ok(report.into())
    }

    #[pyo3(signature = (query, k=crate::options::DEFAULT_K, candidates=crate::options::DEFAULT_CANDIDATES,
        half_life_days=crate::options::DEFAULT_HALF_LIFE_DAYS, neighbors=crate::options::DEFAULT_NEIGHBORS,
        since=None, until=None, roles=None, block_types=None, min_similarity=None, identifier_guard=false, rerank=None, now=None, legs="hybrid", dense_weight=crate::options::DEFAULT_DENSE_WEIGHT, exact=false))]
    #[allow(clippy::too_many_arguments)]
    fn recall(
        &self,
        py: Python<'_>,
        query: String,
        k: usize,
        candidates: usize,
        half_life_days: f64,
        neighbors: usize,
        since: Option<String>,
        until: Option<String>,
        roles: Option<Vec<String>>,
        block_types: Option<Vec<String>>,
        min_similarity: Option<f32>,
        identifier_guard: bool,
        rerank: Option<bool>,
        now: Option<String>,
        legs: &str,
        dense_weight: f64,
        exact: bool,
    ) -> PyResult<Vec<classes::Hit>> {
        let opts = RecallOptions {
            k,
            candidates,
            half_life_days,
            neighbors,
            since_ms: bound(since, false)?,
            until_ms: bound(until, true)?,
            roles: roles.unwrap_or_default(),
            block_types: block_types.unwrap_or_default(),
            min_similarity,
            identifier_guard,
            rerank,
            now_ms: bound(now, false)?,
            legs: legs.parse().map_err(to_py)?,
            dense_weight,
            exact,
        };
        let inner = self.inner.clone();
        let hits = py.detach(|| inner.recall(&query, &opts)).map_err(to_py)?;
        Ok(hits.into_iter().map(Into::into).collect())
    }

    #[pyo3(signature = (session_id, turn_uuid=None, window=DEFAULT_GET_WINDOW))]
    fn get(&self, py: Python<'_>, session_id: String, turn_uuid: Option<String>, window: usize) -> PyResult<Vec<classes::Turn>> {
        let inner = self.inner.clone();
        let turns = py.detach(|| inner.get(&session_id, turn_uuid.as_deref(), window)).map_err(to_py)?;
        Ok(turns.into_iter().map(Into::into).collect())
    }

    #[pyo3(signature = (session_id, needle, ignore_case=true, context=None))]
    fn scan(&self, py: Python<'_>, session_id: String, needle: String, ignore_case: bool, context: Option<usize>) -> PyResult<Vec<classes::ScanMatch>> {
        let inner = self.inner.clone();
        let m = py.detach(|| inner.scan(&session_id, &needle, ignore_case, context)).map_err(to_py)?;
        Ok(m.into_iter().map(Into::into).collect())
    }

    #[pyo3(signature = (since=None, until=None))]
    fn sessions(&self, py: Python<'_>, since: Option<String>, until: Option<String>) -> PyResult<Vec<classes::SessionInfo>> {
        let (s, u) = (bound(since, false)?, bound(until, true)?);
        let inner = self.inner.clone();
        let v = py.detach(|| inner.sessions(s, u)).map_err(to_py)?;
        Ok(v.into_iter().map(Into::into).collect())
    }

    fn sketch(&self, py: Python<'_>, session_id: String) -> PyResult<classes::Sketch> {
        let inner = self.inner.clone();
        py.detach(|| inner.sketch(&session_id)).map(Into::into).map_err(to_py)
    }

    fn status(&self, py: Python<'_>) -> PyResult<classes::Status> {
        let inner = self.inner.clone();
        py.detach(|| inner.status()).map(Into::into).map_err(to_py)
    }

    fn forget(&self, py: Python<'_>, session_id: String) -> PyResult<classes::ForgetReport> {
        let inner = self.inner.clone();
        py.detach(|| inner.forget(&session_id)).map(Into::into).map_err(to_py)
    }
}
