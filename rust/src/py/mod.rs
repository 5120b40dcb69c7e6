//! The Python binding (`funes_py._funes`), compiled only with the `python` feature. Each method extracts and
//! owns its inputs, releases the GIL (`py.detach`), calls the `engine` facade, and converts the result. No
//! logic lives here.

mod classes;
mod engine;

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyFileNotFoundError, PyOSError, PyPermissionError};
use pyo3::prelude::*;

use crate::error::Error;

create_exception!(funes_py, FunesError, PyException, "Base class of every funes_py error.");
create_exception!(funes_py, ModelMismatchError, FunesError, "The memory was built with another embedding model.");
create_exception!(funes_py, MemoryLockedError, FunesError, "Another index run holds the memory's writer lock.");
create_exception!(funes_py, InvalidInputError, FunesError, "A bad argument: empty query, bad date, unknown session.");
create_exception!(funes_py, ModelError, FunesError, "A model could not be loaded or run.");
create_exception!(funes_py, StorageError, FunesError, "The Lance dataset could not be read or written.");

/// One Python exception class per error kind; missing paths are `FileNotFoundError`.
pub(crate) fn to_py(e: Error) -> PyErr {
    let msg = e.to_string();
    match e {
        Error::PathNotFound { .. } => PyFileNotFoundError::new_err(msg),
        Error::ModelMismatch { .. } => ModelMismatchError::new_err(msg),
        Error::Locked(_) => MemoryLockedError::new_err(msg),
        Error::InvalidInput(_) => InvalidInputError::new_err(msg),
        Error::Model(_) => ModelError::new_err(msg),
        Error::Storage(_) => StorageError::new_err(msg),
        Error::Io { source, .. } => match source.kind() {
            std::io::ErrorKind::NotFound => PyFileNotFoundError::new_err(msg),
            std::io::ErrorKind::PermissionDenied => PyPermissionError::new_err(msg),
            _ => PyOSError::new_err(msg),
        },
    }
}

/// Loads ONNX Runtime from the given shared library, once per process; returns the path loaded.
#[pyfunction]
fn init_ort(py: Python<'_>, path: Option<std::path::PathBuf>) -> PyResult<String> {
    py.detach(|| crate::inference::init_ort(path.as_deref())).map(|p| p.display().to_string()).map_err(to_py)
}

#[pymodule]
fn _funes(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("FunesError", py.get_type::<FunesError>())?;
    m.add("ModelMismatchError", py.get_type::<ModelMismatchError>())?;
    m.add("MemoryLockedError", py.get_type::<MemoryLockedError>())?;
    m.add("InvalidInputError", py.get_type::<InvalidInputError>())?;
    m.add("ModelError", py.get_type::<ModelError>())?;
    m.add("StorageError", py.get_type::<StorageError>())?;
    m.add_function(wrap_pyfunction!(init_ort, m)?)?;
    m.add_class::<engine::Models>()?;
    m.add_class::<engine::Engine>()?;
    classes::register(m)?;
    m.add("DEFAULT_K", crate::options::DEFAULT_K)?;
    m.add("DEFAULT_RESIDENT", crate::options::DEFAULT_RESIDENT)?;
    m.add("DEFAULT_DENSE_WEIGHT", crate::options::DEFAULT_DENSE_WEIGHT)?;
    m.add("DEFAULT_QUERY_THREADS", crate::inference::DEFAULT_QUERY_THREADS)?;
    m.add("DEFAULT_CANDIDATES", crate::options::DEFAULT_CANDIDATES)?;
    m.add("DEFAULT_HALF_LIFE_DAYS", crate::options::DEFAULT_HALF_LIFE_DAYS)?;
    m.add("DEFAULT_NEIGHBORS", crate::options::DEFAULT_NEIGHBORS)?;
    m.add("DEFAULT_GET_WINDOW", crate::options::DEFAULT_GET_WINDOW)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
