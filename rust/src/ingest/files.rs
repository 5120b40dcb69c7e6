//! The files an index run reads: which (a file as given, or every `*.funes.jsonl` under a directory) and their
//! lines. The only part of `ingest` that touches the disk; the rest is pure.

use std::path::{Path, PathBuf};

use super::{parse_bytes, ParsedFile};
use crate::error::{Error, Result};

pub const SUFFIX: &str = ".funes.jsonl";

/// Files to index under `path`, sorted so runs are deterministic. Hidden directories and temporary files
/// (a writer's `.tmp` before its rename) are not read.
pub fn collect_files(path: &Path) -> Result<Vec<PathBuf>> {
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::PathNotFound { what: "path to index", path: path.to_path_buf() },
        _ => Error::io(format!("reading {}", path.display()), e),
    })?;
    if meta.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut out = Vec::new();
    let mut stack = vec![path.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| Error::io(format!("listing {}", dir.display()), e))?;
        for entry in entries {
            let entry = entry.map_err(|e| Error::io(format!("listing {}", dir.display()), e))?;
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with('.') {
                continue;
            }
            let p = entry.path();
            let ft = entry.file_type().map_err(|e| Error::io(format!("stat {}", p.display()), e))?;
            if ft.is_dir() {
                stack.push(p);
            } else if name.ends_with(SUFFIX) {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}

pub fn parse_file(path: &Path) -> Result<ParsedFile> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
    Ok(parse_bytes(path, &bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_recursively_and_skips_hidden_and_other_files() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir_all(d.join("a/b")).unwrap();
        std::fs::create_dir_all(d.join(".hidden")).unwrap();
        for f in ["x.funes.jsonl", "a/y.funes.jsonl", "a/b/z.funes.jsonl", "a/notes.txt", ".hidden/h.funes.jsonl", "a/.w.funes.jsonl"] {
            std::fs::write(d.join(f), "").unwrap();
        }
        let files = collect_files(d).unwrap();
        let names: Vec<_> = files.iter().map(|p| p.strip_prefix(d).unwrap().to_string_lossy().to_string()).collect();
        assert_eq!(names, vec!["a/b/z.funes.jsonl", "a/y.funes.jsonl", "x.funes.jsonl"]);
    }

    #[test]
    fn a_missing_path_is_path_not_found() {
        let err = collect_files(Path::new("/nonexistent/funes")).unwrap_err();
        assert!(matches!(err, Error::PathNotFound { .. }));
    }
}
