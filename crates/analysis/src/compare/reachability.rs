//! Reachability (docs/strategies.md, "What each strategy loses"): every piece of content
//! that entered a history (each tool result, each user and assistant text) is classed at
//! each model call as `in_context` (its full text is in the request), `referenced` (a file
//! the request names holds it, directly or through the files that file names), `on_disk`
//! (a file holds it, but nothing in the request leads there) or `lost` (no full copy
//! anywhere), and counted in chars. Alongside: which results were replaced before the
//! model ever saw them, and what form each piece kept (whole, preview, path, placeholder,
//! summary, nothing).
//!
//! Contents are compared by text, through a hash: a piece is in the request when a text of
//! the request equals it, or when a text the pipeline wrote (a summary, a marker) quotes it
//! whole. Two pieces with the same text are one piece of information and share a class.
//! Files are read once each through the store (the archive, the one file that grows, from
//! where the last read stopped) and indexed by the hashes of the texts they hold; each
//! call then costs a hash of the request, a walk over the files it names and one lookup
//! per piece. It never changes a history or a file.

use std::collections::{HashMap, HashSet};
use std::hash::Hasher;

use serde::Serialize;

use super::files::{file_texts, message_texts, named_paths};
use crate::compact::results::pointed_path;
use crate::message::Message;
use crate::store::{ARCHIVE_PATH, FileWritten, Store};

/// A piece's index, in the order the pieces entered.
pub type PieceId = usize;
type FileId = usize;

/// Where a piece's full text can be found at one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reach {
    InContext,
    Referenced,
    OnDisk,
    Lost,
}

impl Reach {
    pub const ALL: [Reach; 4] = [
        Reach::InContext,
        Reach::Referenced,
        Reach::OnDisk,
        Reach::Lost,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Reach::InContext => "in_context",
            Reach::Referenced => "referenced",
            Reach::OnDisk => "on_disk",
            Reach::Lost => "lost",
        }
    }
}

/// What the request holds of a piece: the whole text, a preview and a path
/// (`<persisted-output>`), a placeholder naming the file with its copy, a placeholder
/// naming nothing, a summary that replaced it, or nothing at all (cut; or archived, then it
/// shows as `Path` when the request leads to the copy).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kept {
    Whole,
    Preview,
    Path,
    Placeholder,
    Summary,
    Nothing,
}

impl Kept {
    pub fn name(self) -> &'static str {
        match self {
            Kept::Whole => "whole",
            Kept::Preview => "preview",
            Kept::Path => "path",
            Kept::Placeholder => "placeholder",
            Kept::Summary => "summary",
            Kept::Nothing => "nothing",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PieceKind {
    ToolResult,
    UserText,
    AssistantText,
}

/// One piece of content that entered the history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Piece {
    pub kind: PieceKind,
    /// Its message's index among the messages that entered (the session's order).
    pub message: usize,
    /// Its block's index, None for string content.
    pub block: Option<usize>,
    pub tool_use_id: Option<String>,
    pub chars: usize,
}

/// A piece at one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PieceState {
    pub reach: Reach,
    pub kept: Kept,
}

/// How many pieces, how many chars.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Amount {
    pub pieces: usize,
    pub chars: usize,
}

impl Amount {
    pub fn add(&mut self, chars: usize) {
        self.pieces += 1;
        self.chars += chars;
    }
}

/// The pieces of one call by class.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ReachTotals {
    pub in_context: Amount,
    pub referenced: Amount,
    pub on_disk: Amount,
    pub lost: Amount,
}

impl ReachTotals {
    pub fn get(&self, reach: Reach) -> Amount {
        match reach {
            Reach::InContext => self.in_context,
            Reach::Referenced => self.referenced,
            Reach::OnDisk => self.on_disk,
            Reach::Lost => self.lost,
        }
    }

    fn slot(&mut self, reach: Reach) -> &mut Amount {
        match reach {
            Reach::InContext => &mut self.in_context,
            Reach::Referenced => &mut self.referenced,
            Reach::OnDisk => &mut self.on_disk,
            Reach::Lost => &mut self.lost,
        }
    }

