//! The one writer of exported files (`ctxlab export --out` and the workbench's `/export`):
//! never the file it was made from (same device and inode, through any link), never a
//! FIFO, device or folder, never through a symlink the user did not name, and atomic (a
//! temporary file in the target's folder, renamed over it), so a failed or interrupted
//! write leaves the old file whole. The README promises ctxlab never writes a file it reads.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::store::StoreError;

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("the replay failed: {0}")]
    Replay(#[from] StoreError),
    #[error("cannot write {path}: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: {why}; nothing was written")]
    Refused { path: String, why: String },
}

/// How the target was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetChoice {
    /// Named by the user: a file there is replaced, a symlink there is followed (it was
    /// named on purpose) unless it leads to an input.
    Named,
    /// Picked by ctxlab (a default name): only a name that is free is used.
    Fresh,
}

fn refused(path: &Path, why: impl Into<String>) -> ExportError {
    ExportError::Refused {
        path: path.display().to_string(),
        why: why.into(),
    }
}

fn write_error(path: &Path, source: std::io::Error) -> ExportError {
    ExportError::Write {
        path: path.display().to_string(),
        source,
    }
}

fn special_kind(t: std::fs::FileType) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    if t.is_fifo() {
        Some("a FIFO")
    } else if t.is_char_device() || t.is_block_device() {
        Some("a device")
    } else if t.is_socket() {
        Some("a socket")
    } else if t.is_dir() {
        Some("a folder")
    } else {
        None
    }
}

/// Where the bytes go: `out`, or the file a named symlink at `out` leads to.
fn resolve(out: &Path, how: TargetChoice, inputs: &[&Path]) -> Result<PathBuf, ExportError> {
    let inputs: Vec<(u64, u64)> = inputs
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| (m.dev(), m.ino()))
        .collect();
    let link = match std::fs::symlink_metadata(out) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out.to_path_buf()),
        Err(e) => return Err(write_error(out, e)),
        Ok(m) => m,
    };
    if how == TargetChoice::Fresh {
        return Err(refused(out, "the name is taken"));
    }
    // Through the link, if it is one: what a write would reach.
    let target = match std::fs::metadata(out) {
        Ok(m) => m,
        // A dangling link: following it would create a file where it points.
        Err(_) if link.file_type().is_symlink() => {
            return Err(refused(out, "it is a symbolic link that leads nowhere"));
        }
        Err(e) => return Err(write_error(out, e)),
    };
    if let Some(kind) = special_kind(target.file_type()) {
        return Err(refused(
            out,
            format!("it is {kind}; only a regular file is written"),
        ));
    }
    if inputs.contains(&(target.dev(), target.ino())) {
        return Err(refused(out, "it is the file the export reads"));
    }
    if link.file_type().is_symlink() {
        return std::fs::canonicalize(out).map_err(|e| write_error(out, e));
    }
    Ok(out.to_path_buf())
}

/// Writes `bytes` to `out` (see the module's rules); returns the path written.
pub fn write_export(
    out: &Path,
    bytes: &[u8],
    inputs: &[&Path],
    how: TargetChoice,
) -> Result<PathBuf, ExportError> {
    let target = resolve(out, how, inputs)?;
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let base = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = dir.join(crate::safe_fs::temp_name(&base));
    let written = File::options()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(&temp)
        .and_then(|mut f| {
            f.write_all(bytes)?;
            f.sync_all()
        })
        .and_then(|()| match how {
            TargetChoice::Named => std::fs::rename(&temp, &target),
            // No clobbering a name taken meanwhile: a hard link fails if it exists.
            TargetChoice::Fresh => std::fs::hard_link(&temp, &target),
        });
    let cleanup = match (&written, how) {
        (Err(_), _) | (Ok(()), TargetChoice::Fresh) => std::fs::remove_file(&temp),
        (Ok(()), TargetChoice::Named) => Ok(()),
    };
    drop(cleanup);
    match written {
        Ok(()) => Ok(target),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            Err(refused(out, "the name is taken"))
        }
        Err(e) => Err(write_error(out, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_input_a_link_to_it_and_special_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("s.jsonl");
        std::fs::write(&input, "{}\n").unwrap();
        let e = write_export(&input, b"<html>", &[&input], TargetChoice::Named).unwrap_err();
        assert!(e.to_string().contains("the file the export reads"), "{e}");
        let link = dir.path().join("link.html");
        std::os::unix::fs::symlink(&input, &link).unwrap();
        assert!(write_export(&link, b"<html>", &[&input], TargetChoice::Named).is_err());
        let hard = dir.path().join("hard.html");
        std::fs::hard_link(&input, &hard).unwrap();
        assert!(write_export(&hard, b"<html>", &[&input], TargetChoice::Named).is_err());
        assert_eq!(std::fs::read(&input).unwrap(), b"{}\n");
        let e = write_export(Path::new("/dev/null"), b"x", &[], TargetChoice::Named).unwrap_err();
        assert!(e.to_string().contains("a device"), "{e}");
        let e = write_export(dir.path(), b"x", &[], TargetChoice::Named).unwrap_err();
        assert!(e.to_string().contains("a folder"), "{e}");
    }

    #[test]
    fn a_named_file_is_replaced_whole_and_a_fresh_name_never_clobbers() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("t.html");
        std::fs::write(&out, "old").unwrap();
        write_export(&out, b"new", &[], TargetChoice::Named).unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"new");
        assert!(write_export(&out, b"x", &[], TargetChoice::Fresh).is_err());
        let fresh = dir.path().join("f.html");
        write_export(&fresh, b"page", &[], TargetChoice::Fresh).unwrap();
        assert_eq!(std::fs::read(&fresh).unwrap(), b"page");
        // No temp file is left behind.
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
        assert_eq!(names.len(), 2, "{names:?}");
        // A symlink the user names to another file is written through.
        let real = dir.path().join("real.html");
        std::fs::write(&real, "old").unwrap();
        let link = dir.path().join("named.html");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_export(&link, b"via", &[], TargetChoice::Named).unwrap();
        assert_eq!(std::fs::read(&real).unwrap(), b"via");
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }
}
