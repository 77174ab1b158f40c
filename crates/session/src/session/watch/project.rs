//! Which session to follow, and which files belong to the same project: the newest session
//! of a working folder (Claude Code's `projects/<encoded folder>/`, Codex rollouts whose
//! `cwd` is that folder), the newest session under a folder, and, while following, a newer
//! session file of the same project (Claude Code after `/clear` or a resume; a new Codex
//! rollout; a new capture of `ctxlab proxy` beside the followed one). Built on `discover`; only reads, and peeks at no more files than it needs.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::session::discover::{self, Root, SessionFile, entry_for, is_subagent_file};
use crate::session::model::Tool;

/// How many Codex rollouts, newest first, are peeked at for their `cwd`.
const MAX_CODEX_PEEKS: usize = 400;

/// The files that belong to the followed session's project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProjectScope {
    /// Claude Code: the project's folder.
    Claude { folder: PathBuf },
    /// Codex: rollouts under `root` whose `cwd` is `cwd`.
    Codex { root: PathBuf, cwd: String },
    /// `ctxlab proxy`: the captures' folder (a proxy started again writes a new capture).
    Captures { folder: PathBuf },
}

/// A session to follow and why that one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chosen {
    pub path: PathBuf,
    pub why: String,
    pub scope: Option<ProjectScope>,
}

/// Claude Code's folder name for a working folder: every character but a letter or a digit
/// written as `-` (`/home/me/my.app` -> `-home-me-my-app`).
pub fn claude_folder_name(cwd: &Path) -> String {
    cwd.to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// The `*.jsonl` files right in `dir` (no subagents).
fn jsonl_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = read
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl") && !is_subagent_file(p))
        .collect();
    out.sort();
    out
}

/// Every `*.jsonl` under `dir`, at most `depth` folders down.
fn jsonl_under(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    out.extend(jsonl_in(dir));
    if depth == 0 {
        return;
    }
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    for e in read.flatten() {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            jsonl_under(&e.path(), depth - 1, out);
        }
    }
}

fn newest(files: Vec<PathBuf>) -> Vec<(PathBuf, SystemTime)> {
    let mut with: Vec<(PathBuf, SystemTime)> = files
        .into_iter()
        .filter_map(|p| modified(&p).map(|m| (p, m)))
        .collect();
    with.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    with
}

/// The Codex rollout's working folder, from its first lines.
fn codex_cwd(path: &Path) -> Option<String> {
    entry_for(path)
        .filter(|e| e.tool == Tool::Codex)
        .and_then(|e| e.project)
}

/// Why no session could be chosen to watch (the binary reports it as a usage error).
#[derive(Debug, thiserror::Error)]
pub enum ChooseError {
    /// No session of the working folder under any root; `looked` lists the folders.
    #[error("no session of {} found; looked in {looked}", cwd.display())]
    NoneForFolder { cwd: PathBuf, looked: String },
    /// The path named cannot be read.
    #[error("{}: {source}", path.display())]
    Unreadable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A folder named holds no session file.
    #[error("no Claude Code session, Codex rollout or proxy capture under {}", .0.display())]
    NoneUnder(PathBuf),
}

