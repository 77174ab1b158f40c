//! The file tools: `read_file`, `write_file` and `edit_file`.
//!
//! They own reading within the output cap and writing atomically (a temp file in the target's
//! directory, then a rename, so a crash leaves the old file or the new one). Every path goes
//! through [`Workspace::resolve`] first; nothing here may open a path that did not. The work
//! is blocking file I/O, so it runs on tokio's blocking pool, never on the async workers.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

use super::output::{CappedText, LossyDecoder, push_line};
use super::{ToolError, ToolLimits, Workspace, optional_count, required_str};

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
/// more (`line` when M is 1). An empty
/// file reads as `(empty file)`.
pub(super) async fn read_file(
    ws: &Workspace,
    input: &Value,
    limits: &ToolLimits,
) -> Result<String, ToolError> {
    let rel = required_str(input, "path")?.to_string();
    let limit = optional_count(input, "limit")?;
    let path = ws.resolve(&rel)?;
    let cap = limits.output_cap_chars;
    blocking(move || read_capped_lines(&path, &rel, limit, cap)).await
}

fn read_capped_lines(
    path: &Path,
    rel: &str,
    limit: Option<usize>,
    cap: usize,
) -> Result<String, ToolError> {
    let meta = fs::metadata(path).map_err(io_err("Cannot read", rel))?;
    if meta.is_dir() {
        return Err(ToolError::NotAFile(format!(
            "{rel} is a directory; use glob to list files"
        )));
    }
    // A FIFO or a device such as /dev/zero could block or never end.
    if !meta.is_file() {
        return Err(ToolError::NotAFile(format!("{rel} is not a regular file")));
    }
    let mut file = File::open(path).map_err(io_err("Cannot read", rel))?;
    let mut text = CappedText::new(cap);
    let mut decoder = LossyDecoder::default();
    let mut buf = vec![0u8; READ_CHUNK_BYTES];
    let mut lines_taken = 0usize;
    // Once `limit` lines are taken, the rest is only counted: newlines seen, and whether the
    // last byte seen ends a line (a last line without `\n` still counts).
    let mut rest_newlines = 0usize;
    let mut rest_open_line = false;
    let mut any_byte = false;
    loop {
        let n = file.read(&mut buf).map_err(io_err("Cannot read", rel))?;
        if n == 0 {
            break;
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
    decoder.finish(&mut |s| text.push_str(s));
    if !any_byte {
        return Ok("(empty file)".to_string());
    }
    let more_lines = rest_newlines + usize::from(rest_open_line);
    let mut out = text.into_text_with_note();
    if more_lines > 0 {
        let noun = if more_lines == 1 { "line" } else { "lines" };
        push_line(&mut out, &format!("[{more_lines} more {noun} not shown]"));
    }
    Ok(out)
}

/// `write_file {path, content}`: creates missing parent directories, writes atomically and
/// reports `Wrote N bytes to <path>`.
pub(super) async fn write_file(ws: &Workspace, input: &Value) -> Result<String, ToolError> {
    let rel = required_str(input, "path")?.to_string();
    let content = required_str(input, "content")?.to_string();
    let path = ws.resolve(&rel)?;
    let shown = ws.display(&path);
    blocking(move || {
        if path.is_dir() {
            return Err(ToolError::NotAFile(format!("{rel} is a directory")));
        }
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(io_err("Cannot create directories for", &rel))?;
        }
        write_atomic(&path, content.as_bytes()).map_err(io_err("Cannot write", &rel))?;
        Ok(format!("Wrote {} bytes to {shown}", content.len()))
    })
    .await
}

/// `edit_file {path, old, new}`: replaces the single occurrence of `old`; refuses when `old`
/// is missing or occurs more than once (overlapping occurrences count), saying how often.
pub(super) async fn edit_file(ws: &Workspace, input: &Value) -> Result<String, ToolError> {
    let rel = required_str(input, "path")?.to_string();
    let old = required_str(input, "old")?.to_string();
    let new = required_str(input, "new")?.to_string();
    if old.is_empty() {
        return Err(ToolError::InvalidInput("`old` must not be empty".into()));
    }
    let path = ws.resolve(&rel)?;
    let shown = ws.display(&path);
    blocking(move || {
        let size = fs::metadata(&path)
            .map_err(io_err("Cannot read", &rel))?
            .len();
        if size > EDIT_MAX_BYTES {
            return Err(ToolError::NotAFile(format!(
                "{rel} is {size} bytes; edit_file handles files up to {EDIT_MAX_BYTES} bytes"
            )));
        }
        let bytes = fs::read(&path).map_err(io_err("Cannot read", &rel))?;
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

/// Temp names must not collide between concurrent writes from this process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` to a temp file next to `path`, flushes it to disk, then renames it over
/// `path`. An existing file keeps its permissions. The temp file is removed on failure.
fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no parent"))?;
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    let temp = temp_path(dir, &name);
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

fn temp_path(dir: &Path, name: &str) -> PathBuf {
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    dir.join(format!(".{name}.ctxlab-tmp-{}-{n}", std::process::id()))
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
