//! A recorded session's compactions as forgot inputs. The history before a compaction is
//! what the model had (the previous summary, what it kept, the messages since, with earlier
//! micro compactions' results cleared), numbered by the session's messages. What was kept
//! is what the file records, or, where it records nothing, the recording agent's own rule
//! applied to that history (Claude Code: nothing is kept without a preserved segment;
//! Codex's local compaction: the recent user messages up to 20,000 tokens). Where neither
//! holds, the input says so.

use std::collections::HashSet;

use serde_json::Value;

use super::before_index::BeforeIndex;
use super::parts::Numbered;
use super::{CompactionInput, KeptHow, KeptInput, SummaryText};
use crate::message::{BlockKind, Message, Role};
use crate::session::{
    CLEARED_RESULT_TEXT, Compaction, CompactionKind, KeptMessage, MessageKind, MessageOrigin,
    Session, Summary, Tool,
};

/// Codex keeps at most this many tokens of recent user messages beside a local summary,
/// counting a token per 4 bytes.
pub const CODEX_USER_MESSAGE_MAX_TOKENS: usize = 20_000;
const CODEX_BYTES_PER_TOKEN: usize = 4;

const CLAUDE_RULE: &str = "Claude Code replaces everything before the boundary with the summary, except the messages the boundary records as preserved (compactMetadata.preservedMessages, or the older preservedSegment).";
const CODEX_LOCAL_RULE: &str = "Codex's local compaction keeps the recent user messages (newest first, up to about 20,000 tokens at 4 bytes a token) beside the summary; the rollout records only the summary, so the rule is applied here to the history before.";
const CODEX_REMOTE_RULE: &str =
    "Codex's remote compaction records its replacement_history: that list is what the model kept.";
const CODEX_SERVER_RULE: &str = "The server compacted the context itself (Codex sent `compaction_trigger`; the answer is a `compaction` item, its summary encrypted): the replacement_history the rollout records is what the model kept.";
const CODEX_UNRECORDED_RULE: &str = "Codex keeps either recent user messages beside a summary (local) or a replacement history (remote); this rollout marks a compaction and records neither, so what it kept is not known.";
const CTXLAB_RULE: &str = "ctxlab's summary replaces the history it summarized (a reactive summary keeps the tail its report names); a transcript starts at the previous summary.";
const CLAUDE_MICRO_RULE: &str = "Claude Code's microcompact clears the content of the tool results its boundary lists and keeps every message.";
const PROXY_RULE: &str = "Read from two captured requests: the later one no longer extends the earlier; its first new message is taken as the summary, and the messages both start with as what was kept.";
const PROXY_MICRO_RULE: &str = "Read from two captured requests: the later one holds every message of the earlier, with some tool results' content replaced.";

fn summary_text(s: &Summary) -> SummaryText {
    match s {
        Summary::Text(t) => SummaryText::Text(t.clone()),
        Summary::Encrypted => SummaryText::Encrypted,
        Summary::NotRecorded => SummaryText::NotRecorded,
        Summary::None => SummaryText::None,
    }
}

/// A message of the session; injected context and summaries count as injected (nobody
/// typed them).
pub(super) fn numbered(s: &Session, i: usize) -> Numbered {
    Numbered {
        number: Some(i),
        message: s.messages[i].clone(),
        injected: s
            .info
            .get(i)
            .is_some_and(|o| o.kind != MessageKind::Conversation),
    }
}

/// What a walk over the compactions reads of a session: every compaction, and the messages
/// from `offset` on, each known by its number in the whole session. A whole read is the
/// view from 0; a streamed read of a Claude Code file (issue 36) holds only the messages
/// since the last full compaction but one (`session::claude_windows`), which are all a
/// compaction's input takes.
#[derive(Clone, Copy)]
pub struct SessionView<'a> {
    pub session: &'a Session,
    /// The number of `session.messages[0]` in the whole session.
    pub offset: usize,
}

impl<'a> SessionView<'a> {
    pub fn whole(session: &'a Session) -> SessionView<'a> {
        SessionView { session, offset: 0 }
    }

    /// The number the next message would get: messages held and the ones before them.
    fn len(&self) -> usize {
        self.offset + self.session.messages.len()
    }

    fn compactions(&self) -> &'a [Compaction] {
        &self.session.compactions
    }

