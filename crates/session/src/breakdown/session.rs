//! A recorded session's calls broken down: for each call, the messages in context at it
//! (what `Session::model_view` rebuilds: the latest summary, what its compaction kept,
//! the messages since, micro compactions' cleared results), sized by category, what the
//! file records beside them (`file_record`: Claude Code's system prompt, tool schemas and
//! reminders; Codex's system prompt, `base_instructions`), and the call's recorded usage
//! beyond all that as "not in the file".
//!
//! The view is followed call to call (a call adds the messages since the one before;
//! only a compaction makes it start again), and each message is sized once, so a session
//! of thousands of calls costs its messages, not calls x messages.

use std::collections::{HashMap, HashSet};

use serde::Serialize;
use tiktoken_rs::CoreBPE;

use super::classify::{Classifier, Hint, message_parts, system_prompt_parts, tool_names};
use super::file_record::{CallLines, RecordSizer};
use super::tokens::{Family, encoder, family_of};
use super::{CallBreakdown, Counting, Fit, Parts, Remainder, finish};
use crate::message::{Message, Role};
use crate::session::model_view::synthesized_summary;
use crate::session::{CompactionKind, MessageKind, Session};

/// Every call of a session, broken down, and how the tokens were counted.
#[derive(Debug, Clone)]
pub struct SessionBreakdown {
    pub counting: Counting,
    pub calls: Vec<CallBreakdown>,
}

/// `SessionBreakdown` as `ctxlab inspect --calls --json` writes it.
#[derive(Debug, Serialize)]
pub struct SessionBreakdownJson<'a> {
    pub counting: String,
    pub exact: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chars_per_token: Option<f64>,
    pub calls: &'a [CallBreakdown],
}

impl SessionBreakdown {
    pub fn to_json(&self) -> SessionBreakdownJson<'_> {
        SessionBreakdownJson {
            counting: self.counting.describe(),
            exact: !self.counting.is_estimate(),
            chars_per_token: match self.counting {
                Counting::Calibrated(f) => Some((f.chars_per_token * 100.0).round() / 100.0),
                _ => None,
            },
            calls: &self.calls,
        }
    }
}

/// One call to break down: the messages before `upto` were its context.
pub(super) struct CallPoint {
    pub upto: usize,
    pub message: Option<usize>,
    pub model: Option<String>,
    pub recorded: Option<u64>,
    /// Where the call is in the file, for what the file records beside the transcript.
    pub lines: Option<CallLines>,
}

pub(super) fn call_points(s: &Session) -> Vec<CallPoint> {
    if s.calls.is_empty() {
        // A format without usage (ctxlab's transcripts): each answer was a call.
        return s
            .messages
            .iter()
            .zip(&s.info)
            .enumerate()
            .filter(|(_, (m, i))| {
                m.role_kind() == Role::Assistant && i.kind == MessageKind::Conversation
            })
            .map(|(k, _)| CallPoint {
                upto: k,
                message: Some(k),
                model: None,
                recorded: None,
                lines: None,
            })
            .collect();
    }
    s.calls
        .iter()
        .map(|c| {
            let upto = c.message.unwrap_or_else(|| {
                // The call's answer is the last assistant message before its usage line.
                let k = s.info.partition_point(|i| i.line < c.line);
                s.messages[..k]
                    .iter()
                    .rposition(|m| m.role_kind() == Role::Assistant)
                    .unwrap_or(k)
            });
            CallPoint {
                upto,
                message: c.message,
                model: c.model.clone(),
                recorded: c.prompt_tokens(),
                lines: Some(CallLines {
                    usage_line: c.line,
                    answer_line: c
                        .message
                        .and_then(|m| s.info.get(m))
                        .map_or(c.line, |i| i.line),
                    upto,
                }),
            }
        })
        .collect()
}

/// How a session's tokens are counted: exactly when every call names a model of one
/// tokenizer family here; else calibrated on the recorded usage; else (no usage at all)
/// with cl100k as a stand-in.
pub(super) fn choose_counting(points: &[CallPoint]) -> (Counting, Option<&'static CoreBPE>) {
    let families: Vec<Option<Family>> = points
        .iter()
        .map(|p| p.model.as_deref().and_then(family_of))
        .collect();
    if let Some(Some(f)) = families.first()
        && families.iter().all(|g| *g == Some(*f))
        && let Some(bpe) = encoder(*f)
    {
        return (Counting::Exact(*f), Some(bpe));
    }
    if points.iter().all(|p| p.recorded.is_none())
        && let Some(bpe) = encoder(Family::Cl100k)
    {
        return (Counting::Proxy(Family::Cl100k), Some(bpe));
    }
    (
        Counting::Calibrated(Fit::ratio_only(super::calibrate::DEFAULT_CHARS_PER_TOKEN)),
        None,
    )
}

