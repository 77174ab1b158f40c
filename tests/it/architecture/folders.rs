//! Import circles inside folders. The table in docs/architecture.md orders the top-level
//! modules; inside a folder (`tui/`, `compact/`, …) the files and sub-folders must not import
//! each other in a circle either (docs/architecture.md, "What may import what").
//!
//! A folder's nodes are its children: a file `x.rs` or a folder `x/` is the node `x`. An edge
//! `a -> b` is a path in `a`'s code (outside `#[cfg(test)]` modules, comments and strings)
//! that names `b`: `crate::…`, `super::…` and `self::…` paths. The folder's own file
//! (`mod.rs`, or `x.rs` beside `x/`) is the folder's face, not a node: it declares, dispatches
//! to and re-exports its children, and they may use what it defines. A name it re-exports
//! (`pub use b::Name`) counts as `b`'s, so `use super::Name` in `a` is the edge `a -> b`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::rust_text::{code_only, is_ident_char, test_file_modules, without_test_modules};
use super::{read, relative};

/// One path written in the code: its segments as written (`super`, `crate`, names), the
/// alias it is imported as, the line it starts on and whether it sits in a `pub use`.
#[derive(Debug, Clone)]
pub(super) struct Written {
    pub segments: Vec<String>,
    pub line: usize,
    pub reexport: bool,
}

/// Expands a path starting at `text` (just after its first segment's `::`) into leaves,
/// following `{a, b::{c, self}}` groups. `prefix` holds the segments before.
fn expand(text: &str, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let text = text.trim_start();
    if let Some(group) = text.strip_prefix('{') {
        let (mut depth, mut item, mut items) = (0usize, String::new(), Vec::new());
        for c in group.chars() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    items.push(std::mem::take(&mut item));
                    continue;
                }
                _ => {}
            }
            item.push(c);
        }
        items.push(item);
        for item in items {
            let item = item.trim();
            if item.is_empty() {
                continue;
            }
            if item == "self" {
                out.push(prefix.clone());
                continue;
            }
            let name: String = item.chars().take_while(|&c| is_ident_char(c)).collect();
            let rest = item[name.len()..].trim_start();
            let mut p = prefix.clone();
            if name.is_empty() {
                if item.starts_with('*') {
                    p.push("*".into());
                    out.push(p);
                }
                continue;
            }
            p.push(name);
            match rest.strip_prefix("::") {
                Some(more) => expand(more, p, out),
                None => out.push(p),
            }
        }
        return;
    }
    if text.starts_with('*') {
        let mut p = prefix;
        p.push("*".into());
        out.push(p);
        return;
    }
    let name: String = text.chars().take_while(|&c| is_ident_char(c)).collect();
    let mut p = prefix;
    if name.is_empty() {
        out.push(p);
        return;
    }
    let rest = &text[name.len()..];
    p.push(name);
    match rest.strip_prefix("::") {
        Some(more) if !more.starts_with('<') => expand(more, p, out),
        _ => out.push(p),
    }
}

/// Every path in `code` that starts with one of `heads` followed by `::` (and not preceded by
/// an identifier, `::` or `$`).
pub(super) fn written_paths(code: &str, heads: &[&str]) -> Vec<Written> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    for head in heads {
        let needle = format!("{head}::");
        for (pos, _) in code.match_indices(&needle) {
            if pos > 0 {
                let before = bytes[pos - 1] as char;
                if is_ident_char(before) || before == '$' || before == ':' {
                    continue;
                }
            }
            let line = code[..pos].matches('\n').count() + 1;
            let statement_start = code[..pos].rfind([';', '{', '}']).map_or(0, |p| p + 1);
            let statement = code[statement_start..pos].trim_start();
            let reexport = statement.starts_with("pub use")
                || (statement.starts_with("pub(") && statement.contains(") use"));
            let mut leaves = Vec::new();
            expand(
                &code[pos + needle.len()..],
                vec![head.to_string()],
                &mut leaves,
            );
            for segments in leaves {
                out.push(Written {
                    segments,
                    line,
                    reexport,
                });
            }
        }
    }
    out
}

/// A source file of the library: its module path (`["tui", "app", "keys"]`) and whether it
/// is a folder's own file.
struct Source {
    rel: String,
    module: Vec<String>,
    code: String,
}

fn module_path(path: &Path) -> Option<Vec<String>> {
    let (_, rel) = super::split_source(path)?;
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().to_string())
        .collect();
    let last = parts.pop()?;
    let stem = last.strip_suffix(".rs")?.to_string();
    if parts.is_empty() && (stem == "lib" || stem == "main") {
        return None;
    }
    if parts.first().is_some_and(|p| p == "main") {
        return None; // the binary's own modules
    }
    if stem != "mod" {
        parts.push(stem);
    }
    Some(parts)
}

