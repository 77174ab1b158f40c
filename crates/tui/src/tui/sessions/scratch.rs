//! Scratch stores for replays of opened sessions: `<data dir>/ctxlab/scratch/<pid>-<n>`,
//! one per replay, removed when the view closes; folders an earlier run left behind (it
//! crashed, or was killed) are removed at the next start. `CTXLAB_DATA_DIR` overrides the
//! data dir (tests point it at a temp folder). Removes only what is under the scratch root.

use std::path::{Path, PathBuf};

/// The folder every scratch store goes under, or None when the platform has no data dir.
pub fn scratch_root() -> Option<PathBuf> {
    crate::session::discover::ctxlab_data_dir().map(|d| d.join("scratch"))
}

/// The `n`th scratch folder of this process.
pub fn scratch_dir(root: &Path, n: u64) -> PathBuf {
    root.join(format!("{}-{n}", std::process::id()))
}

/// Removes a scratch folder; only one directly under a folder named `scratch`.
pub fn remove(dir: &Path) {
    let under_scratch = dir
        .parent()
        .and_then(|p| p.file_name())
        .is_some_and(|n| n == "scratch");
    if under_scratch {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// Removes the scratch folders of processes that are gone (`process_alive`, the same check
/// on Linux and macOS).
pub fn clean_stale(root: &Path) {
    let Ok(read) = std::fs::read_dir(root) else {
        return;
    };
    let me = std::process::id();
    for entry in read.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let pid = name.split('-').next().and_then(|p| p.parse::<u32>().ok());
        let alive = match pid {
            Some(p) if p == me => true,
            Some(p) => crate::process::process_alive(p),
            None => false,
        };
        if !alive {
            remove(&entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_folders_go_and_ours_stay() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("scratch");
        let ours = scratch_dir(&root, 1);
        // No process has this id (above the kernel's pid_max).
        let stale = root.join("4294967290-3");
        for d in [&ours, &stale] {
            std::fs::create_dir_all(d.join(".transcripts")).unwrap();
        }
        clean_stale(&root);
        assert!(ours.is_dir());
        assert!(!stale.exists());
        remove(&ours);
        assert!(!ours.exists());
        // Never anything outside a scratch folder.
        let elsewhere = dir.path().join("keep");
        std::fs::create_dir_all(&elsewhere).unwrap();
        remove(&elsewhere);
        assert!(elsewhere.is_dir());
    }

    #[test]
    fn another_running_instance_keeps_its_folder_until_it_ends() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("scratch");
        let mut other = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let theirs = root.join(format!("{}-1", other.id()));
        std::fs::create_dir_all(&theirs).unwrap();
        clean_stale(&root);
        assert!(theirs.is_dir(), "a running process's scratch folder stays");
        other.kill().unwrap();
        other.wait().unwrap();
        clean_stale(&root);
        assert!(!theirs.exists(), "and goes once it has ended");
    }
}