/// Breaks down every call of `s` (its main conversation).
pub fn of_session(s: &Session) -> SessionBreakdown {
    let points = call_points(s);
    let (mut counting, bpe) = choose_counting(&points);
    let mut names = tool_names(s.messages.iter());
    for c in &s.compactions {
        names.extend(tool_names(c.kept.iter().flatten().map(|k| &k.message)));
        names.extend(tool_names(c.replacement.iter().flat_map(|r| &r.anew)));
    }
    let mut walk = ViewWalk::new(s, bpe, &names);
    let mut record = RecordSizer::new(s, bpe);
    // A system prompt the file records once (Codex's) was in every call.
    let system = s
        .meta
        .system_prompt
        .as_deref()
        .map(|t| system_prompt_parts(t, &walk.classifier()));
    let parts: Vec<Parts> = points
        .iter()
        .map(|p| {
            let mut parts = walk.parts_at(p.upto);
            if let Some(lines) = &p.lines {
                parts.merge(&record.parts(lines));
            }
            if let Some(sys) = &system {
                parts.merge(sys);
            }
            parts
        })
        .collect();
    // Every message's sizes are in `parts` now: the walk's per-message cache (one entry a
    // message, a million on a session of tiny lines) is freed before the calls are built.
    drop(walk);
    drop(record);
    if let Counting::Calibrated(_) = counting {
        let fit_points: Vec<(u64, u64)> = parts
            .iter()
            .zip(&points)
            .filter_map(|(p, c)| {
                let images = p.get(&super::Category::Images).tokens;
                Some((p.chars(), c.recorded?.checked_sub(images)?))
            })
            .collect();
        counting = Counting::Calibrated(Fit::of(&fit_points));
    }
    // Each call's parts are freed as its breakdown is made, so the two are not both held whole.
    let calls = parts
        .into_iter()
        .zip(points)
        .enumerate()
        .map(|(i, (p, c))| {
            let mut b = finish(i + 1, &p, &counting, c.recorded, Remainder::NotInFile);
            b.message = c.message;
            b.model = c.model;
            b
        })
        .collect();
    SessionBreakdown { counting, calls }
}

/// The model's view followed through the session.
struct ViewWalk<'a> {
    s: &'a Session,
    bpe: Option<&'static CoreBPE>,
    names: &'a HashMap<String, String>,
    /// Sizes of messages with no cleared result, by index.
    cache: Vec<Option<Parts>>,
    /// The view's compaction state: the latest full compaction and how many micro ones.
    epoch: Option<(Option<usize>, usize)>,
    cleared: HashSet<String>,
    running: Parts,
    cursor: usize,
}

impl<'a> ViewWalk<'a> {
    fn new(
        s: &'a Session,
        bpe: Option<&'static CoreBPE>,
        names: &'a HashMap<String, String>,
    ) -> Self {
        ViewWalk {
            s,
            bpe,
            names,
            cache: vec![None; s.messages.len()],
            epoch: None,
            cleared: HashSet::new(),
            running: Parts::default(),
            cursor: 0,
        }
    }

