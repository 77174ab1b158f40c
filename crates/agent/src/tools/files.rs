//! The file tools: `read_file`, `write_file` and `edit_file`.
//!
//! They own reading within the output cap and writing atomically (a temp file
//! `.NAME.ctxlab-tmp-PID-N` in the target's directory, then a rename, so a crash leaves the old
//! file or the new one, plus a temp file the next start removes). They open nothing but
//! regular files, non-blocking, so a FIFO or a device is an error, never a hang. Every path goes
//! through [`Workspace::resolve`] first; nothing here may open a path that did not. The work
//! is blocking file I/O, so it runs on tokio's blocking pool, never on the async workers.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::Path;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::output::{CappedText, LossyDecoder, TRUNCATION_NOTE_PREFIX, push_line};
use super::{ToolError, ToolLimits, Workspace, optional_count, required_str};
use crate::safe_fs::{EntryKind, is_stale_temp_name, open_regular_path, path_kind, temp_name};

/// `edit_file` reads the whole file into memory; past this size it refuses instead.
const EDIT_MAX_BYTES: u64 = 16 * 1024 * 1024;

const READ_CHUNK_BYTES: usize = 64 * 1024;

/// Runs blocking file work off the async workers.
async fn blocking<T, F>(work: F) -> Result<T, ToolError>
where
    F: FnOnce() -> Result<T, ToolError> + Send + 'static,
    T: Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ToolError::Internal(format!("file task failed: {e}")))?
}

fn io_err<'a>(op: &'static str, path: &'a str) -> impl FnOnce(io::Error) -> ToolError + 'a {
    move |source| ToolError::Io {
        op,
        path: path.to_string(),
        source,
    }
}

/// `read_file {path, limit?}`: the file's text (invalid UTF-8 shown as U+FFFD), at most
/// `output_cap_chars` chars then `\n[output truncated: N chars cut]`. With `limit`, only the
/// first `limit` lines, then `[M more lines not shown]` on its own line when the file has
/// more (`line` when M is 1). When what follows the returned text is over
/// [`COUNT_REST_MAX_BYTES`], it is not read and the note gives the file's size instead:
/// `[more lines not shown; the file is B bytes]`, or
/// `\n[output truncated: the file is B bytes; the rest was not read]`. An empty file reads as
/// `(empty file)`.
pub(super) async fn read_file(
    ws: &Workspace,
    input: &Value,
    limits: &ToolLimits,
    cancel: &CancellationToken,
) -> Result<String, ToolError> {
    let rel = required_str(input, "path")?.to_string();
    let limit = optional_count(input, "limit")?;
    let path = ws.resolve(&rel)?;
    let cap = limits.output_cap_chars;
    let cancel = cancel.clone();
    blocking(move || read_capped_lines(&path, &rel, limit, cap, &cancel)).await
}

/// Opens `path` for reading if it is a regular file. Anything else is refused before a byte
/// is read: a directory (`dir_hint` says what to use instead), and a FIFO, socket or device,
/// which could block forever or never end. The open itself is non-blocking.
fn open_regular(path: &Path, rel: &str, dir_hint: &str) -> Result<File, ToolError> {
    match open_regular_path(path).map_err(io_err("Cannot read", rel))? {
        Ok(file) => Ok(file),
        Err(EntryKind::Dir) => Err(ToolError::NotAFile(format!(
            "{rel} is a directory; {dir_hint}"
        ))),
        Err(_) => Err(ToolError::NotAFile(format!(
            "{rel} is not a regular file (a FIFO, socket, device or link); only regular files can be read or edited"
        ))),
    }
}

/// Once `read_file` has what it returns (its `limit` lines, or `output_cap_chars` chars), the
/// rest of the file is read only to say exactly how much was left out, and only when that
/// rest is at most this long. Past it the note gives the bytes not read instead: a 20 GiB
/// file read with `limit: 1` costs one line, not 20 GiB.
const COUNT_REST_MAX_BYTES: u64 = 1024 * 1024;

