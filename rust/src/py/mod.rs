//! The Python binding (`funes_py._funes`), compiled only with the `python` feature. Each method extracts and
//! owns its inputs, releases the GIL (`py.detach`), calls the `engine` facade, and converts the result. No
//! logic lives here, and nothing below the facade is imported (`engine` re-exports what is converted).

mod classes;
mod engine;
mod errors;
mod models;
mod options;
mod sources;

use pyo3::prelude::*;

use crate::engine as core;
pub(crate) use errors::to_py;

/// Loads ONNX Runtime from the given shared library, once per process; returns the path loaded.
#[pyfunction]
fn init_ort(py: Python<'_>, path: Option<std::path::PathBuf>) -> PyResult<String> {
    py.detach(|| core::init_ort(path.as_deref())).map(|p| p.display().to_string()).map_err(to_py)
}

/// The scripts the vocabulary of a `tokenizer.json` is written in, without loading a model.
#[pyfunction]
fn vocabulary_scripts(py: Python<'_>, tokenizer_json: std::path::PathBuf) -> PyResult<Vec<&'static str>> {
    py.detach(|| core::vocabulary_scripts(&tokenizer_json)).map(|s| s.names()).map_err(to_py)
}

/// How many of a text's letters each script holds, most first.
#[pyfunction]
fn letters_by_script(text: &str) -> Vec<(&'static str, usize)> {
    core::letters_by_script(text)
}

/// The model a memory was built with ("name@fingerprint", dimension), or None: no memory, or no data yet.
#[pyfunction]
fn stored_model(py: Python<'_>, home: String) -> PyResult<Option<(String, usize)>> {
    let home = core::resolve_home(&home).map_err(to_py)?;
    py.detach(|| core::stored_model(&home)).map_err(to_py)
}

/// Where recall's time went in this process: (step, total nanoseconds) for each step, and the recalls counted.
#[pyfunction]
#[pyo3(signature = (reset=false))]
fn recall_steps(reset: bool) -> (Vec<(&'static str, u64)>, u64) {
    let out = core::recall_steps();
    if reset {
        core::reset_recall_steps();
    }
    out
}

#[pymodule]
fn _funes(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_function(wrap_pyfunction!(init_ort, m)?)?;
    m.add_function(wrap_pyfunction!(options::answer_floor_at, m)?)?;
    m.add_function(wrap_pyfunction!(vocabulary_scripts, m)?)?;
    m.add_function(wrap_pyfunction!(letters_by_script, m)?)?;
    m.add_function(wrap_pyfunction!(stored_model, m)?)?;
    m.add_function(wrap_pyfunction!(recall_steps, m)?)?;
    m.add_class::<models::Models>()?;
    m.add_class::<engine::Engine>()?;
    classes::register(m)?;
    m.add("DEFAULT_K", core::DEFAULT_K)?;
    m.add("DEFAULT_CANDIDATES", core::DEFAULT_CANDIDATES)?;
    m.add("DEFAULT_HALF_LIFE_DAYS", core::DEFAULT_HALF_LIFE_DAYS)?;
    m.add("DEFAULT_NEIGHBORS", core::DEFAULT_NEIGHBORS)?;
    m.add("DEFAULT_DENSE_WEIGHT", core::DEFAULT_DENSE_WEIGHT)?;
    m.add("DEFAULT_RESIDENT", core::DEFAULT_RESIDENT)?;
    m.add("DEFAULT_GET_WINDOW", core::DEFAULT_GET_WINDOW)?;
    m.add("DEFAULT_QUERY_THREADS", core::DEFAULT_QUERY_THREADS)?;
    m.add("ANALYZER_VERSION", core::ANALYZER_VERSION)?;
    m.add("ANSWER_FLOOR_BASE_ROWS", core::ANSWER_FLOOR_BASE_ROWS)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
