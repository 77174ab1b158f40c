//! `forgot`'s read of a Claude Code session (issue 36): the file a chunk of lines at a
//! time, as `load_session` reads it, but holding only the messages a compaction's input
//! takes. The input of a compaction is the history since the full compaction before it and
//! the messages after it up to the next full one; so as each full compaction's boundary is
//! read, the compactions before it are handed over (`Window`), and the messages before the
//! full compaction before those are let go, with their lines' uuids (a rewind behind a
//! compaction is left as recorded: `claude_rewind`). What is held is the messages of two
//! stretches between full compactions and each compaction's figures, not the session
//! (docs/forgot.md, "Reading the file").
//!
//! Only the main conversation is read (`forgot` reports on it; subagents' lines are passed
//! over). The read gives up (None) where it cannot be sure to find what a whole read finds:
//! a boundary whose preserved messages name a line let go of; a line that comes after
//! with a uuid such a boundary named (a whole read would find that line, or find it
//! elsewhere); a file of subagent lines only; a line whose reading could hang on a uuid
//! let go of. The caller then reads the file whole.

use std::path::Path;

use super::chunked::{ChunkedFile, chunked_format, parse_claude, streamed, text_of};
use super::claude::{Thread, read_line, read_or_warn};
use super::claude_kept::{named, resolve_one, resolves_now};
use super::detail::Detail;
use super::model::{LoadWarning, Session, SessionFormat, Summary, TokenCount, TokenSource};
use super::{SessionError, stream, with_subagents};

/// The compactions ready to be walked and the messages their inputs take.
pub struct Window<'a> {
    /// Every compaction read so far (the ones walked before hold their figures only), and
    /// the messages from `offset` on.
    pub session: &'a Session,
    /// The number in the whole session of `session.messages[0]`.
    pub offset: usize,
    /// The compactions before this one are ready (those not handed over before).
    pub upto: usize,
    /// The next compaction that replaces the history after them (None: the file ended).
    pub next_full: Option<usize>,
}

/// What the read found besides the windows.
pub struct WindowsRead {
    /// The warnings `load_session` gives, in its order.
    pub warnings: Vec<LoadWarning>,
    pub compactions: usize,
    /// The most messages held at once.
    pub most_held: usize,
}

/// The read's own state between lines.
#[derive(Default)]
struct Windows {
    /// Compactions whose token count before was filled in.
    seen: usize,
    /// The last full compaction handed over as `upto` (its run is next).
    last_full: Option<usize>,
    /// Compactions before this one hold their figures only.
    slimmed: usize,
    /// The warnings of resolving the preserved messages, which a whole read gives after
    /// every line's.
    kept_warnings: Vec<LoadWarning>,
    most_held: usize,
    unsure: bool,
}