    fn info(&self, i: usize) -> Option<&'a MessageOrigin> {
        self.session.info.get(i.checked_sub(self.offset)?)
    }

    /// Message `i`, as `numbered` gives it; None when it is not held.
    fn numbered(&self, i: usize) -> Option<Numbered> {
        let message = self.session.messages.get(i.checked_sub(self.offset)?)?;
        Some(Numbered {
            number: Some(i),
            message: message.clone(),
            injected: self
                .info(i)
                .is_some_and(|o| o.kind != MessageKind::Conversation),
        })
    }
}

fn clear(m: &mut Message, ids: &HashSet<&str>) {
    let hit = m
        .tool_results()
        .any(|b| ids.contains(b.get("tool_use_id").and_then(Value::as_str).unwrap_or("")));
    if !hit {
        return;
    }
    if let Some(blocks) = m.blocks_mut() {
        for b in blocks.iter_mut() {
            let id = b.get("tool_use_id").and_then(Value::as_str).unwrap_or("");
            if BlockKind::of(b) == BlockKind::ToolResult && ids.contains(id) {
                b["content"] = Value::String(CLEARED_RESULT_TEXT.to_string());
            }
        }
    }
}

/// What the model had just before compaction `k`: the last full compaction's summary and
/// kept messages, the messages since, with the results of micro compactions between
/// cleared. `last_full` is the last compaction before `k` that replaced the history (the
/// walk keeps it, so no compaction is looked for from `k` back); `work` counts the steps.
fn history_before(
    v: SessionView,
    k: usize,
    prev_kept: &mut Vec<Numbered>,
    last_full: Option<usize>,
    work: &mut u64,
) -> Vec<Numbered> {
    let compactions = v.compactions();
    let c = &compactions[k];
    // The last full one at or before this one's message; a file whose compactions are out
    // of order is searched back as before.
    let prev = match last_full {
        Some(p) if compactions[p].at <= c.at => Some(p),
        _ => {
            *work += k as u64;
            compactions[..k]
                .iter()
                .rposition(|p| p.kind.replaces_history() && p.at <= c.at)
        }
    };
    let mut out = Vec::new();
    let mut from = 0;
    if let Some(p) = prev.map(|p| &compactions[p]) {
        from = p.at;
        if let Some(n) = p.summary_message.and_then(|i| v.numbered(i)) {
            from = from.max(n.number.map_or(0, |i| i + 1));
            out.push(n);
        } else if let Summary::Text(t) = &p.summary {
            out.push(Numbered {
                number: None,
                message: Message::user_text(t.clone()),
                injected: true,
            });
        }
        if c.kind.replaces_history() {
            // This compaction's own kept messages replace them next: moved, not cloned.
            out.append(prev_kept);
        } else {
            out.extend(prev_kept.iter().cloned());
        }
    }
    let upto = c.at.min(v.len());
    out.extend(
        (from.min(upto)..upto)
            .filter(|&i| {
                v.info(i)
                    .is_none_or(|o| o.kind != MessageKind::CompactSummary)
            })
            .filter_map(|i| v.numbered(i)),
    );
    let between = &compactions[prev.map_or(0, |p| p + 1)..k];
    *work += (between.len() + upto.saturating_sub(from)) as u64;
    let cleared: HashSet<&str> = between
        .iter()
        .filter(|m| m.kind == CompactionKind::Micro)
        .flat_map(|m| m.cleared_tool_ids.iter().map(String::as_str))
        .collect();
    if !cleared.is_empty() {
        for n in &mut out {
            clear(&mut n.message, &cleared);
        }
    }
    out
}

/// The messages after compaction `k`, up to the next full one, `next_full` (a cleared
/// result stays cleared until a summary replaces the history).
fn history_after(
    v: SessionView,
    k: usize,
    next_full: Option<usize>,
    work: &mut u64,
) -> Vec<Numbered> {
    let len = v.len();
    let start = v.compactions()[k].at.min(len);
    let end = next_full.map_or(len, |n| v.compactions()[n].at.clamp(start, len));
    *work += (end - start) as u64;
    (start..end)
        .filter(|&i| {
            v.info(i)
                .is_none_or(|o| o.kind == MessageKind::Conversation)
        })
        .filter_map(|i| v.numbered(i))
        .collect()
}

