//! The follower: a session file read as it grows, its lines turned into `LiveItem`s, and
//! what happens to the file reported as it happens (truncated, replaced, gone, a newer
//! session of the same project followed instead). It sleeps until the file's folder
//! changes (file-change notifications from the `notify` crate) or, where notifications do
//! not arrive, until the next poll (`FollowOptions::poll`, 1 s by default): nothing is
//! done while nothing is written. Runs on the calling thread and hands each event to a
//! sink, which can end the follow.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Duration;

use serde::Serialize;

use super::live::{LiveItem, LiveSession};
use super::project::{Chosen, NewerSession};
use super::tail::{FileChange, Tailer};
use crate::session::SessionError;
use crate::session::model::SessionFormat;

/// How the follower waits and where it starts.
#[derive(Debug, Clone)]
pub struct FollowOptions {
    /// The longest sleep between two looks at the file (the polling fallback's period).
    pub poll: Duration,
    /// Whether file-change notifications are asked for (false: polling only).
    pub notify: bool,
}

impl Default for FollowOptions {
    fn default() -> Self {
        FollowOptions {
            poll: Duration::from_secs(1),
            notify: true,
        }
    }
}

/// What happened to the followed file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum FileEvent {
    Truncated {
        was: u64,
        now: u64,
    },
    Replaced,
    Gone,
    Back,
    /// A newer session of the project is followed from now on.
    Switched {
        from: PathBuf,
        to: PathBuf,
        why: String,
    },
    /// A line over the line cap was passed over.
    LineTooLong {
        line: usize,
    },
    /// Bytes that were not UTF-8 were replaced.
    NotUtf8,
}

/// What the follower tells its sink.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum WatchEvent {
    /// A file is followed from its start (at the beginning, and after each restart).
    Following {
        path: PathBuf,
        why: String,
        /// How file changes reach the follower: notifications, or polling only.
        waiting: String,
    },
    /// An item a line added; `caught_up` false while the lines already in the file when it
    /// was opened are read; `offset` the byte where that line starts (a new compaction's
    /// own line: `since::LastCompaction`), `end` the byte after it (how far the follower
    /// has read: a warning reads no further).
    Item {
        item: LiveItem,
        caught_up: bool,
        offset: u64,
        end: u64,
    },
    /// The lines already in the file are read: what follows is written from now on.
    CaughtUp {
        path: PathBuf,
        format: Option<SessionFormat>,
        lines: usize,
        bytes: u64,
        skipped: usize,
        sidechain_lines: usize,
        unknown_format: bool,
    },
    File {
        path: PathBuf,
        event: FileEvent,
    },
    /// The file cannot be read any more (too large, not a regular file): following ends.
    Error {
        path: PathBuf,
        message: String,
    },
    /// The format became known after `CaughtUp` said it was not (a file followed while
    /// still empty): said once, when its first lines are read.
    Recognised {
        format: SessionFormat,
    },
}

/// A sink's answer: go on or stop.
pub type Sink<'a> = dyn FnMut(WatchEvent) -> bool + 'a;

/// The sleep between looks: woken by notifications on the watched folders, or after
/// `poll`.
struct Waiter {
    rx: Receiver<()>,
    watcher: Option<notify::RecommendedWatcher>,
    watched: Vec<PathBuf>,
    poll: Duration,
}