/// Reads the Claude Code session at `path`, handing each run of compactions to `each` as
/// soon as the full compaction after it is read, and the last run at the end. None: the
/// file is no Claude Code file read in chunks, or the read was unsure (then what `each` was
/// handed is not the file's: the caller reads it whole).
pub fn read_claude_windows(
    path: &Path,
    each: &mut dyn FnMut(Window<'_>),
) -> Result<Option<WindowsRead>, SessionError> {
    let mut file = ChunkedFile::open(path, &|_| {}, &|| false)?;
    let Some((first, head)) = file.next_lines()? else {
        return Err(SessionError::Empty);
    };
    let mut lossy = false;
    let head_text = text_of(head, &mut lossy);
    if chunked_format(&head_text) != Some(SessionFormat::ClaudeCode) {
        return Ok(None);
    }
    let mut lines = streamed(&mut file, &head_text, parse_claude, first, lossy);
    drop(head_text);
    let mut main = Thread::new();
    let mut w = Windows::default();
    for parsed in &mut lines {
        let Some((number, o)) = read_or_warn(&mut main.builder, parsed) else {
            continue;
        };
        if o.is_sidechain {
            continue;
        }
        main.builder.session.lines += 1;
        read_line(&mut main, number, o);
        w.after_line(&mut main, each);
        if w.unsure || main.unsure || main.builder.uuid_index.rewritten() {
            return Ok(None);
        }
    }
    let lossy = lines.done()?;
    main.builder.close_all();
    let b = &main.builder;
    // A subagent's own file: a whole read reports on its one sidechain.
    if b.end() == 0 && b.session.compactions.is_empty() {
        return Ok(None);
    }
    let count = b.session.compactions.len();
    w.hand_over(&mut main, count, None, each);
    if w.unsure {
        return Ok(None);
    }
    let session = &mut main.builder.session;
    let mut warnings = std::mem::take(&mut session.warnings);
    warnings.append(&mut w.kept_warnings);
    warnings.append(&mut file.skipped);
    warnings.extend(lossy.then(stream::lossy_warning));
    // The subagents' files are not reported on, but a whole read warns of one it cannot
    // read.
    let mut subagents = Session::empty(SessionFormat::ClaudeCode);
    subagents.meta.session_id = session.meta.session_id.take();
    warnings.extend(with_subagents(path, subagents, Detail::Numbers)?.warnings);
    Ok(Some(WindowsRead {
        warnings,
        compactions: count,
        most_held: w.most_held,
    }))
}

impl Windows {
    /// Fills in the new compactions' token counts and hands over the run before each new
    /// full one.
    fn after_line(&mut self, t: &mut Thread, each: &mut dyn FnMut(Window<'_>)) {
        while self.seen < t.builder.session.compactions.len() {
            let k = self.seen;
            self.seen += 1;
            fill_tokens_before(&mut t.builder.session, k);
            if t.builder.session.compactions[k].kind.replaces_history() {
                self.hand_over(t, k, Some(k), each);
                if self.unsure {
                    return;
                }
            }
        }
    }

    /// Hands the compactions before `upto` to `each`, then lets go of what no later run
    /// reads.
    fn hand_over(
        &mut self,
        t: &mut Thread,
        upto: usize,
        next_full: Option<usize>,
        each: &mut dyn FnMut(Window<'_>),
    ) {
        let b = &mut t.builder;
        let ready = t
            .preserved
            .iter()
            .take_while(|p| p.compaction < upto)
            .count();
        for p in t.preserved.drain(..ready) {
            if !resolves_now(b, &p) {
                self.unsure = true;
                return;
            }
            for u in named(&p) {
                b.uuid_index.watch(u);
            }
            let from = b.session.warnings.len();
            resolve_one(b, &p);
            self.kept_warnings.extend(b.session.warnings.drain(from..));
        }
        self.most_held = self.most_held.max(b.session.messages.len());
        each(Window {
            session: &b.session,
            offset: b.forgotten(),
            upto,
            next_full,
        });
        // The next run starts at `upto`, whose history starts at the full compaction
        // before it: nothing before that one is read again.
        if let Some(f) = self.last_full {
            let at = b.session.compactions[f].at;
            b.forget_messages(at.saturating_sub(b.forgotten()));
            b.uuid_index.forget_before(at);
            for c in &mut b.session.compactions[self.slimmed..f] {
                if let Summary::Text(text) = &mut c.summary {
                    *text = String::new();
                }
                c.kept = None;
                c.cleared_tool_ids = Vec::new();
            }
            self.slimmed = self.slimmed.max(f);
        }
        self.last_full = Some(upto);
        // Only the last call counts for the next compaction's tokens before.
        let calls = &mut b.session.calls;
        calls.drain(..calls.len().saturating_sub(1));
        t.forget_record();
    }
}

/// Compaction `k`'s tokens before, when its line does not say: the last call before it,
/// as `assemble::fill_tokens_from_calls` fills it at the end of a whole read (every call
/// before the compaction is in by the time its line is read).
fn fill_tokens_before(s: &mut Session, k: usize) {
    let Some(c) = s.compactions.get(k) else {
        return;
    };
    if c.tokens_before.is_some() {
        return;
    }
    let at = c.at;
    let last = s
        .calls
        .iter()
        .rev()
        .find_map(|call| call.message.filter(|&m| m < at).map(|_| call))
        .map(|call| call.usage.context_tokens());
    if let (Some(tokens), Some(c)) = (last, s.compactions.get_mut(k)) {
        c.tokens_before = Some(TokenCount {
            tokens,
            source: TokenSource::LastCallBefore,
        });
    }
}
