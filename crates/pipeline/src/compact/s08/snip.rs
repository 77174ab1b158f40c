//! Stage 2, `snip_compact` (docs/pipeline.md, "snip_compact"): a long history keeps its head and its tail and
//! a marker says how many messages went in between. The cut never separates a `tool_use`
//! from its `tool_result`, at either end. The lesson's bounds and the cut itself are shared
//! with s08-latest's snip, which archives first (`s08_latest/snip.rs`); guarded finds its
//! own bounds by ids (`guarded/snip.rs`).

use crate::compact::config::PipelineConfig;
use crate::compact::markers::Marker;
use crate::compact::report::{Adjustment, Change, Stage, StageReport};
use crate::message::Message;
use crate::message::estimate_size;

/// Where the cut would go: `(head_end, tail_start)`, or None when nothing is snipped.
pub fn snip_bounds(messages: &[Message], cfg: &PipelineConfig) -> Option<(usize, usize)> {
    lesson_bounds(messages, cfg, keep_tail(cfg))
}

/// The lesson's cut with a given tail length: s08 keeps `max - head` messages after the
/// marker, s08-latest one fewer, so that its result has exactly `max` messages. The head
/// grows over the results of a tool_use it ends with; the tail steps back once over a
/// tool_use whose results it starts with (one look at each neighbour).
pub(crate) fn lesson_bounds(
    messages: &[Message],
    cfg: &PipelineConfig,
    keep_tail: usize,
) -> Option<(usize, usize)> {
    let len = messages.len();
    if len <= cfg.snip_max_messages {
        return None;
    }
    let mut head_end = cfg.snip_keep_head.min(len);
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
        report.reason = no_cut_reason(count, cfg);
        return report;
    };
    let removed = tail_start - head_end;
    cut(
        messages,
        &mut report,
        cfg,
        (head_end, tail_start),
        Marker::Snipped { removed }.write(),
        Change::Snipped {
            head_end,
            tail_start,
            removed,
        },
    );
    // The legend says "last 47": a kept count one longer says why.
    report.adjusted = Adjustment::of_cut(
        (head_end, cfg.snip_keep_head),
        (count - tail_start, keep_tail(cfg)),
    );
    report.size_after = estimate_size(messages);
    report
}

/// The tail the settings keep: `max - head`.
fn keep_tail(cfg: &PipelineConfig) -> usize {
    cfg.snip_max_messages.saturating_sub(cfg.snip_keep_head)
}

/// Why nothing was cut.
pub(crate) fn no_cut_reason(count: usize, cfg: &PipelineConfig) -> String {
    if count <= cfg.snip_max_messages {
        format!(
            "{} <= {}",
            crate::util::plural(count, "message"),
            cfg.snip_max_messages
        )
    } else {
        format!(
            "{count} messages > {}, but the kept head reaches the tail: nothing to cut",
            cfg.snip_max_messages
        )
    }
}

/// Replaces `head_end..tail_start` with one marker message and records it; every snip
/// variant ends here (the caller measures the size after, in its unit).
pub(crate) fn cut(
    messages: &mut Vec<Message>,
    report: &mut StageReport,
    cfg: &PipelineConfig,
    (head_end, tail_start): (usize, usize),
    marker: String,
    change: Change,
) {
    let count = messages.len();
    report.reason = format!(
        "{count} messages > {} (head {head_end}, kept {})",
        cfg.snip_max_messages,
        count - tail_start
    );
    messages.splice(
        head_end..tail_start,
        std::iter::once(Message::user_text(marker)),
    );
    report.changed = true;
    report.changes.push(change);
    report.messages_after = messages.len();
}
