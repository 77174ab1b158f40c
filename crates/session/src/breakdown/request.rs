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
    let models: Vec<Option<&str>> = points.iter().map(|p| p.request.model.as_deref()).collect();
    let mut sizer = RequestSizer::new(&models);
    for p in points {
        sizer.add(p.request, p.recorded);
    }
    sizer.finish()
}

/// Requests sized one after the other, so a caller need not hold them all: only the
/// previous request's messages are kept (to reuse their sizes), and each request's parts.
pub struct RequestSizer {
    family: Option<super::tokens::Family>,
    walk: Walk,
    points: Vec<(Parts, Option<u64>, Option<String>)>,
}

impl RequestSizer {
    /// Counts exactly when every model named is of one tokenizer family ctxlab has.
    pub fn new(models: &[Option<&str>]) -> RequestSizer {
        let bpe = exact_encoder(models);
        RequestSizer {
            family: bpe.map(|(f, _)| f),
            walk: Walk {
                bpe: bpe.map(|(_, b)| b),
                prev: Vec::new(),
                prev_parts: Vec::new(),
            },
            points: Vec::new(),
        }
    }

    pub fn add(&mut self, request: &ExactRequest, recorded: Option<u64>) {
        let parts = self.walk.parts(request);
        self.points.push((parts, recorded, request.model.clone()));
    }

    /// Every request added, broken down, and each one's characters.
    pub fn finish(self) -> (SessionBreakdown, Vec<u64>) {
        let points = self.points;
        let counting = match self.family {
            Some(family) => Counting::Exact(family),
            None => {
                let fit: Vec<(u64, u64)> = points
                    .iter()
                    .filter_map(|(p, recorded, _)| {
                        let images = p.get(&Category::Images).tokens;
                        Some((p.chars(), recorded.as_ref()?.checked_sub(images)?))
                    })
                    .collect();
                Counting::Calibrated(Fit::through_origin(&fit))
            }
        };
        let chars = points.iter().map(|(p, _, _)| p.chars()).collect();
        let calls = points
            .into_iter()
            .enumerate()
            .map(|(i, (p, recorded, model))| {
                let mut b = finish(i + 1, &p, &counting, recorded, Remainder::None);
                b.model = model;
                b
            })
            .collect();
        (SessionBreakdown { counting, calls }, chars)
    }
}

/// The tokenizer when every request names a model of one family we have.
fn exact_encoder(models: &[Option<&str>]) -> Option<(super::tokens::Family, &'static CoreBPE)> {
    let mut family = None;
    for m in models {
        let f = m.and_then(family_of)?;
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
