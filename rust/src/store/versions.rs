//! The dataset read at one version: whole (a warm engine's resident copy, tagged with exactly the version it
//! holds) or only the rows a later version added (what the copy reads when another process indexed).

use std::sync::Arc;

use futures::TryStreamExt;
use lance::dataset::transaction::Operation;
use lance::dataset::Dataset;
use lance::table::format::Fragment;

use super::{schema, Store};
use crate::error::{Error, Result};
use crate::record::StoredChunk;

/// The fragments of one version: what a copy taken at that version keeps, so that catching up later needs no
/// read of that version, which a writer prunes a minute after it is replaced (`PRUNE_AFTER`): an idle
/// tenant's copy would otherwise be read whole again after the first ingest that followed a quiet minute.
#[derive(Debug, Clone)]
pub struct Snapshot {
    version: u64,
    fragments: Vec<Fragment>,
}

impl Snapshot {
    fn of(ds: &Dataset) -> Self {
        Self { version: ds.version().version, fragments: ds.manifest().fragments.to_vec() }
    }

    pub fn version(&self) -> u64 {
        self.version
    }
}

/// The rows a later version has beyond an earlier one, when the versions between only added rows: appends,
/// with index commits and compactions (which move rows without changing them) among them.
pub struct Grown {
    dataset: Dataset,
    /// The later version's fragments that the earlier one lacks as they are: appended, or rewritten.
    fragments: Vec<Fragment>,
    /// Whether a compaction rewrote fragments of the earlier version: `fragments` then also hold rows that
    /// version had, told apart by id (`scan_grown`).
    rewritten: bool,
    /// The later version's row count: what the earlier version's rows and the new ones must add up to.
    pub rows: usize,
}

impl Grown {
    pub fn rewritten(&self) -> bool {
        self.rewritten
    }

    /// The later version, for the copy that takes these rows to keep.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot::of(&self.dataset)
    }
}

/// The fragments of `to` that `from` lacks as they are (same id, files and deletions), and whether every
/// fragment of `from` is still in `to` unchanged (then `to` only appended, or committed no rows).
fn diff(from: &[Fragment], to: &[Fragment]) -> (Vec<Fragment>, bool) {
    let kept = from.iter().all(|f| to.iter().any(|t| t == f));
    (to.iter().filter(|t| !from.iter().any(|f| f == *t)).cloned().collect(), kept)
}

/// Whether a commit of this kind leaves every row as it was (it may add rows, or move them to other
/// fragments). A forget (`Delete`), an overwrite, an update or a schema change does not.
fn keeps_rows(op: &Operation) -> bool {
    matches!(
        op,
        Operation::Append { .. }
            | Operation::Rewrite { .. }
            | Operation::CreateIndex { .. }
            | Operation::ReserveFragments { .. }
            | Operation::UpdateConfig { .. }
    )
}

/// Row addresses taken per `take_rows` call when picking the new rows out of rewritten fragments.
const TAKE_ROWS: usize = 4_096;
/// The column a scan `with_row_address` adds (`lance_core::ROW_ADDR`, not re-exported by `lance`).
const ROW_ADDR: &str = "_rowaddr";

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