/// The newest session of the working folder `cwd` under `roots` (the tools' default
/// folders).
pub fn newest_for_cwd(cwd: &Path, roots: &[Root]) -> Result<Chosen, ChooseError> {
    let mut found: Vec<(PathBuf, SystemTime, String, ProjectScope)> = Vec::new();
    let mut looked = Vec::new();
    for root in roots {
        match root.tool {
            Tool::ClaudeCode => {
                let folder = root.path.join(claude_folder_name(cwd));
                looked.push(format!("{} (Claude Code)", folder.display()));
                let files = newest(jsonl_in(&folder));
                let count = files.len();
                if let Some((path, time)) = files.into_iter().next() {
                    let why = format!(
                        "the newest of {count} Claude Code session{} in {}",
                        if count == 1 { "" } else { "s" },
                        folder.display()
                    );
                    found.push((path, time, why, ProjectScope::Claude { folder }));
                }
            }
            Tool::Codex => {
                looked.push(format!("{} (Codex)", root.path.display()));
                let mut all = Vec::new();
                jsonl_under(&root.path, 4, &mut all);
                let want = cwd.to_string_lossy().into_owned();
                let hit = newest(all)
                    .into_iter()
                    .take(MAX_CODEX_PEEKS)
                    .find(|(p, _)| codex_cwd(p).as_deref() == Some(want.as_str()));
                if let Some((path, time)) = hit {
                    let why = format!(
                        "the newest Codex rollout under {} whose cwd is {want}",
                        root.path.display()
                    );
                    found.push((
                        path,
                        time,
                        why,
                        ProjectScope::Codex {
                            root: root.path.clone(),
                            cwd: want.clone(),
                        },
                    ));
                }
            }
            Tool::Ctxlab | Tool::Proxy => {}
        }
    }
    found.sort_by_key(|f| std::cmp::Reverse(f.1));
    let others = found.len().saturating_sub(1);
    match found.into_iter().next() {
        Some((path, _, mut why, scope)) => {
            if others > 0 {
                why.push_str(" (the other tool's newest session of this folder is older)");
            }
            Ok(Chosen {
                path,
                why,
                scope: Some(scope),
            })
        }
        None => Err(ChooseError::NoneForFolder {
            cwd: cwd.to_path_buf(),
            looked: if looked.is_empty() {
                "no folder (neither HOME, CLAUDE_CONFIG_DIR nor CODEX_HOME is set)".to_string()
            } else {
                looked.join(", ")
            },
        }),
    }
}

/// The scope of a session file: its Claude Code project folder, or its Codex rollouts
/// (under the `sessions` folder above it, else its own folder) with its `cwd`.
pub fn scope_of(file: &SessionFile) -> Option<ProjectScope> {
    match file.tool {
        Tool::ClaudeCode => Some(ProjectScope::Claude {
            folder: file.path.parent()?.to_path_buf(),
        }),
        Tool::Codex => {
            let cwd = file.project.clone()?;
            let root = file
                .path
                .ancestors()
                .find(|a| a.file_name().is_some_and(|n| n == "sessions"))
                .or_else(|| file.path.parent())?
                .to_path_buf();
            Some(ProjectScope::Codex { root, cwd })
        }
        Tool::Proxy => Some(ProjectScope::Captures {
            folder: file.path.parent()?.to_path_buf(),
        }),
        Tool::Ctxlab => None,
    }
}

/// A file named on the command line, or the newest session under a folder.
pub fn choose_path(path: &Path) -> Result<Chosen, ChooseError> {
    let meta = std::fs::metadata(path).map_err(|source| ChooseError::Unreadable {
        path: path.to_path_buf(),
        source,
    })?;
    if meta.is_dir() {
        let (files, _) = discover::discover_reporting(&[path.to_path_buf()]);
        let count = files.len();
        let newest = files
            .into_iter()
            .filter(|f| f.tool != Tool::Ctxlab)
            .max_by_key(|f| f.modified)
            .ok_or_else(|| ChooseError::NoneUnder(path.to_path_buf()))?;
        return Ok(Chosen {
            why: format!(
                "the most recently written of {count} session file{} under {}",
                if count == 1 { "" } else { "s" },
                path.display()
            ),
            scope: scope_of(&newest),
            path: newest.path,
        });
    }
    let scope = entry_for(path).and_then(|e| scope_of(&e));
    Ok(Chosen {
        path: path.to_path_buf(),
        why: "the file named".to_string(),
        scope,
    })
}

/// Watches a scope for a new session file of the project.
#[derive(Debug)]
pub struct NewerSession {
    scope: ProjectScope,
    /// Files there when following began, or judged not of this project.
    known: HashSet<PathBuf>,
}

impl NewerSession {
    pub fn new(scope: ProjectScope, following: &Path) -> NewerSession {
        let mut s = NewerSession {
            scope,
            known: HashSet::new(),
        };
        s.known = s.candidates().into_iter().collect();
        s.known.insert(following.to_path_buf());
        s
    }

