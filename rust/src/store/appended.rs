//! The rows another process appended between two versions of the dataset: what a warm engine reads to
//! bring its resident copy up to date without scanning the whole memory again.

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
/// same deletions): `to` only appended. `None` when rows were deleted, rewritten (a compaction, a forget, an
/// overwrite) or when `from` is no longer on disk (pruned).
fn added(from: &[Fragment], to: &[Fragment]) -> Option<Vec<Fragment>> {
    let kept = from.iter().all(|f| to.iter().any(|t| t == f));
    kept.then(|| to.iter().filter(|t| !from.iter().any(|f| f.id == t.id)).cloned().collect())
}

impl Store {
    /// What version `to` appended to version `from` (see `added`); `None` when it did something else, or when
    /// either version cannot be read any more: the caller then reads the whole memory.
    pub async fn appended_since(&self, from: u64, to: u64) -> Result<Option<Appended>> {
        let Some(t) = self.table().await? else { return Ok(None) };
        let Some(wrapper) = t.dataset() else { return Ok(None) };
        let latest: Arc<Dataset> = wrapper.get().await?;
        if from >= to {
            return Ok(None);
        }
        // A version pruned since the copy was taken (it keeps `PRUNE_AFTER`) cannot be compared: read all.
        let (Ok(old), Ok(new)) = (latest.checkout_version(from).await, latest.checkout_version(to).await) else {
            return Ok(None);
        };
        Ok(added(&old.manifest().fragments, &new.manifest().fragments).map(|fragments| Appended { dataset: new, fragments }))
    }

    /// Streams the appended rows batch by batch into `f`, as `scan_batches` does for the whole memory.
    pub async fn scan_appended(
        &self,
        appended: &Appended,
        columns: &[&str],
        mut f: impl FnMut(Vec<StoredChunk>, Vec<String>),
    ) -> Result<()> {
        if appended.fragments.is_empty() {
            return Ok(());
        }
        let mut scan = appended.dataset.scan();
        scan.with_fragments(appended.fragments.clone()).project(columns)?;
        let mut stream = scan.try_into_stream().await?;
        while let Some(batch) = stream.try_next().await? {
            let fts = schema::string_column(&batch, "fts").unwrap_or_else(|| vec![String::new(); batch.num_rows()]);
            f(schema::from_batch(&batch)?, fts);
        }
        Ok(())
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