/// Which messages of `before` (`index`) the recorded kept ones are: by number, else by
/// equality.
fn kept_from(kept: Option<Vec<KeptMessage>>, index: &BeforeIndex) -> KeptInput {
    let kept = kept.unwrap_or_default();
    let mut from_before = Vec::new();
    for k in &kept {
        from_before.extend(index.find(k.from, &k.message));
    }
    KeptInput::recorded(kept.into_iter().map(|k| k.message).collect(), from_before)
}

/// Codex's local rule: user messages (not injected, not tool results), newest first, while
/// their bytes / 4 fit in 20,000 tokens; the one that does not fit is kept cut.
pub fn codex_local_kept(before: &[Numbered]) -> KeptInput {
    let mut remaining = CODEX_USER_MESSAGE_MAX_TOKENS;
    let mut picked: Vec<(usize, Message)> = Vec::new();
    for (i, n) in before.iter().enumerate().rev() {
        if remaining == 0 {
            break;
        }
        if n.injected || n.message.role_kind() != Role::User || n.message.is_tool_result_message() {
            continue;
        }
        let text = n.message.joined_text();
        if text.is_empty() {
            continue;
        }
        let tokens = text.len().div_ceil(CODEX_BYTES_PER_TOKEN);
        if tokens <= remaining {
            remaining -= tokens;
            picked.push((i, n.message.clone()));
        } else {
            let mut end = remaining * CODEX_BYTES_PER_TOKEN;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            picked.push((i, Message::user_text(&text[..end])));
            remaining = 0;
        }
    }
    picked.reverse();
    KeptInput {
        how: KeptHow::ByRule,
        why: Some(format!(
            "Codex's local rule keeps the recent user messages: {} here",
            picked.len()
        )),
        from_before: picked.iter().map(|(i, _)| *i).collect(),
        messages: picked.into_iter().map(|(_, m)| m).collect(),
    }
}

/// One input per compaction the file records, in order.
pub fn inputs_of_session(s: &Session) -> Vec<CompactionInput> {
    let mut out = Vec::new();
    each_input_of_session(s, |input| out.push(input));
    out
}

/// Each compaction's input in order, handed to `each` as soon as it is built, so a caller
/// that analyses one and lets it go holds one compaction's history at a time, not every
/// compaction's (issue 36: a session of thousands of compactions). Between inputs only
/// what the last full compaction kept is held. Returns the steps taken (messages and
/// compactions looked at): linear in the session, which a test checks.
pub fn each_input_of_session(s: &Session, mut each: impl FnMut(CompactionInput)) -> u64 {
    walk(
        s,
        |_, c| c.kept.clone(),
        |input| {
            // The input is the caller's: what the next compaction starts from is a copy.
            let kept = input.kept.messages.clone();
            each(input);
            kept
        },
    )
}

/// `each_input_of_session` with what each compaction kept asked of `kept_of` (called once
/// per compaction, in order) instead of read from `Compaction::kept`: a read that holds
/// each Codex history item once builds one compaction's kept messages at a time
/// (`session::kept_read`). Each input is lent to `each`, so what a compaction kept is
/// moved on to the next one's history, not copied.
pub fn each_input_with_kept(
    s: &Session,
    kept_of: impl FnMut(usize, &Compaction) -> Option<Vec<KeptMessage>>,
    mut each: impl FnMut(&CompactionInput),
) -> u64 {
    walk(s, kept_of, |input| {
        each(&input);
        input.kept.messages
    })
}

