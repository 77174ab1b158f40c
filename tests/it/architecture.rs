//! The layout described in docs/architecture.md, checked against the code: every import
//! between top-level modules (`crate::<module>` in the library's sources, `src/` and each
//! crate's `crates/<name>/src/`) is one the table "What may import what" allows, the table
//! names every module the crates' `lib.rs` declare and has no cycle, the "Crates" table is the
//! crates' own Cargo.toml and agrees with the import table (`crates`), every
//! pointer to a heading of docs/pipeline.md or docs/architecture.md names a heading that
//! exists, and no comment points to a document outside the repository. Circles inside folders
//! (`folders`), the "must not" column (`rules`), the paths the docs name (`doc_paths`) and
//! where the workbench draws (`views`: each pane beside its state) have their own files.

mod crates;
mod doc_paths;
mod folders;
mod rules;
mod rust_text;
mod views;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const ARCHITECTURE: &str = "docs/architecture.md";
const PIPELINE: &str = "docs/pipeline.md";
const TABLE_HEADING: &str = "## What may import what";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(relative: &str) -> String {
    std::fs::read_to_string(root().join(relative))
        .unwrap_or_else(|e| panic!("cannot read {relative}: {e}"))
}

/// Every file under `dir` (relative to the repository) whose name ends in one of `exts`.
fn files(dir: &str, exts: &[&str]) -> Vec<PathBuf> {
    fn walk(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
        let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, exts, out);
            } else if exts.iter().any(|e| path.to_string_lossy().ends_with(e)) {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&root().join(dir), exts, &mut out);
    out.sort();
    out
}

fn relative(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

/// The folders that hold the library's modules, relative to the repository: each crate's
/// `src/` under `crates/` (docs/architecture.md, "Crates") and the root package's `src/`.
fn source_roots() -> Vec<String> {
    let mut roots = vec!["src".to_string()];
    let entries = std::fs::read_dir(root().join("crates")).expect("crates/ exists");
    let mut crates: Vec<String> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("src/lib.rs").is_file())
        .map(|p| format!("{}/src", relative(&p)))
        .collect();
    crates.sort();
    roots.extend(crates);
    roots
}

/// Every source file of the library and the binary, under every source root.
fn library_files() -> Vec<PathBuf> {
    source_roots()
        .iter()
        .flat_map(|r| files(r, &[".rs"]))
        .collect()
}

/// The modules a `lib.rs` declares (`pub mod x;`), not the ones it imports from below.
fn declared_modules(lib_rs: &str) -> BTreeSet<String> {
    read(lib_rs)
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let rest = l
                .strip_prefix("pub mod ")
                .or_else(|| l.strip_prefix("mod "))?;
            Some(rest.trim_end_matches(';').trim().to_string())
        })
        .collect()
}

/// The top-level modules every `lib.rs` declares, each with the source root it lives in.
fn module_homes() -> BTreeMap<String, String> {
    let mut homes = BTreeMap::new();
    for source in source_roots() {
        for module in declared_modules(&format!("{source}/lib.rs")) {
            let before = homes.insert(module.clone(), source.clone());
            assert!(before.is_none(), "`{module}` is declared by two crates");
        }
    }
    homes
}

/// The top-level modules of the library.
fn lib_modules() -> BTreeSet<String> {
    module_homes().into_keys().collect()
}

/// The source root a file lies under and its path within it.
fn split_source(path: &Path) -> Option<(String, PathBuf)> {
    source_roots().into_iter().rev().find_map(|r| {
        let rest = path.strip_prefix(root().join(&r)).ok()?;
        Some((r, rest.to_path_buf()))
    })
}

/// The top-level module a source file belongs to (None for lib.rs and main.rs).
fn module_of(path: &Path) -> Option<String> {
    let (_, rel) = split_source(path)?;
    let first = rel.components().next()?.as_os_str().to_string_lossy();
    let name = first.trim_end_matches(".rs").to_string();
    (name != "lib" && name != "main").then_some(name)
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn leading_ident(s: &str) -> String {
    s.trim_start()
        .chars()
        .take_while(|&c| is_ident_char(c))
        .collect()
}

/// The top-level modules a source text names as `crate::<module>`, including inside
/// `crate::{a, b::c}` groups.
fn crate_imports(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut rest = text;
    while let Some(pos) = rest.find("crate::") {
        let before = rest[..pos].chars().next_back();
        let after = &rest[pos + "crate::".len()..];
        rest = after;
        if before.is_some_and(|c| is_ident_char(c) || c == '$') {
            continue;
        }
        if let Some(group) = after.strip_prefix('{') {
            let (mut depth, mut item) = (0usize, String::new());
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        found.insert(leading_ident(&item));
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                item.push(c);
            }
            found.insert(leading_ident(&item));
        } else {
            found.insert(leading_ident(after));
        }
    }
    found.remove("");
    found
}

