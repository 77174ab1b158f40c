//! A capture's exact requests by category (docs/capture.md, "The requests view"): the
//! system prompt and the tool schemas as the body sent them, and every message as sent, so
//! nothing is "not in the file". Tokens are counted with the model's tokenizer when it is
//! one of ours; else characters over a ratio fit through the origin on the captured usage
//! (the request holds everything the API counted), the estimate kept as an estimate and the
//! usage shown beside it, never scaled into it.
//!
//! Requests of one thread repeat the messages of the one before; a message's sizes are
//! taken over from the previous request while the two agree, so tokenizing costs the
//! messages that changed, not requests x messages.

use tiktoken_rs::CoreBPE;

use super::classify::{Classifier, Hint, message_parts, tool_names};
use super::session::SessionBreakdown;
use super::tokens::{encoder, family_of};
use super::{Category, Counting, Fit, Parts, Remainder, Size, finish};
use crate::message::Message;
use crate::session::capture::ExactRequest;

/// One request to break down, and the prompt tokens its response recorded (input, cache
/// reads and writes together), when it did.
pub struct RequestPoint<'a> {
    pub request: &'a ExactRequest,
    pub recorded: Option<u64>,
}

/// Every request broken down, in order (call `k` is `points[k - 1]`), and each one's
/// characters over every category.
pub fn of_requests(points: &[RequestPoint]) -> (SessionBreakdown, Vec<u64>) {
    let bpe = exact_encoder(points);
    let mut walk = Walk {
        bpe: bpe.map(|(_, b)| b),
        prev: Vec::new(),
        prev_parts: Vec::new(),
    };
    let parts: Vec<Parts> = points.iter().map(|p| walk.parts(p.request)).collect();
    let counting = match bpe {
        Some((family, _)) => Counting::Exact(family),
        None => {
            let fit: Vec<(u64, u64)> = parts
                .iter()
                .zip(points)
                .filter_map(|(p, c)| {
                    let images = p.get(&Category::Images).tokens;
                    Some((p.chars(), c.recorded?.checked_sub(images)?))
                })
                .collect();
            Counting::Calibrated(Fit::through_origin(&fit))
        }
    };
    let calls = parts
        .iter()
        .zip(points)
        .enumerate()
        .map(|(i, (p, c))| {
            let mut b = finish(i + 1, p, &counting, c.recorded, Remainder::None);
            b.model = c.request.model.clone();
            b
        })
        .collect();
    let chars = parts.iter().map(Parts::chars).collect();
    (SessionBreakdown { counting, calls }, chars)
}

/// The tokenizer when every request names a model of one family we have.
fn exact_encoder(points: &[RequestPoint]) -> Option<(super::tokens::Family, &'static CoreBPE)> {
    let mut family = None;
    for p in points {
        let f = p.request.model.as_deref().and_then(family_of)?;
        if family.is_some_and(|g| g != f) {
            return None;
        }
        family = Some(f);
    }
    let f = family?;
    Some((f, encoder(f)?))
}

struct Walk {
    bpe: Option<&'static CoreBPE>,
    prev: Vec<Message>,
    prev_parts: Vec<Parts>,
}

impl Walk {
    fn size(&self, text: &str) -> Size {
        Size {
            chars: text.chars().count() as u64,
            tokens: self.bpe.map_or(0, |b| super::tokens::count(b, text)),
        }
    }

    fn parts(&mut self, r: &ExactRequest) -> Parts {
        let mut total = Parts::default();
        if !r.system.is_empty() {
            total.add(Category::SystemPrompt, self.size(&r.system));
        }
        if !r.tools.is_empty() {
            // The schemas as the body carries them: their JSON text.
            let text = serde_json::to_string(&r.tools).unwrap_or_default();
            total.add(Category::ToolDefinitions, self.size(&text));
        }
        let names = tool_names(r.messages.iter());
        let common = self
            .prev
            .iter()
            .zip(&r.messages)
            .take_while(|(a, b)| a == b)
            .count();
        let mut each: Vec<Parts> = self.prev_parts.drain(..).take(common).collect();
        let c = Classifier {
            bpe: self.bpe,
            names: &names,
            cleared: None,
        };
        for m in &r.messages[common..] {
            each.push(message_parts(m, Hint::Normal, &c));
        }
        for p in &each {
            total.merge(p);
        }
        self.prev = r.messages.clone();
        self.prev_parts = each;
        total
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::session::capture::{ApiKind, exact_request};

    #[test]
    fn system_prompt_and_tool_schemas_are_their_own_categories() {
        let body = json!({"model": "claude-x", "system": "s".repeat(350),
            "tools": [{"name": "bash", "input_schema": {}}],
            "messages": [{"role": "user", "content": "u".repeat(70)},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "bash", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "r".repeat(700)}]}]});
        let r = exact_request(ApiKind::AnthropicMessages, &body).expect("request");
        let (b, chars) = of_requests(&[RequestPoint {
            request: &r,
            recorded: Some(400),
        }]);
        assert!(chars[0] > 350 + 70 + 700);
        let call = &b.calls[0];
        assert_eq!(call.tokens_of("not_in_file"), 0);
        assert!(call.tokens_of("system_prompt") > 0);
        assert!(call.tokens_of("tool_definitions") > 0);
        assert!(call.tokens_of("tool_results") > call.tokens_of("user_text"));
        assert_eq!(call.recorded_tokens, Some(400));
        assert!(call.estimate, "no Claude tokenizer here: an estimate");
        let chat = json!({"model": "gpt-4o", "messages": [{"role": "system", "content": "be brief"},
            {"role": "user", "content": "hello there"}]});
        let r = exact_request(ApiKind::OpenaiChat, &chat).expect("request");
        let (b, _) = of_requests(&[RequestPoint {
            request: &r,
            recorded: None,
        }]);
        assert!(!b.calls[0].estimate, "gpt-4o is counted with o200k");
        assert!(b.calls[0].tokens_of("system_prompt") > 0);
    }
}