    fn classifier(&self) -> Classifier<'_> {
        Classifier {
            bpe: self.bpe,
            names: self.names,
            cleared: (!self.cleared.is_empty()).then_some(&self.cleared),
        }
    }

    fn classify(&self, m: &Message, hint: Hint) -> Parts {
        message_parts(m, hint, &self.classifier())
    }

    fn has_cleared(&self, m: &Message) -> bool {
        !self.cleared.is_empty()
            && m.tool_results().any(|b| {
                b.get("tool_use_id")
                    .and_then(serde_json::Value::as_str)
                    .is_some_and(|id| self.cleared.contains(id))
            })
    }

    /// The sizes of the view at message `upto` (exclusive), as `Session::model_view`.
    fn parts_at(&mut self, upto: usize) -> Parts {
        let s = self.s;
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
            self.cleared = micros
                .iter()
                .flat_map(|&k| s.compactions[k].cleared_tool_ids.iter().cloned())
                .collect();
            self.running = Parts::default();
            self.cursor = 0;
            let full = last_full.map(|k| &s.compactions[k]);
            if let Some((r, history)) =
                full.and_then(|c| Some((c.replacement.as_ref()?, c.new_history()?)))
            {
                for (j, m) in history.into_iter().enumerate() {
                    let hint = if r.summary == Some(j) {
                        Hint::Summary
                    } else {
                        Hint::Normal
                    };
                    let p = self.classify(m, hint);
                    self.running.merge(&p);
                }
                self.cursor = last_full.map_or(0, |k| s.compactions[k].at.min(upto));
            } else if let Some(k) = last_full {
                let c = &s.compactions[k];
                let mut from = c.at;
                if let Some(i) = c.summary_message.filter(|&i| i < s.messages.len()) {
                    let p = self.classify(&s.messages[i], Hint::Summary);
                    self.running.merge(&p);
                    from = from.max(i + 1);
                }
                match &c.kept {
                    Some(kept) => {
                        for k in kept {
                            let p = self.classify(&k.message, Hint::Normal);
                            self.running.merge(&p);
                        }
                    }
                    None if c.summary_message.is_none() => {
                        let p = self.classify(&synthesized_summary(&c.summary), Hint::Summary);
                        self.running.merge(&p);
                    }
                    None => {}
                }
                self.cursor = from.min(upto);
            }
        }
        for i in self.cursor..upto {
            if s.info[i].kind == MessageKind::CompactSummary {
                continue;
            }
            let m = &s.messages[i];
            if self.has_cleared(m) {
                let p = self.classify(m, Hint::Normal);
                self.running.merge(&p);
                continue;
            }
            if self.cache[i].is_none() {
                self.cache[i] = Some(self.classify(m, Hint::Normal));
            }
            if let Some(p) = &self.cache[i] {
                self.running.merge(p);
            }
        }
        self.cursor = self.cursor.max(upto);
        self.running.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::block;
    use crate::session::SessionFormat;
    use crate::session::model::{Compaction, MessageOrigin, RecordedCall, RecordedUsage, Summary};
    use serde_json::json;

    fn push(s: &mut Session, m: Message, kind: MessageKind) {
        s.info.push(MessageOrigin {
            line: s.messages.len() + 1,
            timestamp: None,
            uuid: None,
            kind,
        });
        s.messages.push(m);
    }

    /// A session with a micro compaction, then a full one with a summary message.
    fn session() -> Session {
        let mut s = Session::empty(SessionFormat::ClaudeCode);
        let conv = MessageKind::Conversation;
        for r in 0..4 {
            push(&mut s, Message::user_text(format!("question {r}")), conv);
            push(
                &mut s,
                Message::assistant_blocks(vec![block::tool_use(
                    format!("t{r}"),
                    "Read",
                    json!({"p": r}),
                )]),
                conv,
            );
            push(
                &mut s,
                Message::user_blocks(vec![block::tool_result(
                    format!("t{r}"),
                    "x".repeat(100 * (r + 1)),
                )]),
                conv,
            );
            push(
                &mut s,
                Message::assistant_blocks(vec![json!({"type": "text", "text": "done"})]),
                conv,
            );
        }
        let mut micro = Compaction::new(CompactionKind::Micro, 8, 9);
        micro.cleared_tool_ids = vec!["t0".into(), "t1".into()];
        s.compactions.push(micro);
        push(
            &mut s,
            Message::user_text("This session is being continued. Summary: x"),
            MessageKind::CompactSummary,
        );
        let mut full = Compaction::new(CompactionKind::Full, 16, 17);
        full.summary_message = Some(16);
        full.summary = Summary::Text("x".into());
        s.compactions.push(full);
        let tail: Vec<Message> = s.messages[12..16].to_vec();
        for m in tail {
            push(&mut s, m, conv);
        }
        for (k, m) in s.messages.iter().enumerate() {
            if m.role_kind() == Role::Assistant {
                s.calls.push(RecordedCall {
                    message: Some(k),
                    line: k + 1,
                    timestamp: None,
                    model: Some("claude-x".into()),
                    usage: RecordedUsage {
                        input_tokens: 1000 + 10 * k as u64,
                        ..Default::default()
                    },
                    context_window: None,
                });
            }
        }
        s
    }

    #[test]
    fn the_walk_sizes_what_model_view_rebuilds() {
        let s = session();
        let names = tool_names(s.messages.iter());
        let mut walk = ViewWalk::new(&s, None, &names);
        for c in &s.calls {
            let upto = c.message.unwrap();
            let got = walk.parts_at(upto);
            let empty = HashSet::new();
            let cl = Classifier {
                bpe: None,
                names: &names,
                cleared: Some(&empty),
            };
            let mut want = Parts::default();
            for m in s.model_view(upto) {
                let hint = if m.text().is_some_and(|t| t.starts_with("This session")) {
                    Hint::Summary
                } else {
                    Hint::Normal
                };
                want.merge(&message_parts(&m, hint, &cl));
            }
            assert_eq!(got, want, "call at message {upto}");
        }
    }

    #[test]
    fn every_call_sums_to_its_recorded_usage() {
        let b = of_session(&session());
        assert!(matches!(b.counting, Counting::Calibrated(_)));
        for c in &b.calls {
            let sum: u64 = c.categories.iter().map(|x| x.tokens).sum();
            assert_eq!(sum, c.total_tokens);
            assert_eq!(Some(c.total_tokens), c.recorded_tokens);
        }
    }
}
