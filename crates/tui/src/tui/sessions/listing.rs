//! The browser's listing in two steps, so that its first screen never waits for the files
//! to be read whole (docs/pipeline.md, "Reading sessions"):
//!
//! 1. `first_rows` (the `Discover` job): the walk, one `stat` per file, the listing cache,
//!    and for a file the cache does not know a first look at its first `QUICK_BYTES`
//!    (`discover::entry_from_head`), spread over a few threads. That look gives the row's
//!    project and start, which place it, so every row is in its final place from the first
//!    screen on; its counts are pending (`…`) until step 2. A file whose first bytes do not
//!    settle its place is given the listing's usual look (`PEEK_BYTES`) at once instead.
//! 2. `fill` (the `Stats` jobs, one at a time): about `STATS_BYTES_PER_JOB` bytes or
//!    `FILL_FILES_PER_JOB` files per job, in screen order, each file's full row through the
//!    cache (counted and remembered), handed back as a batch the UI task copies into rows
//!    that keep their place (`apply_filled`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::{BrowserRow, SessionItem};
use crate::listing_cache::{FileKey, ListingCache, Row};
use crate::session::discover::{
    NotListed, SessionFile, entry_from_head, entry_or_reason, find_files, order_newest_first,
    skipped,
};
use crate::session::numbers::{ProjectSource, SessionNumbers, project_label};

/// How much of a file the first look reads, in steps: the first lines of a session, where
/// its project and start are, then more when a first line is longer.
pub const QUICK_BYTES: [usize; 2] = [4 * 1024, 32 * 1024];
/// Bytes of session files one `Stats` job reads before it hands back its batch.
pub const STATS_BYTES_PER_JOB: u64 = 16 * 1024 * 1024;
/// Files one `Stats` job fills at most: a batch of small files still comes back soon.
pub const FILL_FILES_PER_JOB: usize = 256;
/// Threads the first look and a batch use at most: a batch reads at most this many files
/// at once, all but one of them within `STATS_BYTES_PER_JOB` together.
const THREADS: usize = 4;

/// The browser's rows for `paths` before any file is read whole: the folders and files that
/// could not be read first, then the sessions grouped in the listing's order. A file the
/// cache knows in its present state comes with its counts; the others with their counts
/// pending. Returns how many rows came from the cache.
pub fn first_rows(paths: &[PathBuf], mut cache: Option<ListingCache>) -> (Vec<BrowserRow>, usize) {
    let (files, mut errors) = find_files(paths);
    let mut items = Vec::with_capacity(files.len());
    let mut unknown = Vec::new();
    let mut cached = 0;
    for path in files {
        let hit = cache.as_mut().and_then(|c| {
            let key = FileKey::of(&path)?;
            c.get(&path, &key)
                .filter(|r| r.entry.is_err() || r.numbers.is_some())
                .cloned()
        });
        match hit {
            Some(row) => {
                cached += 1;
                match row.entry {
                    Ok(entry) => items.push(SessionItem {
                        entry,
                        stats: row.numbers.map(|n| n.map(|n| n.numbers)),
                    }),
                    Err(reason) => errors.push(skipped(path, &reason)),
                }
            }
            None => unknown.push(path),
        }
    }
    for (path, entry) in unknown.iter().zip(on_threads(&unknown, |p| first_look(p))) {
        match entry {
            Ok(entry) => items.push(SessionItem { entry, stats: None }),
            Err(reason) => errors.push(skipped(path.clone(), &reason)),
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

/// `f` of each item, in order, on up to `THREADS` threads (one for a few items). A part
/// whose thread panicked is done again here, so a panic shows as it would without threads.
fn on_threads<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, THREADS);
    if threads == 1 || items.len() < 2 {
        return items.iter().map(&f).collect();
    }
    let chunk = items.len().div_ceil(threads);
    let f = &f;
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|part| scope.spawn(move || part.iter().map(f).collect::<Vec<R>>()))
            .collect();
        let mut out = Vec::with_capacity(items.len());
        for (h, part) in handles.into_iter().zip(items.chunks(chunk)) {
            match h.join() {
                Ok(done) => out.extend(done),
                Err(_) => out.extend(part.iter().map(f)),
            }
        }
        out
    })
}

/// The entry the listing gives a file, read from its first `QUICK_BYTES` (the first step
/// that settles it) when they settle it: all of the file was read, or its recorded project
/// and its start are in them (both are the first the lines give: more lines would not
/// move the row). Otherwise the listing's usual look.
pub fn first_look(path: &Path) -> Result<SessionFile, NotListed> {
    for limit in QUICK_BYTES {
        let quick = entry_from_head(path, limit);
        let whole = match &quick {
            Ok(e) => e.size_bytes <= limit as u64,
            Err(_) => std::fs::metadata(path).is_ok_and(|m| m.len() <= limit as u64),
        };
        let placed = quick.as_ref().is_ok_and(|e| {
            e.started.is_some() && e.project_source == Some(ProjectSource::Recorded)
        });
        if whole || placed {
            return quick;
        }
    }
    entry_or_reason(path)
}