fn library_sources() -> Vec<Source> {
    let mut all: Vec<Source> = super::library_files()
        .into_iter()
        .filter_map(|path| {
            let module = module_path(&path)?;
            let rel = relative(&path);
            let code = code_only(&read(&rel));
            Some(Source { rel, module, code })
        })
        .collect();
    let tests: BTreeSet<Vec<String>> = all
        .iter()
        .flat_map(|s| {
            test_file_modules(&s.code).into_iter().map(|name| {
                let mut m = s.module.clone();
                m.push(name);
                m
            })
        })
        .collect();
    all.retain(|s| !tests.contains(&s.module));
    for s in &mut all {
        s.code = without_test_modules(&s.code);
    }
    all
}

/// The node of `folder` that `module` lies in (`None` outside it); `mod.rs` for the folder's
/// own file.
fn node_of(folder: &[String], module: &[String]) -> Option<String> {
    if !module.starts_with(folder) {
        return None;
    }
    Some(
        module
            .get(folder.len())
            .cloned()
            .unwrap_or_else(|| "mod.rs".into()),
    )
}

/// An import edge inside a folder with one place that writes it.
type Edges = BTreeMap<(String, String), String>;

/// Folder (module path) -> its edges.
fn folder_graphs() -> BTreeMap<Vec<String>, Edges> {
    let sources = library_sources();
    let modules: BTreeSet<Vec<String>> = sources.iter().map(|s| s.module.clone()).collect();
    let folders: BTreeSet<Vec<String>> = modules
        .iter()
        .filter(|m| {
            modules
                .iter()
                .any(|o| o.len() == m.len() + 1 && o.starts_with(m))
        })
        .cloned()
        .collect();
    let children = |folder: &Vec<String>| -> BTreeSet<String> {
        modules
            .iter()
            .filter(|m| m.len() > folder.len() && m.starts_with(folder))
            .map(|m| m[folder.len()].clone())
            .collect()
    };
    // Names a folder's own file re-exports from a child: folder -> name -> child.
    let mut reexports: BTreeMap<Vec<String>, BTreeMap<String, String>> = BTreeMap::new();
    for s in sources.iter().filter(|s| folders.contains(&s.module)) {
        let kids = children(&s.module);
        let heads: Vec<&str> = kids.iter().map(String::as_str).chain(["self"]).collect();
        for w in written_paths(&s.code, &heads) {
            let segs: Vec<String> = w
                .segments
                .iter()
                .filter(|s| *s != "self")
                .cloned()
                .collect();
            if let (true, Some(child), Some(name)) = (w.reexport, segs.first(), segs.last())
                && segs.len() > 1
                && kids.contains(child)
            {
                reexports
                    .entry(s.module.clone())
                    .or_default()
                    .insert(name.clone(), child.clone());
            }
        }
    }
    let mut graphs: BTreeMap<Vec<String>, Edges> =
        folders.iter().map(|f| (f.clone(), Edges::new())).collect();
    for s in &sources {
        let own_kids = if folders.contains(&s.module) {
            children(&s.module)
        } else {
            BTreeSet::new()
        };
        let mut heads: Vec<&str> = vec!["crate", "super", "self"];
        heads.extend(own_kids.iter().map(String::as_str));
        for w in written_paths(&s.code, &heads) {
            let Some(target) = resolve(&s.module, &w.segments) else {
                continue;
            };
            for folder in &folders {
                let (Some(from), Some(mut to)) =
                    (node_of(folder, &s.module), node_of(folder, &target))
                else {
                    continue;
                };
                if to == "mod.rs" {
                    continue; // the folder itself (`pub(in crate::tui)`), not an item in it
                }
                if !children(folder).contains(&to) {
                    // An item of the folder's own file, or one it re-exports.
                    to = reexports
                        .get(folder)
                        .and_then(|r| r.get(&to))
                        .cloned()
                        .unwrap_or_else(|| "mod.rs".into());
                }
                if from == to || from == "mod.rs" || to == "mod.rs" {
                    continue;
                }
                graphs.get_mut(folder).into_iter().for_each(|g| {
                    g.entry((from.clone(), to.clone()))
                        .or_insert_with(|| format!("{}:{}", s.rel, w.line));
                });
            }
        }
    }
    graphs
}

/// The absolute module path a written path names, from a file of module `module`.
fn resolve(module: &[String], segments: &[String]) -> Option<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    let mut iter = segments.iter().peekable();
    match iter.peek().map(|s| s.as_str()) {
        Some("crate") => {
            iter.next();
        }
        Some("super") => {
            out = module.to_vec();
            while iter.peek().is_some_and(|s| *s == "super") {
                iter.next();
                out.pop()?;
            }
        }
        Some("self") => {
            iter.next();
            out = module.to_vec();
        }
        Some(_) => out = module.to_vec(), // a child named bare in a folder's own file
        None => return None,
    }
    out.extend(iter.filter(|s| *s != "self").cloned());
    Some(out)
}