/// The walk over the compactions: `each` is handed each input and gives back what it kept
/// (its `kept.messages`), the start of the next compaction's history. The compactions
/// are handed to `Walk::step` a run at a time, each run ending before the next full one.
fn walk(
    s: &Session,
    mut kept_of: impl FnMut(usize, &Compaction) -> Option<Vec<KeptMessage>>,
    mut each: impl FnMut(CompactionInput) -> Vec<Message>,
) -> u64 {
    let view = SessionView::whole(s);
    let mut w = Walk::default();
    w.work += s.compactions.len() as u64;
    for (j, c) in s.compactions.iter().enumerate().skip(1) {
        if c.kind.replaces_history() {
            w.step(view, j, Some(j), &mut kept_of, &mut each);
        }
    }
    w.step(view, s.compactions.len(), None, &mut kept_of, &mut each);
    w.work
}

/// A walk over the compactions in order, a run at a time: what it carries from one to the
/// next is what the last full compaction kept. A streamed read hands it each run as soon
/// as the full compaction after the run is read (`session::claude_windows`).
#[derive(Default)]
pub struct Walk {
    /// What the last full compaction kept is part of what the model had next.
    prev_kept: Vec<Numbered>,
    last_full: Option<usize>,
    /// The first compaction not walked yet.
    next: usize,
    /// Messages and compactions looked at.
    pub work: u64,
}

impl Walk {
    /// The inputs of the compactions from the first not walked yet up to `upto`, all of
    /// them followed by `next_full` (the next that replaces the history; None: none does,
    /// the messages after run to the session's end). The view holds their messages: from
    /// the last full compaction before the first of them on.
    pub fn step(
        &mut self,
        v: SessionView,
        upto: usize,
        next_full: Option<usize>,
        mut kept_of: impl FnMut(usize, &Compaction) -> Option<Vec<KeptMessage>>,
        mut each: impl FnMut(CompactionInput) -> Vec<Message>,
    ) {
        let upto = upto.min(v.compactions().len());
        for k in self.next..upto {
            let c = &v.compactions()[k];
            let kept = kept_of(k, c);
            let (input, kept_at) = input_of(
                v,
                k,
                kept,
                &mut self.prev_kept,
                self.last_full,
                next_full,
                &mut self.work,
            );
            let full = !input.micro;
            let marks = if full {
                self.work += (input.before.len() + input.kept.messages.len()) as u64;
                kept_marks(&input, &kept_at)
            } else {
                Vec::new()
            };
            if c.kind.replaces_history() {
                self.last_full = Some(k);
            }
            let kept = each(input);
            if full {
                self.prev_kept = kept
                    .into_iter()
                    .zip(marks)
                    .map(|(message, (number, injected))| Numbered {
                        number,
                        message,
                        injected,
                    })
                    .collect();
            }
        }
        self.next = self.next.max(upto);
    }
}

/// A full compaction's kept messages' numbers and whether they were injected, as the
/// messages before they are (`kept_at`: where each is among them, found by `input_of` with
/// the index it built).
fn kept_marks(input: &CompactionInput, kept_at: &[Option<usize>]) -> Vec<(Option<usize>, bool)> {
    kept_at
        .iter()
        .map(|at| {
            let b = at.and_then(|at| input.before.get(at));
            (b.and_then(|b| b.number), b.is_some_and(|b| b.injected))
        })
        .collect()
}

