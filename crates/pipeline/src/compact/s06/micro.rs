//! s06's `micro_compact`: every tool result but the last `micro_keep_recent` (3) whose
//! content is a string over `micro_min_chars` (100 for s06) becomes `[Previous: used
//! {tool}]`, the tool's name found by id among the tool_use blocks (`unknown` when none);
//! results of `read_file` are left alone. Nothing is saved: the text is gone.

use serde_json::Value;

use super::PRESERVED_TOOL;
use crate::compact::config::PipelineConfig;
use crate::compact::report::{Change, Stage, StageReport};
use crate::compact::results::{result_id, tool_calls};
use crate::compact::unit::SizeUnit;
use crate::message::{Message, tool_results};
use crate::util::plural;

/// The placeholder for a result of `tool`.
pub fn previous_placeholder(tool: &str) -> String {
    format!("[Previous: used {tool}]")
}

pub fn micro_previous(messages: &mut [Message], cfg: &PipelineConfig) -> StageReport {
    let unit = SizeUnit::Tokens;
    let count = messages.len();
    let mut report = StageReport::unchanged(Stage::MicroCompact, unit.measure(messages), count);
    report.unit = unit;
    let positions: Vec<(usize, usize)> = tool_results(messages).map(|(m, b, _)| (m, b)).collect();
    let older = positions.len().saturating_sub(cfg.micro_keep_recent);
    let mut due = Vec::new();
    let mut preserved = 0;
    {
        let calls = tool_calls(messages);
        for &(m, b) in &positions[..older] {
            let block = &messages[m].blocks()[b];
            let Some(Value::String(text)) = block.get("content") else {
                continue;
            };
            let chars = text.chars().count();
            if chars <= cfg.micro_min_chars {
                continue;
            }
            let id = result_id(block);
            let tool = id
                .and_then(|i| calls.get(i))
                .map_or("unknown", |c| c.name)
                .to_string();
            if tool == PRESERVED_TOOL {
                preserved += 1;
                continue;
            }
            due.push((m, b, id.map(str::to_string), chars, tool));
        }
    }
    for (m, b, tool_use_id, chars, tool) in due {
        if let Some(blocks) = messages[m].blocks_mut() {
            blocks[b]["content"] = Value::String(previous_placeholder(&tool));
        }
        report.changes.push(Change::Placeholder {
            message: m,
            block: b,
            tool_use_id,
            chars,
        });
    }
    report.changed = !report.changes.is_empty();
    report.size_after = unit.measure(messages);
    report.reason = if older == 0 {
        format!(
            "{} <= keep {}",
            plural(positions.len(), "result"),
            cfg.micro_keep_recent
        )
    } else {
        format!(
            "{} > keep {}; {} older over {} chars replaced, {preserved} read_file kept",
            plural(positions.len(), "result"),
            cfg.micro_keep_recent,
            report.changes.len(),
            cfg.micro_min_chars
        )
    };
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::block;
    use serde_json::json;

    fn cfg() -> PipelineConfig {
        PipelineConfig::for_strategy(crate::compact::Strategy::S06)
    }

    fn turn(id: &str, tool: &str, content: Value) -> [Message; 2] {
        [
            Message::assistant_blocks(vec![block::tool_use(id, tool, json!({}))]),
            Message::user_blocks(vec![
                json!({"type": "tool_result", "tool_use_id": id, "content": content}),
            ]),
        ]
    }

    #[test]
    fn the_gate_is_over_100_chars_and_read_file_is_kept() {
        let mut h = vec![Message::user_text("go")];
        h.extend(turn("a", "bash", json!("x".repeat(101))));
        h.extend(turn("b", "bash", json!("y".repeat(100))));
        h.extend(turn("c", "read_file", json!("z".repeat(500))));
        h.extend(turn(
            "d",
            "bash",
            json!([{"type": "text", "text": "w".repeat(500)}]),
        ));
        for id in ["e", "f", "g"] {
            h.extend(turn(id, "bash", json!("v".repeat(500))));
        }
        let r = micro_previous(&mut h, &cfg());
        assert_eq!(h[2].blocks()[0]["content"], json!("[Previous: used bash]"));
        assert_eq!(h[4].blocks()[0]["content"], json!("y".repeat(100)));
        assert_eq!(h[6].blocks()[0]["content"], json!("z".repeat(500)));
        assert!(h[8].blocks()[0]["content"].is_array());
        assert_eq!(h[14].blocks()[0]["content"], json!("v".repeat(500)));
        assert_eq!(r.changes.len(), 1);
        assert_eq!(
            r.reason,
            "7 results > keep 3; 1 older over 100 chars replaced, 1 read_file kept"
        );
        assert_eq!(r.unit, SizeUnit::Tokens);
    }

    #[test]
    fn three_results_are_all_kept() {
        let mut h = vec![Message::user_text("go")];
        for id in ["a", "b", "c"] {
            h.extend(turn(id, "bash", json!("v".repeat(500))));
        }
        let r = micro_previous(&mut h, &cfg());
        assert!(!r.changed);
        assert_eq!(r.reason, "3 results <= keep 3");
    }

    #[test]
    fn a_result_without_its_tool_use_is_unknown() {
        let mut h = vec![Message::user_blocks(vec![block::tool_result(
            "lost",
            "q".repeat(300),
        )])];
        for id in ["e", "f", "g"] {
            h.extend(turn(id, "bash", json!("v")));
        }
        micro_previous(&mut h, &cfg());
        assert_eq!(
            h[0].blocks()[0]["content"],
            json!("[Previous: used unknown]")
        );
    }
}