    /// Every piece, whatever its class.
    pub fn total(&self) -> Amount {
        let mut out = Amount::default();
        for r in Reach::ALL {
            out.pieces += self.get(r).pieces;
            out.chars += self.get(r).chars;
        }
        out
    }
}

/// The classification at one call (or at the end).
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub totals: ReachTotals,
    /// One per piece entered so far, when the accountant keeps detail.
    pub states: Vec<PieceState>,
    /// Results first sent at this call and not whole: replaced before the model saw them.
    pub unseen_replaced: Vec<PieceId>,
}

/// What the request shows of a tool result whose block is still there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Original,
    Preview,
    Path,
    Placeholder,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Gone {
    Summarized,
    Cut,
}

/// What a distinct text names and quotes, computed once.
#[derive(Debug, Default)]
struct TextInfo {
    files: Vec<FileId>,
    quotes: Vec<PieceId>,
}

#[derive(Debug)]
struct Indexed {
    path: String,
    read_bytes: usize,
    /// The files its texts name.
    links: Vec<FileId>,
}

#[derive(Debug)]
struct Tracked {
    piece: Piece,
    hash: u64,
    text: Box<str>,
    first_call: Option<usize>,
    unseen: Option<(usize, Reach)>,
    gone: Option<Gone>,
}

/// Follows one history: pieces as they enter, files as stages write them, and each request.
#[derive(Debug, Default)]
pub struct Accountant {
    detail: bool,
    pieces: Vec<Tracked>,
    piece_hashes: HashSet<u64>,
    messages: usize,
    files: Vec<Indexed>,
    file_ids: HashMap<String, FileId>,
    missing: HashSet<String>,
    /// Content hash -> the files holding that text whole.
    holders: HashMap<u64, Vec<FileId>>,
    texts: HashMap<u64, TextInfo>,
    /// The pieces a text the pipeline writes may quote: in context at the last call, or
    /// entered since.
    candidates: Vec<PieceId>,
    marks: Vec<u32>,
    generation: u32,
}

fn hash(text: &str) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    h.write(text.as_bytes());
    h.write_usize(text.len());
    h.finish()
}

fn push_unique(list: &mut Vec<FileId>, f: FileId) {
    if !list.contains(&f) {
        list.push(f);
    }
}

impl Accountant {
    /// `detail`: keep every piece's state in each snapshot (the workbench's view needs it;
    /// totals alone do not).
    pub fn new(detail: bool) -> Accountant {
        Accountant {
            detail,
            ..Accountant::default()
        }
    }

    /// The pieces so far, by id.
    pub fn pieces(&self) -> impl Iterator<Item = &Piece> {
        self.pieces.iter().map(|t| &t.piece)
    }

    /// When a result was first sent and how far it was then, if it was not sent whole.
    pub fn unseen(&self, id: PieceId) -> Option<(usize, Reach)> {
        self.pieces.get(id).and_then(|t| t.unseen)
    }

    /// A message entered the history: its texts become pieces.
    pub fn enter(&mut self, m: &Message) {
        let message = self.messages;
        self.messages += 1;
        for t in message_texts(m) {
            if t.text.is_empty() {
                continue;
            }
            let kind = match (t.result, m.role()) {
                (true, _) => PieceKind::ToolResult,
                (false, "assistant") => PieceKind::AssistantText,
                (false, _) => PieceKind::UserText,
            };
            let h = hash(&t.text);
            self.piece_hashes.insert(h);
            self.candidates.push(self.pieces.len());
            self.pieces.push(Tracked {
                piece: Piece {
                    kind,
                    message,
                    block: t.block,
                    tool_use_id: t.tool_use_id.map(str::to_string),
                    chars: t.text.chars().count(),
                },
                hash: h,
                text: t.text.into(),
                first_call: None,
                unseen: None,
                gone: None,
            });
        }
    }

    /// Files a stage wrote (or reused): read through `store` and indexed.
    pub fn files_written(&mut self, files: &[FileWritten], store: &Store) {
        for f in files {
            self.missing.remove(&f.path);
            self.index_file(&f.path, store);
        }
    }

