//! Workspace confinement: the one place that turns a path given by the model into a path the
//! file tools may touch.
//!
//! It owns the rule "every file tool stays under the canonical root": relative paths are
//! joined to the root, absolute ones are accepted only inside it, `..` is resolved lexically,
//! and the deepest part of the path that already exists is canonicalized so that a symlink
//! (to a file or to a directory, even one whose target does not exist yet) cannot lead out.
//! It must not open, create or modify anything; it only answers "where" or refuses.
//! It does not confine `bash`, which can reach anything the user can.

use std::io;
use std::path::{Component, Path, PathBuf};

use super::ToolError;

/// The directory the tools work in. The root is canonical (absolute, no symlinks), so every
/// containment check is a plain prefix check on components.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    root: PathBuf,
}

impl Workspace {
    /// Opens `root`, which must be an existing directory.
    pub fn new(root: impl AsRef<Path>) -> Result<Workspace, ToolError> {
        let given = root.as_ref();
        let root = given
            .canonicalize()
            .map_err(|source| ToolError::WorkspaceRoot {
                path: given.to_path_buf(),
                source,
            })?;
        if !root.is_dir() {
            return Err(ToolError::WorkspaceRoot {
                path: given.to_path_buf(),
                source: io::Error::new(io::ErrorKind::NotADirectory, "not a directory"),
            });
        }
        Ok(Workspace { root })
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves a path given by the model to an absolute path under the root, or refuses with
    /// [`ToolError::PathEscape`]. The returned path has no `.` or `..` components and every
    /// part of it that exists is canonical, so operating on it cannot follow a symlink out.
    /// A path that does not exist yet is fine as long as its deepest existing ancestor is
    /// inside (that is what lets `write_file` create new files).
    pub fn resolve(&self, rel: &str) -> Result<PathBuf, ToolError> {
        if rel.trim().is_empty() {
            return Err(ToolError::InvalidInput("`path` must not be empty".into()));
        }
        if rel.contains('\0') {
            return Err(ToolError::InvalidInput("`path` contains a NUL byte".into()));
        }
        let escape = || ToolError::PathEscape(rel.to_string());
        let joined = self.root.join(rel);
        let normal = normalize_lexically(&joined);
        // `..` is resolved lexically, so the result names the place the tools will actually
        // operate on; the canonicalization of its existing part then decides containment
        // (it also accepts non-canonical absolute spellings of the root).
        let (existing, missing) = split_existing(&normal);
        let canonical = existing.canonicalize().map_err(|_| escape())?;
        if !canonical.starts_with(&self.root) {
            return Err(escape());
        }
        let mut resolved = canonical;
        for part in missing {
            resolved.push(part);
        }
        Ok(resolved)
    }

    /// `path` as the model should see it: relative to the root, `/`-separated.
    pub fn display(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
            Ok(rel) => rel.to_string_lossy().into_owned(),
            Err(_) => path.to_string_lossy().into_owned(),
        }
    }
}

/// Removes `.` and resolves `..` against the preceding component, without looking at the
/// file system. `..` at the file-system root stays at the root, as the kernel does.
fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(p) => out.push(p.as_os_str()),
            Component::RootDir => out.push(Component::RootDir.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(part) => out.push(part),
        }
    }
    out
}

/// Splits an absolute, normalized path into its deepest ancestor that exists (as anything,
/// a dangling symlink included) and the names below it that do not. A dangling symlink counts
/// as existing so that canonicalizing it fails and the path is refused: writing through it
/// would create its target, wherever that is.
fn split_existing(path: &Path) -> (PathBuf, Vec<std::ffi::OsString>) {
    let mut existing = path.to_path_buf();
    let mut missing = Vec::new();
    while existing.symlink_metadata().is_err() {
        match existing.file_name() {
            Some(name) => {
                missing.push(name.to_os_string());
                existing.pop();
            }
            // Reached the file-system root; it always exists, so this is not expected.
            None => break,
        }
    }
    missing.reverse();
    (existing, missing)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_handles_dots() {
        assert_eq!(
            normalize_lexically(Path::new("/a/b/../c/./d")),
            PathBuf::from("/a/c/d")
        );
        assert_eq!(
            normalize_lexically(Path::new("/a/../../..")),
            PathBuf::from("/")
        );
    }

    #[test]
    fn resolve_inside_and_outside() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        let root = ws.root().to_path_buf();
        assert_eq!(ws.resolve("a/b.txt").unwrap(), root.join("a/b.txt"));
        assert_eq!(ws.resolve("a/../b.txt").unwrap(), root.join("b.txt"));
        assert_eq!(ws.resolve(".").unwrap(), root);
        assert!(matches!(
            ws.resolve("../x"),
            Err(ToolError::PathEscape(p)) if p == "../x"
        ));
        assert!(ws.resolve("/etc/passwd").is_err());
        let abs = root.join("c.txt");
        assert_eq!(ws.resolve(abs.to_str().unwrap()).unwrap(), abs);
        assert!(ws.resolve("").is_err());
    }

    #[test]
    fn display_is_relative() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        assert_eq!(ws.display(&ws.root().join("a/b")), "a/b");
        assert_eq!(ws.display(ws.root()), ".");
    }

    #[test]
    fn new_refuses_a_file_or_missing_dir() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        assert!(Workspace::new(&file).is_err());
        assert!(Workspace::new(dir.path().join("missing")).is_err());
    }
}
