//! `<home>/index-state.json`: a cheap change stamp (size and mtime) per source file, so an unchanged
//! directory is re-indexed without parsing anything. A file that changed is parsed again and only its new
//! chunk ids are embedded (the id set is the real guard; the stamp only saves the parse).

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{Error, Result};

pub const STATE_FILE: &str = "index-state.json";

#[derive(Debug, Default, serde::Deserialize, serde::Serialize)]
pub struct IndexState {
    pub files: BTreeMap<String, String>,
}

impl IndexState {
    /// A missing or unreadable state is an empty one: the worst case is a re-parse.
    pub fn load(home: &Path) -> Self {
        std::fs::read(home.join(STATE_FILE)).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default()
    }

    /// Written to a temporary file and renamed, so a crash leaves the old state or the new one.
    pub fn save(&self, home: &Path) -> Result<()> {
        let tmp = home.join(format!(".{STATE_FILE}.tmp"));
        let bytes = serde_json::to_vec_pretty(self).map_err(|e| Error::storage(format!("encoding the index state: {e}")))?;
        std::fs::write(&tmp, bytes).map_err(|e| Error::io(format!("writing {}", tmp.display()), e))?;
        std::fs::rename(&tmp, home.join(STATE_FILE)).map_err(|e| Error::io("saving the index state", e))
    }
}

impl IndexState {
    /// Drops the stamps of source files that no longer exist (a zip member's key is `<zip>!<member>`: its
    /// zip counts), so no state file keeps the name of a forgotten conversation's file.
    pub fn forget_missing(home: &Path) -> Result<()> {
        let mut state = Self::load(home);
        let before = state.files.len();
        state.files.retain(|key, _| source_exists(key));
        if state.files.len() != before {
            state.save(home)?;
        }
        Ok(())
    }
}

fn source_exists(key: &str) -> bool {
    Path::new(key).exists() || key.rsplit_once('!').is_some_and(|(file, _)| Path::new(file).is_file())
}

/// "size:mtime_ns" of a file.
pub fn signature(path: &Path) -> Option<String> {
    let m = std::fs::metadata(path).ok()?;
    let mtime = m.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?.as_nanos();
    Some(format!("{}:{mtime}", m.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_tolerates_garbage() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = IndexState::default();
        s.files.insert("a".into(), "1:2".into());
        s.save(dir.path()).unwrap();
        assert_eq!(IndexState::load(dir.path()).files.get("a").unwrap(), "1:2");
        std::fs::write(dir.path().join(STATE_FILE), "{not json").unwrap();
        assert!(IndexState::load(dir.path()).files.is_empty());
    }

    #[test]
    fn forgetting_drops_the_stamps_of_missing_files_only() {
        let dir = tempfile::tempdir().unwrap();
        let kept = dir.path().join("kept.funes.jsonl");
        let zip = dir.path().join("export.zip");
        std::fs::write(&kept, "").unwrap();
        std::fs::write(&zip, "").unwrap();
        let mut s = IndexState::default();
        for key in [kept.display().to_string(), format!("{}!conversations.json", zip.display()), "/gone/conv-alice.funes.jsonl".into()] {
            s.files.insert(key, "1:2".into());
        }
        s.save(dir.path()).unwrap();
        IndexState::forget_missing(dir.path()).unwrap();
        let left = IndexState::load(dir.path()).files;
        assert_eq!(left.len(), 2);
        assert!(!std::fs::read_to_string(dir.path().join(STATE_FILE)).unwrap().contains("conv-alice"));
    }
}
