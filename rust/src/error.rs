//! One error type for the core. Each variant is one Python exception class (see `py::errors`), so a caller
//! can catch what it can handle by name instead of parsing messages. The conversions from the libraries'
//! errors live beside the only module that names each library (`store` for Lance, `inference` for ONNX
//! Runtime), which keeps the library's error as the `source`.

use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The error of a library below the engine, kept whole as a `source`.
pub type Source = Box<dyn std::error::Error + Send + Sync + 'static>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A path the caller named does not exist (maps to Python's `FileNotFoundError`).
    #[error("{what} not found: {path}")]
    PathNotFound { what: &'static str, path: PathBuf },

    /// The memory was built with another embedding model; mixing vectors of two models would make recall
    /// silently wrong, so it is refused.
    #[error(
        "this memory was built with the embedding model {stored}, but {loaded} is loaded; \
         open it with {stored} or rebuild it with `funes-py index --rebuild --home {home}`"
    )]
    ModelMismatch { stored: String, loaded: String, home: String },

    /// Another process holds this memory's writer lock.
    #[error("another index run holds the writer lock of {0}; try again when it has finished")]
    Locked(PathBuf),

    /// Bad arguments (an empty query, an unparseable date, an invalid filter value).
    #[error("{0}")]
    InvalidInput(String),

    /// The model directory is incomplete or ONNX Runtime / the tokenizer failed.
    #[error("model error: {message}")]
    Model {
        message: String,
        #[source]
        source: Option<Source>,
    },

    /// Lance failed to read or write the memory.
    #[error("storage error: {message}")]
    Storage {
        message: String,
        #[source]
        source: Option<Source>,
    },

    #[error("{context}: {source}")]
    Io { context: String, source: std::io::Error },
}

impl Error {
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io { context: context.into(), source }
    }

    /// A storage failure of our own making (a malformed batch, a missing column).
    pub fn storage(message: impl Into<String>) -> Self {
        Error::Storage { message: message.into(), source: None }
    }

    /// A model failure of our own making (a wrong output shape, a missing file).
    pub fn model(message: impl Into<String>) -> Self {
        Error::Model { message: message.into(), source: None }
    }
}
