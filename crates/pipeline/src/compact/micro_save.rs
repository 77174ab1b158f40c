//! The saving micro stage that s08-latest and guarded share: older tool results the model
//! has already seen are saved to the results folder (or their saved copy is found) before
//! a placeholder naming the file replaces them, so the model can read them again.
//!
//! What differs is data (`MicroSave`): the placeholder's words and, for s08-latest, a size
//! target checked before each replacement. Results after the last assistant message are
//! never touched: the model has not read them yet (docs/strategies.md).

use serde_json::Value;

use super::config::PipelineConfig;
use super::report::{Change, Stage, StageReport};
use super::results::{ToolCall, first_unseen, result_id, saved_copy, tool_calls};
use super::unit::SizeUnit;
use crate::message::{Message, ResultContent, tool_results};
use crate::store::{Store, StoreError};
use crate::util::{group_digits, plural};

/// How a strategy's saving micro differs.
pub struct MicroSave<'a> {
    pub unit: SizeUnit,
    /// Stop as soon as the history is at or under this size (checked before each
    /// replacement); None: replace every candidate.
    pub target: Option<usize>,
    /// The placeholder for a result of `call` (None when no tool_use has its id) saved at
    /// `path`.
    pub placeholder: &'a dyn Fn(Option<ToolCall<'_>>, &str) -> String,
    /// Leave a result alone when its placeholder would not be shorter (guarded: a
    /// placeholder that names tool, input and path can outgrow a short result).
    pub shrink_only: bool,
}

/// Saves and replaces the older seen results; see the module comment.
pub fn micro_save(
    messages: &mut [Message],
    store: &Store,
    cfg: &PipelineConfig,
    how: &MicroSave<'_>,
) -> Result<StageReport, StoreError> {
    let size_before = how.unit.measure(messages);
    let count = messages.len();
    let mut report = StageReport::unchanged(Stage::MicroCompact, size_before, count);
    report.unit = how.unit;
    let unseen_from = first_unseen(messages);
    let positions: Vec<(usize, usize)> = tool_results(messages).map(|(m, b, _)| (m, b)).collect();
    let seen: Vec<(usize, usize)> = positions
        .iter()
        .copied()
        .filter(|(m, _)| *m < unseen_from)
        .collect();
    let unseen = positions.len() - seen.len();
    let older = seen.len().saturating_sub(cfg.micro_keep_recent);
    let mut stopped = false;
    for &(m, b) in &seen[..older] {
        if let Some(target) = how.target
            && how.unit.measure(messages) <= target
        {
            stopped = true;
            break;
        }
        let block = &messages[m].blocks()[b];
        let text = ResultContent::of(block).to_text();
        let chars = text.chars().count();
        if chars <= cfg.micro_min_chars {
            continue;
        }
        let id = result_id(block).map(str::to_string);
        let saved = saved_copy(store, &text);
        let placeholder_at = |messages: &[Message], path: &str| {
            let calls = tool_calls(messages);
            let call = id.as_deref().and_then(|i| calls.get(i).copied());
            (how.placeholder)(call, path)
        };
        if how.shrink_only {
            // Decide on the name the save would use, before saving anything.
            let path = match &saved {
                Some(p) => p.clone(),
                None => {
                    store
                        .dry_run()
                        .persist_tool_result(id.as_deref(), &text)?
                        .path
                }
            };
            if placeholder_at(messages, &path).chars().count() >= chars {
                continue;
            }
        }
        let (path, file) = match saved {
            Some(path) => (path, None),
            None => {
                let f = store.persist_tool_result(id.as_deref(), &text)?;
                (f.path.clone(), Some(f))
            }
        };
        let placeholder = placeholder_at(messages, &path);
        if placeholder == text {
            // Already this very placeholder (an earlier run made it): nothing to do.
            continue;
        }
        let placeholder_chars = placeholder.chars().count();
        if let Some(blocks) = messages[m].blocks_mut() {
            blocks[b]["content"] = Value::String(placeholder);
        }
        report.changes.push(Change::Saved {
            message: m,
            block: b,
            tool_use_id: id,
            chars,
            placeholder_chars,
            path,
        });
        report.files_written.extend(file);
    }
    report.changed = !report.changes.is_empty();
    report.size_after = how.unit.measure(messages);
    report.reason = reason(&report, cfg, how, seen.len(), unseen, stopped);
    Ok(report)
}