    pub fn scope(&self) -> &ProjectScope {
        &self.scope
    }

    /// The folders worth watching for new files.
    pub fn folders(&self) -> Vec<PathBuf> {
        match &self.scope {
            ProjectScope::Claude { folder } => vec![folder.clone()],
            ProjectScope::Codex { root, .. } => newest_day_folder(root).into_iter().collect(),
            ProjectScope::Captures { folder } => vec![folder.clone()],
        }
    }

    fn candidates(&self) -> Vec<PathBuf> {
        match &self.scope {
            ProjectScope::Claude { folder } | ProjectScope::Captures { folder } => jsonl_in(folder),
            ProjectScope::Codex { .. } => self.folders().iter().flat_map(|f| jsonl_in(f)).collect(),
        }
    }

    /// A session file of the project that appeared since following began (the newest, if
    /// several), with why it belongs; files that turn out not to belong are remembered.
    pub fn find(&mut self, following: &Path) -> Option<(PathBuf, String)> {
        let fresh: Vec<PathBuf> = self
            .candidates()
            .into_iter()
            .filter(|p| !self.known.contains(p) && p != following)
            .collect();
        let mut hits = Vec::new();
        for p in fresh {
            // An empty new file says nothing yet: asked again on the next look.
            let Some(entry) = entry_for(&p) else {
                continue;
            };
            let belongs = match &self.scope {
                ProjectScope::Claude { .. } => entry.tool == Tool::ClaudeCode,
                ProjectScope::Codex { cwd, .. } => {
                    entry.tool == Tool::Codex && entry.project.as_deref() == Some(cwd.as_str())
                }
                ProjectScope::Captures { .. } => entry.tool == Tool::Proxy,
            };
            self.known.insert(p.clone());
            if belongs {
                hits.push(p);
            }
        }
        let (path, _) = newest(hits).into_iter().next()?;
        let why = match &self.scope {
            ProjectScope::Claude { folder } => format!(
                "a new Claude Code session in the project folder {} (after /clear or a resume)",
                folder.display()
            ),
            ProjectScope::Codex { cwd, .. } => {
                format!("a new Codex rollout whose cwd is {cwd}")
            }
            ProjectScope::Captures { folder } => format!(
                "a new capture in {} (the proxy was started again)",
                folder.display()
            ),
        };
        Some((path, why))
    }
}

/// The newest `YYYY/MM/DD` folder under a Codex sessions root (or the root itself).
fn newest_day_folder(root: &Path) -> Option<PathBuf> {
    let mut dir = root.to_path_buf();
    for _ in 0..3 {
        let Ok(read) = std::fs::read_dir(&dir) else {
            break;
        };
        let next = read
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.path())
            .max();
        match next {
            Some(n) => dir = n,
            None => break,
        }
    }
    Some(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_names_a_project_folder_after_its_path() {
        assert_eq!(
            claude_folder_name(Path::new("/home/me/my.app_x")),
            "-home-me-my-app-x"
        );
    }

    /// `ctxlab watch` prints these as usage errors: the typed errors keep their words.
    #[test]
    fn why_no_session_is_chosen_reads_as_before() {
        let dir = tempfile::tempdir().unwrap();
        let none = newest_for_cwd(Path::new("/nowhere"), &[]).unwrap_err();
        assert_eq!(
            none.to_string(),
            "no session of /nowhere found; looked in no folder (neither HOME, \
             CLAUDE_CONFIG_DIR nor CODEX_HOME is set)"
        );
        let empty = choose_path(dir.path()).unwrap_err();
        assert_eq!(
            empty.to_string(),
            format!(
                "no Claude Code session, Codex rollout or proxy capture under {}",
                dir.path().display()
            )
        );
        let gone = dir.path().join("gone.jsonl");
        let err = choose_path(&gone).unwrap_err();
        assert!(matches!(err, ChooseError::Unreadable { .. }), "{err:?}");
        assert!(
            err.to_string()
                .starts_with(&format!("{}: ", gone.display()))
        );
    }
}