/// The table under "What may import what": module -> the modules it may import.
pub(crate) fn allowed_table() -> BTreeMap<String, BTreeSet<String>> {
    let doc = read(ARCHITECTURE);
    let section = doc
        .split_once(TABLE_HEADING)
        .unwrap_or_else(|| panic!("{ARCHITECTURE} has no heading {TABLE_HEADING:?}"))
        .1;
    let mut table = BTreeMap::new();
    for line in section.lines().skip_while(|l| !l.starts_with('|')) {
        if !line.starts_with('|') {
            break;
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (Some(module), Some(imports)) = (cells.get(1), cells.get(2)) else {
            continue;
        };
        let Some(module) = module.strip_prefix('`').and_then(|m| m.strip_suffix('`')) else {
            continue; // the header and the separator row
        };
        let names: BTreeSet<String> = imports
            .split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect();
        table.insert(module.to_string(), names);
    }
    table
}

#[test]
fn the_import_table_names_every_top_level_module_and_nothing_else() {
    let table = allowed_table();
    let listed: BTreeSet<String> = table.keys().cloned().collect();
    assert_eq!(
        listed,
        lib_modules(),
        "rows of {ARCHITECTURE} vs the modules the crates declare"
    );
    for (module, imports) in &table {
        let unknown: Vec<&String> = imports.iter().filter(|m| !listed.contains(*m)).collect();
        assert!(
            unknown.is_empty(),
            "`{module}` may import unknown {unknown:?}"
        );
    }
}

#[test]
fn the_allowed_imports_have_no_cycle() {
    let mut left = allowed_table();
    // Repeatedly remove the modules that import nothing still left: a cycle never empties.
    while !left.is_empty() {
        let free: Vec<String> = left
            .iter()
            .filter(|(_, imports)| imports.iter().all(|m| !left.contains_key(m)))
            .map(|(module, _)| module.clone())
            .collect();
        assert!(
            !free.is_empty(),
            "the table in {ARCHITECTURE} has a cycle among {:?}",
            left.keys().collect::<Vec<_>>()
        );
        for module in free {
            left.remove(&module);
        }
    }
}

#[test]
fn no_module_imports_what_docs_architecture_does_not_allow() {
    let table = allowed_table();
    let mut seen: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut violations = Vec::new();
    for path in library_files() {
        let Some(module) = module_of(&path) else {
            continue;
        };
        let allowed = table.get(&module);
        for import in crate_imports(&read(&relative(&path))) {
            if import == module {
                continue;
            }
            if !allowed.is_some_and(|a| a.contains(&import)) {
                violations.push(format!("{} imports crate::{import}", relative(&path)));
            }
            seen.entry(module.clone()).or_default().insert(import);
        }
    }
    // The scan itself must work: these imports exist and must be found.
    assert!(seen["message"].contains("pyrepr"), "{seen:?}");
    assert!(seen["agent"].contains("compact"), "{seen:?}");
    assert!(
        violations.is_empty(),
        "imports the table in {ARCHITECTURE} does not allow:\n{}",
        violations.join("\n")
    );
}

#[test]
fn the_scanner_reads_grouped_and_inline_crate_paths() {
    let text = "use crate::{message::Message, store::{Store, StoreError}};\n\
                let x = crate::util::unix_now();\n\
                macro_rules! m { () => { $crate::ignored }; }\n\
                use ctxlab_crate::not_this;";
    let found: Vec<String> = crate_imports(text).into_iter().collect();
    assert_eq!(found, ["message", "store", "util"]);
}

/// The headings of a Markdown document, without `#`s and backticks.
fn headings(doc: &str) -> BTreeSet<String> {
    doc.lines()
        .filter(|l| l.starts_with('#'))
        .map(|l| l.trim_start_matches('#').trim().replace('`', ""))
        .collect()
}

const COMMENT_LEADS: [&str; 4] = ["//!", "///", "//", "#"];

/// Skips commas and white space, and a comment lead at the start of each new line.
fn skip_separators(mut rest: &str) -> &str {
    loop {
        let trimmed = rest.trim_start_matches([',', ' ', '\t', '\r', '\n']);
        let crossed_line = rest[..rest.len() - trimmed.len()].contains('\n');
        match COMMENT_LEADS.iter().find_map(|l| trimmed.strip_prefix(l)) {
            Some(after) if crossed_line => rest = after,
            _ => return trimmed,
        }
    }
}

/// The quoted heading after each mention of `doc`, e.g. `docs/pipeline.md, "Units"`. The
/// quote may follow a line break inside a comment; a mention directly followed by a quote
/// (the end of a string literal) is not a pointer.
fn pointers(text: &str, doc: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (pos, _) in text.match_indices(doc) {
        let after = &text[pos + doc.len()..];
        let rest = skip_separators(after);
        if rest.len() == after.len() {
            continue;
        }
        let Some(quoted) = rest.strip_prefix('"') else {
            continue;
        };
        let Some(end) = quoted.find('"') else {
            continue;
        };
        let words: Vec<&str> = quoted[..end]
            .split_whitespace()
            .filter(|w| !COMMENT_LEADS.contains(w))
            .collect();
        out.push(words.join(" "));
    }
    out
}

/// The files whose comments may point into the docs or outside the repository.
fn checked_sources() -> Vec<PathBuf> {
    let mut all = library_files();
    all.extend(files("tests/it", &[".rs"]));
    all.extend(files("benches", &[".rs"]));
    all.extend(files("examples", &[".rs"]));
    all.extend(files("scripts", &[".py", ".sh"]));
    all
}

#[test]
fn every_pointer_into_the_docs_names_a_heading_that_exists() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for doc in [PIPELINE, ARCHITECTURE] {
        let known = headings(&read(doc));
        for path in checked_sources() {
            for pointer in pointers(&read(&relative(&path)), doc) {
                checked += 1;
                if !known.contains(&pointer.replace('`', "")) {
                    broken.push(format!("{}: {doc} {pointer:?}", relative(&path)));
                }
            }
        }
    }
    assert!(
        checked >= 10,
        "only {checked} pointers found: is the scan broken?"
    );
    assert!(
        broken.is_empty(),
        "pointers to headings that do not exist:\n{}",
        broken.join("\n")
    );
}

