//! The crate doc's promises, checked on the source: every `crate::` path points to a lower layer of the
//! table in `lib.rs` (so no module imports upward and no two modules import each other), the binding
//! imports only the facade, and SQL is written only under `store/`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("rust/src")
}

/// `module -> layer`, read from the table in `lib.rs` (rows `//! | 4     | `store`     | ...`).
fn layers() -> BTreeMap<String, u32> {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    let mut out = BTreeMap::new();
    for line in lib.lines() {
        let cells: Vec<&str> = line.trim_start_matches("//!").split('|').map(str::trim).collect();
        if cells.len() > 3 {
            if let (Ok(layer), Some(module)) = (cells[1].parse::<u32>(), cells[2].strip_prefix('`').and_then(|m| m.strip_suffix('`'))) {
                out.insert(module.to_string(), layer);
            }
        }
    }
    out
}

/// Every `.rs` file under `dir`, with the top-level module it belongs to.
fn files(dir: &Path, out: &mut Vec<(String, PathBuf)>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let rel = p.strip_prefix(src()).unwrap();
            let top = rel.components().next().unwrap().as_os_str().to_string_lossy().trim_end_matches(".rs").to_string();
            out.push((top, p));
        }
    }
}

/// The top-level modules a source names through `crate::` (in `use` lines, grouped `crate::{a, b}` uses, and
/// inline paths), comments excluded.
fn crate_refs(source: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in source.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let inner = group.split('}').next().unwrap_or("");
                out.extend(inner.split(',').map(|s| ident(s.trim())).filter(|s| !s.is_empty()));
            } else {
                out.push(ident(rest));
            }
        }
    }
    out
}

fn ident(s: &str) -> String {
    s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect()
}

#[test]
fn every_import_points_to_a_lower_layer() {
    let layers = layers();
    assert!(layers.len() >= 15, "the layer table in lib.rs was not read: {layers:?}");
    let mut all = Vec::new();
    files(&src(), &mut all);
    let mut wrong = Vec::new();
    for (module, path) in &all {
        let Some(&mine) = layers.get(module) else { continue };
        for r in crate_refs(&std::fs::read_to_string(path).unwrap()) {
            // Root re-exports (`crate::Error`, `crate::Result`) belong to `error`.
            let target = if r == "Error" || r == "Result" { "error".to_string() } else { r };
            match layers.get(&target) {
                Some(&theirs) if target != *module && theirs >= mine => {
                    wrong.push(format!("{} (layer {mine}) imports {target} (layer {theirs})", path.display()))
                }
                None if target != *module => wrong.push(format!("{} imports {target}, which the table lacks", path.display())),
                _ => {}
            }
        }
    }
    assert!(wrong.is_empty(), "imports against the layer table:\n{}", wrong.join("\n"));
}

#[test]
fn the_binding_imports_only_the_facade() {
    let mut all = Vec::new();
    files(&src().join("py"), &mut all);
    for (_, path) in all {
        for r in crate_refs(&std::fs::read_to_string(&path).unwrap()) {
            assert!(["engine", "error", "Error", "Result"].contains(&r.as_str()), "{} imports crate::{r}", path.display());
        }
    }
}

#[test]
fn sql_is_written_only_in_store() {
    let mut all = Vec::new();
    files(&src(), &mut all);
    let columns = ["session_id", "turn_uuid", "ts_ms", "role", "block_type", "harness", "id"];
    let ops = [" = ", " IN (", " >= ", " <= ", " AND "];
    for (module, path) in all {
        if module == "store" || module == "layers_test" {
            continue;
        }
        let source = std::fs::read_to_string(&path).unwrap();
        for literal in source.split('"').skip(1).step_by(2) {
            let sql = columns.iter().any(|c| ops.iter().any(|op| literal.contains(&format!("{c}{op}"))));
            assert!(!sql, "{} writes SQL: {literal:?}", path.display());
        }
    }
}

#[test]
fn the_checks_read_what_they_claim() {
    assert_eq!(crate_refs("use crate::store::{Filter, Store};\nuse crate::{chunk::X, time};"), ["store", "chunk", "time"]);
    assert_eq!(crate_refs("let x = crate::search::fusion::f(); // crate::py"), ["search"]);
}
