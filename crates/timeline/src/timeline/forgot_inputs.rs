//! The compactions of a timeline (a replay, or the live agent the workbench folds) as forgot
//! inputs: each stage step that changed the history, with its history before and after as
//! the step recorded them, and the session's messages appended after it (up to the next
//! summary) for the re-read check. The export page and the workbench's forgot view both
//! read them, so they cannot disagree. A summarizing step is a compaction, numbered as the
//! run numbers them (`run::CompactionId`) and placed at the message its summary is in the
//! session as the recording lists it (`compaction_ids`), so `F`, the export, `inspect` and
//! `forgot` on the recording give it one label (`numbers::compaction_label`).

use super::{StepId, Timeline};
use crate::compact::Change;
use crate::forgot::from_replay::input_of_stage;
use crate::forgot::parts::Numbered;
use crate::forgot::{CompactionForgot, CompactionInput, analyze};
use crate::message::Message;

/// A compaction of a run: the stage step that summarized, its number (from 1, as the run's
/// `CompactionId`) and the index of its summary among the session's messages as the
/// recording lists them: the messages appended up to its call plus the earlier summaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactionIdentity {
    pub step: StepId,
    pub number: usize,
    pub at_message: usize,
}

/// The run's compactions, in order (the earlier branch's too, after a continue: the cut
/// timeline keeps its steps, so the numbers go on).
pub fn compaction_ids(t: &Timeline) -> Vec<CompactionIdentity> {
    let mut out: Vec<CompactionIdentity> = Vec::new();
    for (step, st) in t.steps_by_id() {
        let summarized = st
            .report
            .changes
            .iter()
            .any(|c| matches!(c, Change::Summarized { .. }));
        if !(st.report.changed && summarized) {
            continue;
        }
        let appended = t
            .session
            .iter()
            .filter(|e| e.before_call <= st.call)
            .count();
        out.push(CompactionIdentity {
            step,
            number: out.len() + 1,
            at_message: appended + out.len(),
        });
    }
    out
}

/// What each step that forgot something forgot, with its step: a compaction under its
/// number, a stage that only cleared results under the call it ran before.
pub fn timeline_reports(t: &Timeline) -> Vec<(StepId, CompactionForgot)> {
    let ids = compaction_ids(t);
    timeline_inputs(t)
        .into_iter()
        .map(|(step, input)| {
            let number = ids.iter().find(|c| c.step == step).map_or(0, |c| c.number);
            (step, analyze(number, &input))
        })
        .collect()
}

/// One input per step that forgot something, with the index of its step.
pub fn timeline_inputs(t: &Timeline) -> Vec<(StepId, CompactionInput)> {
    let ids = compaction_ids(t);
    let mut out: Vec<(StepId, CompactionInput)> = Vec::new();
    for (i, st) in t.steps_by_id() {
        let Some(change) = &st.change else {
            continue;
        };
        let before: Vec<Message> = change.before.iter().map(|m| (**m).clone()).collect();
        let after: Vec<Message> = change.after.iter().map(|m| (**m).clone()).collect();
        if let Some(mut input) = input_of_stage("ctxlab", &st.report, &before, &after) {
            input.call = Some(st.call);
            input.at = ids.iter().find(|c| c.step == i).map(|c| c.at_message);
            out.push((i, input));
        }
    }
    // What came after each, up to the next summary: the session's messages appended
    // after its call.
    let calls: Vec<(usize, bool)> = out
        .iter()
        .map(|(_, c)| (c.call.unwrap_or_default(), c.micro))
        .collect();
    for (k, (_, input)) in out.iter_mut().enumerate() {
        let call = calls[k].0;
        let end = calls[k + 1..]
            .iter()
            .find(|(c, micro)| !micro && *c > call)
            .map_or(usize::MAX, |(c, _)| *c);
        input.after = t
            .session
            .iter()
            .enumerate()
            .filter(|(_, e)| e.before_call > call && e.before_call <= end)
            .map(|(j, e)| Numbered::new(Some(j), (*e.message).clone()))
            .collect();
    }
    out
}
