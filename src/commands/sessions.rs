//! `ctxlab sessions [PATH...]`: the sessions discovery finds (the tools' default folders, or
//! the files and folders named), one line each by project and date with size, model calls,
//! compactions and peak context; `--json` prints one array.

use std::io::Write;
use std::path::PathBuf;

use serde::Serialize;

use crate::session::discover::{
    DiscoverError, QuickStats, SessionEntry, discover_reporting, quick_stats,
};
use crate::util::group_digits;

/// One listed session with its counts (or why they could not be computed).
#[derive(Debug, Clone, Serialize)]
pub struct ListedSession {
    #[serde(flatten)]
    pub entry: SessionEntry,
    #[serde(flatten)]
    pub stats: Option<QuickStats>,
    pub error: Option<String>,
}

/// Discovers sessions under `paths` (the default roots when empty) and counts each.
pub fn list_sessions(paths: &[PathBuf]) -> Vec<ListedSession> {
    list_sessions_reporting(paths).0
}

/// `list_sessions`, with what was skipped and why (a FIFO, an unreadable folder).
pub fn list_sessions_reporting(paths: &[PathBuf]) -> (Vec<ListedSession>, Vec<DiscoverError>) {
    let (entries, skipped) = discover_reporting(paths);
    let listed = entries
        .into_iter()
        .map(|entry| {
            let (stats, error) = match quick_stats(&entry.path) {
                Ok(s) => (Some(s), None),
                Err(e) => (None, Some(e.to_string())),
            };
            ListedSession {
                entry,
                stats,
                error,
            }
        })
        .collect();
    (listed, skipped)
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
            writeln!(
                out,
                "{}",
                s.entry.project.as_deref().unwrap_or("(project unknown)")
            )?;
            project = Some(&s.entry.project);
        }
        let date = s
            .entry
            .started
            .as_deref()
            .map(|t| t.chars().take(16).collect::<String>().replace('T', " "))
            .unwrap_or_else(|| "?".into());
        let counts = match (&s.stats, &s.error) {
            (Some(st), _) => format!(
                "{:>6} calls {:>3} compactions  peak {:>9}",
                group_digits(st.calls),
                st.compactions,
                st.peak_context_tokens
                    .map(|p| format!("{} tok", group_digits(p as usize)))
                    .unwrap_or_else(|| "-".into())
            ),
            (None, Some(e)) => format!("unreadable: {e}"),
            (None, None) => String::new(),
        };
        writeln!(
            out,
            "  {date:<16}  {:<17} {:>9}  {counts}  {}",
            s.entry.format.name(),
            size(s.entry.size_bytes),
            s.entry.path.display()
        )?;
    }
    out.flush()
}
