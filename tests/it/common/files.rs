//! Workspaces for the pipeline and store tests: temp folders on a fast file system, a
//! `Store` in one, and every file under a folder read back for comparison.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ctxlab::store::Store;

/// A temporary workspace, on tmpfs when there is one (fsync is then nearly free).
pub fn workspace() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir()
        && let Ok(dir) = tempfile::Builder::new()
            .prefix("ctxlab-test-")
            .tempdir_in(shm)
    {
        return dir;
    }
    tempfile::tempdir().unwrap()
}

pub fn store_in(dir: &tempfile::TempDir) -> Store {
    Store::new(dir.path())
}

/// Every regular file under `root`, relative path -> bytes.
pub fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let ft = entry.file_type().unwrap();
            let path = entry.path();
            if ft.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(root).unwrap().to_path_buf();
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

/// A session file (or folder) in `tests/fixtures/sessions`.
pub fn session_fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/sessions")
        .join(name)
}

/// Copies the tree at `from` to `to` (created).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}
