//! The crate doc's promises, checked on the source: every module is in the table of `lib.rs`; every path
//! into the crate (whole `use` items, nested groups included, and inline paths; `crate::`, `super::`,
//! `super::super::` and `self::` resolved against the file's own module) points to a lower layer of that
//! table, so no module imports upward and no two modules import each other; a module the table calls pure
//! names no I/O or runtime outside its tests and imports only pure files; the binding imports only the
//! facade; and SQL is written only under `store/`.
//!
//! The source is read as tokens with comments and literals blanked, not with `syn`: `syn` with the features
//! this needs would make `cargo test` build the proc-macros, and with them the whole dependency tree, a
//! second time (maturin and `cargo test` share one build, see Cargo.toml). Each rule is shown to fail on a
//! violation planted in a copy of the real sources (the `planted_*` tests).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Paths whose first segments name I/O, the environment or an async runtime: a pure file names none of them
/// outside its tests. (Scoped threads are not here: a pure kernel may split its work over the cores, as the
/// resident copy's preparation does, and still return the same result for the same input.)
const IMPURE: &[&[&str]] =
    &[&["std", "fs"], &["std", "net"], &["std", "process"], &["std", "env"], &["tokio"], &["lancedb"], &["lance"], &["ort"]];

/// The crate's sources: path relative to `rust/src` (`search/legs.rs`) -> text.
type Sources = BTreeMap<String, String>;

fn real_sources() -> Sources {
    fn walk(dir: &Path, root: &Path, out: &mut Sources) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, root, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
                out.insert(rel, std::fs::read_to_string(&p).unwrap());
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("rust/src");
    let mut out = Sources::new();
    walk(&root, &root, &mut out);
    out
}

// --- the table ------------------------------------------------------------------------------------------

/// One row of the table in `lib.rs`: its layer and which of its files are pure.
#[derive(Debug, Clone)]
struct Row {
    layer: u32,
    purity: Purity,
}

#[derive(Debug, Clone, PartialEq)]
enum Purity {
    /// `no`: nothing checked.
    No,
    /// `yes`, or `yes but `a`, `b``: every file except those named (by file stem; `mod` for `mod.rs`).
    AllBut(BTreeSet<String>),
    /// `mixed: `a`, `b``: only the files named.
    Only(BTreeSet<String>),
}

/// `module -> row`, read from the table in `lib.rs` (rows `//! | 4     | `store`     | ... | no |`).
fn table(lib: &str) -> BTreeMap<String, Row> {
    let mut out = BTreeMap::new();
    for line in lib.lines() {
        let cells: Vec<&str> = line.trim_start_matches("//!").split('|').map(str::trim).collect();
        if cells.len() < 6 {
            continue;
        }
        let (Ok(layer), Some(module)) = (cells[1].parse::<u32>(), cells[2].strip_prefix('`').and_then(|m| m.strip_suffix('`'))) else {
            continue;
        };
        let pure = cells[cells.len() - 2];
        let named: BTreeSet<String> = pure.split('`').skip(1).step_by(2).map(str::to_string).collect();
        let purity = if pure.starts_with("yes") {
            Purity::AllBut(named)
        } else if pure.starts_with("mixed") {
            Purity::Only(named)
        } else {
            Purity::No
        };
        out.insert(module.to_string(), Row { layer, purity });
    }
    out
}

fn is_pure(table: &BTreeMap<String, Row>, file: &str) -> bool {
    let module = module_path(file);
    let stem = if file.ends_with("mod.rs") || module.len() < 2 { "mod".to_string() } else { module[module.len() - 1].clone() };
    match module.first().and_then(|m| table.get(m)).map(|r| &r.purity) {
        Some(Purity::AllBut(except)) => !except.contains(&stem),
        Some(Purity::Only(files)) => files.contains(&stem),
        _ => false,
    }
}

// --- reading the source -----------------------------------------------------------------------------------