fn reason(
    report: &StageReport,
    cfg: &PipelineConfig,
    how: &MicroSave<'_>,
    seen: usize,
    unseen: usize,
    stopped: bool,
) -> String {
    let mut text = if seen <= cfg.micro_keep_recent {
        format!(
            "{} seen <= keep {}",
            plural(seen, "result"),
            cfg.micro_keep_recent
        )
    } else {
        format!(
            "{} seen > keep {}; {} older over {} chars saved",
            plural(seen, "result"),
            cfg.micro_keep_recent,
            report.changes.len(),
            cfg.micro_min_chars
        )
    };
    if unseen > 0 {
        text.push_str(&format!("; {unseen} unseen spared"));
    }
    if let Some(target) = how.target {
        let op = if stopped { "reached" } else { "target" };
        text.push_str(&format!("; {op} {}", group_digits(target)));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::block;
    use serde_json::json;

    fn history(results: &[&str], unseen: &[&str]) -> Vec<Message> {
        let mut h = vec![Message::user_text("go")];
        for (i, r) in results.iter().enumerate() {
            h.push(Message::assistant_blocks(vec![block::tool_use(
                format!("t{i}"),
                "bash",
                json!({"command": format!("cmd {i}")}),
            )]));
            h.push(Message::user_blocks(vec![block::tool_result(
                format!("t{i}"),
                *r,
            )]));
        }
        if unseen.is_empty() {
            // The model answered the last batch: every result is seen.
            h.push(Message::assistant_blocks(vec![block::text("done")]));
        } else {
            let uses = (0..unseen.len())
                .map(|i| block::tool_use(format!("u{i}"), "bash", json!({})))
                .collect();
            h.push(Message::assistant_blocks(uses));
            let results = unseen
                .iter()
                .enumerate()
                .map(|(i, r)| block::tool_result(format!("u{i}"), *r))
                .collect();
            h.push(Message::user_blocks(results));
        }
        h
    }

    fn plain(_: Option<ToolCall<'_>>, path: &str) -> String {
        format!("[saved at {path}]")
    }

    #[test]
    fn spares_unseen_and_the_last_three_seen_and_saves_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let long = "x".repeat(121);
        let at_gate = "y".repeat(120);
        let mut h = history(
            &[&long, &at_gate, &long, &long, &long],
            &[&long, &long, &long, &long],
        );
        let how = MicroSave {
            unit: SizeUnit::Chars,
            target: None,
            placeholder: &plain,
            shrink_only: false,
        };
        let r = micro_save(&mut h, &store, &PipelineConfig::default(), &how).unwrap();
        // 5 seen: the first (over 120) is saved, the second (exactly 120) is not.
        assert_eq!(r.changes.len(), 1);
        assert_eq!(
            h[2].blocks()[0]["content"],
            json!("[saved at .task_outputs/tool-results/t0.txt]")
        );
        assert_eq!(h[4].blocks()[0]["content"], json!(at_gate));
        assert_eq!(
            std::fs::read_to_string(dir.path().join(".task_outputs/tool-results/t0.txt")).unwrap(),
            long
        );
        assert!(h[12].blocks().iter().all(|b| b["content"] == json!(long)));
        assert_eq!(
            r.reason,
            "5 results seen > keep 3; 1 older over 120 chars saved; 4 unseen spared"
        );
        // Running again changes nothing: the placeholder is short, the copy is there.
        let again = micro_save(&mut h, &store, &PipelineConfig::default(), &how).unwrap();
        assert!(!again.changed);
    }

    #[test]
    fn a_target_is_checked_before_each_replacement() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let long = "z".repeat(1_000);
        let mut h = history(&[&long, &long, &long, &long, &long, &long], &[]);
        let size = SizeUnit::Chars.measure(&h);
        // Room for exactly one replacement: the second check finds the size at the target.
        let one = size - 1_000 + "[saved at .task_outputs/tool-results/t0.txt]".len() + 2;
        let how = MicroSave {
            unit: SizeUnit::Chars,
            target: Some(one),
            placeholder: &plain,
            shrink_only: false,
        };
        let r = micro_save(&mut h, &store, &PipelineConfig::default(), &how).unwrap();
        assert_eq!(r.changes.len(), 1, "{}", r.reason);
        assert!(r.size_after <= one);
        assert!(
            r.reason
                .ends_with(&format!("reached {}", group_digits(one))),
            "{}",
            r.reason
        );
    }

    #[test]
    fn shrink_only_leaves_a_result_its_placeholder_would_outgrow_and_saves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let short = "s".repeat(130);
        let long = "l".repeat(500);
        let mut h = history(&[&short, &long, "a", "b", "c"], &[]);
        let wordy =
            |_: Option<ToolCall<'_>>, path: &str| format!("[{} at {path}]", "w".repeat(100));
        let how = MicroSave {
            unit: SizeUnit::Chars,
            target: None,
            placeholder: &wordy,
            shrink_only: true,
        };
        let r = micro_save(&mut h, &store, &PipelineConfig::default(), &how).unwrap();
        assert_eq!(r.changes.len(), 1);
        assert_eq!(h[2].blocks()[0]["content"], json!(short));
        assert_eq!(r.files_written.len(), 1);
        assert!(
            !dir.path()
                .join(".task_outputs/tool-results/t0.txt")
                .exists()
        );
    }

    #[test]
    fn a_saved_copy_is_reused_not_saved_again() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let full = "w".repeat(5_000);
        let f = store.persist_tool_result(Some("old"), &full).unwrap();
        let marker = crate::compact::markers::persisted_marker(&f.path, &full, 200);
        let mut h = history(&[&marker, "a", "b", "c"], &[]);
        let how = MicroSave {
            unit: SizeUnit::Chars,
            target: None,
            placeholder: &plain,
            shrink_only: false,
        };
        let r = micro_save(&mut h, &store, &PipelineConfig::default(), &how).unwrap();
        assert!(r.files_written.is_empty());
        assert_eq!(
            h[2].blocks()[0]["content"],
            json!(format!("[saved at {}]", f.path))
        );
    }
}
