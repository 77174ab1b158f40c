//! The "Crates" table of docs/architecture.md is the workspace: each row's crate exists
//! with those modules (its `lib.rs`), those dependencies among the crates (its Cargo.toml)
//! and a README under its name; every import the module table allows crosses only into the
//! importing module's own crate or a crate it depends on. The compiler then holds the
//! layers; this test keeps the page and the two tables telling the truth about them.

use std::collections::{BTreeMap, BTreeSet};

use super::{ARCHITECTURE, allowed_table, declared_modules, read, root};

const HEADING: &str = "## Crates";
const ROOT_CRATE: &str = "ctxlab";

/// One row of the "Crates" table.
#[derive(Debug)]
struct Row {
    modules: BTreeSet<String>,
    uses: BTreeSet<String>,
}

/// The code spans of a table cell (`a`, `b` -> {a, b}).
fn spans(cell: &str) -> BTreeSet<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

fn crates_table() -> BTreeMap<String, Row> {
    let doc = read(ARCHITECTURE);
    let section = doc
        .split_once(HEADING)
        .unwrap_or_else(|| panic!("{ARCHITECTURE} has no heading {HEADING:?}"))
        .1;
    let mut rows = BTreeMap::new();
    for line in section.lines().skip_while(|l| !l.starts_with('|')) {
        if !line.starts_with('|') {
            break;
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (Some(name), Some(modules), Some(uses)) = (cells.get(1), cells.get(2), cells.get(3))
        else {
            continue;
        };
        let Some(name) = spans(name).into_iter().next() else {
            continue; // the header and the separator row
        };
        let mut modules = spans(modules);
        if name == ROOT_CRATE {
            // The root row also names the binary's files, which are not modules.
            modules.retain(|m| !m.contains('/'));
        }
        rows.insert(
            name,
            Row {
                modules,
                uses: spans(uses),
            },
        );
    }
    rows
}

/// A crate's package name and its dependencies among the workspace's crates.
fn manifest(dir: &str) -> (String, BTreeSet<String>) {
    let text = read(&format!("{dir}/Cargo.toml"));
    let value: toml::Table = text
        .parse()
        .unwrap_or_else(|e| panic!("{dir}/Cargo.toml: {e}"));
    let name = value["package"]["name"].as_str().unwrap().to_string();
    let deps = value
        .get("dependencies")
        .and_then(|d| d.as_table())
        .map(|d| {
            d.keys()
                .filter(|k| k.starts_with("ctxlab-"))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    (name, deps)
}

/// Every crate folder under `crates/`, relative to the repository.
fn crate_dirs() -> Vec<String> {
    let mut dirs: Vec<String> = std::fs::read_dir(root().join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .map(|p| super::relative(&p))
        .collect();
    dirs.sort();
    dirs
}

#[test]
fn the_crates_table_is_the_workspace() {
    let table = crates_table();
    let mut seen = BTreeSet::new();
    for dir in crate_dirs() {
        let (name, deps) = manifest(&dir);
        let row = table
            .get(&name)
            .unwrap_or_else(|| panic!("{name} ({dir}) has no row in {ARCHITECTURE} {HEADING:?}"));
        assert_eq!(
            row.modules,
            declared_modules(&format!("{dir}/src/lib.rs")),
            "{name}: the modules column vs its lib.rs"
        );
        assert_eq!(row.uses, deps, "{name}: the uses column vs its Cargo.toml");
        let readme = read(&format!("{dir}/README.md"));
        assert!(
            readme.starts_with(&format!("# {name}\n")),
            "{dir}/README.md says what {name} owns, under its name"
        );
        seen.insert(name);
    }
    let root_row = &table[ROOT_CRATE];
    assert_eq!(root_row.modules, declared_modules("src/lib.rs"));
    let (root_name, root_deps) = manifest(".");
    assert_eq!(root_name, ROOT_CRATE);
    assert_eq!(root_deps, seen, "the root package uses every crate");
    seen.insert(ROOT_CRATE.to_string());
    let listed: BTreeSet<String> = table.keys().cloned().collect();
    assert_eq!(listed, seen, "rows of {HEADING:?} vs the workspace");
    assert!(seen.len() >= 5, "the scan found too few crates: {seen:?}");
}

#[test]
fn every_allowed_import_crosses_only_into_a_crate_the_importer_uses() {
    let table = crates_table();
    let home: BTreeMap<&str, &str> = table
        .iter()
        .flat_map(|(c, row)| row.modules.iter().map(move |m| (m.as_str(), c.as_str())))
        .collect();
    let mut wrong = Vec::new();
    for (module, imports) in allowed_table() {
        let Some(&from) = home.get(module.as_str()) else {
            wrong.push(format!("`{module}` is in no crate"));
            continue;
        };
        for import in imports {
            let to = home.get(import.as_str()).copied().unwrap_or("?");
            let reachable = to == from || from == ROOT_CRATE || table[from].uses.contains(to);
            if !reachable {
                wrong.push(format!("`{module}` ({from}) may import `{import}` ({to})"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "the module table allows imports the crates cannot make:\n{}",
        wrong.join("\n")
    );
}
