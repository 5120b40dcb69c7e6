//! The dataset's columns, and conversion between chunks and Arrow record batches.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::builder::{FixedSizeListBuilder, Float32Builder};
use arrow_array::{Array, ArrayRef, FixedSizeListArray, Float32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use crate::analyzer::ANALYZER_VERSION;
use crate::chunk::Chunk;
use crate::error::{Error, Result};
use crate::record::StoredChunk;

pub const TABLE: &str = "chunks";
/// Schema metadata key holding the embedder stamp ("name@fingerprint").
pub const META_MODEL: &str = "funes_py.embedding_model";
pub const META_DIM: &str = "funes_py.embedding_dim";
pub const META_SCHEMA: &str = "funes_py.schema_version";
/// Schema metadata key holding `analyzer::ANALYZER_VERSION` of the `fts` column's text; absent: version 1.
pub const META_ANALYZER: &str = "funes_py.analyzer_version";
pub const SCHEMA_VERSION: &str = "1";

/// Columns read back for ranking and display (everything but `fts` and `vector`).
pub const ROW_COLUMNS: &[&str] = &[
    "id",
    "text",
    "session_id",
    "turn_uuid",
    "seq",
    "ts",
    "ts_ms",
    "role",
    "harness",
    "block_type",
    "tool_name",
    "block_idx",
    "split_idx",
    "workdir",
];

/// Columns added after the first memories were written, at the end of the schema: a memory that lacks them
/// gets them as nulls when it is opened (`Store::add_missing_columns`), so old and new memories have one
/// schema.
pub const ADDED_COLUMNS: &[&str] = &["workdir"];

pub fn schema(dim: usize, stamp: &str) -> SchemaRef {
    let s = |name: &str, nullable: bool| Field::new(name, DataType::Utf8, nullable);
    let i = |name: &str, nullable: bool| Field::new(name, DataType::Int64, nullable);
    let fields = vec![
        s("id", false),
        s("text", false),
        // What BM25 indexes: the text plus glued identifiers (see `analyzer`).
        s("fts", false),
        s("session_id", false),
        s("turn_uuid", false),
        i("seq", false),
        s("ts", false),
        // Parsed `ts`, for date filters and recency; null when `ts` is not a time.
        i("ts_ms", true),
        s("role", false),
        s("harness", false),
        s("block_type", false),
        s("tool_name", true),
        i("block_idx", false),
        i("split_idx", false),
        Field::new("vector", DataType::FixedSizeList(Arc::new(Field::new("item", DataType::Float32, true)), dim as i32), false),
        // The turn's working directory (a coding agent's project); null when the source has none. Last: it
        // came after the others (`ADDED_COLUMNS`).
        s("workdir", true),
    ];
    let meta: HashMap<String, String> = [
        (META_MODEL.to_string(), stamp.to_string()),
        (META_DIM.to_string(), dim.to_string()),
        (META_SCHEMA.to_string(), SCHEMA_VERSION.to_string()),
        (META_ANALYZER.to_string(), ANALYZER_VERSION.to_string()),
    ]
    .into();
    Arc::new(Schema::new_with_metadata(fields, meta))
}

/// A string column of a batch, if present (nulls as empty strings).
pub fn string_column(batch: &RecordBatch, name: &str) -> Option<Vec<String>> {
    Some(optional_strings(batch, name)?.into_iter().map(Option::unwrap_or_default).collect())
}

/// A string column of a batch, if present, nulls as `None`.
fn optional_strings(batch: &RecordBatch, name: &str) -> Option<Vec<Option<String>>> {
    let col = batch.column_by_name(name)?.as_any().downcast_ref::<StringArray>()?;
    Some((0..col.len()).map(|i| if col.is_null(i) { None } else { Some(col.value(i).to_string()) }).collect())
}

pub fn to_batch(schema: &SchemaRef, rows: &[StoredChunk], fts: &[String]) -> Result<RecordBatch> {
    let dim = match schema.field_with_name("vector").map(|f| f.data_type().clone()) {
        Ok(DataType::FixedSizeList(_, d)) => d,
        _ => return Err(Error::storage("schema has no vector column")),
    };
    let str_col = |f: &dyn Fn(&StoredChunk) -> &str| -> ArrayRef { Arc::new(StringArray::from_iter_values(rows.iter().map(f))) };
    let int_col = |f: &dyn Fn(&StoredChunk) -> i64| -> ArrayRef { Arc::new(Int64Array::from_iter_values(rows.iter().map(f))) };
    let mut vb = FixedSizeListBuilder::new(Float32Builder::with_capacity(rows.len() * dim as usize), dim).with_field(Arc::new(Field::new(
        "item",
        DataType::Float32,
        true,
    )));
    for r in rows {
        if r.vector.len() != dim as usize {
            return Err(Error::storage(format!("vector of length {} for a {dim}-dimension memory", r.vector.len())));
        }
        vb.values().append_slice(&r.vector);
        vb.append(true);
    }
    let columns: Vec<ArrayRef> = vec![
        str_col(&|r| &r.chunk.id),
        str_col(&|r| &r.chunk.text),
        Arc::new(StringArray::from_iter_values(fts.iter())),
        str_col(&|r| &r.chunk.session_id),
        str_col(&|r| &r.chunk.turn_uuid),
        int_col(&|r| r.chunk.seq),
        str_col(&|r| &r.chunk.ts),
        Arc::new(Int64Array::from_iter(rows.iter().map(|r| r.ts_ms))),
        str_col(&|r| &r.chunk.role),
        str_col(&|r| &r.chunk.harness),
        str_col(&|r| &r.chunk.block_type),
        Arc::new(StringArray::from_iter(rows.iter().map(|r| r.chunk.tool_name.as_deref()))),
        int_col(&|r| r.chunk.block_idx),
        int_col(&|r| r.chunk.split_idx),
        Arc::new(vb.finish()),
        Arc::new(StringArray::from_iter(rows.iter().map(|r| Some(r.chunk.workdir.as_str()).filter(|w| !w.is_empty())))),
    ];
    RecordBatch::try_new(schema.clone(), columns).map_err(|e| Error::storage(e.to_string()))
}

/// A batch's rows with each row's `fts` text (empty strings when the batch does not carry that column): what
/// every streamed scan hands on.
pub fn rows_with_fts(batch: &RecordBatch) -> Result<(Vec<StoredChunk>, Vec<String>)> {
    let fts = string_column(batch, "fts").unwrap_or_else(|| vec![String::new(); batch.num_rows()]);
    Ok((from_batch(batch)?, fts))
}

/// Reads rows back. Columns that were not selected come back empty (strings), 0 or `None`.
pub fn from_batch(batch: &RecordBatch) -> Result<Vec<StoredChunk>> {
    let n = batch.num_rows();
    let col = |name: &str| batch.column_by_name(name);
    let strs = |name: &str| optional_strings(batch, name).unwrap_or_else(|| vec![None; n]);
    let ints = |name: &str| -> Vec<Option<i64>> {
        match col(name).and_then(|c| c.as_any().downcast_ref::<Int64Array>().cloned()) {
            Some(a) => (0..n).map(|i| if a.is_null(i) { None } else { Some(a.value(i)) }).collect(),
            None => vec![None; n],
        }
    };
    let vectors: Vec<Vec<f32>> = match col("vector").and_then(|c| c.as_any().downcast_ref::<FixedSizeListArray>().cloned()) {
        Some(a) => (0..n)
            .map(|i| {
                let v = a.value(i);
                v.as_any().downcast_ref::<Float32Array>().map(|f| f.values().to_vec()).unwrap_or_default()
            })
            .collect(),
        None => vec![Vec::new(); n],
    };
    let workdir = strs("workdir");
    let (id, text, sid, tid, ts, role, harness, bt, tool) = (
        strs("id"),
        strs("text"),
        strs("session_id"),
        strs("turn_uuid"),
        strs("ts"),
        strs("role"),
        strs("harness"),
        strs("block_type"),
        strs("tool_name"),
    );
    let (seq, ts_ms, bi, si) = (ints("seq"), ints("ts_ms"), ints("block_idx"), ints("split_idx"));
    let mut out = Vec::with_capacity(n);
    for (i, vector) in vectors.into_iter().enumerate() {
        let s = |v: &Vec<Option<String>>| v[i].clone().unwrap_or_default();
        out.push(StoredChunk {
            context: String::new(),
            chunk: Chunk {
                id: s(&id),
                text: s(&text),
                session_id: s(&sid),
                turn_uuid: s(&tid),
                seq: seq[i].unwrap_or(0),
                ts: s(&ts),
                role: s(&role),
                harness: s(&harness),
                workdir: s(&workdir),
                block_type: s(&bt),
                tool_name: tool[i].clone(),
                block_idx: bi[i].unwrap_or(0),
                split_idx: si[i].unwrap_or(0),
            },
            ts_ms: ts_ms[i],
            vector,
        });
    }
    Ok(out)
}

/// A float column (`_distance`, `_score`) of a result batch, if present.
pub fn f32_column(batch: &RecordBatch, name: &str) -> Option<Vec<f32>> {
    let c = batch.column_by_name(name)?;
    if let Some(a) = c.as_any().downcast_ref::<Float32Array>() {
        return Some(a.values().to_vec());
    }
    c.as_any().downcast_ref::<arrow_array::Float64Array>().map(|a| a.values().iter().map(|&x| x as f32).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str) -> StoredChunk {
        StoredChunk {
            context: String::new(),
            chunk: Chunk {
                id: id.into(),
                text: "t".into(),
                session_id: "s".into(),
                turn_uuid: "u".into(),
                seq: 1,
                ts: "2026-01-01T00:00:00Z".into(),
                role: "user".into(),
                harness: "h".into(),
                workdir: "/src/app".into(),
                block_type: "text".into(),
                tool_name: None,
                block_idx: 0,
                split_idx: 2,
            },
            ts_ms: Some(5),
            vector: vec![1.0, 0.0, 0.5],
        }
    }

    #[test]
    fn batch_round_trips() {
        let schema = schema(3, "m@1");
        let rows = vec![row("a"), row("b")];
        let batch = to_batch(&schema, &rows, &["x".into(), "y".into()]).unwrap();
        assert_eq!(batch.schema().metadata().get(META_MODEL).unwrap(), "m@1");
        assert_eq!(batch.schema().metadata().get(META_ANALYZER).unwrap(), &ANALYZER_VERSION.to_string());
        assert_eq!(from_batch(&batch).unwrap(), rows);
    }

    #[test]
    fn wrong_vector_length_is_refused() {
        let mut r = row("a");
        r.vector.pop();
        assert!(to_batch(&schema(3, "m"), &[r], &["x".into()]).is_err());
    }
}