    /// Classifies every piece at model call `call`, whose history is `request`;
    /// `before_summary` is the history just before a summary replaced it at this call.
    pub fn call(
        &mut self,
        call: usize,
        request: &[Message],
        before_summary: Option<&[Message]>,
        store: &Store,
    ) -> Snapshot {
        self.classify(Some(call), request, before_summary, store)
    }

    /// Classifies every piece against the history as the session ends.
    pub fn end(&mut self, history: &[Message], store: &Store) -> Snapshot {
        self.classify(None, history, None, store)
    }

    fn classify(
        &mut self,
        call: Option<usize>,
        request: &[Message],
        before_summary: Option<&[Message]>,
        store: &Store,
    ) -> Snapshot {
        let mut present = HashSet::new();
        let mut quoted = HashSet::new();
        let mut roots = Vec::new();
        let mut shapes: HashMap<&str, Shape> = HashMap::new();
        for m in request {
            for t in message_texts(m) {
                let h = hash(&t.text);
                present.insert(h);
                self.ensure_text(h, &t.text, store);
                let Some(info) = self.texts.get(&h) else {
                    continue;
                };
                roots.extend_from_slice(&info.files);
                quoted.extend(info.quotes.iter().copied());
                if let Some(id) = t.tool_use_id {
                    let shape = if self.piece_hashes.contains(&h) {
                        Shape::Original
                    } else if t.text.starts_with("<persisted-output>") {
                        Shape::Preview
                    } else if !info.files.is_empty() || pointed_path(&t.text).is_some() {
                        Shape::Path
                    } else {
                        Shape::Placeholder
                    };
                    shapes.insert(id, shape);
                }
            }
        }
        let before = before_summary.map(|h| self.contents(h, store));
        // The files the request leads to, through the files they name.
        self.generation += 1;
        let g = self.generation;
        while let Some(f) = roots.pop() {
            if self.marks[f] == g {
                continue;
            }
            self.marks[f] = g;
            roots.extend_from_slice(&self.files[f].links);
        }
        let mut snap = Snapshot {
            states: Vec::with_capacity(if self.detail { self.pieces.len() } else { 0 }),
            ..Snapshot::default()
        };
        let mut in_context = Vec::new();
        for (id, p) in self.pieces.iter_mut().enumerate() {
            let reach = if present.contains(&p.hash) || quoted.contains(&id) {
                Reach::InContext
            } else {
                match self.holders.get(&p.hash) {
                    Some(fs) if fs.iter().any(|&f| self.marks[f] == g) => Reach::Referenced,
                    Some(fs) if !fs.is_empty() => Reach::OnDisk,
                    _ => Reach::Lost,
                }
            };
            let shape = p
                .piece
                .tool_use_id
                .as_deref()
                .and_then(|i| shapes.get(i).copied());
            let kept = match (reach, shape) {
                (Reach::InContext, _) => Kept::Whole,
                (_, Some(Shape::Preview)) => Kept::Preview,
                (_, Some(Shape::Path)) => Kept::Path,
                (_, Some(Shape::Placeholder | Shape::Original)) => Kept::Placeholder,
                (_, None) => {
                    let gone = match p.gone {
                        Some(g) => g,
                        None => {
                            let g = match &before {
                                Some(b) if b.holds(id, p) => Gone::Summarized,
                                _ => Gone::Cut,
                            };
                            p.gone = Some(g);
                            g
                        }
                    };
                    match gone {
                        Gone::Summarized => Kept::Summary,
                        Gone::Cut if reach == Reach::Referenced => Kept::Path,
                        Gone::Cut => Kept::Nothing,
                    }
                }
            };
            if let Some(c) = call
                && p.piece.kind == PieceKind::ToolResult
                && p.first_call.is_none()
            {
                p.first_call = Some(c);
                if reach != Reach::InContext {
                    p.unseen = Some((c, reach));
                    snap.unseen_replaced.push(id);
                }
            }
            if reach == Reach::InContext {
                in_context.push(id);
            }
            snap.totals.slot(reach).add(p.piece.chars);
            if self.detail {
                snap.states.push(PieceState { reach, kept });
            }
        }
        if call.is_some() {
            self.candidates = in_context;
        }
        snap
    }

