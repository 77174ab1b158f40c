//! s08-latest's `fit_tool_results`: when micro was not enough, every tool result, the ones
//! the model has not seen included, largest first, goes to a file and becomes a
//! `<persisted-output>` marker with a 1,000-char preview, until the history fits the
//! target. A result already saved keeps its file (the preview is read from it).
//!
//! As in the lesson, the text is saved before the marker is compared with it, so a result
//! too short to gain from a marker still gets its file; only the replacement is skipped.

use serde_json::Value;

use super::FIT_PREVIEW_CHARS;
use crate::compact::markers::persisted_marker;
use crate::compact::report::{Change, Stage, StageReport};
use crate::compact::results::{first_unseen, result_id, saved_copy};
use crate::compact::unit::SizeUnit;
use crate::message::{Message, ResultContent, tool_results};
use crate::store::{Store, StoreError};
use crate::util::group_digits;

/// Moves the largest results to disk until the history is at or under `target`.
pub fn fit_tool_results(
    messages: &mut [Message],
    store: &Store,
    target: usize,
) -> Result<StageReport, StoreError> {
    let unit = SizeUnit::JsonChars;
    let size_before = unit.measure(messages);
    let count = messages.len();
    let mut report = StageReport::unchanged(Stage::FitToolResults, size_before, count);
    report.unit = unit;
    let unseen_from = first_unseen(messages);
    let mut ranked: Vec<(usize, usize, usize)> = tool_results(messages)
        .map(|(m, b, block)| (m, b, ResultContent::of(block).to_text().chars().count()))
        .collect();
    // Stable: equal sizes keep document order, as Python's sorted does.
    ranked.sort_by_key(|&(_, _, chars)| std::cmp::Reverse(chars));
    let mut unseen_replaced = 0;
    for (m, b, chars) in ranked {
        if unit.measure(messages) <= target {
            break;
        }
        let block = &messages[m].blocks()[b];
        let text = ResultContent::of(block).to_text();
        let id = result_id(block).map(str::to_string);
        let (path, preview_source) = match saved_copy(store, &text) {
            Some(path) => {
                let saved = store.read_text(&path).unwrap_or_else(|_| text.clone());
                (path, saved)
            }
            None => {
                let f = store.persist_tool_result(id.as_deref(), &text)?;
                let path = f.path.clone();
                report.files_written.push(f);
                (path, text.clone())
            }
        };
        let marker = persisted_marker(&path, &preview_source, FIT_PREVIEW_CHARS);
        let marker_chars = marker.chars().count();
        if marker_chars >= chars {
            continue;
        }
        if let Some(blocks) = messages[m].blocks_mut() {
            blocks[b]["content"] = Value::String(marker);
        }
        if m >= unseen_from {
            unseen_replaced += 1;
        }
        report.changes.push(Change::Persisted {
            message: m,
            block: b,
            tool_use_id: id,
            chars,
            marker_chars,
            path,
        });
    }
    report.changed = !report.changes.is_empty();
    report.size_after = unit.measure(messages);
    report.reason = format!(
        "{} > target {}; {} largest result{} -> preview ({unseen_replaced} unseen)",
        group_digits(size_before),
        group_digits(target),
        report.changes.len(),
        if report.changes.len() == 1 { "" } else { "s" },
    );
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::block;
    use serde_json::json;

    fn batch(sizes: &[usize]) -> Vec<Message> {
        let uses = (0..sizes.len())
            .map(|i| block::tool_use(format!("b{i}"), "bash", json!({})))
            .collect();
        let results = sizes
            .iter()
            .enumerate()
            .map(|(i, n)| block::tool_result(format!("b{i}"), "d".repeat(*n)))
            .collect();
        vec![
            Message::user_text("go"),
            Message::assistant_blocks(uses),
            Message::user_blocks(results),
        ]
    }

    #[test]
    fn largest_first_until_the_target_unseen_included() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let mut h = batch(&[3_000, 9_000, 5_000, 500]);
        let target = SizeUnit::JsonChars.measure(&h) - 9_000 + 1_200;
        let r = fit_tool_results(&mut h, &store, target).unwrap();
        // b1 (9,000) alone brings it under: the marker is about 1,100 chars.
        assert_eq!(r.changes.len(), 1, "{}", r.reason);
        assert!(
            matches!(&r.changes[0], Change::Persisted { tool_use_id: Some(id), .. } if id == "b1")
        );
        let content = h[2].blocks()[1]["content"].as_str().unwrap();
        assert!(content.starts_with(
            "<persisted-output>\nFull output: .task_outputs/tool-results/b1.txt\nPreview:\n"
        ));
        assert_eq!(content.chars().count(), 1_000 + "<persisted-output>\nFull output: .task_outputs/tool-results/b1.txt\nPreview:\n\n</persisted-output>".len());
        assert!(r.reason.contains("(1 unseen)"), "{}", r.reason);
        assert!(r.size_after <= target);
    }

    #[test]
    fn a_result_too_short_for_a_marker_is_saved_but_kept() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let mut h = batch(&[600]);
        let r = fit_tool_results(&mut h, &store, 10).unwrap();
        assert!(!r.changed);
        assert_eq!(r.files_written.len(), 1);
        assert_eq!(h[2].blocks()[0]["content"], json!("d".repeat(600)));
    }

    #[test]
    fn nothing_moves_when_already_at_the_target() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let mut h = batch(&[5_000]);
        let size = SizeUnit::JsonChars.measure(&h);
        let r = fit_tool_results(&mut h, &store, size).unwrap();
        assert!(!r.changed);
        assert!(r.files_written.is_empty());
    }
}
