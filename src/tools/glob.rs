//! The `glob` tool: lists workspace files whose root-relative path matches a pattern.
//!
//! It owns a small matcher (`*` and `?` within one segment, `**` for any number of
//! segments) and the walk. The walk never follows symlinked directories (that could leave the
//! workspace or loop), never enters the directories in [`GLOB_SKIPPED_DIRS`] at any depth,
//! and only descends where the pattern could still match. It must not read file contents.

use std::fs;
use std::path::Path;

use serde_json::Value;

use tokio_util::sync::CancellationToken;

use super::{ToolError, ToolLimits, Workspace, required_str};

/// Directories never searched, at any depth: version control, build output and ctxlab's own
/// files would drown real results.
pub const GLOB_SKIPPED_DIRS: [&str; 4] = [".git", "target", ".task_outputs", ".transcripts"];

/// `glob {pattern}`: matching files (symlinks included, directories not), as root-relative
/// `/`-separated paths, sorted, one per line; past `glob_cap`, the first `glob_cap` then
/// `[N more matches not shown; narrow the pattern]`. No match gives `No files match <pattern>`.
pub(super) async fn run(
    ws: &Workspace,
    input: &Value,
    limits: &ToolLimits,
    cancel: &CancellationToken,
) -> Result<String, ToolError> {
    let raw = required_str(input, "pattern")?;
    let pattern = Pattern::parse(ws, raw)?;
    let root = ws.root().to_path_buf();
    let shown = raw.to_string();
    let cap = limits.glob_cap;
    let cancel = cancel.clone();
    tokio::task::spawn_blocking(move || {
        let mut found = Vec::new();
        walk(&root, &mut Vec::new(), &pattern, &mut found, &cancel);
        found.sort();
        if found.is_empty() {
            return format!("No files match {shown}");
        }
        let more = found.len().saturating_sub(cap);
        found.truncate(cap);
        let mut text = found.join("\n");
        if more > 0 {
            text.push_str(&format!(
                "\n[{more} more matches not shown; narrow the pattern]"
            ));
        }
        text
    })
    .await
    .map_err(|e| ToolError::Internal(format!("glob task failed: {e}")))
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    /// `**`: any number of path segments, zero included.
    AnyDepth,
    /// One segment with optional `*` and `?` wildcards.
    Wild(Vec<char>),
}

/// A parsed pattern: its `/`-separated segments, relative to the root.
#[derive(Debug, Clone)]
pub(crate) struct Pattern {
    segments: Vec<Segment>,
}

impl Pattern {
    /// Parses a pattern. An absolute pattern must point inside the root (it is made relative);
    /// a `..` segment is refused, since results are always under the root.
    fn parse(ws: &Workspace, raw: &str) -> Result<Pattern, ToolError> {
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            return Err(ToolError::InvalidInput(
                "`pattern` must not be empty".into(),
            ));
        }
        let relative = if trimmed.starts_with('/') {
            let root = ws.root().to_string_lossy();
            trimmed
                .strip_prefix(root.as_ref())
                .filter(|rest| rest.is_empty() || rest.starts_with('/'))
                .ok_or_else(|| ToolError::PathEscape(raw.to_string()))?
                .to_string()
        } else {
            trimmed.to_string()
        };
        Self::from_relative(&relative).ok_or_else(|| ToolError::PathEscape(raw.to_string()))
    }

    /// `None` when a segment is `..`.
    pub(crate) fn from_relative(pattern: &str) -> Option<Pattern> {
        let mut segments = Vec::new();
        for part in pattern.split('/') {
            match part {
                "" | "." => {}
                ".." => return None,
                "**" => {
                    // `**/**` means the same as `**`; collapsing keeps matching linear.
                    if segments.last() != Some(&Segment::AnyDepth) {
                        segments.push(Segment::AnyDepth);
                    }
                }
                wild => segments.push(Segment::Wild(wild.chars().collect())),
            }
        }
        Some(Pattern { segments })
    }

    /// Whether the path given as segments matches the whole pattern.
    pub(crate) fn matches(&self, path: &[&str]) -> bool {
        match_segments(&self.segments, path, false)
    }

    /// Whether some path below the directory given as segments could match.
    fn may_match_below(&self, dir: &[&str]) -> bool {
        match_segments(&self.segments, dir, true)
    }
}

