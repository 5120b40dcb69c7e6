//! Where a memory lives: a local directory, or a prefix on S3-compatible object storage
//! (`s3://bucket/prefix`). Pure: the facade decides where a remote memory's local state goes.
//!
//! Lance reads an object store's endpoint, region and credentials from the usual AWS variables
//! (`AWS_ENDPOINT_URL`, `AWS_REGION`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`; `AWS_ALLOW_HTTP=true` for
//! a plain-HTTP endpoint) and commits through conditional PUT, so several processes on several machines can
//! write one memory without losing a commit. What cannot live in a bucket lives in a local directory of the
//! memory's own (`state_dir`): the writer lock (writers of one machine still take turns) and the index state
//! (a cache of source-file stamps: without it an unchanged file is re-read, and its chunks are skipped by id).

use std::fmt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Home {
    Local(PathBuf),
    Remote {
        /// `s3://bucket/prefix`, without a trailing slash.
        uri: String,
        /// This machine's directory for the memory's lock and index state.
        state: PathBuf,
    },
}

/// The URI schemes a memory may use besides a local path (the object stores this build links).
pub const REMOTE_SCHEMES: &[&str] = &["s3"];

impl Home {
    /// A local path, or a remote URI whose local state goes under `state_root` (one directory per URI).
    /// A URI of a scheme this build cannot store to is refused, not taken for a relative path.
    pub fn parse(home: &str, state_root: &Path) -> Result<Self> {
        let Some((scheme, rest)) = home.split_once("://") else { return Ok(Self::Local(PathBuf::from(home))) };
        if !REMOTE_SCHEMES.contains(&scheme) {
            return Err(Error::InvalidInput(format!(
                "{home}: memories can live on a local path or under {}",
                REMOTE_SCHEMES.iter().map(|s| format!("{s}://bucket/prefix")).collect::<Vec<_>>().join(", ")
            )));
        }
        let rest = rest.trim_end_matches('/');
        let bucket = rest.split('/').next().unwrap_or("");
        if bucket.is_empty() {
            return Err(Error::InvalidInput(format!("{home}: no bucket (expected {scheme}://bucket/prefix)")));
        }
        let uri = format!("{scheme}://{rest}");
        let state = state_root.join(state_name(&uri));
        Ok(Self::Remote { uri, state })
    }

    /// What Lance opens: the directory's path, or the URI.
    pub fn uri(&self) -> String {
        match self {
            Self::Local(p) => p.to_string_lossy().into_owned(),
            Self::Remote { uri, .. } => uri.clone(),
        }
    }

    /// The local directory for the writer lock and the index state: the memory's own directory when local.
    pub fn state_dir(&self) -> &Path {
        match self {
            Self::Local(p) => p,
            Self::Remote { state, .. } => state,
        }
    }

    /// The directory holding the dataset, when it is on this machine.
    pub fn local(&self) -> Option<&Path> {
        match self {
            Self::Local(p) => Some(p),
            Self::Remote { .. } => None,
        }
    }
}

impl fmt::Display for Home {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Local(p) => write!(f, "{}", p.display()),
            Self::Remote { uri, .. } => f.write_str(uri),
        }
    }
}

/// A readable, collision-free directory name for a URI: its tail, then a hash of the whole.
fn state_name(uri: &str) -> String {
    use sha1::{Digest, Sha1};
    let hash = Sha1::digest(uri.as_bytes());
    let tail: String =
        uri.rsplit('/').next().unwrap_or("").chars().filter(|c| c.is_ascii_alphanumeric() || "-_.".contains(*c)).take(40).collect();
    format!("{tail}-{}", hash.iter().take(8).map(|b| format!("{b:02x}")).collect::<String>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_local_and_s3_uris_remote() {
        let root = Path::new("/var/state");
        assert_eq!(Home::parse("/data/alice", root).unwrap(), Home::Local("/data/alice".into()));
        assert_eq!(Home::parse("relative/dir", root).unwrap().local(), Some(Path::new("relative/dir")));
        let h = Home::parse("s3://bucket/tenants/alice/", root).unwrap();
        assert_eq!(h.uri(), "s3://bucket/tenants/alice");
        assert_eq!(h.to_string(), "s3://bucket/tenants/alice");
        assert!(h.local().is_none());
        assert!(h.state_dir().starts_with(root));
        assert!(h.state_dir().file_name().unwrap().to_string_lossy().starts_with("alice-"));
        let other = Home::parse("s3://bucket/tenants2/alice", root).unwrap();
        assert_ne!(h.state_dir(), other.state_dir(), "same tail, other memory: other state");
    }

    #[test]
    fn unknown_schemes_and_missing_buckets_are_refused() {
        let root = Path::new("/s");
        assert!(matches!(Home::parse("gs://bucket/x", root), Err(Error::InvalidInput(m)) if m.contains("s3://bucket/prefix")));
        assert!(matches!(Home::parse("s3:///x", root), Err(Error::InvalidInput(m)) if m.contains("no bucket")));
    }
}
