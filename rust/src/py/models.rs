//! `Models` for Python: the loaded embedder and reranker, shared by every engine given them.

use std::path::PathBuf;
use std::sync::Arc;

use numpy::{IntoPyArray, PyArray2};
use pyo3::prelude::*;

use super::to_py;
use crate::engine as core;

/// Rows of vectors → a (n, dim) float32 array, moved without a copy.
fn matrix(py: Python<'_>, rows: Vec<Vec<f32>>, dim: usize) -> PyResult<Bound<'_, PyArray2<f32>>> {
    let n = rows.len();
    let flat: Vec<f32> = rows.into_iter().flatten().collect();
    let arr = numpy::ndarray::Array2::from_shape_vec((n, dim), flat)
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("embedding matrix: {e}")))?;
    Ok(arr.into_pyarray(py))
}

/// The loaded models, shared by every engine that is given them. Loaded once per process.
#[pyclass(module = "funes_py._funes", name = "Models", frozen)]
pub struct Models {
    pub inner: Arc<core::Models>,
}

#[pymethods]
impl Models {
    #[staticmethod]
    #[pyo3(signature = (embedder_dir, reranker_dir=None, pool=2, query_threads=core::DEFAULT_QUERY_THREADS))]
    fn from_dirs(
        py: Python<'_>,
        embedder_dir: PathBuf,
        reranker_dir: Option<PathBuf>,
        pool: usize,
        query_threads: usize,
    ) -> PyResult<Self> {
        let models = py.detach(|| core::Models::load(&embedder_dir, reranker_dir.as_deref(), pool, query_threads)).map_err(to_py)?;
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

    /// Embeds passages as they are stored (with the model's passage prefix) → float32 array (n, dim).
    fn embed<'py>(&self, py: Python<'py>, texts: Vec<String>) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let models = self.inner.clone();
        let rows =
            py.detach(|| models.embedder.embed_passages(&texts.iter().map(String::as_str).collect::<Vec<_>>(), &|_| {})).map_err(to_py)?;
        matrix(py, rows, self.inner.embedder.dim())
    }

    /// Embeds queries as recall does (with the model's query prefix) → float32 array (n, dim).
    fn embed_queries<'py>(&self, py: Python<'py>, texts: Vec<String>) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let models = self.inner.clone();
        let rows =
            py.detach(|| models.embedder.embed_queries(&texts.iter().map(String::as_str).collect::<Vec<_>>(), &|_| {})).map_err(to_py)?;
        matrix(py, rows, self.inner.embedder.dim())
    }

    /// The near words BM25 also asks for with `query` (`thesaurus`): (word, BM25 term, weight), in order.
    fn near_words(&self, py: Python<'_>, query: String) -> Vec<(String, String, f32)> {
        let models = self.inner.clone();
        let near = py.detach(|| models.thesaurus.expand(&query, core::NEAR_WORD_MIN_COSINE, core::NEAR_WORD_WEIGHT));
        near.into_iter().map(|n| (n.word, n.term, n.weight)).collect()
    }

    /// The scripts the embedder's vocabulary reads (`Latin`, `Hangul`, ...).
    #[getter]
    fn scripts(&self) -> Vec<&'static str> {
        self.inner.embedder.scripts().names()
    }

    /// The share of a text's letters written in a script the embedder reads (1 for a text without letters).
    fn share_read(&self, text: &str) -> f32 {
        self.inner.embedder.share_read(text)
    }

    /// Raw cross-encoder logits for (query, passage) pairs.
    fn rerank_scores(&self, py: Python<'_>, query: String, passages: Vec<String>) -> PyResult<Vec<f32>> {
        let models = self.inner.clone();
        py.detach(|| models.rerank_scores(&query, &passages.iter().map(String::as_str).collect::<Vec<_>>())).map_err(to_py)
    }
}
