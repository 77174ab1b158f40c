//! Stage 3, `micro_compact` (spec section 5): tool results older than the latest few become
//! a short placeholder. The lesson measures a list content by its number of items, so list
//! contents are in practice never replaced; that quirk is kept on purpose.

use serde_json::Value;

use super::config::PipelineConfig;
use super::report::{Change, Stage, StageReport};
use super::size::estimate_size;
use crate::message::{Message, tool_results};

pub const MICRO_PLACEHOLDER: &str = "[Earlier tool result compacted. Re-run if needed.]";

/// The lesson's `len(content)`: chars of a string, items of a list, 0 when missing.
fn lesson_len(block: &Value) -> usize {
    match block.get("content") {
        Some(Value::String(s)) => s.chars().count(),
        Some(Value::Array(items)) => items.len(),
        _ => 0,
    }
}

pub fn micro_compact(messages: &mut [Message], cfg: &PipelineConfig) -> StageReport {
    let size_before = estimate_size(messages);
    let count = messages.len();
    let mut report = StageReport::unchanged(Stage::MicroCompact, size_before, count);
    let results: Vec<(usize, usize, usize)> = tool_results(messages)
        .map(|(m, b, block)| (m, b, lesson_len(block)))
        .collect();
    if results.len() <= cfg.micro_keep_recent {
        return report;
    }
    let older = results.len() - cfg.micro_keep_recent;
    for &(m, b, len) in &results[..older] {
        if len <= cfg.micro_min_chars {
            continue;
        }
        let Some(blocks) = messages[m].blocks_mut() else {
            continue;
        };
        let block = &mut blocks[b];
        let tool_use_id = block
            .get("tool_use_id")
            .and_then(Value::as_str)
            .map(str::to_string);
        block["content"] = Value::String(MICRO_PLACEHOLDER.to_string());
        report.changes.push(Change::Placeholder {
            message: m,
            block: b,
            tool_use_id,
            chars: len,
        });
    }
    report.changed = !report.changes.is_empty();
    report.size_after = estimate_size(messages);
    report
}
