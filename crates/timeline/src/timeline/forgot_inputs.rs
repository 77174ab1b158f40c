//! The compactions of a timeline (a replay, or the live agent the workbench folds) as forgot
//! inputs: each stage step that changed the history, with its history before and after as
//! the step recorded them, and the session's messages appended after it (up to the next
//! summary) for the re-read check. The export page and the workbench's forgot view both
//! read them, so they cannot disagree.

use super::{StepId, Timeline};
use crate::forgot::CompactionInput;
use crate::forgot::from_replay::input_of_stage;
use crate::forgot::parts::Numbered;
use crate::message::Message;

/// One input per step that forgot something, with the index of its step.
pub fn timeline_inputs(t: &Timeline) -> Vec<(StepId, CompactionInput)> {
    let mut out: Vec<(StepId, CompactionInput)> = Vec::new();
    for (i, st) in t.steps_by_id() {
        let Some(change) = &st.change else {
            continue;
        };
        let before: Vec<Message> = change.before.iter().map(|m| (**m).clone()).collect();
        let after: Vec<Message> = change.after.iter().map(|m| (**m).clone()).collect();
        if let Some(mut input) = input_of_stage("ctxlab", &st.report, &before, &after) {
            input.at = Some(st.call);
            out.push((i, input));
        }
    }
    // What came after each, up to the next summary: the session's messages appended
    // after its call.
    let calls: Vec<(usize, bool)> = out
        .iter()
        .map(|(_, c)| (c.at.unwrap_or_default(), c.micro))
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