impl Waiter {
    fn new(options: &FollowOptions) -> Waiter {
        let (tx, rx) = channel();
        let watcher = if options.notify {
            notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
                if res.as_ref().is_ok_and(|e| !wakes(&e.kind)) {
                    return;
                }
                // A gone receiver only means the follow ended.
                let _ = tx.send(());
            })
            .ok()
        } else {
            None
        };
        Waiter {
            rx,
            watcher,
            watched: Vec::new(),
            poll: options.poll,
        }
    }

    /// Watches exactly `folders` (non-recursively); false when notifications failed, so
    /// that polling alone carries on.
    fn watch(&mut self, folders: &[PathBuf]) -> bool {
        use notify::Watcher;
        let Some(w) = self.watcher.as_mut() else {
            return false;
        };
        for old in std::mem::take(&mut self.watched) {
            let _ = w.unwatch(&old);
        }
        for f in folders {
            if w.watch(f, notify::RecursiveMode::NonRecursive).is_err() {
                self.watcher = None;
                return false;
            }
            self.watched.push(f.clone());
        }
        true
    }

    fn how(&self) -> String {
        if self.watcher.is_some() {
            format!(
                "file-change notifications, and a look every {} ms",
                self.poll.as_millis()
            )
        } else {
            format!("polling every {} ms", self.poll.as_millis())
        }
    }

    /// Sleeps until a notification or the poll period; drains what else queued up.
    fn wait(&self) {
        match self.rx.recv_timeout(self.poll) {
            Ok(()) | Err(RecvTimeoutError::Timeout) => {}
            // The watcher is gone: plain polling.
            Err(RecvTimeoutError::Disconnected) => std::thread::sleep(self.poll),
        }
        while self.rx.try_recv().is_ok() {}
    }
}

/// Whether a notification means something was written, created, removed or renamed.
/// Opening, reading and closing a file are events too (`Access`): the follower's own
/// look at the folder and the file makes them, so waking on them would never sleep.
fn wakes(kind: &notify::EventKind) -> bool {
    !matches!(kind, notify::EventKind::Access(_))
}

fn folders_for(path: &Path, newer: Option<&NewerSession>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = path.parent().map(Path::to_path_buf).into_iter().collect();
    if let Some(n) = newer {
        for f in n.folders() {
            if !out.contains(&f) {
                out.push(f);
            }
        }
    }
    out
}

/// Follows `chosen` until `stop` is set or the sink says stop. Returns the error that
/// ended it, if one did.
pub fn follow(
    chosen: Chosen,
    options: &FollowOptions,
    stop: &AtomicBool,
    sink: &mut Sink,
) -> Result<(), SessionError> {
    let mut waiter = Waiter::new(options);
    let mut path = chosen.path.clone();
    let mut why = chosen.why.clone();
    let mut newer = chosen.scope.map(|s| NewerSession::new(s, &path));
    loop {
        let folders = folders_for(&path, newer.as_ref());
        waiter.watch(&folders);
        let tailer = Tailer::open(&path)?;
        let next = follow_file(tailer, &why, &mut waiter, newer.as_mut(), stop, sink)?;
        match next {
            Some((to, reason)) => {
                let event = FileEvent::Switched {
                    from: path.clone(),
                    to: to.clone(),
                    why: reason.clone(),
                };
                if !sink(WatchEvent::File {
                    path: path.clone(),
                    event,
                }) {
                    return Ok(());
                }
                path = to;
                why = reason;
            }
            None => return Ok(()),
        }
    }
}

