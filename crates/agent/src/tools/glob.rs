//! The `glob` tool: lists workspace files whose root-relative path matches a pattern.
//!
//! It owns a small matcher (`*` and `?` within one segment, `**` for any number of
//! segments) and the walk. The matcher never backtracks over segments: it keeps the set of
//! pattern positions a path can have reached (an NFA run), so one path costs at most
//! segments x pattern length, whatever the `**`s (docs/architecture.md, "Bounds on what
//! servers and tools can cost"). The walk carries that set down, never follows symlinked
//! directories (that could leave the workspace or loop), never enters the directories in
//! [`GLOB_SKIPPED_DIRS`] at any depth, only descends where the pattern could still match,
//! stops after `ToolLimits::glob_max_entries` entries, and stops at the next entry when
//! cancelled. It must not read file contents.

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
    let max_entries = limits.glob_max_entries;
    let cancel = cancel.clone();
    let mut walk = Walk {
        pattern,
        found: Vec::new(),
        entries_left: limits.glob_max_entries,
        cancel,
    };
    tokio::task::spawn_blocking(move || {
        let start = walk.pattern.start();
        let complete = walk.dir(&root, &mut Vec::new(), &start);
        if walk.cancel.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        let mut found = walk.found;
        found.sort();
        let mut text = if found.is_empty() {
            format!("No files match {shown}")
        } else {
            let more = found.len().saturating_sub(cap);
            found.truncate(cap);
            let mut text = found.join("\n");
            if more > 0 {
                text.push_str(&format!(
                    "\n[{more} more matches not shown; narrow the pattern]"
                ));
            }
            text
        };
        if !complete {
            text.push_str(&format!(
                "\n[search stopped after {} entries; narrow the pattern]",
                max_entries
            ));
        }
        Ok(text)
    })
    .await
    .map_err(|e| ToolError::Internal(format!("glob task failed: {e}")))?
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

    /// The positions reached before any segment: the start, and past every leading `**`.
    fn start(&self) -> States {
        let mut at = vec![false; self.segments.len() + 1];
        at[0] = true;
        self.close(&mut at);
        States(at)
    }

    /// A `**` may match no segment: whoever stands before it stands after it too. Edges only
    /// go forward, so one pass in order reaches everything.
    fn close(&self, at: &mut [bool]) {
        for (i, segment) in self.segments.iter().enumerate() {
            if at[i] && *segment == Segment::AnyDepth {
                at[i + 1] = true;
            }
        }
    }

    /// The positions reached after one more path segment `name`.
    fn step(&self, from: &States, name: &str) -> States {
        let mut at = vec![false; self.segments.len() + 1];
        for (i, segment) in self.segments.iter().enumerate() {
            if !from.0[i] {
                continue;
            }
            match segment {
                Segment::AnyDepth => at[i] = true,
                Segment::Wild(wild) => {
                    if wildcard_match(wild, name) {
                        at[i + 1] = true;
                    }
                }
            }
        }
        self.close(&mut at);
        States(at)
    }

    #[cfg(test)]
    fn run<'a>(&self, path: impl IntoIterator<Item = &'a str>) -> States {
        path.into_iter()
            .fold(self.start(), |at, name| self.step(&at, name))
    }

    /// Whether the path given as segments matches the whole pattern.
    #[cfg(test)]
    pub(crate) fn matches(&self, path: &[&str]) -> bool {
        self.run(path.iter().copied()).accepts()
    }

    /// Whether some path below the directory given as segments could match.
    #[cfg(test)]
    fn may_match_below(&self, dir: &[&str]) -> bool {
        self.run(dir.iter().copied()).alive_below()
    }
}

/// Where in the pattern a path can stand after its segments so far: `0[i]` is true when the
/// first `i` pattern segments can have matched them all.
#[derive(Debug, Clone)]
struct States(Vec<bool>);

impl States {
    /// The whole pattern matched.
    fn accepts(&self) -> bool {
        self.0.last().copied().unwrap_or(false)
    }

    /// Some pattern segment is still to match, so a deeper path could match.
    fn alive_below(&self) -> bool {
        self.0[..self.0.len() - 1].iter().any(|b| *b)
    }
}

/// `*` (any run of chars) and `?` (one char) against one path segment. Greedy with a single
/// backtrack point, the classic approach for patterns without classes: at most pattern x
/// name steps for one segment.
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

/// One search: the pattern, what it found, how many more entries it may look at.
struct Walk {
    pattern: Pattern,
    found: Vec<String>,
    entries_left: usize,
    cancel: CancellationToken,
}

impl Walk {
    /// Depth-first walk of `dir` (at `rel` under the root, where the pattern stands at
    /// `at`), collecting matches. False when the entry limit or a cancel stopped it.
    /// Unreadable directories are skipped silently: a listing with what could be read is
    /// more useful than an error.
    fn dir(&mut self, dir: &Path, rel: &mut Vec<String>, at: &States) -> bool {
        let Ok(entries) = fs::read_dir(dir) else {
            return true;
        };
        for entry in entries.flatten() {
            // The caller already answered "cancelled"; stop the walk too.
            if self.cancel.is_cancelled() || self.entries_left == 0 {
                return false;
            }
            self.entries_left -= 1;
            let name = entry.file_name().to_string_lossy().into_owned();
            // `file_type` does not follow symlinks, so a symlinked directory is a leaf here.
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let next = self.pattern.step(at, &name);
            if kind.is_dir() {
                let skipped = GLOB_SKIPPED_DIRS.contains(&name.as_str());
                if !skipped && next.alive_below() {
                    rel.push(name);
                    let complete = self.dir(&entry.path(), rel, &next);
                    rel.pop();
                    if !complete {
                        return false;
                    }
                }
            } else if next.accepts() {
                let mut path = rel.join("/");
                if !path.is_empty() {
                    path.push('/');
                }
                path.push_str(&name);
                self.found.push(path);
            }
        }
        true
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

    /// Sixteen `**/a` against forty `a`s: a backtracking matcher tries every way to share
    /// the `a`s among the `**`s and does not finish; the position sets answer at once.
    #[test]
    fn many_double_stars_match_without_backtracking() {
        let pattern = format!("{}/**/b", vec!["**/a"; 16].join("/"));
        let p = Pattern::from_relative(&pattern).unwrap();
        let mut path = vec!["a"; 40];
        assert!(p.may_match_below(&path));
        path.push("c");
        assert!(!p.matches(&path));
        path.pop();
        path.push("b");
        assert!(p.matches(&path));
        assert!(!p.matches(&["a"; 15].iter().copied().chain(["b"]).collect::<Vec<_>>()));
        assert!(p.matches(&["a"; 16].iter().copied().chain(["b"]).collect::<Vec<_>>()));
    }

    #[test]
    fn parent_segments_are_refused() {
        assert!(Pattern::from_relative("../*").is_none());
        assert!(Pattern::from_relative("a/../../b").is_none());
    }
}
