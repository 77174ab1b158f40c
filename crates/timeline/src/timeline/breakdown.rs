//! The timeline's calls broken down by category (`crate::breakdown`): the system prompt
//! and tool definitions a live call recorded, and its messages. Counted in characters and
//! turned into tokens by a ratio: the live API's reported input tokens when there are
//! some (fit over all calls, since those requests hold everything the API counted), else
//! the default ratio; always an estimate (`~`), since a live call names no model here. A
//! call the API reported a count for is scaled to that count: its request holds everything
//! the API counted, so only the split is estimated.
//! Each message is sized once, however many calls share it.

use std::collections::HashMap;
use std::sync::Arc;

use super::{ModelCall, Timeline};
use crate::breakdown::classify::{Classifier, tool_names};
use crate::breakdown::{
    CallBreakdown, Category, Counting, Fit, Hint, Parts, Remainder, Size, finish, message_parts,
};
use crate::message::Message;

/// Every call of a timeline, broken down.
#[derive(Debug, Clone)]
pub struct TimelineBreakdown {
    pub counting: Counting,
    pub calls: Vec<CallBreakdown>,
}

fn text_size(text: &str) -> Size {
    Size {
        chars: text.chars().count() as u64,
        tokens: 0,
    }
}

/// Breaks down every call of `t`.
pub fn of_timeline(t: &Timeline) -> TimelineBreakdown {
    let names = tool_names(t.calls.iter().flat_map(ModelCall::messages));
    let c = Classifier {
        bpe: None,
        names: &names,
        cleared: None,
    };
    let mut cache: HashMap<*const Message, Parts> = HashMap::new();
    let parts: Vec<Parts> = t
        .calls
        .iter()
        .map(|call| {
            let mut p = Parts::default();
            if let Some(system) = &call.system {
                p.add(Category::SystemPrompt, text_size(system));
            }
            for tool in call.tools.iter() {
                let json = serde_json::to_string(tool).unwrap_or_default();
                p.add(Category::ToolDefinitions, text_size(&json));
            }
            for r in &call.rows {
                let m = cache
                    .entry(Arc::as_ptr(&r.message))
                    .or_insert_with(|| message_parts(&r.message, Hint::Normal, &c));
                p.merge(m);
            }
            p
        })
        .collect();
    let points: Vec<(u64, u64)> = parts
        .iter()
        .zip(&t.calls)
        .filter_map(|(p, c)| Some((p.chars(), c.input_tokens?)))
        .collect();
    let counting = Counting::Calibrated(Fit::through_origin(&points));
    let calls = parts
        .iter()
        .zip(&t.calls)
        .map(|(p, call)| {
            finish(
                call.number,
                p,
                &counting,
                call.input_tokens,
                Remainder::ScaleToRecorded,
            )
        })
        .collect();
    TimelineBreakdown { counting, calls }
}
