//! Stage 2, `snip_compact` (docs/pipeline.md, "snip_compact"): a long history keeps its head
//! and its tail and a marker says how many messages went in between. The cut never separates a
//! `tool_use` from its `tool_result`, at either end.

use super::config::PipelineConfig;
use super::report::{Change, Stage, StageReport};
use crate::message::Message;
use crate::message::estimate_size;

/// The marker message's text for `n` removed messages.
pub fn snip_marker(n: usize) -> String {
    format!("[snipped {n} messages]")
}

/// Where the cut would go: `(head_end, tail_start)`, or None when nothing is snipped.
pub fn snip_bounds(messages: &[Message], cfg: &PipelineConfig) -> Option<(usize, usize)> {
    let len = messages.len();
    if len <= cfg.snip_max_messages {
        return None;
    }
    let mut head_end = cfg.snip_keep_head.min(len);
    let keep_tail = cfg.snip_max_messages.saturating_sub(cfg.snip_keep_head);
    let mut tail_start = len.saturating_sub(keep_tail);
    if head_end > 0 && messages[head_end - 1].has_tool_use() {
        while head_end < len && messages[head_end].is_tool_result_message() {
            head_end += 1;
        }
    }
    if 0 < tail_start
        && tail_start < len
        && messages[tail_start].is_tool_result_message()
        && messages[tail_start - 1].has_tool_use()
    {
        tail_start -= 1;
    }
    (head_end < tail_start).then_some((head_end, tail_start))
}

pub fn snip_compact(messages: &mut Vec<Message>, cfg: &PipelineConfig) -> StageReport {
    let size_before = estimate_size(messages);
    let count = messages.len();
    let mut report = StageReport::unchanged(Stage::SnipCompact, size_before, count);
    let Some((head_end, tail_start)) = snip_bounds(messages, cfg) else {
        report.reason = if count <= cfg.snip_max_messages {
            format!("{count} messages <= {}", cfg.snip_max_messages)
        } else {
            format!(
                "{count} messages > {}, but the kept head reaches the tail: nothing to cut",
                cfg.snip_max_messages
            )
        };
        return report;
    };
    let removed = tail_start - head_end;
    report.reason = format!(
        "{count} messages > {} (head {head_end}, kept {})",
        cfg.snip_max_messages,
        count - tail_start
    );
    messages.splice(
        head_end..tail_start,
        std::iter::once(Message::user_text(snip_marker(removed))),
    );
    report.changed = true;
    report.changes.push(Change::Snipped {
        head_end,
        tail_start,
        removed,
    });
    report.size_after = estimate_size(messages);
    report.messages_after = messages.len();
    report
}
