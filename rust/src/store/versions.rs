//! The dataset read at one version: whole (a warm engine's resident copy, tagged with exactly the version it
//! holds) or only the rows a later version appended (what the copy reads when another process indexed).

use std::sync::Arc;

use futures::TryStreamExt;
use lance::dataset::Dataset;
use lance::table::format::Fragment;

use super::{schema, Store};
use crate::error::Result;
use crate::record::StoredChunk;

/// The fragments a later version added to an earlier one, which it left untouched.
pub struct Appended {
    dataset: Dataset,
    fragments: Vec<Fragment>,
}

/// The fragments of `to` that `from` lacks, when every fragment of `from` is in `to` as it was (same files,
/// same deletions): `to` only appended. `None` when rows were deleted or rewritten (a compaction, a forget,
/// an overwrite).
fn added(from: &[Fragment], to: &[Fragment]) -> Option<Vec<Fragment>> {
    let kept = from.iter().all(|f| to.iter().any(|t| t == f));
    kept.then(|| to.iter().filter(|t| !from.iter().any(|f| f.id == t.id)).cloned().collect())
}

/// Streams the rows of `fragments` (every fragment when `None`) of a dataset version into `f`, batch by batch,
/// with each row's `fts` text when `columns` names it.
async fn scan(
    ds: &Dataset,
    fragments: Option<Vec<Fragment>>,
    columns: &[&str],
    mut f: impl FnMut(Vec<StoredChunk>, Vec<String>),
) -> Result<()> {
    let mut scan = ds.scan();
    if let Some(fragments) = fragments {
        scan.with_fragments(fragments);
    }
    scan.project(columns)?;
    let mut stream = scan.try_into_stream().await?;
    while let Some(batch) = stream.try_next().await? {
        let (rows, fts) = schema::rows_with_fts(&batch)?;
        f(rows, fts);
    }
    Ok(())
}

/// The dataset at `version`: the latest handle itself when it is that version (usually: a catch-up or a build
/// asks for the version just read), else a checkout, one more manifest read.
async fn at(latest: &Arc<Dataset>, version: u64) -> lance::Result<Dataset> {
    if latest.version().version == version {
        Ok((**latest).clone())
    } else {
        latest.checkout_version(version).await
    }
}

impl Store {
    /// What version `to` appended to version `from` (see `added`); `None` when it did something else, or when
    /// either version cannot be read any more (`from` pruned since the copy was taken): the caller then reads
    /// the whole memory.
    pub async fn appended_since(&self, from: u64, to: u64) -> Result<Option<Appended>> {
        if from >= to {
            return Ok(None);
        }
        let Some(latest) = self.latest_dataset().await? else { return Ok(None) };
        let (Ok(old), Ok(new)) = (at(&latest, from).await, at(&latest, to).await) else {
            return Ok(None);
        };
        Ok(added(&old.manifest().fragments, &new.manifest().fragments).map(|fragments| Appended { dataset: new, fragments }))
    }

    /// Streams the appended rows batch by batch into `f`, as `scan_version` does for a whole version.
    pub async fn scan_appended(&self, appended: &Appended, columns: &[&str], f: impl FnMut(Vec<StoredChunk>, Vec<String>)) -> Result<()> {
        if appended.fragments.is_empty() {
            return Ok(());
        }
        scan(&appended.dataset, Some(appended.fragments.clone()), columns, f).await
    }

    /// Streams every row of `version` into `f`. A scan of "the latest" could see a commit that landed after
    /// the version was read, and a copy tagged with the older version would then take that commit's rows
    /// twice when it catches up.
    pub async fn scan_version(&self, version: u64, columns: &[&str], f: impl FnMut(Vec<StoredChunk>, Vec<String>)) -> Result<()> {
        let Some(latest) = self.latest_dataset().await? else { return Ok(()) };
        scan(&at(&latest, version).await?, None, columns, f).await
    }

    async fn latest_dataset(&self) -> Result<Option<Arc<Dataset>>> {
        let Some(t) = self.table().await? else { return Ok(None) };
        let Some(wrapper) = t.dataset() else { return Ok(None) };
        Ok(Some(wrapper.get().await?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frag(id: u64, deleted: bool) -> Fragment {
        let mut f = Fragment::new(id);
        f.physical_rows = Some(10);
        if deleted {
            f.deletion_file = Some(lance::table::format::DeletionFile {
                read_version: 2,
                id: 1,
                file_type: lance::table::format::DeletionFileType::Array,
                num_deleted_rows: Some(1),
                base_id: None,
            });
        }
        f
    }

    #[test]
    fn only_an_append_of_new_fragments_counts() {
        let ids = |v: Option<Vec<Fragment>>| v.map(|v| v.iter().map(|f| f.id).collect::<Vec<_>>());
        // New fragments after untouched ones: those are read.
        assert_eq!(ids(added(&[frag(0, false)], &[frag(0, false), frag(1, false), frag(2, false)])), Some(vec![1, 2]));
        // An index refresh: the same fragments.
        assert_eq!(ids(added(&[frag(0, false)], &[frag(0, false)])), Some(vec![]));
        // A forget: a deletion file on a fragment the copy holds.
        assert_eq!(ids(added(&[frag(0, false)], &[frag(0, true), frag(1, false)])), None);
        // A compaction: the copy's fragments replaced by a new one.
        assert_eq!(ids(added(&[frag(0, false), frag(1, false)], &[frag(2, false)])), None);
    }
}
