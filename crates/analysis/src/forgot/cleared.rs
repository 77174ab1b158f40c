//! The tool results a micro compaction cleared, their size, and what clearing cost: the
//! calls after it that read the same path or ran the same command again, and the size of
//! what they brought back. A re-read is matched on the call's target, not on its result.

use std::collections::HashMap;

use serde::Serialize;

use super::CompactionInput;
use super::carry::{components, normalize};
use super::parts::{Part, PartKind, Target, parts_of};

/// A later call that fetched a cleared result's content again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReRead {
    pub message: Option<usize>,
    /// Chars of the result it brought back.
    pub chars: usize,
}

/// One cleared tool result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Cleared {
    pub tool_use_id: String,
    pub tool: String,
    /// The path it read or the command it ran, when its call says.
    pub target: Option<String>,
    pub chars: usize,
    pub message: Option<usize>,
    pub read_again: Vec<ReRead>,
    /// The re-reads' cost: calls, and their results' chars / 4.
    pub calls_again: usize,
    pub tokens_again: usize,
}

/// Whether two targets are the same: the same file (components compared after
/// normalising, one ending with the other) or the same command (white space collapsed).
fn same_target(a: &Target, b: &Target) -> bool {
    match (a, b) {
        (Target::Ran(x), Target::Ran(y)) => normalize(x) == normalize(y),
        (Target::Ran(_), _) | (_, Target::Ran(_)) => false,
        (x, y) => {
            let (x, y) = (components(x.key()), components(y.key()));
            !x.is_empty() && !y.is_empty() && (x.ends_with(&y) || y.ends_with(&x))
        }
    }
}

pub(super) fn cleared(
    input: &CompactionInput,
    before: &[Vec<Part>],
    names: &HashMap<String, String>,
) -> Vec<Cleared> {
    if input.cleared.is_empty() {
        return Vec::new();
    }
    let calls: HashMap<&str, &Part> = before
        .iter()
        .flatten()
        .filter(|p| matches!(p.kind, PartKind::ToolCall(_)))
        .filter_map(|p| p.tool_id.as_deref().map(|id| (id, p)))
        .collect();
    let results: HashMap<&str, &Part> = before
        .iter()
        .flatten()
        .filter(|p| matches!(p.kind, PartKind::ToolResult(_)))
        .filter_map(|p| p.tool_id.as_deref().map(|id| (id, p)))
        .collect();
    let after: Vec<Part> = input
        .after
        .iter()
        .flat_map(|n| parts_of(n, names))
        .collect();
    let after_results: HashMap<&str, usize> = after
        .iter()
        .filter(|p| matches!(p.kind, PartKind::ToolResult(_)))
        .filter_map(|p| p.tool_id.as_deref().map(|id| (id, p.chars())))
        .collect();
    input
        .cleared
        .iter()
        .map(|id| {
            let call = calls.get(id.as_str());
            let result = results.get(id.as_str());
            let target = call.and_then(|c| c.target.clone());
            let read_again: Vec<ReRead> = match &target {
                None => Vec::new(),
                Some(t) => after
                    .iter()
                    .filter(|p| p.target.as_ref().is_some_and(|u| same_target(t, u)))
                    .map(|p| ReRead {
                        message: p.message,
                        chars: p
                            .tool_id
                            .as_deref()
                            .and_then(|i| after_results.get(i))
                            .copied()
                            .unwrap_or(0),
                    })
                    .collect(),
            };
            let tool = match call.map(|c| &c.kind) {
                Some(PartKind::ToolCall(name)) => name.clone(),
                _ => names.get(id).cloned().unwrap_or_else(|| "unknown".into()),
            };
            Cleared {
                tool_use_id: id.clone(),
                tool,
                target: target.map(|t| t.key().to_string()),
                chars: result.map_or(0, |r| r.chars()),
                message: result.and_then(|r| r.message),
                calls_again: read_again.len(),
                tokens_again: read_again
                    .iter()
                    .map(|r| r.chars)
                    .sum::<usize>()
                    .div_ceil(4),
                read_again,
            }
        })
        .collect()
}
