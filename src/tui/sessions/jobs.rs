//! The sessions browser's blocking jobs: listing (one peek per file), counting (a light scan
//! per file, a batch per job), opening (the head first, then the whole file read in chunks
//! so the loading line can say how far it got) and replaying into a scratch store. Reads
//! session files only; writes only under the scratch folder it is given.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::scratch;
use super::{BrowserRow, OpenedSession, Progress, SessionDone, SessionItem, SessionReplay};
use super::{SessionWork, build_view};
use crate::listing_cache::{FileKey, ListingCache};
use crate::session::discover::{entry_or_reason, find_files, order_newest_first, skipped};
use crate::session::numbers::{numbers_of_file, project_label};
use crate::session::open::open_regular;
use crate::session::{SessionError, load_session_with, parse_session_text};
use crate::store::Store;
use crate::tui::replay::replay_recorded_into;

/// The first bytes of a session parsed for its first screen, while the rest loads.
pub const HEAD_BYTES: usize = 1024 * 1024;
/// Bytes of session files one `Stats` job scans before it hands back the rest.
pub const STATS_BYTES_PER_JOB: u64 = 16 * 1024 * 1024;

pub(super) fn run(work: SessionWork) -> SessionDone {
    match work {
        SessionWork::Discover { paths, data_dir } => {
            let cache = data_dir.map(|d| ListingCache::load(&d));
            let (rows, _) = discover_rows(&paths, cache);
            SessionDone::Discovered { paths, rows }
        }
        SessionWork::Stats { files, data_dir } => {
            let mut cache = data_dir.map(|d| ListingCache::load(&d));
            let mut results = Vec::new();
            let mut bytes = 0u64;
            let mut rest = files.into_iter();
            for path in rest.by_ref() {
                let stats = match cache.as_mut() {
                    Some(cache) => {
                        let row = cache.row(&path);
                        match row.numbers {
                            Some(numbers) => numbers.map(|n| n.numbers),
                            None => Err(row.entry.err().unwrap_or_default()),
                        }
                    }
                    None => numbers_of_file(&path).map_err(|e| e.to_string()),
                };
                bytes += std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
                results.push((path, stats));
                if bytes >= STATS_BYTES_PER_JOB {
                    break;
                }
            }
            if let Some(cache) = cache.as_mut() {
                // The listing works without it: a cache that cannot be written stays as it was.
                let _ = cache.save();
            }
            SessionDone::Stats {
                results,
                rest: rest.collect(),
            }
        }
        SessionWork::Open {
            id,
            path,
            head,
            progress,
        } => {
            let result = if head {
                open_head(&path)
            } else {
                open_full(&path, &progress)
            };
            SessionDone::Opened {
                id,
                head,
                result: result.map(Box::new),
            }
        }
        SessionWork::Replay {
            id,
            messages,
            config,
            recorded,
            scratch,
        } => {
            // A scratch folder removed on close: never worth a sync.
            let store = Store::new(&scratch).without_sync();
            let replay = match std::fs::create_dir_all(&scratch) {
                Ok(()) => replay_recorded_into(messages.as_ref().clone(), config, recorded, &store),
                Err(e) => crate::tui::replay::Replay::failed(
                    format!("cannot create {}: {e}", scratch.display()),
                    config.context_limit,
                ),
            };
            let persisted = store
                .list_tool_results()
                .into_iter()
                .map(|f| f.relative)
                .collect();
            let transcripts = store
                .list_transcripts()
                .into_iter()
                .map(|f| f.relative)
                .collect();
            SessionDone::Replayed {
                id,
                replay: Box::new(SessionReplay {
                    replay,
                    strategy: config.strategy,
                    persisted,
                    transcripts,
                    scratch,
                }),
            }
        }
        SessionWork::RemoveScratch { dir } => {
            scratch::remove(&dir);
            SessionDone::Cleaned
        }
        SessionWork::CleanScratch { root } => {
            scratch::clean_stale(&root);
            SessionDone::Cleaned
        }
    }
}

