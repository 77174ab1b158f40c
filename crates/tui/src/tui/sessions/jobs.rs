//! The sessions browser's blocking jobs: listing and filling its rows in batches
//! (`listing`), opening (the head first, then the whole file read in chunks
//! so the loading line can say how far it got) and replaying into a scratch store. Reads
//! session files only; writes only under the scratch folder it is given.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::{OpenedSession, Progress, SessionDone, SessionReplay};
use super::{SessionWork, build_view};
use super::{listing, scratch};
use crate::listing_cache::ListingCache;
use crate::session::open::open_regular;
use crate::session::{SessionError, load_session_with, parse_session_text};
use crate::store::Store;
use crate::tui::replay::replay_recorded_into;

/// The first bytes of a session parsed for its first screen, while the rest loads.
pub const HEAD_BYTES: usize = 1024 * 1024;

pub(super) fn run(work: SessionWork) -> SessionDone {
    match work {
        SessionWork::Discover { paths, data_dir } => {
            let cache = data_dir.map(|d| ListingCache::load(&d));
            let (rows, _) = listing::first_rows(&paths, cache);
            SessionDone::Discovered { paths, rows }
        }
        SessionWork::Stats {
            listing,
            files,
            data_dir,
        } => {
            let (results, rest) = listing::fill(files, data_dir.as_deref());
            SessionDone::Stats {
                listing,
                results,
                rest,
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

/// Why a session could not be opened for viewing; the message names the file.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The file could not be read (or was refused before its lines were looked at).
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: SessionError,
    },
    /// Its first bytes could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Head {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// It was read but is no session ctxlab opens.
    #[error("{}: {source}", path.display())]
    NotASession {
        path: PathBuf,
        #[source]
        source: SessionError,
    },
}

/// The first `HEAD_BYTES` of a session, cut at the last whole line, as a view. Only a
/// regular file is read, opened without blocking (`session::open`).
pub fn open_head(path: &Path) -> Result<OpenedSession, OpenError> {
    let opened = open_regular(path).map_err(|source| OpenError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let bytes = opened.len;
    let mut buf = Vec::with_capacity(HEAD_BYTES.min(bytes as usize));
    opened
        .file
        .take((HEAD_BYTES as u64).min(bytes))
        .read_to_end(&mut buf)
        .map_err(|source| OpenError::Head {
            path: path.to_path_buf(),
            source,
        })?;
    let complete = (buf.len() as u64) >= bytes;
    if !complete {
        let end = buf.iter().rposition(|&b| b == b'\n').unwrap_or(0);
        buf.truncate(end);
    }
    let text = String::from_utf8_lossy(&buf);
    let session = parse_session_text(&text).map_err(|source| OpenError::NotASession {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(build_view(path, bytes, complete, session))
}

/// The whole session (with its subagents' files), `progress` counting the bytes read; a
/// cancel through `progress` ends the read at its next chunk.
pub fn open_full(path: &Path, progress: &Progress) -> Result<OpenedSession, OpenError> {
    let read = std::cell::Cell::new(0);
    let session = load_session_with(
        path,
        &|n| {
            read.set(n);
            progress.set(n)
        },
        &|| progress.is_cancelled(),
    )
    .map_err(|source| {
        let path = path.to_path_buf();
        match source {
            SessionError::Read(_)
            | SessionError::NotRegular(_)
            | SessionError::TooLarge { .. }
            | SessionError::LineTooLong { .. }
            | SessionError::OutOfMemory(_)
            | SessionError::Cancelled => OpenError::Read { path, source },
            source => OpenError::NotASession { path, source },
        }
    })?;
    Ok(build_view(path, read.get(), true, session))
}
