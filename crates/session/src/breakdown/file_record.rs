//! A recorded call's parts that Claude Code records beside the transcript
//! (`session::claude_requests`): the system prompt and the tool schemas of the request's
//! shape, and the rendered attachments (reminders) in the view at the call, that is written
//! after the compaction the view starts at and before the call's answer. So "not in the
//! file" is what the file truly does not hold.

use std::collections::HashMap;

use tiktoken_rs::CoreBPE;

use super::{Category, Parts, Size};
use crate::session::Session;

/// Where one call sits in the file: its usage line (which names its request's shape) and
/// the first line of its answer (attachments before it were sent with it).
pub(super) struct CallLines {
    pub usage_line: usize,
    pub answer_line: usize,
    /// Messages before the call: its view starts at the last full compaction at or before.
    pub upto: usize,
}

/// Sizes the record's parts, each shape and each attachment once.
pub(super) struct RecordSizer<'a> {
    s: &'a Session,
    bpe: Option<&'static CoreBPE>,
    shapes: HashMap<&'a str, (Size, Size)>,
    /// Sizes of the attachments before each one: `prefix[i]` sums `attachments[..i]`.
    prefix: Vec<Size>,
}

impl<'a> RecordSizer<'a> {
    pub(super) fn new(s: &'a Session, bpe: Option<&'static CoreBPE>) -> Self {
        let mut sizer = RecordSizer {
            s,
            bpe,
            shapes: HashMap::new(),
            prefix: Vec::new(),
        };
        let mut acc = Size::default();
        sizer.prefix.push(acc);
        for a in &s.request_record.attachments {
            let size = sizer.size(&a.text);
            acc.chars += size.chars;
            acc.tokens += size.tokens;
            sizer.prefix.push(acc);
        }
        sizer
    }

    fn size(&self, text: &str) -> Size {
        Size {
            chars: text.chars().count() as u64,
            tokens: self.bpe.map_or(0, |b| super::tokens::count(b, text)),
        }
    }

    /// The call's parts the record holds (none for a file without a record).
    pub(super) fn parts(&mut self, call: &CallLines) -> Parts {
        let mut p = Parts::default();
        let record = &self.s.request_record;
        if record.is_empty() {
            return p;
        }
        if let Some(hash) = record.shape_of_line.get(&call.usage_line)
            && let Some(shape) = record.shapes.get(hash)
        {
            let sizes = match self.shapes.get(hash.as_str()) {
                Some(s) => *s,
                None => {
                    let s = (self.size(&shape.system), self.size(&shape.tools));
                    self.shapes.insert(hash.as_str(), s);
                    s
                }
            };
            p.add(Category::SystemPrompt, sizes.0);
            p.add(Category::ToolDefinitions, sizes.1);
        }
        // The view starts at the boundary of the last full compaction before the call:
        // attachments before it went into the summarized conversation.
        let from_line = self
            .s
            .compactions
            .iter()
            .rfind(|c| c.kind.replaces_history() && c.at <= call.upto)
            .map_or(0, |c| c.line);
        let at = |line: usize| record.attachments.partition_point(|a| a.line <= line);
        let (first, end) = (at(from_line), at(call.answer_line));
        if end > first {
            let (lo, hi) = (self.prefix[first], self.prefix[end]);
            p.add(
                Category::Reminders,
                Size {
                    chars: hi.chars - lo.chars,
                    tokens: hi.tokens - lo.tokens,
                },
            );
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    const FIXTURE: &str =
        include_str!("../../../../tests/fixtures/sessions/claude_code_2_1_332.jsonl");

    fn lines() -> Vec<Value> {
        FIXTURE
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn call_lines(s: &Session, k: usize) -> CallLines {
        let c = &s.calls[k];
        let m = c.message.unwrap();
        CallLines {
            usage_line: c.line,
            answer_line: s.info[m].line,
            upto: m,
        }
    }

    /// The chars of the rendered attachments on lines `from..to` (1-based, exclusive).
    fn rendered_chars(lines: &[Value], from: usize, to: usize) -> u64 {
        lines[from..to - 1]
            .iter()
            .filter_map(|l| l["rendered"].as_array())
            .flatten()
            .map(|r| r["content"].as_str().unwrap().chars().count() as u64)
            .sum()
    }

    #[test]
    fn call_one_holds_the_shape_and_the_reminders_sent_with_it() {
        let s = crate::session::parse_session_text(FIXTURE).unwrap();
        let lines = lines();
        let shape = &lines
            .iter()
            .find(|l| l["type"] == "api-request-shape")
            .unwrap()["shape"];
        let system: Vec<&str> = shape["system"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["text"].as_str().unwrap())
            .collect();
        let system_chars = system.join("\n\n").chars().count() as u64;
        let tools_chars = serde_json::to_string(&shape["tools"])
            .unwrap()
            .chars()
            .count() as u64;
        let mut sizer = RecordSizer::new(&s, None);
        let first = call_lines(&s, 0);
        let p = sizer.parts(&first);
        assert_eq!(p.get(&Category::SystemPrompt).chars, system_chars);
        assert_eq!(p.get(&Category::ToolDefinitions).chars, tools_chars);
        let reminders = p.get(&Category::Reminders).chars;
        assert_eq!(reminders, rendered_chars(&lines, 1, first.answer_line));
        // The file's record of the first user message as sent: its reminder blocks are
        // the rendered attachments (each may end in one more newline).
        let blob = lines
            .iter()
            .find(|l| l["type"] == "api-request-blob")
            .unwrap();
        let sent: Vec<u64> = blob["message"]["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|b| b["text"].as_str())
            .filter(|t| t.starts_with("<system-reminder>"))
            .map(|t| t.trim_end_matches('\n').chars().count() as u64)
            .collect();
        assert_eq!(sent.iter().sum::<u64>(), reminders);
    }

    #[test]
    fn after_the_compaction_only_the_attachments_since_its_boundary_count() {
        let s = crate::session::parse_session_text(FIXTURE).unwrap();
        let lines = lines();
        let boundary = s.compactions[0].line;
        let k = s
            .calls
            .iter()
            .position(|c| c.message.unwrap() > s.compactions[0].at)
            .unwrap();
        let after = call_lines(&s, k);
        let mut sizer = RecordSizer::new(&s, None);
        let p = sizer.parts(&after);
        let want = rendered_chars(&lines, boundary, after.answer_line);
        assert_eq!(p.get(&Category::Reminders).chars, want);
        assert!(want < rendered_chars(&lines, 1, after.answer_line));
        // An older file has no record: nothing is added.
        let old = crate::session::parse_session_text(include_str!(
            "../../../../tests/fixtures/sessions/claude_code.jsonl"
        ))
        .unwrap();
        assert!(old.request_record.is_empty());
        let mut sizer = RecordSizer::new(&old, None);
        assert_eq!(sizer.parts(&call_lines(&old, 0)), Parts::default());
    }
}
