//! `Engine` for Python: extract, release the GIL, call the facade, convert.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use pyo3::types::PyIterator;

use super::classes;
use super::models::Models;
use super::options::{bounds, RecallArgs};
use super::sources::PySources;
use super::to_py;
use crate::engine::{self as core, EngineOptions};

/// One open memory. Safe to share between threads: every call releases the GIL.
#[pyclass(module = "funes_py._funes", name = "Engine", frozen)]
pub struct Engine {
    inner: Arc<core::Engine>,
}

/// `progress(done, total)` called with the GIL, if given.
fn progress_fn(progress: &Option<Py<PyAny>>) -> impl Fn(usize, usize) + Sync + '_ {
    move |done, total| {
        if let Some(p) = progress {
            Python::attach(|py| {
                // A failing progress callback must not fail the index run.
                let _ = p.call1(py, (done, total));
            });
        }
    }
}

#[pymethods]
impl Engine {
    #[new]
    #[pyo3(signature = (home, models, resident=core::DEFAULT_RESIDENT, on_model_mismatch="refuse"))]
    fn new(py: Python<'_>, home: String, models: &Models, resident: bool, on_model_mismatch: &str) -> PyResult<Self> {
        let opts = EngineOptions { resident, on_model_mismatch: on_model_mismatch.parse().map_err(to_py)? };
        let m = models.inner.clone();
        let home = core::resolve_home(&home).map_err(to_py)?;
        let inner = py.detach(|| core::Engine::open(&home, m, &opts)).map_err(to_py)?;
        Ok(Self { inner: Arc::new(inner) })
    }

    /// Re-embeds a memory's stored text with `models` (after a model change) and opens it.
    #[staticmethod]
    #[pyo3(signature = (home, models, resident=core::DEFAULT_RESIDENT, progress=None))]
    fn rebuild(py: Python<'_>, home: String, models: &Models, resident: bool, progress: Option<Py<PyAny>>) -> PyResult<(Self, usize)> {
        let opts = EngineOptions { resident, ..Default::default() };
        let m = models.inner.clone();
        let home = core::resolve_home(&home).map_err(to_py)?;
        let (inner, n) = py.detach(|| core::Engine::rebuild(&home, m, &opts, &progress_fn(&progress))).map_err(to_py)?;
        Ok((Self { inner: Arc::new(inner) }, n))
    }

    #[getter]
    fn home(&self) -> String {
        self.inner.home().to_string()
    }

    /// `(model the memory was built with, chunks re-embedded)` when opening re-embedded it, else None.
    #[getter]
    fn rebuilt(&self) -> Option<(String, usize)> {
        self.inner.rebuilt().map(|r| (r.from_model.clone(), r.chunks))
    }

    #[pyo3(signature = (path, progress=None))]
    fn index(&self, py: Python<'_>, path: PathBuf, progress: Option<Py<PyAny>>) -> PyResult<classes::IndexReport> {
        let inner = self.inner.clone();
        let report = py.detach(|| inner.index(&path, &progress_fn(&progress))).map_err(to_py)?;
        Ok(report.into())
    }

    /// Indexes the sources an iterator yields (see `funes_py.sources`), consumed lazily.
    #[pyo3(signature = (sources, files_unchanged=0, progress=None))]
    fn index_sources(
        &self,
        py: Python<'_>,
        sources: Bound<'_, PyAny>,
        files_unchanged: usize,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<classes::IndexReport> {
        let iter: Py<PyIterator> = sources.try_iter()?.unbind();
        let failed = Mutex::new(None);
        let inner = self.inner.clone();
        let result = py.detach(|| inner.index_sources(PySources::new(iter, &failed), files_unchanged, &progress_fn(&progress)));
        if let Some(e) = failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
            return Err(e);
        }
        Ok(result.map_err(to_py)?.into())
    }

    /// Which (key, signature) pairs are unchanged since the last run.
    fn unchanged(&self, py: Python<'_>, pairs: Vec<(String, String)>) -> PyResult<Vec<bool>> {
        let inner = self.inner.clone();
        py.detach(|| inner.unchanged(&pairs)).map_err(to_py)
    }

    /// Reads the memory into RAM and runs the embedder once (`Engine::warm`).
    fn warm(&self, py: Python<'_>) -> PyResult<()> {
        let inner = self.inner.clone();
        py.detach(|| inner.warm()).map_err(to_py)
    }

    fn is_warm(&self) -> bool {
        self.inner.is_warm()
    }

    /// Recall with a `funes_py.RecallOptions`.
    fn recall(&self, py: Python<'_>, query: String, options: RecallArgs) -> PyResult<Vec<classes::Hit>> {
        let opts = options.into_core()?;
        let inner = self.inner.clone();
        let hits = py.detach(|| inner.recall(&query, &opts)).map_err(to_py)?;
        Ok(hits.into_iter().map(Into::into).collect())
    }

    /// Recall for many queries at once, with one `funes_py.RecallOptions`.
    fn recall_many(&self, py: Python<'_>, queries: Vec<String>, options: RecallArgs) -> PyResult<Vec<Vec<classes::Hit>>> {
        let opts = options.into_core()?;
        let inner = self.inner.clone();
        let hits = py.detach(|| inner.recall_many(&queries.iter().map(String::as_str).collect::<Vec<_>>(), &opts)).map_err(to_py)?;
        Ok(hits.into_iter().map(|h| h.into_iter().map(Into::into).collect()).collect())
    }

    #[pyo3(signature = (session_id, turn_uuid=None, window=core::DEFAULT_GET_WINDOW))]
    fn get(&self, py: Python<'_>, session_id: String, turn_uuid: Option<String>, window: usize) -> PyResult<Vec<core::TurnText>> {
        let inner = self.inner.clone();
        py.detach(|| inner.get(&session_id, turn_uuid.as_deref(), window)).map_err(to_py)
    }

    #[pyo3(signature = (session_id, needle, ignore_case=true, context=None))]
    fn scan(
        &self,
        py: Python<'_>,
        session_id: String,
        needle: String,
        ignore_case: bool,
        context: Option<usize>,
    ) -> PyResult<Vec<core::ScanMatch>> {
        let inner = self.inner.clone();
        py.detach(|| inner.scan(&session_id, &needle, ignore_case, context)).map_err(to_py)
    }

    #[pyo3(signature = (since=None, until=None))]
    fn sessions(&self, py: Python<'_>, since: Option<String>, until: Option<String>) -> PyResult<Vec<core::SessionInfo>> {
        let (s, u) = bounds(since, until)?;
        let inner = self.inner.clone();
        py.detach(|| inner.sessions(s, u)).map_err(to_py)
    }

    fn sketch(&self, py: Python<'_>, session_id: String) -> PyResult<core::Sketch> {
        let inner = self.inner.clone();
        py.detach(|| inner.sketch(&session_id)).map_err(to_py)
    }

    fn status(&self, py: Python<'_>) -> PyResult<classes::Status> {
        let inner = self.inner.clone();
        py.detach(|| inner.status()).map(Into::into).map_err(to_py)
    }

    fn forget(&self, py: Python<'_>, session_id: String) -> PyResult<core::ForgetReport> {
        let inner = self.inner.clone();
        py.detach(|| inner.forget(&session_id)).map_err(to_py)
    }
}