fn read_capped_lines(
    path: &Path,
    rel: &str,
    limit: Option<usize>,
    cap: usize,
    cancel: &CancellationToken,
) -> Result<String, ToolError> {
    let mut file = open_regular(path, rel, "use glob to list files")?;
    // The size when opened: a file growing meanwhile is read no further than the budget.
    let size = file.metadata().map_err(io_err("Cannot read", rel))?.len();
    let mut text = CappedText::new(cap);
    let mut decoder = LossyDecoder::default();
    let mut buf = vec![0u8; READ_CHUNK_BYTES];
    let mut lines_taken = 0usize;
    // Once `limit` lines are taken, the rest is only counted: newlines seen, and whether the
    // last byte seen ends a line (a last line without `\n` still counts).
    let mut rest_newlines = 0usize;
    let mut rest_open_line = false;
    let mut any_byte = false;
    let mut read_bytes = 0u64;
    // Bytes read after the returned part was complete, only to count it.
    let mut counted_bytes = 0u64;
    // Set when the rest was too long to count.
    let mut stopped = false;
    loop {
        if cancel.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        let complete = limit.is_some_and(|limit| lines_taken >= limit) || text.total_chars() >= cap;
        if complete {
            let left = size.saturating_sub(read_bytes);
            if left > COUNT_REST_MAX_BYTES || counted_bytes > COUNT_REST_MAX_BYTES {
                stopped = true;
                break;
            }
        }
        let n = file.read(&mut buf).map_err(io_err("Cannot read", rel))?;
        if n == 0 {
            break;
        }
        read_bytes += n as u64;
        if complete {
            counted_bytes += n as u64;
        }
        any_byte = true;
        let mut chunk = &buf[..n];
        if let Some(limit) = limit
            && lines_taken < limit
        {
            let mut end = chunk.len();
            for (i, b) in chunk.iter().enumerate() {
                if *b == b'\n' {
                    lines_taken += 1;
                    if lines_taken == limit {
                        end = i + 1;
                        break;
                    }
                }
            }
            decoder.feed(&chunk[..end], &mut |s| text.push_str(s));
            chunk = &chunk[end..];
        } else if limit.is_none() {
            decoder.feed(chunk, &mut |s| text.push_str(s));
            continue;
        }
        if !chunk.is_empty() {
            rest_newlines += chunk.iter().filter(|b| **b == b'\n').count();
            rest_open_line = chunk.last() != Some(&b'\n');
        }
    }
    if stopped {
        return Ok(stopped_early(text, limit, lines_taken, size));
    }
    if !any_byte {
        return Ok("(empty file)".to_string());
    }
    decoder.finish(&mut |s| text.push_str(s));
    let more_lines = rest_newlines + usize::from(rest_open_line);
    let mut out = text.into_text_with_note();
    if more_lines > 0 {
        let noun = if more_lines == 1 { "line" } else { "lines" };
        push_line(&mut out, &format!("[{more_lines} more {noun} not shown]"));
    }
    Ok(out)
}

/// The answer when the rest of the file was too long to count: the kept text, then the
/// file's size instead of a count of what was left out (a size needs no reading).
fn stopped_early(text: CappedText, limit: Option<usize>, lines_taken: usize, size: u64) -> String {
    let lines_done = limit.is_some_and(|limit| lines_taken >= limit);
    let mut out = text.text().to_string();
    if lines_done && text.cut_chars() == 0 {
        push_line(
            &mut out,
            &format!("[more lines not shown; the file is {size} bytes]"),
        );
    } else {
        // The cap cut the text: the note starts as every truncation note does.
        out.push_str(&format!(
            "\n{TRUNCATION_NOTE_PREFIX}the file is {size} bytes; the rest was not read]"
        ));
    }
    out
}

