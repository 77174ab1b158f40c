//! Every call of a session broken down from its measured messages (`measured`) rather
//! than from the messages: what `session::of_session` gives, call by call, for a session
//! read by `session::sized_read` (each message an outline, each Codex history the numbers
//! of its items). `Collector` is the read's sink; `SizedCalls` follows the view call to
//! call as `session::ViewWalk` does and hands each call's breakdown over as it is made,
//! so the calls are never all held (issue 36, issue 39 item 8). A calibrated count walks
//! the calls twice: once for the fit, once for the breakdowns.

use std::collections::{HashMap, HashSet};

use tiktoken_rs::CoreBPE;

use super::classify::Hint;
use super::file_record::RecordSizer;
use super::measured::{Measurer, Resolve, Store, cleared_size};
use super::session::{CallPoint, call_points, choose_counting};
use super::tokens::Family;
use super::{CallBreakdown, Category, Counting, Fit, Parts, Remainder, finish};
use crate::message::{Message, tool_names};
use crate::session::model_view::synthesized_summary;
use crate::session::sized_read::{SizeSink, SizedHistory};
use crate::session::{CompactionKind, MessageKind, Session};

/// A sized read's sink: every message and history item measured, the histories by line.
pub struct Collector {
    measurer: Measurer,
    family: Option<Family>,
    messages: Store,
    items: Store,
    /// Each item's place in `items` (None: skipped) and its tool uses (id, name).
    item_at: Vec<Option<usize>>,
    item_tools: Vec<Vec<(String, String)>>,
    histories: HashMap<usize, SizedHistory>,
}

impl Collector {
    /// Counting tokens with `family`'s tokenizer (None: characters only).
    pub fn new(family: Option<Family>) -> Collector {
        let bpe = family.and_then(super::tokens::encoder);
        Collector {
            measurer: Measurer::new(bpe),
            family,
            messages: Store::default(),
            items: Store::default(),
            item_at: Vec::new(),
            item_tools: Vec::new(),
            histories: HashMap::new(),
        }
    }
}

impl SizeSink for Collector {
    fn message(&mut self, m: &Message) {
        self.measurer.measure(&mut self.messages, m);
    }

    fn item(&mut self, number: u32, m: Option<&Message>) {
        debug_assert_eq!(number as usize, self.item_at.len());
        match m {
            Some(m) => {
                self.item_at.push(Some(self.items.len()));
                self.measurer.measure(&mut self.items, m);
                let names = tool_names(std::iter::once(m));
                // One message's tool uses in block order: the last of a repeated id wins.
                let mut tools: Vec<(String, String)> = Vec::new();
                for b in m.tool_uses() {
                    if let Some(id) = b.get("id").and_then(serde_json::Value::as_str)
                        && let Some(name) = names.get(id)
                    {
                        tools.push((id.to_string(), name.clone()));
                    }
                }
                self.item_tools.push(tools);
            }
            None => {
                self.item_at.push(None);
                self.item_tools.push(Vec::new());
            }
        }
    }

    fn history(&mut self, line: usize, h: SizedHistory) {
        self.histories.insert(line, h);
    }
}

/// Why the measured session cannot be broken down this way (the caller breaks down the
/// whole session instead).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unsized {
    /// The messages were measured with another tokenizer than the session's calls ask
    /// for: measure again with this one.
    Tokenizer(Option<Family>),
    /// The read's messages and the measured ones differ in number, or a compaction keeps
    /// a message that is not the session's.
    Mismatch,
}

/// A session's calls ready to be broken down one by one.
pub struct SizedCalls<'a> {
    s: &'a Session,
    c: &'a Collector,
    points: Vec<CallPoint>,
    counting: Counting,
    bpe: Option<&'static CoreBPE>,
    tools: Vec<Category>,
    system: Option<Parts>,
    cleared_size: super::Size,
}