/// Matches path segments against pattern segments. With `prefix`, the path is a directory
/// and the question is whether the pattern can still match something inside it.
fn match_segments(pattern: &[Segment], path: &[&str], prefix: bool) -> bool {
    match (pattern.split_first(), path.split_first()) {
        (None, None) => !prefix,
        (None, Some(_)) => false,
        (Some(_), None) => prefix || pattern.iter().all(|s| *s == Segment::AnyDepth),
        (Some((Segment::AnyDepth, rest)), Some((_, path_rest))) => {
            match_segments(rest, path, prefix) || match_segments(pattern, path_rest, prefix)
        }
        (Some((Segment::Wild(wild), rest)), Some((name, path_rest))) => {
            wildcard_match(wild, name) && match_segments(rest, path_rest, prefix)
        }
    }
}

/// `*` (any run of chars) and `?` (one char) against one path segment. Greedy with a single
/// backtrack point, the classic linear-time approach for patterns without classes.
fn wildcard_match(pattern: &[char], name: &str) -> bool {
    let name: Vec<char> = name.chars().collect();
    let (mut p, mut n) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, n));
                p += 1;
            }
            Some(c) if *c == '?' || *c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    // Let the last `*` swallow one more char and retry from there.
                    p = sp + 1;
                    n = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|c| *c == '*')
}

/// Depth-first walk collecting matches. Unreadable directories are skipped silently: a
/// listing with what could be read is more useful than an error.
fn walk(
    dir: &Path,
    rel: &mut Vec<String>,
    pattern: &Pattern,
    found: &mut Vec<String>,
    cancel: &CancellationToken,
) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        // The caller already answered "cancelled"; stop the walk too.
        if cancel.is_cancelled() {
            return;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        // `file_type` does not follow symlinks, so a symlinked directory is a leaf here.
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        rel.push(name);
        let segments: Vec<&str> = rel.iter().map(String::as_str).collect();
        if kind.is_dir() {
            let skipped = rel
                .last()
                .is_some_and(|n| GLOB_SKIPPED_DIRS.contains(&n.as_str()));
            if !skipped && pattern.may_match_below(&segments) {
                walk(&entry.path(), rel, pattern, found, cancel);
            }
        } else if pattern.matches(&segments) {
            found.push(segments.join("/"));
        }
        rel.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pattern: &str, path: &str) -> bool {
        let p = Pattern::from_relative(pattern).unwrap();
        let segs: Vec<&str> = path.split('/').collect();
        p.matches(&segs)
    }

    #[test]
    fn wildcards() {
        assert!(wildcard_match(&['*'], "anything"));
        assert!(wildcard_match(&['*', '.', 'r', 's'], "main.rs"));
        assert!(!wildcard_match(&['*', '.', 'r', 's'], "main.rsx"));
        assert!(wildcard_match(&['?', '.', 'c'], "a.c"));
        assert!(!wildcard_match(&['?', '.', 'c'], "ab.c"));
        assert!(wildcard_match(&['a', '*', 'b', '*', 'c'], "aXbYbZc"));
        assert!(wildcard_match(&[], ""));
        assert!(!wildcard_match(&[], "x"));
        assert!(wildcard_match(&['é', '?'], "éü"));
    }

    #[test]
    fn segments_and_double_star() {
        assert!(m("src/**/*.rs", "src/main.rs"));
        assert!(m("src/**/*.rs", "src/a/b/c.rs"));
        assert!(!m("src/**/*.rs", "tests/a.rs"));
        assert!(m("*.log", "x.log"));
        assert!(!m("*.log", "logs/x.log"));
        assert!(m("**/*.log", "logs/x.log"));
        assert!(m("**/*.log", "x.log"));
        assert!(m("src/**", "src/a/b"));
        assert!(!m("src/*", "src/a/b"));
        assert!(m("./src/*.rs", "src/a.rs"));
        assert!(m("**/**/x", "a/x"));
        assert!(!m("a?c", "a/c"));
    }

    #[test]
    fn prefix_pruning() {
        let p = Pattern::from_relative("src/**/*.rs").unwrap();
        assert!(p.may_match_below(&["src"]));
        assert!(p.may_match_below(&["src", "deep"]));
        assert!(!p.may_match_below(&["docs"]));
        let p = Pattern::from_relative("*.log").unwrap();
        assert!(!p.may_match_below(&["logs"]));
    }

    #[test]
    fn parent_segments_are_refused() {
        assert!(Pattern::from_relative("../*").is_none());
        assert!(Pattern::from_relative("a/../../b").is_none());
    }
}