/// `write_file {path, content}`: creates missing parent directories, writes atomically and
/// reports `Wrote N bytes to <path>`.
pub(super) async fn write_file(ws: &Workspace, input: &Value) -> Result<String, ToolError> {
    let rel = required_str(input, "path")?.to_string();
    let content = required_str(input, "content")?.to_string();
    let path = ws.resolve(&rel)?;
    let shown = ws.display(&path);
    blocking(move || {
        match path_kind(&path).map_err(io_err("Cannot write", &rel))? {
            None | Some(EntryKind::File) => {}
            Some(EntryKind::Dir) => {
                return Err(ToolError::NotAFile(format!("{rel} is a directory")));
            }
            Some(_) => {
                return Err(ToolError::NotAFile(format!(
                    "{rel} is not a regular file (a FIFO, socket, device or link); write_file only replaces regular files"
                )));
            }
        }
        let made = match path.parent() {
            Some(parent) => create_parents(parent)
                .map_err(io_err("Cannot create directories for", &rel))?,
            None => Vec::new(),
        };
        if let Err(e) = write_atomic(&path, content.as_bytes()) {
            // A failed write (no space) leaves no trace: not even the folders made for it.
            for dir in made.iter().rev() {
                if fs::remove_dir(dir).is_err() {
                    break;
                }
            }
            return Err(io_err("Cannot write", &rel)(e));
        }
        Ok(format!("Wrote {} bytes to {shown}", content.len()))
    })
    .await
}

/// `create_dir_all` that returns the folders it created, outermost first, so that a
/// failed write can remove them again.
fn create_parents(dir: &std::path::Path) -> std::io::Result<Vec<std::path::PathBuf>> {
    let mut missing = Vec::new();
    let mut at = Some(dir);
    while let Some(d) = at {
        if fs::symlink_metadata(d).is_ok() {
            break;
        }
        missing.push(d.to_path_buf());
        at = d.parent();
    }
    missing.reverse();
    let mut made = Vec::new();
    for d in missing {
        match fs::create_dir(&d) {
            Ok(()) => made.push(d),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                for m in made.iter().rev() {
                    let _ = fs::remove_dir(m);
                }
                return Err(e);
            }
        }
    }
    // What exists must be a folder (create_dir_all's own check).
    if !fs::metadata(dir)?.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotADirectory,
            "not a folder",
        ));
    }
    Ok(made)
}

/// `edit_file {path, old, new}`: replaces the single occurrence of `old`; refuses when `old`
/// is missing or occurs more than once (overlapping occurrences count), saying how often.
pub(super) async fn edit_file(
    ws: &Workspace,
    input: &Value,
    cancel: &CancellationToken,
) -> Result<String, ToolError> {
    let rel = required_str(input, "path")?.to_string();
    let old = required_str(input, "old")?.to_string();
    let new = required_str(input, "new")?.to_string();
    if old.is_empty() {
        return Err(ToolError::InvalidInput("`old` must not be empty".into()));
    }
    let path = ws.resolve(&rel)?;
    let shown = ws.display(&path);
    let cancel = cancel.clone();
    blocking(move || {
        let mut file = open_regular(&path, &rel, "edit_file edits files")?;
        let size = file.metadata().map_err(io_err("Cannot read", &rel))?.len();
        if size > EDIT_MAX_BYTES {
            return Err(ToolError::NotAFile(format!(
                "{rel} is {size} bytes; edit_file handles files up to {EDIT_MAX_BYTES} bytes"
            )));
        }
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .map_err(io_err("Cannot read", &rel))?;
        // Editing through a lossy decode would silently rewrite the invalid bytes.
        let text = String::from_utf8(bytes).map_err(|_| {
            ToolError::NotAFile(format!(
                "{rel} is not valid UTF-8; edit_file only edits text files"
            ))
        })?;
        match count_overlapping(&text, &old) {
            0 => return Err(ToolError::EditNotFound { path: rel }),
            1 => {}
            count => return Err(ToolError::EditAmbiguous { path: rel, count }),
        }
        let edited = text.replacen(&old, &new, 1);
        // The last moment a cancel can stop the edit: after this the file is replaced.
        if cancel.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        write_atomic(&path, edited.as_bytes()).map_err(io_err("Cannot write", &rel))?;
        Ok(format!(
            "Edited {shown}: replaced 1 occurrence ({} lines removed, {} lines added)",
            old.lines().count(),
            new.lines().count()
        ))
    })
    .await
}

