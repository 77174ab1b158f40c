//! Messages measured once and their text dropped, for a breakdown of every call of a
//! session too large to hold (`inspect --calls`, issue 36). Each message becomes a few
//! pieces, each a size and what `classify::message_parts` would make of it before the
//! session is whole: a text's category waits for the hint (a summary's is all summary), a
//! tool result's for its tool's name (known once every tool use is read) and for the
//! micro compactions' cleared ids at the call. `add` gives the same parts as
//! `message_parts` on the message (a test compares them over every fixture).

use std::collections::{HashMap, HashSet};

use serde_json::Value;
use tiktoken_rs::CoreBPE;

use super::classify::{Hint, is_marker, is_placeholder};
use super::{Category, Parts, Size};
use crate::message::{BlockKind, Content, Message, ResultContent, Role, block_type};
use crate::session::CLEARED_RESULT_TEXT;
use crate::session::claude_persisted::claude_code_persisted;

/// A category fixed when the message is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fixed {
    Thinking,
    ToolCalls,
    ClaudeCodePersisted,
    PersistedPreviews,
    Images,
    Summaries,
}

impl Fixed {
    fn category(self) -> Category {
        match self {
            Fixed::Thinking => Category::Thinking,
            Fixed::ToolCalls => Category::ToolCalls,
            Fixed::ClaudeCodePersisted => Category::ClaudeCodePersisted,
            Fixed::PersistedPreviews => Category::PersistedPreviews,
            Fixed::Images => Category::Images,
            Fixed::Summaries => Category::Summaries,
        }
    }
}

/// Where a piece goes once the call is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    /// Text on the role's side; summaries under a summary hint or when it is a user's
    /// compaction marker.
    Text { user_marker: bool },
    /// Its category, or summaries under a summary hint.
    Over(Fixed),
    /// Its category whatever the hint.
    Fixed(Fixed),
    /// The results of the tool of the result it is in, or summaries under a summary hint.
    Tool,
    /// A tool result's start: its id, and how many pieces after it are its content.
    Result { id: u32, pieces: u32 },
}

#[derive(Debug, Clone, Copy)]
struct Piece {
    slot: Slot,
    size: Size,
}

/// A message's side, as `message_parts` reads its role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Assistant,
    System,
    Developer,
    User,
}

#[derive(Debug, Clone, Copy)]
struct Head {
    start: usize,
    side: Side,
    /// `role()` is exactly "user" (a cleared result counts only there).
    user_role: bool,
}

/// Measured messages, in order.
#[derive(Debug, Default)]
pub struct Store {
    heads: Vec<Head>,
    pieces: Vec<Piece>,
}

impl Store {
    pub fn len(&self) -> usize {
        self.heads.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heads.is_empty()
    }

    fn range(&self, i: usize) -> &[Piece] {
        let start = self.heads[i].start;
        let end = self.heads.get(i + 1).map_or(self.pieces.len(), |h| h.start);
        &self.pieces[start..end]
    }
}

/// Tool ids by number, and what a message's sizes are counted with.
pub struct Measurer {
    bpe: Option<&'static CoreBPE>,
    ids: HashMap<String, u32>,
    id_names: Vec<String>,
}

impl Measurer {
    pub fn new(bpe: Option<&'static CoreBPE>) -> Measurer {
        Measurer {
            bpe,
            ids: HashMap::new(),
            id_names: Vec::new(),
        }
    }

    pub fn size(&self, text: &str) -> Size {
        Size {
            chars: text.chars().count() as u64,
            tokens: self.bpe.map_or(0, |b| super::tokens::count(b, text)),
        }
    }

    fn id(&mut self, id: &str) -> u32 {
        if let Some(&n) = self.ids.get(id) {
            return n;
        }
        let n = self.id_names.len() as u32;
        self.ids.insert(id.to_string(), n);
        self.id_names.push(id.to_string());
        n
    }

    /// The tool ids measured so far, by number.
    pub fn id_names(&self) -> &[String] {
        &self.id_names
    }

    /// The number of a tool id measured, if it was.
    pub fn number_of(&self, id: &str) -> Option<u32> {
        self.ids.get(id).copied()
    }

    /// Measures `m` onto the end of `store`.
    pub fn measure(&mut self, store: &mut Store, m: &Message) {
        let role = m.role();
        let side = match role {
            "assistant" => Side::Assistant,
            "system" => Side::System,
            "developer" => Side::Developer,
            _ => Side::User,
        };
        let user_kind = m.role_kind() == Role::User;
        store.heads.push(Head {
            start: store.pieces.len(),
            side,
            user_role: role == "user",
        });
        let text = |t: &str| Slot::Text {
            user_marker: user_kind && is_marker(t),
        };
        match m.content() {
            Content::Text(t) => store.pieces.push(Piece {
                slot: text(t),
                size: self.size(t),
            }),
            Content::Blocks(blocks) => {
                for b in blocks {
                    self.block(store, b, &text);
                }
            }
        }
    }

