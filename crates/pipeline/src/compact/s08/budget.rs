//! Stage 1, `tool_result_budget` (docs/pipeline.md, "tool_result_budget"): when the latest
//! batch of tool results is over budget, the largest results go to files and the context keeps
//! a path and a preview. Only the last message is ever looked at: older batches were already
//! budgeted when they were the latest.

use serde_json::Value;

use crate::compact::config::PipelineConfig;
use crate::compact::markers::persisted_marker;
use crate::compact::report::{Change, Stage, StageReport};
use crate::message::estimate_size;
use crate::message::{Message, Role};
use crate::pyrepr::{py_list_len, py_str_list};
use crate::store::{Store, StoreError};
use crate::util::group_digits;

/// The size of a result block's content: chars of a string, chars of `str()` of a list.
pub fn result_content_chars(block: &Value) -> usize {
    match block.get("content") {
        Some(Value::String(s)) => s.chars().count(),
        Some(Value::Array(items)) => py_list_len(items),
        _ => 0,
    }
}

/// The text that gets persisted for a result block.
fn result_content_text(block: &Value) -> String {
    match block.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => py_str_list(items),
        _ => String::new(),
    }
}

pub fn tool_result_budget(
    messages: &mut [Message],
    store: &Store,
    cfg: &PipelineConfig,
) -> Result<StageReport, StoreError> {
    let size_before = estimate_size(messages);
    let count = messages.len();
    let mut report = StageReport::unchanged(Stage::ToolResultBudget, size_before, count);
    let Some(last) = messages.last_mut() else {
        report.reason = "no messages".into();
        return Ok(report);
    };
    if last.role_kind() != Role::User || last.text().is_some() {
        report.reason = "the last message holds no tool results".into();
        return Ok(report);
    }
    // A string's size is its char count, which the message already caches for micro; only
    // list contents need their str() measured.
    let blocks = last.blocks();
    let mut sizes: Vec<(usize, usize)> = last
        .tool_result_lens()
        .iter()
        .map(|&(i, len)| match blocks[i].get("content") {
            Some(Value::Array(_)) => (i, result_content_chars(&blocks[i])),
            _ => (i, len),
        })
        .collect();
    let mut total: usize = sizes.iter().map(|(_, s)| s).sum();
    if total <= cfg.budget_chars {
        report.reason = format!(
            "batch {} <= {}",
            group_digits(total),
            group_digits(cfg.budget_chars)
        );
        return Ok(report);
    }
    let over = sizes
        .iter()
        .filter(|(_, s)| *s > cfg.persist_threshold)
        .count();
    report.reason = format!(
        "batch {} > {}; {over} result{} over {}",
        group_digits(total),
        group_digits(cfg.budget_chars),
        if over == 1 { "" } else { "s" },
        group_digits(cfg.persist_threshold)
    );
    let mut ranked = sizes.clone();
    // Stable: equal sizes keep document order.
    ranked.sort_by_key(|&(_, size)| std::cmp::Reverse(size));
    for (block_index, size) in ranked {
        if total <= cfg.budget_chars {
            break;
        }
        if size <= cfg.persist_threshold {
            continue;
        }
        let Some(blocks) = last.blocks_mut() else {
            break;
        };
        let block = &mut blocks[block_index];
        let text = result_content_text(block);
        let tool_use_id = block
            .get("tool_use_id")
            .and_then(Value::as_str)
            .map(str::to_string);
        let file = store.persist_tool_result(tool_use_id.as_deref(), &text)?;
        let marker = persisted_marker(&file.path, &text, cfg.preview_chars);
        let marker_chars = marker.chars().count();
        block["content"] = Value::String(marker);
        for entry in sizes.iter_mut().filter(|(i, _)| *i == block_index) {
            entry.1 = marker_chars;
        }
        total = sizes.iter().map(|(_, s)| s).sum();
        report.changes.push(Change::Persisted {
            message: count - 1,
            block: block_index,
            tool_use_id,
            chars: size,
            marker_chars,
            path: file.path.clone(),
        });
        report.files_written.push(file);
    }
    report.changed = !report.changes.is_empty();
    report.size_after = estimate_size(messages);
    Ok(report)
}