/// The browser's rows for `paths`: the folders and files that could not be read first,
/// then the sessions grouped. With a cache, a file it knows in its present state comes with
/// its counts (or as the skipped row it was) without being opened; the others are peeked
/// at. Returns how many came from the cache.
pub fn discover_rows(
    paths: &[PathBuf],
    mut cache: Option<ListingCache>,
) -> (Vec<BrowserRow>, usize) {
    let (files, mut errors) = find_files(paths);
    let mut items = Vec::with_capacity(files.len());
    let mut cached = 0;
    for path in files {
        let hit = cache.as_mut().and_then(|c| {
            let key = FileKey::of(&path)?;
            c.get(&path, &key)
                .filter(|r| r.entry.is_err() || r.numbers.is_some())
                .cloned()
        });
        let (entry, stats) = match hit {
            Some(row) => {
                cached += 1;
                let stats = row.numbers.map(|n| n.map(|n| n.numbers));
                (row.entry, stats)
            }
            None => (entry_or_reason(&path), None),
        };
        match entry {
            Ok(entry) => items.push(SessionItem { entry, stats }),
            Err(reason) => errors.push(skipped(path, &reason)),
        }
    }
    let mut rows: Vec<BrowserRow> = errors
        .into_iter()
        .map(|e| BrowserRow::Error {
            path: e.path,
            message: e.message,
        })
        .collect();
    rows.extend(group(items));
    (rows, cached)
}

/// Entries grouped by project under a heading row, in the one listing order
/// (`discover::order_newest_first`: the project with the newest session first, each
/// group's sessions newest first).
fn group(mut items: Vec<SessionItem>) -> Vec<BrowserRow> {
    order_newest_first(&mut items, |i| {
        (
            i.entry.project.as_deref(),
            i.entry.started.as_deref(),
            &i.entry.path,
        )
    });
    let mut rows = Vec::new();
    let mut heading: Option<usize> = None;
    for item in items {
        let name = project_label(item.entry.project.as_deref()).to_string();
        let same = heading
            .is_some_and(|h| matches!(&rows[h], BrowserRow::Project { name: n, .. } if *n == name));
        if !same {
            heading = Some(rows.len());
            rows.push(BrowserRow::Project { name, sessions: 0 });
        }
        if let Some(BrowserRow::Project { sessions, .. }) = heading.and_then(|h| rows.get_mut(h)) {
            *sessions += 1;
        }
        rows.push(BrowserRow::Session(item));
    }
    rows
}

/// The first `HEAD_BYTES` of a session, cut at the last whole line, as a view. Only a
/// regular file is read, opened without blocking (`session::open`).
pub fn open_head(path: &Path) -> Result<OpenedSession, String> {
    let opened = open_regular(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let bytes = opened.len;
    let mut buf = Vec::with_capacity(HEAD_BYTES.min(bytes as usize));
    opened
        .file
        .take((HEAD_BYTES as u64).min(bytes))
        .read_to_end(&mut buf)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let complete = (buf.len() as u64) >= bytes;
    if !complete {
        let end = buf.iter().rposition(|&b| b == b'\n').unwrap_or(0);
        buf.truncate(end);
    }
    let text = String::from_utf8_lossy(&buf);
    let session = parse_session_text(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(build_view(path, bytes, complete, session))
}

/// The whole session (with its subagents' files), `progress` counting the bytes read; a
/// cancel through `progress` ends the read at its next chunk.
pub fn open_full(path: &Path, progress: &Progress) -> Result<OpenedSession, String> {
    let read = std::cell::Cell::new(0);
    let session = load_session_with(
        path,
        &|n| {
            read.set(n);
            progress.set(n)
        },
        &|| progress.is_cancelled(),
    )
    .map_err(|e| match e {
        SessionError::Read(_)
        | SessionError::NotRegular(_)
        | SessionError::TooLarge { .. }
        | SessionError::LineTooLong { .. }
        | SessionError::OutOfMemory(_)
        | SessionError::Cancelled => {
            format!("cannot read {}: {e}", path.display())
        }
        e => format!("{}: {e}", path.display()),
    })?;
    Ok(build_view(path, read.get(), true, session))
}

/// Paths of the sessions listed in `rows` that have no counts yet.
pub fn uncounted(rows: &[BrowserRow]) -> Vec<PathBuf> {
    rows.iter()
        .filter_map(|r| match r {
            BrowserRow::Session(s) if s.stats.is_none() => Some(s.entry.path.clone()),
            _ => None,
        })
        .collect()
}