/// The strongly connected parts of more than one node (Tarjan), each as sorted names.
fn circles(edges: &Edges) -> Vec<Vec<String>> {
    let nodes: BTreeSet<&String> = edges.keys().flat_map(|(a, b)| [a, b]).collect();
    let nodes: Vec<&String> = nodes.into_iter().collect();
    let index_of = |n: &String| nodes.iter().position(|m| *m == n);
    let adj: Vec<Vec<usize>> = nodes
        .iter()
        .map(|n| {
            edges
                .keys()
                .filter(|(a, _)| a == *n)
                .filter_map(|(_, b)| index_of(b))
                .collect()
        })
        .collect();
    struct State {
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        found: Vec<Vec<usize>>,
    }
    fn visit(v: usize, adj: &[Vec<usize>], st: &mut State) {
        st.index[v] = Some(st.next);
        st.low[v] = st.next;
        st.next += 1;
        st.stack.push(v);
        st.on_stack[v] = true;
        for &w in &adj[v] {
            match st.index[w] {
                None => {
                    visit(w, adj, st);
                    st.low[v] = st.low[v].min(st.low[w]);
                }
                Some(i) if st.on_stack[w] => st.low[v] = st.low[v].min(i),
                Some(_) => {}
            }
        }
        if Some(st.low[v]) == st.index[v] {
            let mut part = Vec::new();
            while let Some(w) = st.stack.pop() {
                st.on_stack[w] = false;
                part.push(w);
                if w == v {
                    break;
                }
            }
            if part.len() > 1 {
                st.found.push(part);
            }
        }
    }
    let n = nodes.len();
    let mut st = State {
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        found: Vec::new(),
    };
    for v in 0..n {
        if st.index[v].is_none() {
            visit(v, &adj, &mut st);
        }
    }
    let mut out: Vec<Vec<String>> = st
        .found
        .into_iter()
        .map(|p| {
            let mut names: Vec<String> = p.into_iter().map(|i| nodes[i].clone()).collect();
            names.sort();
            names
        })
        .collect();
    out.sort();
    out
}

/// Every circle as `src/<folder>: a, b, c` (the parts of the circle) followed by its edges
/// and where each is written.
pub(super) fn found_circles() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (folder, edges) in folder_graphs() {
        for part in circles(&edges) {
            let key = format!("src/{}: {}", folder.join("/"), part.join(", "));
            let inside: Vec<String> = edges
                .iter()
                .filter(|((a, b), _)| part.contains(a) && part.contains(b))
                .map(|((a, b), at)| format!("{a} -> {b} ({at})"))
                .collect();
            out.push((key, inside.join("; ")));
        }
    }
    out
}

#[test]
fn no_folder_has_an_import_circle() {
    let found: Vec<String> = found_circles()
        .iter()
        .map(|(key, edges)| format!("{key}\n    {edges}"))
        .collect();
    assert!(
        found.is_empty(),
        "import circles inside folders:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_folder_scan_finds_a_planted_circle_and_reads_paths_as_rust_does() {
    let code = code_only(
        "use super::{a::X, b::{self, Y}};\n// super::c::Z in a comment\n\
         let s = \"super::d::W\"; let c = '{';\nfn f<'a>() { super::super::e::f(); }\n\
         pub use self::g::H;",
    );
    let paths = written_paths(&code, &["super", "self"]);
    let module: Vec<String> = ["tui", "app", "keys"].map(String::from).to_vec();
    let resolved: Vec<String> = paths
        .iter()
        .filter_map(|w| resolve(&module, &w.segments))
        .map(|p| p.join("::"))
        .collect();
    assert_eq!(
        resolved,
        [
            "tui::app::a::X",
            "tui::app::b",
            "tui::app::b::Y",
            "tui::e::f",
            "tui::app::keys::g::H"
        ]
    );
    assert!(paths.last().is_some_and(|w| w.reexport));
    let edges: Edges = [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")]
        .into_iter()
        .map(|(a, b)| ((a.to_string(), b.to_string()), String::new()))
        .collect();
    assert_eq!(circles(&edges), [["a", "b", "c"]]);
    let kept = without_test_modules(
        "fn a() {}\n#[cfg(test)]\nmod tests {\n use super::x::Y;\n}\nfn b() {}",
    );
    assert!(
        !kept.contains("super::x") && kept.contains("fn b()"),
        "{kept}"
    );
}
