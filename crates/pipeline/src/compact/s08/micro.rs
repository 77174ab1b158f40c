//! Stage 3, `micro_compact` (docs/pipeline.md, "micro_compact"): tool results older than the
//! latest few become a short placeholder. The lesson measures a list content by its number of
//! items, so list contents are in practice never replaced; that quirk is kept on purpose.

use serde_json::Value;

use crate::compact::config::PipelineConfig;
use crate::compact::report::{Change, Stage, StageReport};
use crate::message::Message;
use crate::message::estimate_size;
use crate::util::plural;

pub const MICRO_PLACEHOLDER: &str = "[Earlier tool result compacted. Re-run if needed.]";

pub fn micro_compact(messages: &mut [Message], cfg: &PipelineConfig) -> StageReport {
    let size_before = estimate_size(messages);
    let count = messages.len();
    let mut report = StageReport::unchanged(Stage::MicroCompact, size_before, count);
    // Counting first and walking the cached per-message lengths keeps the common call, where
    // nothing is replaced, free of allocation and of JSON lookups.
    let total: usize = messages.iter().map(|m| m.tool_result_lens().len()).sum();
    if total <= cfg.micro_keep_recent {
        report.reason = format!(
            "{} <= keep {}",
            plural(total, "result"),
            cfg.micro_keep_recent
        );
        return report;
    }
    let mut older = total - cfg.micro_keep_recent;
    for (m, message) in messages.iter_mut().enumerate() {
        if older == 0 {
            break;
        }
        let lens = message.tool_result_lens();
        let take = lens.len().min(older);
        older -= take;
        let due: Vec<(usize, usize)> = lens[..take]
            .iter()
            .filter(|(_, len)| *len > cfg.micro_min_chars)
            .copied()
            .collect();
        if due.is_empty() {
            continue;
        }
        let Some(blocks) = message.blocks_mut() else {
            continue;
        };
        for (b, len) in due {
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
    }
    report.changed = !report.changes.is_empty();
    report.size_after = estimate_size(messages);
    report.reason = format!(
        "{} > keep {}; {} older over {} chars",
        plural(total, "result"),
        cfg.micro_keep_recent,
        report.changes.len(),
        cfg.micro_min_chars
    );
    report
}