/// What a `Stats` job found of one file: its entry as the listing gives it (the title from
/// more lines than the first look read) and its counts, or why it is no session after all.
#[derive(Debug, Clone, PartialEq)]
pub struct Filled {
    pub path: PathBuf,
    pub entry: Result<SessionFile, NotListed>,
    pub stats: Result<SessionNumbers, NotListed>,
}

/// Fills rows of `files`, in order, through the cache in `data_dir` (saved before it
/// returns), until `STATS_BYTES_PER_JOB` bytes or `FILL_FILES_PER_JOB` files; returns the
/// batch and the files left. The files the cache does not know are read on a few threads.
pub fn fill(files: Vec<PathBuf>, data_dir: Option<&Path>) -> (Vec<Filled>, Vec<PathBuf>) {
    let mut cache = data_dir.map(ListingCache::load);
    let mut batch = Vec::new();
    let mut bytes = 0u64;
    let mut rest = files.into_iter();
    for path in rest.by_ref() {
        // Taken before the file is read: one that grows meanwhile is read again next time
        // rather than cached under a key its row does not match.
        let key = FileKey::of(&path);
        bytes += key.map(|k| k.size).unwrap_or(0);
        batch.push((path, key));
        if bytes >= STATS_BYTES_PER_JOB || batch.len() >= FILL_FILES_PER_JOB {
            break;
        }
    }
    let mut rows: Vec<Option<Row>> = batch
        .iter()
        .map(|(path, key)| {
            let (cache, key) = (cache.as_mut()?, key.as_ref()?);
            cache.get(path, key).cloned()
        })
        .collect();
    let unknown: Vec<usize> = (0..batch.len()).filter(|&i| rows[i].is_none()).collect();
    let read = on_threads(&unknown, |&i| Row::read(&batch[i].0));
    for (i, row) in unknown.into_iter().zip(read) {
        if let (Some(cache), (path, Some(key))) = (cache.as_mut(), &batch[i]) {
            cache.put(path, *key, row.clone());
        }
        rows[i] = Some(row);
    }
    if let Some(cache) = cache.as_mut() {
        // The listing works without it: a cache that cannot be written stays as it was.
        let _ = cache.save();
    }
    let results = batch
        .into_iter()
        .zip(rows)
        .filter_map(|((path, _), row)| {
            let row = row?;
            let stats = match (&row.entry, row.numbers) {
                (_, Some(numbers)) => numbers.map(|n| n.numbers),
                (Err(reason), None) => Err(reason.clone()),
                (Ok(_), None) => Err(NotListed::NotCounted),
            };
            Some(Filled {
                path,
                entry: row.entry,
                stats,
            })
        })
        .collect();
    (results, rest.collect())
}

/// Copies a batch into `rows`: each session row of the batch takes its counts and its
/// entry. Rows keep their place unless a file's place changed since the first look (it was
/// written meanwhile, or is no session after all): then the listing is grouped again.
/// Returns whether it was.
pub fn apply_filled(rows: &mut Vec<BrowserRow>, batch: Vec<Filled>) -> bool {
    let at: HashMap<&Path, usize> = rows
        .iter()
        .enumerate()
        .filter_map(|(i, r)| match r {
            BrowserRow::Session(s) => Some((s.entry.path.as_path(), i)),
            _ => None,
        })
        .collect();
    let mut updates = Vec::with_capacity(batch.len());
    for f in batch {
        if let Some(&i) = at.get(f.path.as_path()) {
            updates.push((i, f));
        }
    }
    let mut moved = false;
    for (i, f) in updates {
        let Some(BrowserRow::Session(s)) = rows.get_mut(i) else {
            continue;
        };
        match f.entry {
            Ok(entry) => {
                moved |= entry.project != s.entry.project || entry.started != s.entry.started;
                s.entry = entry;
                s.stats = Some(f.stats);
            }
            Err(reason) => {
                moved = true;
                rows[i] = BrowserRow::Error {
                    message: skipped(f.path.clone(), &reason).message,
                    path: f.path,
                };
            }
        }
    }
    if moved {
        regroup(rows);
    }
    moved
}

/// Groups the listing again: error rows first, then the sessions in the listing's order.
fn regroup(rows: &mut Vec<BrowserRow>) {
    let mut errors = Vec::new();
    let mut items = Vec::new();
    for row in rows.drain(..) {
        match row {
            BrowserRow::Session(s) => items.push(s),
            e @ BrowserRow::Error { .. } => errors.push(e),
            BrowserRow::Project { .. } => {}
        }
    }
    rows.extend(errors);
    rows.extend(group(items));
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

/// Paths of the sessions listed in `rows` that have no counts yet, in the rows' order.
pub fn uncounted(rows: &[BrowserRow]) -> Vec<PathBuf> {
    rows.iter()
        .filter_map(|r| match r {
            BrowserRow::Session(s) if s.stats.is_none() => Some(s.entry.path.clone()),
            _ => None,
        })
        .collect()
}