    /// What a history holds, for telling summarized pieces from cut ones.
    fn contents<'a>(&mut self, history: &'a [Message], store: &Store) -> Contents<'a> {
        let mut out = Contents::default();
        for m in history {
            for t in message_texts(m) {
                let h = hash(&t.text);
                out.hashes.insert(h);
                self.ensure_text(h, &t.text, store);
                if let Some(info) = self.texts.get(&h) {
                    out.quoted.extend(info.quotes.iter().copied());
                }
                if let Some(id) = t.tool_use_id {
                    out.ids.insert(id);
                }
            }
        }
        out
    }

    /// Computes what a text names and quotes, once per distinct text.
    fn ensure_text(&mut self, h: u64, text: &str, store: &Store) {
        if self.texts.contains_key(&h) {
            return;
        }
        let mut files = Vec::new();
        for path in named_paths(text) {
            if let Some(f) = self.resolve(path, store) {
                push_unique(&mut files, f);
            }
        }
        // A piece's own text quotes nothing; only what the pipeline wrote may quote.
        let quotes = if self.piece_hashes.contains(&h) {
            Vec::new()
        } else {
            self.candidates
                .iter()
                .copied()
                .filter(|&id| {
                    let p = &self.pieces[id].text;
                    p.len() <= text.len() && text.contains(&**p)
                })
                .collect()
        };
        self.texts.insert(h, TextInfo { files, quotes });
    }

    /// The file a path names, indexed on first sight if a stage's report did not list it.
    fn resolve(&mut self, path: &str, store: &Store) -> Option<FileId> {
        let path = path.strip_prefix("./").unwrap_or(path);
        if let Some(&id) = self.file_ids.get(path) {
            return Some(id);
        }
        if self.missing.contains(path) {
            return None;
        }
        let found = self.index_file(path, store);
        if found.is_none() {
            self.missing.insert(path.to_string());
        }
        found
    }

    /// Reads a file (the archive: only what was appended since the last read) and records
    /// which texts it holds and which files they name.
    fn index_file(&mut self, path: &str, store: &Store) -> Option<FileId> {
        let known = self.file_ids.get(path).copied();
        if known.is_some() && path != ARCHIVE_PATH {
            return known;
        }
        let Ok(text) = store.read_text(path) else {
            return known;
        };
        let id = known.unwrap_or_else(|| {
            self.files.push(Indexed {
                path: path.to_string(),
                read_bytes: 0,
                links: Vec::new(),
            });
            self.marks.push(0);
            self.file_ids.insert(path.to_string(), self.files.len() - 1);
            self.files.len() - 1
        });
        let start = self.files[id].read_bytes;
        // An append-only file grows at its end; if it ever did not, read it whole again.
        let fresh = text.get(start..).unwrap_or(&text);
        self.files[id].read_bytes = text.len();
        let mut texts = Vec::new();
        file_texts(&self.files[id].path, fresh, |t| texts.push(t.to_string()));
        for t in texts {
            self.hold(id, &t, store);
        }
        Some(id)
    }

    fn hold(&mut self, file: FileId, text: &str, store: &Store) {
        let h = hash(text);
        push_unique(self.holders.entry(h).or_default(), file);
        self.ensure_text(h, text, store);
        let Some(info) = self.texts.get(&h) else {
            return;
        };
        let links: Vec<FileId> = info.files.iter().copied().filter(|&f| f != file).collect();
        let quotes: Vec<u64> = info.quotes.iter().map(|&q| self.pieces[q].hash).collect();
        for f in links {
            push_unique(&mut self.files[file].links, f);
        }
        for q in quotes {
            push_unique(self.holders.entry(q).or_default(), file);
        }
    }
}

/// The texts and result ids of one history, and the pieces its texts quote.
#[derive(Debug, Default)]
struct Contents<'a> {
    hashes: HashSet<u64>,
    ids: HashSet<&'a str>,
    quoted: HashSet<PieceId>,
}

impl Contents<'_> {
    fn holds(&self, id: PieceId, p: &Tracked) -> bool {
        self.hashes.contains(&p.hash)
            || self.quoted.contains(&id)
            || p.piece
                .tool_use_id
                .as_deref()
                .is_some_and(|i| self.ids.contains(i))
    }
}
