//! File-system primitives for the files ctxlab itself writes and reads back: a directory
//! handle that is opened once and used for every name inside it (openat-style, so a folder
//! swapped for a symlink after the check cannot redirect a write), children opened without
//! following symlinks, reads that only ever open regular files (a FIFO or a device never
//! blocks a read), atomic no-clobber writes through recognisable temp names, and removal of
//! the temp files a killed process left behind (docs/architecture.md, "Files ctxlab writes").
//!
//! It knows nothing of messages, stores or tools: it deals in names, bytes and handles. It
//! never follows a symlink below the directory it was opened at, and never removes anything
//! but a regular file whose name says it is a temp file of a process that is gone.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use crate::process::process_alive;

/// The part of every temp file name that marks it as ctxlab's: `.ctxlab-tmp-<pid>-<n>`.
pub const TEMP_MARK: &str = ".ctxlab-tmp-";

/// How old a temp file of an earlier version (`.tmp-XXXXXX`, no pid in the name) must be
/// before it is removed: no write takes that long, so nobody is still writing it.
pub const LEGACY_TEMP_AGE: std::time::Duration = std::time::Duration::from_secs(600);

/// Temp names must not collide between concurrent writes of this process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Why a directory on the way to a file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum DirError {
    #[error(
        "{path} is a symbolic link{}; ctxlab only writes inside the workspace, so it does not follow it (remove the link, or use another workspace)",
        target.as_ref().map(|t| format!(" to {}", t.display())).unwrap_or_default()
    )]
    Symlink {
        path: PathBuf,
        target: Option<PathBuf>,
    },
    #[error("{path} is not a folder")]
    NotADirectory { path: PathBuf },
    #[error("cannot open {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
}

/// What is at a name, without following a symlink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Dir,
    Symlink,
    /// A FIFO, a socket or a device.
    Special,
}

/// An open directory; every name is resolved relative to it.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    path: PathBuf,
}

/// `name` if it names one entry of a folder: not empty, no `/`, not `.` or `..`, no NUL.
fn plain_name(name: &str) -> io::Result<&OsStr> {
    let bytes = name.as_bytes();
    if bytes.is_empty() || bytes.contains(&b'/') || bytes == b"." || bytes == b".." {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a plain file name",
        ));
    }
    if bytes.contains(&0) {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "NUL in a name"));
    }
    Ok(OsStr::new(name))
}

/// The kind a file type names.
fn kind_of(file_type: FileType) -> EntryKind {
    match file_type {
        FileType::RegularFile => EntryKind::File,
        FileType::Directory => EntryKind::Dir,
        FileType::Symlink => EntryKind::Symlink,
        _ => EntryKind::Special,
    }
}

/// What the open handle `fd` is.
fn kind_of_fd(fd: &OwnedFd) -> io::Result<EntryKind> {
    let st = rustix::fs::fstat(fd)?;
    Ok(kind_of(FileType::from_raw_mode(st.st_mode)))
}