/// Follows one file; returns the newer session to follow instead, or None to stop.
fn follow_file(
    mut tailer: Tailer,
    why: &str,
    waiter: &mut Waiter,
    mut newer: Option<&mut NewerSession>,
    stop: &AtomicBool,
    sink: &mut Sink,
) -> Result<Option<(PathBuf, String)>, SessionError> {
    let path = tailer.path().to_path_buf();
    if !sink(WatchEvent::Following {
        path: path.clone(),
        why: why.to_string(),
        waiting: waiter.how(),
    }) {
        return Ok(None);
    }
    let mut live = LiveSession::new();
    let mut caught_up = false;
    // The format the sink was last told (by `CaughtUp` or `Recognised`).
    let mut told_format: Option<SessionFormat> = None;
    let mut items = Vec::new();
    loop {
        if stop.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let read = match tailer.poll() {
            Ok(read) => read,
            Err(e) => {
                sink(WatchEvent::Error {
                    path: path.clone(),
                    message: e.to_string(),
                });
                return Err(e);
            }
        };
        if let Some(change) = read.change {
            let restart = !matches!(change, FileChange::Gone);
            let event = match change {
                FileChange::Truncated { was, now } => FileEvent::Truncated { was, now },
                FileChange::Replaced => FileEvent::Replaced,
                FileChange::Gone => FileEvent::Gone,
                FileChange::Back => FileEvent::Back,
            };
            if !sink(WatchEvent::File {
                path: path.clone(),
                event,
            }) {
                return Ok(None);
            }
            if restart {
                // Everything is read again, as a new session of the same name.
                live = LiveSession::new();
                told_format = None;
                if !sink(WatchEvent::Following {
                    path: path.clone(),
                    why: "the same name, read again from its start".into(),
                    waiting: waiter.how(),
                }) {
                    return Ok(None);
                }
                caught_up = true;
            }
        }
        for line in read.too_long {
            if !sink(WatchEvent::File {
                path: path.clone(),
                event: FileEvent::LineTooLong { line },
            }) {
                return Ok(None);
            }
        }
        if read.lossy
            && !sink(WatchEvent::File {
                path: path.clone(),
                event: FileEvent::NotUtf8,
            })
        {
            return Ok(None);
        }
        for line in &read.lines {
            live.push_line(line.number, &line.text, &mut items);
            for item in items.drain(..) {
                if !sink(WatchEvent::Item {
                    item,
                    caught_up,
                    offset: line.offset,
                    end: line.end,
                }) {
                    return Ok(None);
                }
            }
        }
        if read.more {
            continue;
        }
        if caught_up
            && told_format.is_none()
            && let Some(format) = live.format()
        {
            told_format = Some(format);
            if !sink(WatchEvent::Recognised { format }) {
                return Ok(None);
            }
        }
        if !caught_up {
            caught_up = true;
            told_format = live.format();
            if !sink(WatchEvent::CaughtUp {
                path: path.clone(),
                format: live.format(),
                lines: live.lines(),
                bytes: tailer.offset(),
                skipped: live.skipped(),
                sidechain_lines: live.sidechain_lines(),
                unknown_format: live.is_unknown(),
            }) {
                return Ok(None);
            }
        }
        if let Some(n) = newer.as_deref_mut()
            && let Some(found) = n.find(&path)
        {
            // The rest of this file first, so nothing written to it is lost.
            return Ok(Some(found));
        }
        waiter.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    /// The follower's own look (the folder listed, the file opened and read) must not wake
    /// it: a waiter that did would never sleep. A write does wake it.
    #[test]
    fn the_waiter_sleeps_through_its_own_reads_and_wakes_on_a_write() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.jsonl");
        std::fs::write(&file, "a\n").unwrap();
        let poll = Duration::from_millis(400);
        let mut waiter = Waiter::new(&FollowOptions { poll, notify: true });
        assert!(
            waiter.watch(&[dir.path().to_path_buf()]),
            "inotify is there on Linux"
        );
        // What a look does.
        let _ = std::fs::read_dir(dir.path()).unwrap().count();
        let mut t = Tailer::open(&file).unwrap();
        t.poll().unwrap();
        let _ = std::fs::read(&file).unwrap();
        let started = Instant::now();
        waiter.wait();
        // recv_timeout never returns before its timeout unless something was sent.
        assert!(started.elapsed() >= poll, "woken by its own reads");
        // A write wakes it long before a (long) poll period.
        let waiter = Waiter {
            poll: Duration::from_secs(60),
            ..waiter
        };
        let writer = std::thread::spawn({
            let file = file.clone();
            move || {
                std::thread::sleep(Duration::from_millis(50));
                std::fs::OpenOptions::new()
                    .append(true)
                    .open(&file)
                    .and_then(|mut f| std::io::Write::write_all(&mut f, b"b\n"))
                    .unwrap();
            }
        });
        let started = Instant::now();
        waiter.wait();
        assert!(started.elapsed() < Duration::from_secs(60));
        writer.join().unwrap();
    }
}