#[test]
fn the_pointer_reader_follows_a_quote_across_a_comment_line_break() {
    let text = "//! see docs/pipeline.md, \"Where ctxlab differs\n//! from the lesson\")\n\
                const P: &str = \"docs/pipeline.md\";";
    assert_eq!(
        pointers(text, PIPELINE),
        ["Where ctxlab differs from the lesson"]
    );
}

#[test]
fn no_comment_points_to_a_document_outside_the_repository() {
    // Built from pieces so that this file does not match itself.
    let needles = [
        concat!("spec", " section"),
        concat!("spec", " §"),
        concat!("shared", "/spec"),
        concat!("shared", "/conformance"),
        concat!("shared", "/design"),
        concat!("../", "shared"),
        concat!("spec", "'s "),
    ];
    const THE_SPEC: &str = concat!("the", " spec");
    let mut found = Vec::new();
    for path in checked_sources() {
        let rel = relative(&path);
        for (n, line) in read(&rel).lines().enumerate() {
            let lower = line.to_lowercase();
            let numbered = lower.match_indices("spec ").any(|(i, _)| {
                lower[i + 5..].starts_with(|c: char| c.is_ascii_digit())
                    && !lower[..i].ends_with(|c: char| is_ident_char(c))
            });
            let the_spec = lower
                .match_indices(THE_SPEC)
                .any(|(i, _)| !lower[i + THE_SPEC.len()..].starts_with(|c: char| is_ident_char(c)));
            if numbered || the_spec || needles.iter().any(|n| lower.contains(n)) {
                found.push(format!("{rel}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "point to {PIPELINE} or {ARCHITECTURE} instead:\n{}",
        found.join("\n")
    );
}