impl Dir {
    /// Opens the directory at `path`, following symlinks: the root is the user's choice.
    pub fn open(path: &Path) -> Result<Dir, DirError> {
        let io_err = |source| DirError::Io {
            path: path.to_path_buf(),
            source,
        };
        let opened = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        );
        match opened {
            Ok(fd) => Ok(Dir {
                fd,
                path: path.to_path_buf(),
            }),
            Err(Errno::NOTDIR) => Err(DirError::NotADirectory {
                path: path.to_path_buf(),
            }),
            Err(e) => Err(io_err(e.into())),
        }
    }

    /// The path this directory was reached by (for messages).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What is at `name` (None: nothing), without following a symlink.
    pub fn entry_kind(&self, name: &str) -> io::Result<Option<EntryKind>> {
        let name = plain_name(name)?;
        match rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some(kind_of(FileType::from_raw_mode(st.st_mode)))),
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The sub-directory `name`, never through a symlink. With `create`, a missing one is
    /// made; without, a missing one is `Ok(None)`.
    pub fn child(&self, name: &str, create: bool) -> Result<Option<Dir>, DirError> {
        let path = self.path.join(name);
        let io_err = |source| DirError::Io {
            path: path.clone(),
            source,
        };
        let c = plain_name(name).map_err(io_err)?;
        for _ in 0..2 {
            let opened = rustix::fs::openat(
                &self.fd,
                c,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            );
            match opened {
                Ok(fd) => return Ok(Some(Dir { fd, path })),
                Err(Errno::NOENT) => {
                    if !create {
                        return Ok(None);
                    }
                    // A racing creator makes EEXIST: fine.
                    match rustix::fs::mkdirat(&self.fd, c, Mode::from_raw_mode(0o777)) {
                        Ok(()) | Err(Errno::EXIST) => {}
                        Err(e) => return Err(io_err(e.into())),
                    }
                }
                Err(e) => {
                    let e = io::Error::from(e);
                    return Err(match self.entry_kind(name) {
                        Ok(Some(EntryKind::Symlink)) => DirError::Symlink {
                            target: std::fs::read_link(&path).ok(),
                            path,
                        },
                        Ok(Some(EntryKind::File | EntryKind::Special)) => {
                            DirError::NotADirectory { path }
                        }
                        _ => io_err(e),
                    });
                }
            }
        }
        Err(io_err(io::Error::other("the folder keeps disappearing")))
    }

    /// Opens `name` for reading only if it is a regular file. Opened non-blocking and checked
    /// on the open handle, so a FIFO swapped in after a check still cannot block.
    /// `Ok(None)`: nothing there; `Err` of kind `InvalidData`: something that is not a
    /// regular file (a directory, a FIFO, a device, a symlink).
    pub fn open_regular(&self, name: &str) -> io::Result<Option<File>> {
        let opened = rustix::fs::openat(
            &self.fd,
            plain_name(name)?,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::empty(),
        );
        let fd = match opened {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(None),
            Err(Errno::LOOP) => return Err(not_regular(name)),
            Err(e) => return Err(e.into()),
        };
        if kind_of_fd(&fd)? != EntryKind::File {
            return Err(not_regular(name));
        }
        Ok(Some(File::from(fd)))
    }

    /// Opens `name` for appending (and reading), creating it if missing, only if it is a
    /// regular file: never through a symlink, non-blocking so a FIFO cannot block the open,
    /// and checked on the open handle. Not a regular file: `Err` of kind `InvalidData`.
    pub fn open_append(&self, name: &str) -> io::Result<File> {
        let opened = rustix::fs::openat(
            &self.fd,
            plain_name(name)?,
            OFlags::RDWR
                | OFlags::APPEND
                | OFlags::CREATE
                | OFlags::NOFOLLOW
                | OFlags::NONBLOCK
                | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o644),
        );
        let fd = match opened {
            Ok(fd) => fd,
            Err(Errno::LOOP) => return Err(not_regular(name)),
            Err(e) => return Err(e.into()),
        };
        if kind_of_fd(&fd)? != EntryKind::File {
            return Err(not_regular(name));
        }
        Ok(File::from(fd))
    }

    /// The bytes of the regular file `name` (see [`Dir::open_regular`]).
    pub fn read_regular(&self, name: &str) -> io::Result<Option<Vec<u8>>> {
        let Some(mut file) = self.open_regular(name)? else {
            return Ok(None);
        };
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        Ok(Some(bytes))
    }

    /// Writes `bytes` under `name` unless the name is taken (then `Ok(false)`): a temp file
    /// `.ctxlab-tmp-<pid>-<n>` is written and flushed to disk, then hard-linked to `name`
    /// (a link never replaces anything) and removed. A kill at any moment leaves either no
    /// file at `name` or the whole of it, plus at most a temp file [`remove_stale_temps`]
    /// recognises.
    pub fn write_new(&self, name: &str, bytes: &[u8]) -> io::Result<bool> {
        self.write_new_synced(name, bytes, true)
    }

    /// `write_new`, flushing the temp file to disk first only when `sync` (a writer whose
    /// source can be replayed syncs once at the end instead).
    pub fn write_new_synced(&self, name: &str, bytes: &[u8], sync: bool) -> io::Result<bool> {
        let target = plain_name(name)?;
        let temp_name = temp_name("");
        let temp = plain_name(&temp_name)?;
        // O_EXCL|O_NOFOLLOW never opens an existing entry.
        let fd = rustix::fs::openat(
            &self.fd,
            temp,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o600),
        )?;
        let mut file = File::from(fd);
        let result = (|| {
            file.write_all(bytes)?;
            if sync {
                file.sync_all()?;
            }
            match rustix::fs::linkat(&self.fd, temp, &self.fd, target, AtFlags::empty()) {
                Ok(()) => Ok(true),
                Err(Errno::EXIST) => Ok(false),
                Err(e) => Err(io::Error::from(e)),
            }
        })();
        // Removes the temp name only; the linked name (if any) keeps the data.
        let _ = rustix::fs::unlinkat(&self.fd, temp, AtFlags::empty());
        result
    }

    /// Removes the temp files of processes that are no longer running (see
    /// [`is_stale_temp_name`]), and the unnamed ones earlier versions wrote (`.tmp-XXXXXX`,
    /// see [`is_legacy_temp_name`]) once they are older than [`LEGACY_TEMP_AGE`]; returns
    /// how many were removed.
    pub fn remove_stale_temps(&self) -> usize {
        let Ok(entries) = std::fs::read_dir(&self.path) else {
            return 0;
        };
        let mut removed = 0;
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if self.entry_kind(name).ok().flatten() != Some(EntryKind::File) {
                continue;
            }
            let old = || {
                entry
                    .metadata()
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.elapsed().ok())
                    .is_some_and(|age| age >= LEGACY_TEMP_AGE)
            };
            let stale = is_stale_temp_name(name) || (is_legacy_temp_name(name) && old());
            if !stale {
                continue;
            }
            let Ok(c) = plain_name(name) else {
                continue;
            };
            // Without AT_REMOVEDIR, unlinkat only removes files.
            if rustix::fs::unlinkat(&self.fd, c, AtFlags::empty()).is_ok() {
                removed += 1;
            }
        }
        removed
    }
}

