//! The written rules of docs/architecture.md that a scan of the code can check: `ratatui` and
//! `crossterm` only under `tui/`, and the "must not" column of the modules table.
//!
//! The column is prose; each clause that names something visible in the code is checked:
//! "import `a`, `b`" (no `crate::a`), "import anything of the crate", "import a front end"
//! (`tui`, `commands`), "know about messages" (`crate::message`), "know … the pipeline"
//! (`crate::compact`), "… the UI" (`crate::tui`), "touch/draw on a terminal" (`ratatui`,
//! `crossterm`), "use tokio", "print" and "write to stdout/stderr" (the print macros), "write
//! anything" / "write a file" (file-creating calls), "open a connection" (`reqwest`, sockets)
//! and "call a model" (the `Model` trait). Clauses that need judgement ("reorder or drop a key",
//! "log a key") are left to review. Code in `#[cfg(test)]` modules, comments and strings is not
//! scanned.

use std::collections::BTreeSet;

use super::rust_text::{code_only, without_test_modules};
use super::{ARCHITECTURE, files, read, relative};

/// One thing a module's code must not contain: a description and the words that show it.
struct Forbidden {
    clause: String,
    needles: Vec<String>,
}

/// The module names and "must not" cells of the table under "## Modules".
fn must_not_column() -> Vec<(String, String)> {
    let doc = read(ARCHITECTURE);
    let section = doc
        .split_once("## Modules")
        .unwrap_or_else(|| panic!("{ARCHITECTURE} has no heading \"Modules\""))
        .1;
    let mut rows = Vec::new();
    for line in section.lines().skip_while(|l| !l.starts_with('|')) {
        if !line.starts_with('|') {
            break;
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (Some(module), Some(must_not)) = (cells.get(1), cells.get(3)) else {
            continue;
        };
        let Some(module) = module.strip_prefix('`').and_then(|m| m.strip_suffix('`')) else {
            continue;
        };
        let name = module.trim_end_matches('/').trim_end_matches(".rs");
        rows.push((name.to_string(), must_not.to_string()));
    }
    rows
}

fn crate_paths(modules: &[&str]) -> Vec<String> {
    modules.iter().map(|m| format!("crate::{m}::")).collect()
}

const PRINTS: [&str; 5] = ["println!", "print!", "eprintln!", "eprint!", "dbg!"];
const TERMINAL: [&str; 2] = ["ratatui::", "crossterm::"];
const FILE_WRITES: [&str; 6] = [
    "fs::write",
    "File::create",
    "OpenOptions",
    "create_dir",
    "fs::rename",
    "fs::remove",
];

/// The checks one "must not" cell asks for.
fn forbidden(module: &str, cell: &str) -> Vec<Forbidden> {
    let mut out = Vec::new();
    let mut add = |clause: &str, needles: Vec<String>| {
        out.push(Forbidden {
            clause: clause.trim().to_string(),
            needles,
        })
    };
    for clause in cell.split(';') {
        let lower = clause.to_lowercase();
        if lower.contains("import anything of the crate") {
            add(clause, vec!["crate::".into()]);
        } else if lower.contains("import a front end") {
            add(clause, crate_paths(&["tui", "commands"]));
        } else if let Some(after) = lower.trim().strip_prefix("import ") {
            let names: Vec<&str> = after.split('`').skip(1).step_by(2).collect();
            add(clause, crate_paths(&names));
        }
        if lower.contains("know about messages") {
            add(clause, crate_paths(&["message"]));
        }
        if lower.starts_with("know ") || lower.contains(" know ") {
            if lower.contains("the pipeline") {
                add(clause, crate_paths(&["compact"]));
            }
            if lower.contains("the ui") {
                add(clause, crate_paths(&["tui"]));
            }
        }
        if lower.contains("a terminal") {
            add(clause, TERMINAL.iter().map(|s| s.to_string()).collect());
        }
        if lower.contains("use tokio") {
            add(clause, vec!["tokio::".into()]);
        }
        if lower.split([',', ' ']).any(|w| w == "print") || lower.contains("stdout/stderr") {
            add(clause, PRINTS.iter().map(|s| s.to_string()).collect());
        }
        if lower.contains("write anything") || lower.contains("write a file") {
            add(clause, FILE_WRITES.iter().map(|s| s.to_string()).collect());
        }
        if lower.contains("open a connection") {
            add(clause, vec!["reqwest::".into(), "TcpStream".into()]);
        }
        if lower.contains("call a model") {
            add(clause, vec!["Model".into()]);
        }
    }
    // A module's own paths are its own business.
    let own = format!("crate::{module}::");
    for f in &mut out {
        f.needles.retain(|n| *n != own);
    }
    out
}

/// Whether `code` holds `needle` as a path or word (not inside a longer identifier).
fn holds(code: &str, needle: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    code.match_indices(needle).any(|(pos, _)| {
        let before = code[..pos].chars().next_back();
        let after = code[pos + needle.len()..].chars().next();
        let starts_word = !before.is_some_and(|c| ident(c) || c == '$' || c == ':');
        let ends_word = needle.ends_with([':', '!']) || !after.is_some_and(ident);
        starts_word && ends_word && (needle != "crate::" || !code[pos..].starts_with("crate::{}"))
    })
}

/// The library code of a top-level module, file by file, without test modules.
fn module_code(module: &str) -> Vec<(String, String)> {
    let mut paths = Vec::new();
    let Some(home) = super::module_homes().remove(module) else {
        return Vec::new();
    };
    let single = format!("{home}/{module}.rs");
    if super::root().join(&single).is_file() {
        paths.push(super::root().join(&single));
    }
    if super::root().join(&home).join(module).is_dir() {
        paths.extend(files(&format!("{home}/{module}"), &[".rs"]));
    }
    paths
        .into_iter()
        .map(|p| relative(&p))
        .filter(|rel| !rel.ends_with("/tests.rs"))
        .map(|rel| {
            let code = without_test_modules(&code_only(&read(&rel)));
            (rel, code)
        })
        .collect()
}

#[test]
fn no_module_does_what_its_must_not_column_forbids() {
    let rows = must_not_column();
    assert!(rows.len() >= 15, "the modules table was not read: {rows:?}");
    let mut checks = 0;
    let mut broken = Vec::new();
    for (module, cell) in &rows {
        let sources = module_code(module);
        assert!(
            !sources.is_empty(),
            "{ARCHITECTURE} names `{module}` but no crate has such a module"
        );
        for rule in forbidden(module, cell) {
            checks += 1;
            for (rel, code) in &sources {
                let hits: BTreeSet<&String> =
                    rule.needles.iter().filter(|n| holds(code, n)).collect();
                if !hits.is_empty() {
                    broken.push(format!(
                        "{rel} ({module} must not {:?}): {hits:?}",
                        rule.clause
                    ));
                }
            }
        }
    }
    // The clauses this scan understands today; fewer means the reading broke.
    assert!(checks >= 15, "only {checks} checkable clauses found");
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

#[test]
fn ratatui_and_crossterm_are_used_only_under_tui() {
    let mut outside = Vec::new();
    for path in super::library_files() {
        let rel = relative(&path);
        if super::module_of(&path).as_deref() == Some("tui") {
            continue;
        }
        let code = code_only(&read(&rel));
        for needle in ["ratatui", "crossterm"] {
            if code
                .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                .any(|w| w == needle)
            {
                outside.push(format!("{rel} uses {needle}"));
            }
        }
    }
    assert!(outside.is_empty(), "{}", outside.join("\n"));
}

/// The `tui` row's "mutate `App` outside `App::update`": outside `crates/tui/src/tui/app/`, the crate
/// calls none of `App`'s `&mut self` methods but `update` (the loop hands it messages; a
/// job's result comes back as one).
#[test]
fn nothing_outside_the_app_changes_it_but_update() {
    let mut mutators = BTreeSet::new();
    let app_dir = format!("{}/tui/app", super::module_homes()["tui"]);
    for path in files(&app_dir, &[".rs"]) {
        let code = code_only(&without_test_modules(&read(&relative(&path))));
        // From one item `impl` to the next (at a line's start, not `x: impl Trait`): the
        // methods of `impl App` only.
        for block in code.split("\nimpl ").filter(|b| b.starts_with("App {")) {
            for part in block.split("fn ").skip(1) {
                let name: String = part
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if part[name.len()..].trim_start().starts_with("(&mut self") {
                    mutators.insert(name);
                }
            }
        }
    }
    assert!(
        mutators.contains("update") && mutators.len() > 10,
        "the scan found App's mutators: {mutators:?}"
    );
    let mut outside = Vec::new();
    for path in super::library_files() {
        let rel = relative(&path);
        if rel.starts_with(&format!("{app_dir}/")) {
            continue;
        }
        let code = code_only(&without_test_modules(&read(&rel)));
        for name in mutators.iter().filter(|n| *n != "update") {
            if code.contains(&format!("app.{name}(")) {
                outside.push(format!("{rel} calls App::{name}"));
            }
        }
    }
    assert!(outside.is_empty(), "{}", outside.join("\n"));
}

#[test]
fn the_must_not_reader_turns_clauses_into_checks() {
    let rules = forbidden(
        "tui",
        "write to stdout/stderr while it owns the screen; import `provider`, `tools` or `commands`",
    );
    let needles: Vec<&str> = rules
        .iter()
        .flat_map(|r| r.needles.iter().map(String::as_str))
        .collect();
    assert_eq!(
        needles,
        [
            "println!",
            "print!",
            "eprintln!",
            "eprint!",
            "dbg!",
            "crate::provider::",
            "crate::tools::",
            "crate::commands::"
        ]
    );
    assert!(holds(
        "let x = crate::tools::bash::run();",
        "crate::tools::"
    ));
    assert!(!holds("let x = self::crate_tools::y;", "crate::tools::"));
    assert!(holds("    eprintln!(\"x\")", "eprintln!"));
    assert!(!holds("ModelCall::new()", "Model"));
    assert!(holds("fn f(m: &dyn Model)", "Model"));
}