    fn block(&mut self, store: &mut Store, b: &Value, text: &dyn Fn(&str) -> Slot) {
        let field = |k: &str| b.get(k).and_then(Value::as_str).unwrap_or("");
        let mut push = |slot: Slot, size: Size| store.pieces.push(Piece { slot, size });
        match block_type(b).unwrap_or("") {
            "text" => push(text(field("text")), self.size(field("text"))),
            "thinking" => push(Slot::Over(Fixed::Thinking), self.size(field("thinking"))),
            "redacted_thinking" => push(Slot::Over(Fixed::Thinking), self.size(field("data"))),
            "tool_use" | "server_tool_use" => {
                let input = b.get("input").map(Value::to_string).unwrap_or_default();
                let size = self.size(&format!("{}{input}", field("name")));
                push(Slot::Over(Fixed::ToolCalls), size);
            }
            "image" => push(Slot::Fixed(Fixed::Images), image(b)),
            "tool_result" => {
                let id = self.id(field("tool_use_id"));
                let at = store.pieces.len();
                store.pieces.push(Piece {
                    slot: Slot::Result { id, pieces: 0 },
                    size: Size::default(),
                });
                match ResultContent::of(b) {
                    ResultContent::Text(t) => self.result_text(store, t),
                    ResultContent::Blocks(items) => {
                        for item in items {
                            match BlockKind::of(item) {
                                BlockKind::Text => self.result_text(
                                    store,
                                    item.get("text").and_then(Value::as_str).unwrap_or(""),
                                ),
                                BlockKind::Image => store.pieces.push(Piece {
                                    slot: Slot::Fixed(Fixed::Images),
                                    size: image(item),
                                }),
                                _ => store.pieces.push(Piece {
                                    slot: Slot::Tool,
                                    size: self.size(&item.to_string()),
                                }),
                            }
                        }
                    }
                    ResultContent::Empty => {}
                }
                let n = (store.pieces.len() - at - 1) as u32;
                store.pieces[at].slot = Slot::Result { id, pieces: n };
            }
            _ => push(text(""), self.size(&b.to_string())),
        }
    }

    fn result_text(&self, store: &mut Store, t: &str) {
        let slot = if claude_code_persisted(t).is_some() {
            Slot::Over(Fixed::ClaudeCodePersisted)
        } else if crate::compact::markers::is_persisted(t) {
            Slot::Over(Fixed::PersistedPreviews)
        } else if is_placeholder(t) {
            Slot::Fixed(Fixed::Summaries)
        } else {
            Slot::Tool
        };
        store.pieces.push(Piece {
            slot,
            size: self.size(t),
        });
    }
}

fn image(b: &Value) -> Size {
    Size {
        chars: 0,
        tokens: super::image::image_tokens(b),
    }
}

/// What the pieces need at a call: each tool id's category, the cleared ids and the size
/// of the text a cleared result reads as.
pub struct Resolve<'a> {
    /// By tool id number: the results' category of the tool it names.
    pub tools: &'a [Category],
    pub cleared: &'a HashSet<u32>,
    pub cleared_size: Size,
}

impl Resolve<'_> {
    /// Adds message `i` of `store`'s parts under `hint` to `parts`.
    pub fn add(&self, parts: &mut Parts, store: &Store, i: usize, hint: Hint) {
        let head = store.heads[i];
        let summary = hint == Hint::Summary;
        let side = match head.side {
            Side::Assistant => Category::AssistantText,
            Side::System => Category::SystemPrompt,
            Side::Developer => Category::DeveloperMessages,
            Side::User => Category::UserText,
        };
        let over = |c: Category| if summary { Category::Summaries } else { c };
        let pieces = store.range(i);
        let mut tool: Option<&Category> = None;
        let mut k = 0;
        while k < pieces.len() {
            let p = pieces[k];
            k += 1;
            let cat = match p.slot {
                Slot::Text { user_marker } => {
                    if summary || user_marker {
                        Category::Summaries
                    } else {
                        side.clone()
                    }
                }
                Slot::Over(f) => over(f.category()),
                Slot::Fixed(f) => f.category(),
                Slot::Tool => over(tool.cloned().unwrap_or_else(|| Category::tool("unknown"))),
                Slot::Result { id, pieces: n } => {
                    if head.user_role && self.cleared.contains(&id) {
                        parts.add(Category::Summaries, self.cleared_size);
                        k += n as usize;
                    } else {
                        tool = self.tools.get(id as usize);
                    }
                    continue;
                }
            };
            parts.add(cat, p.size);
        }
    }
}

/// The size a cleared result reads as.
pub fn cleared_size(m: &Measurer) -> Size {
    m.size(CLEARED_RESULT_TEXT)
}