impl<'a> SizedCalls<'a> {
    /// The calls of `s` as the collector measured them; a calibrated count is fit here.
    pub fn new(s: &'a Session, c: &'a Collector) -> Result<SizedCalls<'a>, Unsized> {
        if c.messages.len() != s.messages.len() {
            return Err(Unsized::Mismatch);
        }
        let points = call_points(s);
        let (counting, bpe) = choose_counting(&points);
        let wanted = match counting {
            Counting::Exact(f) | Counting::Proxy(f) => Some(f),
            Counting::Calibrated(_) => None,
        };
        if wanted != c.family {
            return Err(Unsized::Tokenizer(wanted));
        }
        for k in s.compactions.iter().flat_map(|c| c.kept.iter().flatten()) {
            if k.from.is_none_or(|i| i >= s.messages.len()) {
                return Err(Unsized::Mismatch);
            }
        }
        let names = all_names(s, c);
        let tools = c
            .measurer
            .id_names()
            .iter()
            .map(|id| Category::tool(names.get(id).map_or("unknown", String::as_str)))
            .collect();
        let system = s.meta.system_prompt.as_deref().map(|t| {
            let mut p = Parts::default();
            p.add(Category::SystemPrompt, c.measurer.size(t));
            p
        });
        let mut calls = SizedCalls {
            s,
            c,
            points,
            counting,
            bpe,
            tools,
            system,
            cleared_size: cleared_size(&c.measurer),
        };
        if let Counting::Calibrated(_) = calls.counting {
            let mut fit_points = Vec::with_capacity(calls.points.len());
            calls
                .walk(&mut |p, c| {
                    let images = p.get(&Category::Images).tokens;
                    if let Some(r) = c.recorded.and_then(|r| r.checked_sub(images)) {
                        fit_points.push((p.chars(), r));
                    }
                    Ok::<(), ()>(())
                })
                .ok();
            calls.counting = Counting::Calibrated(Fit::of(&fit_points));
        }
        Ok(calls)
    }

    pub fn counting(&self) -> Counting {
        self.counting
    }

    pub fn len(&self) -> usize {
        self.points.len()
    }

    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// Hands each call's breakdown to `f` in order, as it is made.
    pub fn each<E>(&self, f: &mut dyn FnMut(CallBreakdown) -> Result<(), E>) -> Result<(), E> {
        let counting = self.counting;
        let mut i = 0;
        self.walk(&mut |p, c| {
            i += 1;
            let mut b = finish(i, &p, &counting, c.recorded, Remainder::NotInFile);
            b.message = c.message;
            b.model = c.model.clone();
            f(b)
        })
    }

    /// Each call's parts with its point, in order.
    fn walk<E>(&self, f: &mut dyn FnMut(Parts, &CallPoint) -> Result<(), E>) -> Result<(), E> {
        let mut view = View::new(self);
        let mut record = RecordSizer::new(self.s, self.bpe);
        for p in &self.points {
            let mut parts = view.parts_at(p.upto);
            if let Some(lines) = &p.lines {
                parts.merge(&record.parts(lines));
            }
            if let Some(sys) = &self.system {
                parts.merge(sys);
            }
            f(parts, p)?;
        }
        Ok(())
    }
}

/// The tool names by id as `of_session` gathers them: the messages', then each
/// compaction's kept messages and the rest of its new history.
fn all_names(s: &Session, c: &Collector) -> HashMap<String, String> {
    let mut names = tool_names(s.messages.iter());
    for comp in &s.compactions {
        names.extend(tool_names(comp.kept.iter().flatten().map(|k| &k.message)));
        if let Some(h) = c.histories.get(&comp.line) {
            for kept in [true, false] {
                for it in h.items.iter().filter(|it| it.kept == kept) {
                    if let Some(tools) = c.item_tools.get(it.item as usize) {
                        names.extend(tools.iter().cloned());
                    }
                }
            }
        }
    }
    names
}

