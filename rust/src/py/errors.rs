//! One Python exception class per error kind, catchable by name; missing paths are `FileNotFoundError`.
//! The classes carry the error's fields as attributes (`ModelMismatchError.stored`), so a caller never
//! parses a message.

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyFileNotFoundError, PyOSError, PyPermissionError};
use pyo3::prelude::*;

use crate::error::Error;

create_exception!(funes_py, FunesError, PyException, "Base class of every funes_py error.");
create_exception!(
    funes_py,
    ModelMismatchError,
    FunesError,
    "The memory was built with another embedding model (attributes: stored, loaded, home)."
);
create_exception!(funes_py, MemoryLockedError, FunesError, "Another index run holds the memory's writer lock (attribute: home).");
create_exception!(funes_py, InvalidInputError, FunesError, "A bad argument: empty query, bad date, unknown session.");
create_exception!(funes_py, ModelError, FunesError, "A model could not be loaded or run.");
create_exception!(funes_py, StorageError, FunesError, "The Lance dataset could not be read or written.");

pub(crate) fn to_py(e: Error) -> PyErr {
    let msg = e.to_string();
    match e {
        Error::PathNotFound { .. } => PyFileNotFoundError::new_err(msg),
        Error::ModelMismatch { stored, loaded, home } => {
            with_attrs(ModelMismatchError::new_err(msg), &[("stored", stored), ("loaded", loaded), ("home", home)])
        }
        Error::Locked(home) => with_attrs(MemoryLockedError::new_err(msg), &[("home", home.display().to_string())]),
        Error::InvalidInput(_) => InvalidInputError::new_err(msg),
        Error::Model { .. } => ModelError::new_err(msg),
        Error::Storage { .. } => StorageError::new_err(msg),
        Error::Io { source, .. } => match source.kind() {
            std::io::ErrorKind::NotFound => PyFileNotFoundError::new_err(msg),
            std::io::ErrorKind::PermissionDenied => PyPermissionError::new_err(msg),
            _ => PyOSError::new_err(msg),
        },
    }
}

fn with_attrs(err: PyErr, attrs: &[(&str, String)]) -> PyErr {
    Python::attach(|py| {
        let value = err.value(py);
        for (name, v) in attrs {
            // Setting an attribute on a fresh exception instance cannot fail; if it ever did, the message
            // still says everything.
            let _ = value.setattr(*name, v);
        }
    });
    err
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("FunesError", py.get_type::<FunesError>())?;
    m.add("ModelMismatchError", py.get_type::<ModelMismatchError>())?;
    m.add("MemoryLockedError", py.get_type::<MemoryLockedError>())?;
    m.add("InvalidInputError", py.get_type::<InvalidInputError>())?;
    m.add("ModelError", py.get_type::<ModelError>())?;
    m.add("StorageError", py.get_type::<StorageError>())?;
    Ok(())
}
