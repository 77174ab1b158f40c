//! A timeline cut before one of its calls, for "continue from call N": the calls before N
//! and the stages before them, the session's messages up to N with what later calls did to
//! them forgotten, and the history as it stood before call N's stages. A continued agent
//! starts from that history and its events fold into the cut timeline, so calls go on being
//! numbered from N.

use std::sync::Arc;

use super::{Row, Timeline};
use crate::message::{BlockKind, Message, Role};

/// What a continue from call N starts with.
#[derive(Debug, Clone)]
pub struct BranchPoint {
    /// The timeline up to (not including) call N's stages.
    pub timeline: Timeline,
    /// The history before call N's stages: call N-1's request and what was appended since.
    pub history: Vec<Message>,
    /// Turn calls answered before call N (a scripted model resumes at that turn).
    pub answered: usize,
    /// The tool calls answered before call N, in order: (name, input).
    pub tool_calls: Vec<(String, serde_json::Value)>,
    /// The request the turn at call N works on (the last user text before it).
    pub active_request: String,
}

impl Timeline {
    /// Where a run that goes on from this timeline starts counting (a continue's run):
    /// its calls, steps, entries and compactions so far.
    pub fn run_start(&self) -> crate::run::RunStart {
        let summarized = |s: &super::StageStep| {
            s.report.changed
                && s.report
                    .changes
                    .iter()
                    .any(|c| matches!(c, crate::compact::Change::Summarized { .. }))
        };
        crate::run::RunStart {
            calls: self.calls.len(),
            steps: self.steps.len(),
            entries: self.session.len(),
            compactions: self.steps.iter().filter(|s| summarized(s)).count(),
        }
    }

    /// The timeline as it stood before call `n`'s stages ran; None when there is no call `n`.
    pub fn branch_before(&self, n: usize) -> Option<BranchPoint> {
        let call = self.call(n)?;
        let first_step = call.steps.start;
        let mut t = self.clone();
        t.calls.truncate(n - 1);
        t.steps.truncate(first_step);
        t.limits_before(n);
        // Entries are appended in call order: those before call n form a prefix.
        let keep = t.session.partition_point(|e| e.before_call <= n);
        t.session.truncate(keep);
        for e in &mut t.session {
            e.touches.retain(|touch| touch.call < n);
        }
        let mut rows: Vec<Row> = match t.calls.last() {
            Some(prev) => prev
                .rows
                .iter()
                .enumerate()
                .map(|(j, r)| Row {
                    message: Arc::clone(&r.message),
                    prev: Some(j),
                    session: r.session,
                    touches: Vec::new(),
                })
                .collect(),
            None => Vec::new(),
        };
        for (i, e) in t.session.iter().enumerate() {
            if e.before_call == n {
                rows.push(Row {
                    message: Arc::clone(&e.message),
                    prev: None,
                    session: Some(i),
                    touches: Vec::new(),
                });
            }
        }
        t.rows = rows;
        t.gone.clear();
        t.started = None;
        let answered = t
            .calls
            .iter()
            .filter(|c| c.outcome == super::CallOutcome::Answered)
            .count();
        let mut tool_calls = Vec::new();
        let mut active_request = String::new();
        for e in &t.session {
            if let Some(request) = crate::compact::request::request_in(&e.message) {
                active_request = request;
            }
            if e.message.role_kind() != Role::Assistant {
                continue;
            }
            for b in e.message.blocks() {
                if BlockKind::of(b) == BlockKind::ToolUse {
                    let name = b.get("name").and_then(|v| v.as_str()).unwrap_or_default();
                    let input = b.get("input").cloned().unwrap_or_default();
                    tool_calls.push((name.to_string(), input));
                }
            }
        }
        let history = t.current().cloned().collect();
        Some(BranchPoint {
            timeline: t,
            history,
            answered,
            tool_calls,
            active_request,
        })
    }
}