/// Occurrences of `needle`, overlapping ones included: `aa` occurs twice in `aaa`, and that
/// is ambiguous for an edit even though a left-to-right replace would pick the first.
fn count_overlapping(haystack: &str, needle: &str) -> usize {
    let mut count = 0;
    let mut from = 0;
    while let Some(at) = haystack[from..].find(needle) {
        count += 1;
        let start = from + at;
        // Step one char past the match start, staying on a char boundary.
        from = start + haystack[start..].chars().next().map_or(1, char::len_utf8);
    }
    count
}

/// Writes `bytes` to a temp file next to `path`, flushes it to disk, then renames it over
/// `path`. An existing file keeps its permissions. The temp file is removed on failure.
fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no parent"))?;
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    // `.NAME.ctxlab-tmp-PID-N`: hidden, and recognisably ctxlab's, so a kill mid-write
    // leaves a file the next start removes (`remove_stale_temp_files`).
    let temp = dir.join(temp_name(&name));
    let result = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)?;
        file.write_all(bytes)?;
        if let Ok(meta) = fs::metadata(path) {
            file.set_permissions(meta.permissions())?;
        }
        file.sync_all()?;
        fs::rename(&temp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

/// Most entries [`remove_stale_temp_files`] looks at: a start in a huge tree stays quick
/// (a few tens of milliseconds), and a workspace is rarely that large outside the skipped
/// folders.
const STALE_SCAN_MAX_ENTRIES: usize = 50_000;

/// Folders the stale-temp scan never enters: ctxlab's file tools do not write there often
/// enough to pay for walking them (version control, build output, dependencies), and the
/// store cleans its own folders.
const STALE_SCAN_SKIPPED_DIRS: [&str; 5] = [
    ".git",
    "target",
    "node_modules",
    ".task_outputs",
    ".transcripts",
];

/// Removes the temp files (`.NAME.ctxlab-tmp-PID-N`) that `write_file` and `edit_file` of a
/// killed ctxlab left in the workspace: only regular files whose process is gone, never
/// through a symlink, in at most [`STALE_SCAN_MAX_ENTRIES`] entries. Returns how many.
pub fn remove_stale_temp_files(root: &Path) -> usize {
    let mut removed = 0;
    let mut budget = STALE_SCAN_MAX_ENTRIES;
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            if budget == 0 {
                return removed;
            }
            budget -= 1;
            // `file_type` does not follow symlinks: a linked folder is never entered.
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if kind.is_dir() {
                if !STALE_SCAN_SKIPPED_DIRS.contains(&name) {
                    stack.push(entry.path());
                }
            } else if kind.is_file()
                && is_stale_temp_name(name)
                && fs::remove_file(entry.path()).is_ok()
            {
                removed += 1;
            }
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_counts() {
        assert_eq!(count_overlapping("aaa", "aa"), 2);
        assert_eq!(count_overlapping("abcabc", "abc"), 2);
        assert_eq!(count_overlapping("héllo", "l"), 2);
        assert_eq!(count_overlapping("x", "y"), 0);
        assert_eq!(count_overlapping("ééé", "éé"), 2);
    }

    #[test]
    fn atomic_write_replaces_and_keeps_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.sh");
        fs::write(&path, "old").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        write_atomic(&path, b"new").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "new");
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o755);
        // No temp file left behind.
        let names: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }
}
