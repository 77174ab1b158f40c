//! Codex's usage lines as recorded calls. Every version writes an `event_msg` `token_count`
//! after a model call (the call's `last_token_usage` and the model's context window);
//! Codex 0.171 also writes a `token_usage_record` per API call, compaction calls included,
//! naming the `response_id` it answered. Once a file has records, they are the calls and
//! the token counts only give the context window, so no call is counted twice; a
//! compaction's own record is taken back out of the calls (its `compacted` line names
//! its response): it is what the compaction cost, not the context of a call.

use std::collections::VecDeque;

use serde_json::{Map, Value};

use super::assemble::u64_field;
use super::model::{RecordedCall, RecordedUsage};

/// How many recent records are remembered by response id: a compaction's record comes
/// right before its `compacted` line, a few lines back at most.
const RECENT_RECORDS: usize = 8;

/// An OpenAI usage object (`input_tokens` counts the cached part, which the model keeps
/// apart) as a recorded usage.
pub(super) fn openai_usage(u: &Map<String, Value>) -> RecordedUsage {
    let input = u64_field(u, "input_tokens").unwrap_or(0);
    let cached = u64_field(u, "cached_input_tokens").unwrap_or(0);
    RecordedUsage {
        input_tokens: input.saturating_sub(cached),
        cache_read_tokens: cached.min(input),
        cache_creation_tokens: 0,
        output_tokens: u64_field(u, "output_tokens").unwrap_or(0),
    }
}

/// What the reader keeps of the usage lines read so far.
#[derive(Debug, Default)]
pub(super) struct UsageLines {
    /// A `token_usage_record` was read: token counts make no calls any more.
    pub records: bool,
    /// The latest context window a token count named.
    pub window: Option<u64>,
    /// The latest records' response ids and their index in `Session::calls`.
    recent: VecDeque<(String, usize)>,
}

impl UsageLines {
    /// A token count named the context window: the call it follows gets it too (a record
    /// comes before the token count of its call).
    pub fn saw_window(&mut self, window: u64, calls: &mut [RecordedCall]) {
        self.window = Some(window);
        if self.records
            && let Some(last) = calls.last_mut()
            && last.context_window.is_none()
        {
            last.context_window = Some(window);
        }
    }

    /// A record was made call `index` of the session.
    pub fn remember(&mut self, response_id: &str, index: usize) {
        if self.recent.len() == RECENT_RECORDS {
            self.recent.pop_front();
        }
        self.recent.push_back((response_id.to_string(), index));
    }

    /// The first `n` calls were dropped off the front of the calls (`watch::live`): the
    /// records remembered count from the new front (one dropped is forgotten too).
    pub fn forget_calls(&mut self, n: usize) {
        self.recent.retain(|(_, i)| *i >= n);
        for (_, i) in self.recent.iter_mut() {
            *i -= n;
        }
    }

    /// Takes the call that answered `response_id` out of `calls`, when it is one of the
    /// latest records.
    pub fn take(
        &mut self,
        response_id: &str,
        calls: &mut Vec<RecordedCall>,
    ) -> Option<RecordedUsage> {
        let at = self.recent.iter().rposition(|(id, _)| id == response_id)?;
        let (_, index) = self.recent.remove(at)?;
        if index >= calls.len() {
            return None;
        }
        let call = calls.remove(index);
        for (_, i) in self.recent.iter_mut() {
            if *i > index {
                *i -= 1;
            }
        }
        Some(call.usage)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(input: u64) -> RecordedCall {
        RecordedCall {
            message: None,
            line: 0,
            timestamp: None,
            model: None,
            usage: RecordedUsage {
                input_tokens: input,
                ..Default::default()
            },
            context_window: None,
        }
    }

    #[test]
    fn cached_tokens_are_counted_apart() {
        let u = json!({"input_tokens": 100, "cached_input_tokens": 30, "output_tokens": 5});
        let got = openai_usage(u.as_object().unwrap());
        assert_eq!((got.input_tokens, got.cache_read_tokens), (70, 30));
        assert_eq!(got.context_tokens(), 100);
    }

    #[test]
    fn a_compactions_record_is_taken_out_and_later_indices_follow() {
        let mut u = UsageLines::default();
        let mut calls = vec![call(1), call(2), call(3)];
        u.remember("a", 0);
        u.remember("b", 1);
        u.remember("c", 2);
        assert_eq!(u.take("b", &mut calls).map(|x| x.input_tokens), Some(2));
        assert_eq!(calls.len(), 2);
        assert_eq!(u.take("c", &mut calls).map(|x| x.input_tokens), Some(3));
        assert_eq!(u.take("zz", &mut calls), None);
        assert_eq!(calls.len(), 1);
    }
}