/// The code with comments and string/char literals replaced by spaces (lifetimes kept).
fn strip(source: &str) -> String {
    let c: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    while i < c.len() {
        let next = c.get(i + 1).copied();
        if c[i] == '/' && next == Some('/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if c[i] == '/' && next == Some('*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if c[i] == 'r' && (next == Some('"') || (next == Some('#') && !prev_is_ident(&c, i))) && !prev_is_ident(&c, i) {
            // r"..." or r#"..."#
            let mut j = i + 1;
            let mut hashes = 0;
            while c.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if c.get(j) != Some(&'"') {
                out.push(c[i]);
                i += 1;
                continue;
            }
            j += 1;
            while j < c.len() && !(c[j] == '"' && (0..hashes).all(|h| c.get(j + 1 + h) == Some(&'#'))) {
                j += 1;
            }
            i = j + 1 + hashes;
            out.push_str("\"\"");
        } else if c[i] == '"' {
            i += 1;
            while i < c.len() && c[i] != '"' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if c[i] == '\'' && (next == Some('\\') || c.get(i + 2) == Some(&'\'')) {
            i += 1;
            while i < c.len() && c[i] != '\'' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("' '");
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

fn prev_is_ident(c: &[char], i: usize) -> bool {
    i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_')
}

/// Identifiers, `::` and single punctuation characters.
fn tokens(code: &str) -> Vec<String> {
    let c: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        if c[i].is_alphanumeric() || c[i] == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            out.push(c[start..i].iter().collect());
        } else if c[i] == ':' && c.get(i + 1) == Some(&':') {
            out.push("::".into());
            i += 2;
        } else {
            if !c[i].is_whitespace() {
                out.push(c[i].to_string());
            }
            i += 1;
        }
    }
    out
}

/// The tokens with every `#[cfg(test)]`-gated item (a test module, a test-only function) left out.
fn without_tests(toks: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let gated = toks[i] == "#" && toks.get(i + 1..i + 7).is_some_and(|t| t.join("") == "[cfg(test)]");
        if !gated {
            out.push(toks[i].clone());
            i += 1;
            continue;
        }
        i += 7;
        // skip the item: up to its first `;` at depth 0, or its brace block
        let mut depth = 0;
        while i < toks.len() {
            match toks[i].as_str() {
                "{" => depth += 1,
                "}" => {
                    depth -= 1;
                    if depth == 0 {
                        i += 1;
                        break;
                    }
                }
                ";" if depth == 0 => {
                    i += 1;
                    break;
                }
                _ => {}
            }
            i += 1;
        }
    }
    out
}

fn is_ident(t: &str) -> bool {
    t.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
}

/// Every path a file names: each leaf of each `use` tree (groups expanded), and each inline path that
/// starts with `crate`, `super` or `self`, or with a name of `IMPURE`'s first segments.
fn paths(toks: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let starts_item = i == 0 || matches!(toks[i - 1].as_str(), ";" | "}" | "{" | "pub" | ")" | "]");
        if toks[i] == "use" && starts_item {
            i += 1;
            use_tree(toks, &mut i, Vec::new(), &mut out);
            continue;
        }
        let lead = toks[i].as_str();
        let after_sep = i > 0 && toks[i - 1] == "::";
        if !after_sep && toks.get(i + 1).is_some_and(|t| t == "::") && is_ident(lead) {
            let mut path = vec![lead.to_string()];
            let mut j = i + 1;
            while toks.get(j).is_some_and(|t| t == "::") && toks.get(j + 1).is_some_and(|t| is_ident(t)) {
                path.push(toks[j + 1].clone());
                j += 2;
            }
            out.push(path);
            i = j;
            continue;
        }
        i += 1;
    }
    out
}

fn use_tree(toks: &[String], i: &mut usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut path = prefix;
    while *i < toks.len() {
        match toks[*i].as_str() {
            "::" => *i += 1,
            "{" => {
                *i += 1;
                while *i < toks.len() && toks[*i] != "}" {
                    use_tree(toks, i, path.clone(), out);
                    if toks.get(*i).is_some_and(|t| t == ",") {
                        *i += 1;
                    }
                }
                *i += 1; // the `}`
                return;
            }
            "*" => {
                *i += 1;
                out.push(path);
                return;
            }
            t if is_ident(t) && t != "as" => {
                path.push(t.to_string());
                *i += 1;
                if toks.get(*i).is_some_and(|t| t == "as") {
                    *i += 2;
                }
                if toks.get(*i).is_none_or(|t| t != "::") {
                    out.push(path);
                    return;
                }
            }
            _ => {
                // `;` ends the item, `,` / `}` end this branch of a group
                if toks[*i] == ";" {
                    *i += 1;
                }
                return;
            }
        }
    }
}

/// `search/legs.rs` -> `[search, legs]`; `search/mod.rs` -> `[search]`; `lib.rs` -> `[]`.
fn module_path(file: &str) -> Vec<String> {
    let mut parts: Vec<String> = file.trim_end_matches(".rs").split('/').map(str::to_string).collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts
}

/// The file that holds the item at `abs` (the longest prefix that is a module file), if any.
fn file_of(sources: &Sources, abs: &[String]) -> Option<String> {
    (1..=abs.len()).rev().find_map(|n| {
        let p = abs[..n].join("/");
        [format!("{p}.rs"), format!("{p}/mod.rs")].into_iter().find(|f| sources.contains_key(f))
    })
}

/// A path named in `file` as an absolute path inside the crate, or None for another crate's.
fn resolve(sources: &Sources, file: &str, path: &[String]) -> Option<Vec<String>> {
    let here = module_path(file);
    let (mut base, mut rest) = match path.first()?.as_str() {
        "crate" => (Vec::new(), &path[1..]),
        "self" => (here.clone(), &path[1..]),
        "super" => (here.clone(), path),
        first => {
            let mut child = here.clone();
            child.push(first.to_string());
            file_of(sources, &child).filter(|f| module_path(f) == child)?;
            (here.clone(), path)
        }
    };
    while rest.first().is_some_and(|s| s == "super") {
        base.pop();
        rest = &rest[1..];
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

// --- the rules ------------------------------------------------------------------------------------------------

fn violations(sources: &Sources) -> Vec<String> {
    let lib = sources.get("lib.rs").expect("lib.rs");
    let table = table(lib);
    assert!(table.len() >= 15, "the layer table in lib.rs was not read: {table:?}");
    // Names the crate root re-exports (`crate::Error`) belong to the module they come from.
    let mut reexports = BTreeMap::new();
    for p in paths(&tokens(&strip(lib))) {
        if p.len() == 2 && table.contains_key(&p[0]) {
            reexports.insert(p[1].clone(), p[0].clone());
        }
    }
    let mut wrong = Vec::new();
    for (file, source) in sources {
        let module = module_path(file);
        let Some(top) = module.first() else { continue }; // lib.rs
        if top == "layers_test" {
            continue;
        }
        let Some(row) = table.get(top) else {
            wrong.push(format!("{file}: module `{top}` is missing from the table in lib.rs"));
            continue;
        };
        let toks = tokens(&strip(source));
        for path in paths(&toks) {
            let Some(abs) = resolve(sources, file, &path) else { continue };
            let Some(target) = abs.first().map(|t| reexports.get(t).unwrap_or(t).clone()) else { continue };
            if target == *top {
                continue;
            }
            match table.get(&target) {
                Some(theirs) if theirs.layer >= row.layer => {
                    wrong.push(format!("{file} (layer {}) imports {} (`{target}`, layer {})", row.layer, path.join("::"), theirs.layer))
                }
                None => wrong.push(format!("{file} imports {}, whose module `{target}` the table lacks", path.join("::"))),
                _ => {}
            }
        }
        if is_pure(&table, file) {
            for path in paths(&without_tests(&toks)) {
                if IMPURE.iter().any(|bad| path.len() >= bad.len() && bad.iter().zip(&path).all(|(a, b)| a == b)) {
                    wrong.push(format!("{file} is pure in the table but names {}", path.join("::")));
                }
                if let Some(target) = resolve(sources, file, &path).and_then(|abs| file_of(sources, &abs)) {
                    if target != *file && !is_pure(&table, &target) {
                        wrong.push(format!("{file} is pure in the table but imports {target}, which is not"));
                    }
                }
            }
        }
    }
    wrong
}

#[test]
fn every_module_keeps_its_layer_and_its_purity() {
    let wrong = violations(&real_sources());
    assert!(wrong.is_empty(), "against the table in lib.rs:\n{}", wrong.join("\n"));
}

#[test]
fn the_binding_imports_only_the_facade() {
    let sources = real_sources();
    for (file, source) in sources.iter().filter(|(f, _)| f.starts_with("py/")) {
        for path in paths(&tokens(&strip(source))) {
            if let Some(abs) = resolve(&sources, file, &path) {
                let top = abs.first().map(String::as_str).unwrap_or("");
                assert!(["py", "engine", "error", "Error", "Result"].contains(&top), "{file} imports {}", path.join("::"));
            }
        }
    }
}

#[test]
fn sql_is_written_only_in_store() {
    let columns = ["session_id", "turn_uuid", "ts_ms", "role", "block_type", "harness", "id"];
    let ops = [" = ", " IN (", " >= ", " <= ", " AND "];
    for (file, source) in real_sources() {
        if file.starts_with("store/") || file == "layers_test.rs" {
            continue;
        }
        for literal in source.split('"').skip(1).step_by(2) {
            let sql = columns.iter().any(|c| ops.iter().any(|op| literal.contains(&format!("{c}{op}"))));
            assert!(!sql, "{file} writes SQL: {literal:?}");
        }
    }
}

#[test]
fn the_reader_sees_whole_use_items() {
    let toks = tokens(&strip("use crate::{\n    store::{Filter, Store as S},\n    chunk::*, // crate::py\n};\nlet s = \"crate::engine\";"));
    let got: Vec<String> = paths(&toks).iter().map(|p| p.join("::")).collect();
    assert_eq!(got, ["crate::store::Filter", "crate::store::Store", "crate::chunk"]);
    let toks = tokens(&strip("fn f<'a>(x: &'a str) -> char { let c = '{'; super::super::home::f(x) }"));
    let got: Vec<String> = paths(&toks).iter().map(|p| p.join("::")).collect();
    assert_eq!(got, ["super::super::home::f"]);
    let sources = real_sources();
    let abs = resolve(&sources, "search/legs.rs", &["super".into(), "super".into(), "store".into()]).unwrap();
    assert_eq!(abs, ["store"]);
    let abs = resolve(&sources, "search/mod.rs", &["fusion".into(), "fused_score".into()]).unwrap();
    assert_eq!(abs, ["search", "fusion", "fused_score"]);
}

// --- each rule fails on a planted violation -------------------------------------------------------------------

fn planted(file: &str, code: &str) -> Vec<String> {
    let mut sources = real_sources();
    sources.get_mut(file).unwrap().push_str(code);
    violations(&sources)
}

#[test]
fn planted_upward_import_in_a_multi_line_group_is_refused() {
    let wrong = planted("chunk.rs", "\nuse crate::{\n    time::parse_ts_ms,\n    store::Store,\n};\n");
    assert!(wrong.iter().any(|w| w.starts_with("chunk.rs (layer 2) imports crate::store::Store")), "{wrong:?}");
}

#[test]
fn planted_upward_import_through_super_super_is_refused() {
    let wrong = planted("search/fusion.rs", "\nfn planted() { let _ = super::super::engine::Engine::open; }\n");
    assert!(wrong.iter().any(|w| w.starts_with("search/fusion.rs (layer 6) imports super::super::engine::Engine")), "{wrong:?}");
}

#[test]
fn planted_module_missing_from_the_table_is_refused() {
    let mut sources = real_sources();
    sources.insert("extra.rs".into(), "pub fn f() {}\n".into());
    let wrong = violations(&sources);
    assert!(wrong.iter().any(|w| w == "extra.rs: module `extra` is missing from the table in lib.rs"), "{wrong:?}");
}

#[test]
fn planted_io_in_a_pure_module_is_refused() {
    let wrong = planted("chunk.rs", "\npub fn planted(p: &std::path::Path) -> Vec<u8> { std::fs::read(p).unwrap() }\n");
    assert!(wrong.iter().any(|w| w == "chunk.rs is pure in the table but names std::fs::read"), "{wrong:?}");
    let wrong = planted("search/fusion.rs", "\nuse super::legs::Legs;\n");
    assert!(wrong.iter().any(|w| w == "search/fusion.rs is pure in the table but imports search/legs.rs, which is not"), "{wrong:?}");
    // the same I/O inside a test module is a test's business
    let wrong = planted("chunk.rs", "\n#[cfg(test)]\nmod planted {\n    fn f() { let _ = std::fs::read(\"x\"); }\n}\n");
    assert!(wrong.is_empty(), "{wrong:?}");
}
