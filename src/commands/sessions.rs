//! `ctxlab sessions [PATH...]`: the sessions discovery finds (the tools' default folders, or
//! the files and folders named), one line each under its project, in the browser's order
//! (`discover::order_newest_first`: newest first), with size, model calls,
//! compactions and peak context; `--json` prints one array. The numbers are
//! `session::numbers`', the same `ctxlab inspect` prints.

use std::io::Write;
use std::path::PathBuf;

use serde::Serialize;

use crate::listing_cache::ListingCache;
use crate::session::SessionError;
use crate::session::discover::{self, DiscoverError, SessionFile, find_files, order_newest_first};
use crate::session::numbers::{FileNumbers, file_numbers, project_label};
use crate::util::{group_digits, noun};

/// One listed session with its numbers (or why they could not be computed).
#[derive(Debug, Clone, Serialize)]
pub struct ListedSession {
    #[serde(flatten)]
    pub entry: SessionFile,
    /// Only what the entry does not say already: its project and start are the numbers'.
    #[serde(flatten)]
    pub numbers: Option<ListedNumbers>,
    pub error: Option<String>,
}

/// The numbers of a listed session besides its project and start.
#[derive(Debug, Clone, Serialize)]
pub struct ListedNumbers {
    pub ended: Option<String>,
    pub calls: usize,
    pub compactions: usize,
    pub peak_context_tokens: Option<u64>,
    /// What a file without conversation holds (`inspect` gives the same sentence).
    pub without_conversation: Option<String>,
}

/// Discovers sessions under `paths` (the default roots when empty) and counts each. A
/// file named in `paths` that is not listed (empty, or no session ctxlab reads) is the
/// error `inspect` would give for it.
pub fn list_sessions(paths: &[PathBuf]) -> Result<Vec<ListedSession>, (PathBuf, SessionError)> {
    list_sessions_reporting(paths).map(|(listed, _)| listed)
}

/// `list_sessions`, with what was skipped and why (a FIFO, an unreadable folder).
pub fn list_sessions_reporting(
    paths: &[PathBuf],
) -> Result<(Vec<ListedSession>, Vec<DiscoverError>), (PathBuf, SessionError)> {
    list_sessions_cached(paths, &mut ListingCache::disabled())
}

/// `list_sessions_reporting` through `cache`: a file whose path, size and modification time
/// it knows is not read; the rows read are added to it (the caller saves it).
pub fn list_sessions_cached(
    paths: &[PathBuf],
    cache: &mut ListingCache,
) -> Result<(Vec<ListedSession>, Vec<DiscoverError>), (PathBuf, SessionError)> {
    let (files, mut skipped) = find_files(paths);
    let mut listed = Vec::with_capacity(files.len());
    for path in files {
        let row = cache.row(&path);
        let mut entry = match row.entry {
            Ok(entry) => entry,
            Err(reason) => {
                if paths.contains(&path) {
                    // Named on the command line: the error `inspect` would give for it.
                    if let Err(e) = file_numbers(&path) {
                        return Err((path, e));
                    }
                }
                skipped.push(discover::skipped(path, &reason));
                continue;
            }
        };
        let (numbers, error) = match row.numbers {
            Some(Ok(n)) => (Some(listed_numbers(&mut entry, n)), None),
            Some(Err(e)) => (None, Some(e.to_string())),
            None => (None, None),
        };
        listed.push(ListedSession {
            entry,
            numbers,
            error,
        });
    }
    order_newest_first(&mut listed, |s| {
        (
            s.entry.project.as_deref(),
            s.entry.started.as_deref(),
            &s.entry.path,
        )
    });
    Ok((listed, skipped))
}

/// The whole file's numbers: its project and start replace the ones its first lines gave.
fn listed_numbers(entry: &mut SessionFile, file: FileNumbers) -> ListedNumbers {
    let n = file.numbers;
    entry.project = n.project;
    entry.project_source = n.project_source;
    entry.started = n.started;
    ListedNumbers {
        ended: n.ended,
        calls: n.calls,
        compactions: n.compactions,
        peak_context_tokens: n.peak_context_tokens,
        without_conversation: file.without_conversation,
    }
}

fn size(bytes: u64) -> String {
    const KB: f64 = 1024.0;
    let b = bytes as f64;
    if b < KB {
        format!("{bytes} B")
    } else if b < KB * KB {
        format!("{:.1} KB", b / KB)
    } else {
        format!("{:.1} MB", b / KB / KB)
    }
}

/// Writes the listing: a line per session under a line per project, or one JSON array.
pub fn write_listing(
    out: &mut dyn Write,
    sessions: &[ListedSession],
    json: bool,
) -> std::io::Result<()> {
    if json {
        let text = serde_json::to_string(sessions).map_err(std::io::Error::other)?;
        writeln!(out, "{text}")?;
        return out.flush();
    }
    if sessions.is_empty() {
        writeln!(out, "no sessions found")?;
        return out.flush();
    }
    let mut project: Option<&Option<String>> = None;
    for s in sessions {
        if project != Some(&s.entry.project) {
            let mark = s.entry.project_source.map(|p| p.mark()).unwrap_or("");
            writeln!(out, "{}{mark}", project_label(s.entry.project.as_deref()))?;
            project = Some(&s.entry.project);
        }
        let date = s
            .entry
            .started
            .as_deref()
            .map(|t| t.chars().take(16).collect::<String>().replace('T', " "))
            .unwrap_or_else(|| "?".into());
        let counts = match (&s.numbers, &s.error) {
            (Some(st), _) => format!(
                "{:>6} {:<5} {:>3} {:<11}  peak {:>9}",
                group_digits(st.calls),
                noun(st.calls, "call", "calls"),
                st.compactions,
                noun(st.compactions, "compaction", "compactions"),
                st.peak_context_tokens
                    .map(|p| format!("{} tok", group_digits(p as usize)))
                    .unwrap_or_else(|| "-".into())
            ),
            (None, Some(e)) => format!("unreadable: {e}"),
            (None, None) => String::new(),
        };
        let holds = s
            .numbers
            .as_ref()
            .and_then(|n| n.without_conversation.as_deref())
            .map(|h| format!("  (holds: {h})"))
            .unwrap_or_default();
        let archived = if s.entry.archived { "  (archived)" } else { "" };
        writeln!(
            out,
            "  {date:<16}  {:<17} {:>9}  {counts}  {}{archived}{holds}",
            s.entry.format.name(),
            size(s.entry.size_bytes),
            s.entry.path.display()
        )?;
    }
    out.flush()
}