/// Compaction `k`'s input, and where each kept message is among the messages before (by
/// equality; none for a micro compaction).
fn input_of(
    v: SessionView,
    k: usize,
    recorded: Option<Vec<KeptMessage>>,
    prev_kept: &mut Vec<Numbered>,
    last_full: Option<usize>,
    next_full: Option<usize>,
    work: &mut u64,
) -> (CompactionInput, Vec<Option<usize>>) {
    let c = &v.compactions()[k];
    let before = history_before(v, k, prev_kept, last_full, work);
    let tool = v.session.tool();
    let micro = c.kind == CompactionKind::Micro;
    // One index of the history before, for the recorded kept messages and for numbering
    // what was kept (built once: it hashes every message before).
    let index = BeforeIndex::new(&before);
    let (kind, rule, kept) = if micro {
        let kept = KeptInput {
            how: KeptHow::Recorded,
            why: Some("every message stays; only the cleared results lose their content".into()),
            messages: Vec::new(),
            from_before: (0..before.len()).collect(),
        };
        let rule = if tool == Tool::Proxy {
            PROXY_MICRO_RULE
        } else {
            CLAUDE_MICRO_RULE
        };
        (format!("{} micro", tool.name()), rule, kept)
    } else {
        match tool {
            Tool::ClaudeCode => {
                let kept = match recorded {
                    // The reader applies the rule: nothing recorded as preserved, nothing kept.
                    Some(k) if k.is_empty() => KeptInput {
                        how: KeptHow::ByRule,
                        why: Some(
                            "the boundary records no preserved messages: nothing was kept".into(),
                        ),
                        messages: Vec::new(),
                        from_before: Vec::new(),
                    },
                    Some(k) => kept_from(Some(k), &index),
                    None => KeptInput::not_recorded(
                        "the boundary's preserved messages cannot be resolved in this file",
                    ),
                };
                ("claude-code full".to_string(), CLAUDE_RULE, kept)
            }
            Tool::Codex => match (recorded, &c.summary) {
                (Some(k), _) if c.kind == CompactionKind::Server => (
                    "codex server".to_string(),
                    CODEX_SERVER_RULE,
                    kept_from(Some(k), &index),
                ),
                (Some(k), _) => (
                    "codex remote".to_string(),
                    CODEX_REMOTE_RULE,
                    kept_from(Some(k), &index),
                ),
                (None, Summary::Text(_)) => (
                    "codex local".to_string(),
                    CODEX_LOCAL_RULE,
                    codex_local_kept(&before),
                ),
                (None, _) => (
                    "codex".to_string(),
                    CODEX_UNRECORDED_RULE,
                    KeptInput::not_recorded(
                        "the rollout marks a compaction but records neither its summary nor its replacement_history",
                    ),
                ),
            },
            Tool::Proxy => (
                format!("proxy {}", c.kind.name()),
                PROXY_RULE,
                kept_from(recorded, &index),
            ),
            Tool::Ctxlab if before.is_empty() => (
                "ctxlab summary".to_string(),
                CTXLAB_RULE,
                KeptInput::not_recorded(
                    "the history before this summary is not in this file: it is in the transcript written before it",
                ),
            ),
            Tool::Ctxlab => (
                "ctxlab summary".to_string(),
                CTXLAB_RULE,
                kept_from(recorded, &index),
            ),
        }
    };
    let kept_at = if micro {
        Vec::new()
    } else {
        kept.messages.iter().map(|m| index.find_equal(m)).collect()
    };
    let input = CompactionInput {
        kind,
        micro,
        at: Some(c.at),
        call: None,
        trigger: c.trigger.as_ref().map(|t| t.name().to_string()),
        rule: rule.to_string(),
        summary: summary_text(&c.summary),
        kept,
        cleared: c.cleared_tool_ids.clone(),
        after: history_after(v, k, next_full, work),
        // The same figure as `inspect`'s, with its source (one number everywhere).
        tokens_before: c.tokens_before,
        before,
    };
    (input, kept_at)
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::forgot::test_rollouts::rollout;
    use crate::session::parse_session_text;

    /// Issue 36: the inputs of a session twice as long take about twice the steps (each
    /// compaction finds the last full one before it and the next after it by a walk, not a
    /// search through every compaction), and the inputs handed one by one are the ones
    /// collected.
    #[test]
    fn twice_the_compactions_take_about_twice_the_work() {
        let work = |turns: usize| {
            let s = parse_session_text(&rollout(turns, false)).unwrap();
            assert_eq!(s.compactions.len(), turns);
            let mut seen = Vec::new();
            let work = each_input_of_session(&s, |i| seen.push(i));
            assert_eq!(seen.len(), turns);
            // The last compaction's history: the previous summary, its kept prompt and the
            // turn since.
            let last = seen.last().unwrap();
            assert_eq!(last.before.len(), 4, "{:#?}", last.before);
            assert_eq!(last.kept.messages.len(), 1);
            work
        };
        let (w1, w2, w4) = (work(200), work(400), work(800));
        for (a, b) in [(w1, w2), (w2, w4)] {
            let grew = b as f64 / a as f64;
            assert!(grew <= 2.1, "twice the turns took x{grew:.2} the work");
        }
    }
}
