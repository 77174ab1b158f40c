//! Every repository path the docs name exists, so that a rename or a move cannot leave
//! docs/*.md pointing at nothing.
//!
//! A path is a code span or a link target that ends in `.rs`, `.md`, `.py` or `.sh`, or holds
//! a `/` and starts with a folder of the repository or of a source root (`src/`, each crate's
//! `crates/<name>/src/`: `tests/it/`, `session/`). It is looked up from the repository root,
//! from each source root, from the folder of the module whose table row names it (`app/` in
//! the `tui/` row), and for links from docs/. A bare file name
//! (`step.rs`) may sit anywhere under that module's folder. Paths outside the repository
//! (`~/.local/…`, `<data dir>/…`) and names in the workspace (`.transcripts/`) are not checked.

use std::path::Path;

use super::{files, read, relative, root};

/// Code spans and link targets of one line.
fn mentions(line: &str) -> Vec<String> {
    let mut out: Vec<String> = line
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    for (pos, _) in line.match_indices("](") {
        let target = &line[pos + 2..];
        if let Some(end) = target.find(')') {
            let target = target[..end].split('#').next().unwrap_or_default();
            if !target.is_empty() && !target.contains("://") {
                out.push(target.to_string());
            }
        }
    }
    out
}

/// The module a modules-table row is about (`tui` for "| `tui/` | …").
fn row_module(line: &str) -> Option<String> {
    let first = line.strip_prefix("| `")?.split('`').next()?;
    let name = first.trim_end_matches('/').trim_end_matches(".rs");
    module_dir(name)
        .is_some_and(|d| root().join(d).is_dir())
        .then(|| name.to_string())
}

/// A top-level module's folder, relative to the repository (`crates/tui/src/tui`).
fn module_dir(module: &str) -> Option<String> {
    super::module_homes()
        .get(module)
        .map(|home| format!("{home}/{module}"))
}

/// The repository root and every source root.
fn base_dirs() -> Vec<std::path::PathBuf> {
    let mut bases = vec![root().to_path_buf()];
    bases.extend(super::source_roots().iter().map(|r| root().join(r)));
    bases
}

fn is_path_like(s: &str, top: &[String]) -> bool {
    if s.is_empty()
        || s.chars()
            .any(|c| !(c.is_ascii_alphanumeric() || "_-./".contains(c)))
        || s.starts_with(['.', '/'])
    {
        return false;
    }
    let by_ext = [".rs", ".md", ".py", ".sh"].iter().any(|e| s.ends_with(e));
    let first = s.split('/').next().unwrap_or_default();
    by_ext || (s.contains('/') && top.iter().any(|t| t == first))
}

fn exists(path: &str, module: Option<&str>, from_docs: bool) -> bool {
    let mut bases = base_dirs();
    if let Some(d) = module.and_then(module_dir) {
        bases.push(root().join(d));
    }
    if from_docs {
        bases.push(root().join("docs"));
    }
    if bases.iter().any(|b| b.join(path).exists()) {
        return true;
    }
    // A bare file name within its module's folder (or anywhere in the sources outside a row).
    !path.contains('/') && {
        let dirs = match module.and_then(module_dir) {
            Some(d) => vec![d],
            None => super::source_roots(),
        };
        dirs.iter()
            .flat_map(|d| files(d, &[path]))
            .any(|p| p.file_name().is_some_and(|n| n.to_string_lossy() == path))
    }
}

/// Folders at the top of the repository, of `src/` and of a table row's module: the first
/// segment of a checked path.
fn top_folders(module: Option<&str>) -> Vec<String> {
    let mut top = Vec::new();
    let mut dirs = base_dirs();
    dirs.extend(module.and_then(module_dir).map(|d| root().join(d)));
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            if entry.path().is_dir() {
                top.push(entry.file_name().to_string_lossy().to_string());
            }
        }
    }
    top.retain(|t| t != "target" && !t.starts_with('.'));
    top
}

fn missing_paths(doc: &Path) -> (usize, Vec<String>) {
    let rel = relative(doc);
    let (mut checked, mut missing) = (0, Vec::new());
    for (n, line) in read(&rel).lines().enumerate() {
        let module = row_module(line);
        let top = top_folders(module.as_deref());
        for mention in mentions(line) {
            let path = mention.trim_end_matches(['.', ',', ':']);
            if !is_path_like(path, &top) {
                continue;
            }
            checked += 1;
            if !exists(path, module.as_deref(), true) {
                missing.push(format!("{rel}:{}: `{path}`", n + 1));
            }
        }
    }
    (checked, missing)
}

#[test]
fn every_repository_path_the_docs_name_exists() {
    let (mut checked, mut missing) = (0, Vec::new());
    for doc in files("docs", &[".md"]) {
        let (c, m) = missing_paths(&doc);
        checked += c;
        missing.extend(m);
    }
    assert!(
        checked >= 40,
        "only {checked} paths found in docs/: is the scan broken?"
    );
    assert!(
        missing.is_empty(),
        "docs name paths that do not exist:\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_doc_path_reader_finds_spans_links_and_module_relative_names() {
    let top = top_folders(Some("tui"));
    let line = "| `tui/` | `app/` (state; `step.rs`), [names](pipeline.md#units), `~/.local/x/`, `.transcripts/` |";
    let found: Vec<String> = mentions(line)
        .into_iter()
        .filter(|m| is_path_like(m, &top))
        .collect();
    assert_eq!(found, ["tui/", "app/", "step.rs", "pipeline.md"]);
    assert_eq!(row_module(line).as_deref(), Some("tui"));
    assert!(exists("app/", Some("tui"), false));
    assert!(!exists("app/", None, false));
    assert!(!exists("no_such_file.rs", Some("tui"), false));
}