/// Opens `path` for reading only if it is a regular file: non-blocking (a FIFO never
/// blocks the open) and without following a symlink at the last component, then checked on
/// the open handle. `Ok(Err(kind))` says what is there instead.
pub fn open_regular_path(path: &Path) -> io::Result<Result<File, EntryKind>> {
    use std::os::unix::fs::OpenOptionsExt;
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags((OFlags::NONBLOCK | OFlags::NOFOLLOW).bits() as i32)
        .open(path);
    let file = match opened {
        Ok(file) => file,
        Err(e) if e.raw_os_error() == Some(Errno::LOOP.raw_os_error()) => {
            return Ok(Err(EntryKind::Symlink));
        }
        Err(e) => return Err(e),
    };
    let kind = {
        use std::os::unix::fs::MetadataExt;
        kind_of(FileType::from_raw_mode(file.metadata()?.mode() as _))
    };
    Ok(if kind == EntryKind::File {
        Ok(file)
    } else {
        Err(kind)
    })
}

/// What is at `path` (None: nothing), without following a symlink at the last component.
pub fn path_kind(path: &Path) -> io::Result<Option<EntryKind>> {
    use std::os::unix::fs::MetadataExt;
    match std::fs::symlink_metadata(path) {
        Ok(m) => Ok(Some(kind_of(FileType::from_raw_mode(m.mode() as _)))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

fn not_regular(name: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{name} is not a regular file"),
    )
}

/// A fresh temp name for a file next to `base_name`: `.<base_name>.ctxlab-tmp-<pid>-<n>`, or
/// `.ctxlab-tmp-<pid>-<n>` when `base_name` is empty. Hidden, and recognisable as ctxlab's.
pub fn temp_name(base_name: &str) -> String {
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let pid = std::process::id();
    if base_name.is_empty() {
        format!("{TEMP_MARK}{pid}-{n}")
    } else {
        format!(".{base_name}{TEMP_MARK}{pid}-{n}")
    }
}

/// The pid in a ctxlab temp name (`...ctxlab-tmp-<pid>-<n>`), if `name` is one.
pub fn temp_name_pid(name: &str) -> Option<u32> {
    if !name.starts_with('.') {
        return None;
    }
    let at = name.rfind(TEMP_MARK)?;
    let (pid, n) = name[at + TEMP_MARK.len()..].split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(pid) || !digits(n) {
        return None;
    }
    pid.parse().ok()
}

/// A temp name of earlier ctxlab versions in the store's folders: `.tmp-` and six letters
/// or digits, no extension (a persisted result always ends in `.txt`, a transcript in
/// `.jsonl`).
pub fn is_legacy_temp_name(name: &str) -> bool {
    name.strip_prefix(".tmp-")
        .is_some_and(|rest| rest.len() == 6 && rest.bytes().all(|b| b.is_ascii_alphanumeric()))
}

/// A ctxlab temp name whose process is gone: safe to remove. Temp files of this process
/// and of running processes are never stale (they may be mid-write).
pub fn is_stale_temp_name(name: &str) -> bool {
    temp_name_pid(name).is_some_and(|pid| pid != std::process::id() && !process_alive(pid))
}

/// A new append-only log file in `dir` (made, with its parents, if missing), named
/// `<prefix>-<started>-<pid>.jsonl`, or `-2`, `-3`, ... after it when that name is taken:
/// opened with `O_EXCL`, never following a symlink, mode 0600. ctxlab's recordings and the
/// proxy's captures are both such files; a second process never appends to the first's.
pub fn create_numbered_log(dir: &Path, prefix: &str, started: u64) -> io::Result<(PathBuf, File)> {
    std::fs::create_dir_all(dir)?;
    let pid = std::process::id();
    for n in 1..10_000u32 {
        let name = match n {
            1 => format!("{prefix}-{started}-{pid}.jsonl"),
            n => format!("{prefix}-{started}-{pid}-{n}.jsonl"),
        };
        let path = dir.join(name);
        match open_log(&path, true) {
            Ok(file) => return Ok((path, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "every name is taken",
    ))
}

/// An append-only log file opened for appending whole lines: mode 0600 when created,
/// never through a symlink, never blocking on a FIFO; `new`: it must not exist yet.
pub fn open_log(path: &Path, new: bool) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut options = std::fs::OpenOptions::new();
    options.append(true);
    if new {
        options.create_new(true);
    } else {
        options.create(true);
    }
    options
        .mode(0o600)
        .custom_flags((OFlags::NOFOLLOW | OFlags::NONBLOCK).bits() as i32);
    options.open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_names_carry_the_pid_and_parse_back() {
        let a = temp_name("");
        let b = temp_name("notes.md");
        assert!(a.starts_with(".ctxlab-tmp-"));
        assert!(b.starts_with(".notes.md.ctxlab-tmp-"));
        assert_ne!(a, temp_name(""));
        assert_eq!(temp_name_pid(&a), Some(std::process::id()));
        assert_eq!(temp_name_pid(&b), Some(std::process::id()));
        assert_eq!(temp_name_pid("notes.ctxlab-tmp-12-3"), None, "not hidden");
        assert_eq!(temp_name_pid(".x.ctxlab-tmp-12-"), None);
        assert_eq!(temp_name_pid(".x.ctxlab-tmp-12-3.txt"), None);
        assert!(!is_stale_temp_name(&a), "our own temp files are in use");
    }

    #[test]
    fn write_new_never_replaces_and_leaves_no_temp_file() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Dir::open(tmp.path()).unwrap();
        assert!(dir.write_new("a.txt", b"one").unwrap());
        assert!(!dir.write_new("a.txt", b"two").unwrap());
        assert_eq!(std::fs::read(tmp.path().join("a.txt")).unwrap(), b"one");
        let names: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn children_are_never_reached_through_a_symlink() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), tmp.path().join("link")).unwrap();
        std::fs::write(tmp.path().join("file"), "x").unwrap();
        let dir = Dir::open(tmp.path()).unwrap();
        let err = dir.child("link", true).unwrap_err();
        assert!(matches!(err, DirError::Symlink { .. }), "{err}");
        assert!(err.to_string().contains("link"), "{err}");
        assert!(matches!(
            dir.child("file", true).unwrap_err(),
            DirError::NotADirectory { .. }
        ));
        assert!(dir.child("missing", false).unwrap().is_none());
        assert!(dir.child("made", true).unwrap().is_some());
        assert!(tmp.path().join("made").is_dir());
    }
}
