//! A Python iterator of sources (`funes_py.sources`) as the core's `Source` iterator. Each `next` attaches
//! to the interpreter for as long as it takes the adapter to produce one item; the index run itself runs
//! detached. An exception raised by the adapter is kept whole and re-raised once the run has stopped.

use std::path::PathBuf;
use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::types::PyIterator;

use crate::engine::{Source, SourceContent};
use crate::error::Error;

/// `(key, signature, lines or None for a .funes.jsonl file read by the engine, bad records)`.
type SourceTuple = (String, Option<String>, Option<Vec<(usize, String)>>, Vec<(usize, String)>);

pub(super) struct PySources<'a> {
    iter: Py<PyIterator>,
    /// The adapter's exception, if it raised one (then the iterator ends the run with an error).
    pub failed: &'a Mutex<Option<PyErr>>,
}

impl<'a> PySources<'a> {
    pub fn new(iter: Py<PyIterator>, failed: &'a Mutex<Option<PyErr>>) -> Self {
        Self { iter, failed }
    }
}

impl Iterator for PySources<'_> {
    type Item = crate::Result<Source>;

    fn next(&mut self) -> Option<Self::Item> {
        let item = Python::attach(|py| -> Option<PyResult<SourceTuple>> {
            let mut it = self.iter.bind(py).clone();
            it.next().map(|r| r.and_then(|obj| obj.extract()))
        })?;
        Some(match item {
            Ok((key, signature, lines, bad)) => {
                let content = match lines {
                    Some(lines) => SourceContent::Lines { lines, bad },
                    None => SourceContent::File(PathBuf::from(&key)),
                };
                Ok(Source { key, signature, content })
            }
            Err(e) => {
                let message = format!("reading a source failed: {e}");
                *self.failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                Err(Error::InvalidInput(message))
            }
        })
    }
}