/// The addresses of the rows of `fragments` whose id `known` does not accept, in the dataset's order.
async fn unknown_rows(ds: &Dataset, fragments: Vec<Fragment>, known: &dyn Fn(&str) -> bool) -> Result<Vec<u64>> {
    let mut scan = ds.scan();
    scan.with_fragments(fragments).project(&["id"])?.with_row_address();
    let mut stream = scan.try_into_stream().await?;
    let mut out = Vec::new();
    while let Some(batch) = stream.try_next().await? {
        let ids = schema::string_column(&batch, "id").unwrap_or_default();
        let addresses = batch
            .column_by_name(ROW_ADDR)
            .and_then(|c| c.as_any().downcast_ref::<arrow_array::UInt64Array>())
            .ok_or_else(|| Error::storage("a scan with row addresses returned none"))?;
        out.extend(ids.iter().zip(addresses.values()).filter(|(id, _)| !known(id)).map(|(_, &a)| a));
    }
    Ok(out)
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
    /// The rows version `to` has beyond the version `from` holds (see `Grown`); `None` when a version
    /// between did more than add rows (a forget, an overwrite), or when that cannot be told any more: a
    /// compaction among versions since pruned. A plain append is told from the fragments alone; only a rewrite
    /// (a compaction) sends it to the versions' transactions. The caller then reads the whole memory.
    pub async fn grown_since(&self, from: &Snapshot, to: u64) -> Result<Option<Grown>> {
        if from.version >= to {
            return Ok(None);
        }
        let Some(latest) = self.latest_dataset().await? else { return Ok(None) };
        let Ok(new) = at(&latest, to).await else { return Ok(None) };
        let (fragments, kept) = diff(&from.fragments, &new.manifest().fragments);
        if !kept {
            for version in from.version + 1..=to {
                match latest.read_transaction_by_version(version).await {
                    Ok(Some(t)) if keeps_rows(&t.operation) => {}
                    _ => return Ok(None),
                }
            }
        }
        let rows = new.count_rows(None).await?;
        Ok(Some(Grown { dataset: new, fragments, rewritten: !kept, rows }))
    }

    /// The fragments of `version`, when it can still be read (for a copy whose own appends moved it past the
    /// snapshot it kept).
    pub async fn snapshot(&self, version: u64) -> Result<Option<Snapshot>> {
        let Some(latest) = self.latest_dataset().await? else { return Ok(None) };
        Ok(at(&latest, version).await.ok().map(|ds| Snapshot::of(&ds)))
    }

    /// Streams the new rows of `grown` batch by batch into `f`, as `scan_version` does for a whole version.
    /// After a rewrite, `known` tells the rows the earlier version had (by id): their ids are read first,
    /// and only the other rows are read whole.
    pub async fn scan_grown(
        &self,
        grown: &Grown,
        known: &dyn Fn(&str) -> bool,
        columns: &[&str],
        mut f: impl FnMut(Vec<StoredChunk>, Vec<String>),
    ) -> Result<()> {
        if grown.fragments.is_empty() {
            return Ok(());
        }
        if !grown.rewritten {
            return scan(&grown.dataset, Some(grown.fragments.clone()), columns, f).await;
        }
        let addresses = unknown_rows(&grown.dataset, grown.fragments.clone(), known).await?;
        let projection = grown.dataset.schema().project(columns)?;
        for part in addresses.chunks(TAKE_ROWS) {
            let batch = grown.dataset.take_rows(part, projection.clone()).await?;
            let (rows, fts) = schema::rows_with_fts(&batch)?;
            f(rows, fts);
        }
        Ok(())
    }

    /// Streams every row of `version` into `f`, and returns that version's fragments (`None`: no dataset). A
    /// scan of "the latest" could see a commit that landed after the version was read, and a copy tagged with
    /// the older version would then take that commit's rows twice when it catches up.
    pub async fn scan_version(
        &self,
        version: u64,
        columns: &[&str],
        f: impl FnMut(Vec<StoredChunk>, Vec<String>),
    ) -> Result<Option<Snapshot>> {
        let Some(latest) = self.latest_dataset().await? else { return Ok(None) };
        let ds = at(&latest, version).await?;
        scan(&ds, None, columns, f).await?;
        Ok(Some(Snapshot::of(&ds)))
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
    fn new_and_rewritten_fragments_are_what_a_copy_reads() {
        let ids = |(v, kept): (Vec<Fragment>, bool)| (v.iter().map(|f| f.id).collect::<Vec<_>>(), kept);
        // New fragments after untouched ones: an append.
        assert_eq!(ids(diff(&[frag(0, false)], &[frag(0, false), frag(1, false), frag(2, false)])), (vec![1, 2], true));
        // An index refresh: the same fragments.
        assert_eq!(ids(diff(&[frag(0, false)], &[frag(0, false)])), (vec![], true));
        // A forget: a deletion file on a fragment the copy holds (the transaction then says it was a delete).
        assert_eq!(ids(diff(&[frag(0, false)], &[frag(0, true), frag(1, false)])), (vec![0, 1], false));
        // A compaction: the copy's fragments replaced by a new one.
        assert_eq!(ids(diff(&[frag(0, false), frag(1, false)], &[frag(2, false)])), (vec![2], false));
    }

    #[test]
    fn only_commits_that_keep_every_row_are_followed() {
        assert!(keeps_rows(&Operation::Append { fragments: vec![] }));
        assert!(keeps_rows(&Operation::ReserveFragments { num_fragments: 1 }));
        assert!(!keeps_rows(&Operation::Restore { version: 1 }));
    }
}