/// The model's view followed through the session (`session::ViewWalk` on measured
/// messages).
struct View<'c, 'a> {
    calls: &'c SizedCalls<'a>,
    epoch: Option<(Option<usize>, usize)>,
    cleared: HashSet<u32>,
    running: Parts,
    cursor: usize,
}

impl<'c, 'a> View<'c, 'a> {
    fn new(calls: &'c SizedCalls<'a>) -> Self {
        View {
            calls,
            epoch: None,
            cleared: HashSet::new(),
            running: Parts::default(),
            cursor: 0,
        }
    }

    fn parts_at(&mut self, upto: usize) -> Parts {
        let s = self.calls.s;
        let c = self.calls.c;
        let upto = upto.min(s.messages.len());
        let last_full = s
            .compactions
            .iter()
            .rposition(|c| c.kind.replaces_history() && c.at <= upto);
        let micro_from = last_full.map_or(0, |k| k + 1);
        let micros: Vec<usize> = (micro_from..s.compactions.len())
            .filter(|&k| {
                s.compactions[k].kind == CompactionKind::Micro && s.compactions[k].at <= upto
            })
            .collect();
        let epoch = (last_full, micros.len());
        if self.epoch != Some(epoch) || upto < self.cursor {
            self.epoch = Some(epoch);
            let measurer = &c.measurer;
            self.cleared = micros
                .iter()
                .flat_map(|&k| s.compactions[k].cleared_tool_ids.iter())
                .filter_map(|id| measurer.number_of(id))
                .collect();
            self.running = Parts::default();
            self.cursor = 0;
            let full = last_full.map(|k| &s.compactions[k]);
            let mut running = Parts::default();
            let r = Resolve {
                tools: &self.calls.tools,
                cleared: &self.cleared,
                cleared_size: self.calls.cleared_size,
            };
            if let Some(h) = full.and_then(|comp| c.histories.get(&comp.line)) {
                for (j, it) in h.items.iter().enumerate() {
                    let hint = if h.summary == Some(j) {
                        Hint::Summary
                    } else {
                        Hint::Normal
                    };
                    if let Some(Some(at)) = c.item_at.get(it.item as usize) {
                        r.add(&mut running, &c.items, *at, hint);
                    }
                }
                self.cursor = last_full.map_or(0, |k| s.compactions[k].at.min(upto));
            } else if let Some(k) = last_full {
                let comp = &s.compactions[k];
                let mut from = comp.at;
                if let Some(i) = comp.summary_message.filter(|&i| i < s.messages.len()) {
                    r.add(&mut running, &c.messages, i, Hint::Summary);
                    from = from.max(i + 1);
                }
                match &comp.kept {
                    Some(kept) => {
                        for k in kept.iter().filter_map(|k| k.from) {
                            r.add(&mut running, &c.messages, k, Hint::Normal);
                        }
                    }
                    None if comp.summary_message.is_none() => {
                        let mut one = Store::default();
                        let mut m = Measurer::new(self.calls.bpe);
                        m.measure(&mut one, &synthesized_summary(&comp.summary));
                        let tools: Vec<Category> = m
                            .id_names()
                            .iter()
                            .map(|_| Category::tool("unknown"))
                            .collect();
                        let r1 = Resolve {
                            tools: &tools,
                            cleared: &HashSet::new(),
                            cleared_size: r.cleared_size,
                        };
                        r1.add(&mut running, &one, 0, Hint::Summary);
                    }
                    None => {}
                }
                self.cursor = from.min(upto);
            }
            self.running = running;
        }
        let r = Resolve {
            tools: &self.calls.tools,
            cleared: &self.cleared,
            cleared_size: self.calls.cleared_size,
        };
        for i in self.cursor..upto {
            if s.info[i].kind == MessageKind::CompactSummary {
                continue;
            }
            r.add(&mut self.running, &c.messages, i, Hint::Normal);
        }
        self.cursor = self.cursor.max(upto);
        self.running.clone()
    }
}
