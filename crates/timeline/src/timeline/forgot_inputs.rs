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
use crate::forgot::from_replay::{forgets, input_of_stage};
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
    let appended_by = AppendedBy::of(t);
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
        let appended = appended_by.count(st.call);
        out.push(CompactionIdentity {
            step,
            number: out.len() + 1,
            at_message: appended + out.len(),
        });
    }
    out
}

/// The calls the session's messages were appended before, sorted once, so how many came
/// by a call is a binary search (a session of gigabytes has thousands of compactions and
/// millions of messages: a scan per compaction was quadratic, issue 36).
struct AppendedBy(Vec<usize>);

impl AppendedBy {
    fn of(t: &Timeline) -> AppendedBy {
        let mut calls: Vec<usize> = t.session.iter().map(|e| e.before_call).collect();
        calls.sort_unstable();
        AppendedBy(calls)
    }

    /// How many messages were appended before call `call` or an earlier one.
    fn count(&self, call: usize) -> usize {
        self.0.partition_point(|&c| c <= call)
    }
}

/// The compaction `step` is, among `ids` (in step order, as `compaction_ids` gives them).
fn identity_of(ids: &[CompactionIdentity], step: StepId) -> Option<&CompactionIdentity> {
    ids.binary_search_by_key(&step.index(), |c| c.step.index())
        .ok()
        .map(|k| &ids[k])
}

/// What each step that forgot something forgot, with its step: a compaction under its
/// number, a stage that only cleared results under the call it ran before. Each input is
/// analyzed as soon as what came after it is known and then dropped, so the page of a
/// session of thousands of compactions never holds all their histories at once.
pub fn timeline_reports(t: &Timeline) -> Vec<(StepId, CompactionForgot)> {
    timeline_reports_of(t, |_| true)
}

/// How many steps forgot something: the number of inputs and reports, counted from the
/// stage reports without building any (`forgets`).
pub fn forgetting_steps(t: &Timeline) -> usize {
    t.steps
        .iter()
        .filter(|st| st.change.is_some() && forgets(&st.report).is_some())
        .count()
}

/// `timeline_reports`, only of the inputs whose place among them (from 0) `wanted` names:
/// the others are neither built nor analyzed (the export of a long session shows the
/// first and the last ones, `html_cap`). Each report comes with its place.
pub fn timeline_reports_of(
    t: &Timeline,
    wanted: impl Fn(usize) -> bool,
) -> Vec<(StepId, CompactionForgot)> {
    let ids = compaction_ids(t);
    let mut out = Vec::new();
    each_input(t, &ids, &wanted, |step, input| {
        let number = identity_of(&ids, step).map_or(0, |c| c.number);
        out.push((step, analyze(number, &input)));
    });
    out
}

/// One input per step that forgot something, with the index of its step.
pub fn timeline_inputs(t: &Timeline) -> Vec<(StepId, CompactionInput)> {
    let ids = compaction_ids(t);
    let mut out = Vec::new();
    each_input(t, &ids, &|_| true, |step, input| out.push((step, input)));
    out
}

/// An input waiting for what came after it: the call that ends its `after` (the next
/// summary's, not a micro stage's), once a later input names it.
struct Pending {
    step: StepId,
    input: CompactionInput,
    call: usize,
    end: Option<usize>,
}

/// Hands `found` each step's input in step order, with its `after` filled: the session's
/// messages appended after its call, up to the next summary's call.
fn each_input(
    t: &Timeline,
    ids: &[CompactionIdentity],
    wanted: &dyn Fn(usize) -> bool,
    mut found: impl FnMut(StepId, CompactionInput),
) {
    let in_call_order = t
        .session
        .windows(2)
        .all(|w| w[0].before_call <= w[1].before_call);
    let mut finish = |p: Pending| {
        let Pending {
            step,
            mut input,
            call,
            end,
        } = p;
        let end = end.unwrap_or(usize::MAX);
        let range = if in_call_order {
            // Appended in call order: the messages wanted are one run, found by search.
            let from = t.session.partition_point(|e| e.before_call <= call);
            let to = t.session.partition_point(|e| e.before_call <= end);
            from..to.max(from)
        } else {
            0..t.session.len()
        };
        input.after = t.session[range.clone()]
            .iter()
            .zip(range)
            .filter(|(e, _)| e.before_call > call && e.before_call <= end)
            .map(|(e, j)| Numbered::new(Some(j), (*e.message).clone()))
            .collect();
        found(step, input);
    };
    let mut pending: std::collections::VecDeque<Pending> = std::collections::VecDeque::new();
    // The place of the next input among all of them.
    let mut place = 0;
    for (i, st) in t.steps_by_id() {
        let Some(change) = &st.change else {
            continue;
        };
        let Some(micro) = forgets(&st.report) else {
            continue;
        };
        place += 1;
        if !micro {
            // This summary ends what came after each earlier input of an earlier call
            // that no summary has ended yet (built or not, the same rule).
            for p in pending
                .iter_mut()
                .filter(|p| p.end.is_none() && p.call < st.call)
            {
                p.end = Some(st.call);
            }
        }
        let input = if wanted(place - 1) {
            let before: Vec<Message> = change.before.iter().map(|m| (**m).clone()).collect();
            let after: Vec<Message> = change.after.iter().map(|m| (**m).clone()).collect();
            input_of_stage("ctxlab", &st.report, &before, &after)
        } else {
            None
        };
        if let Some(mut input) = input {
            input.call = Some(st.call);
            input.at = identity_of(ids, i).map(|c| c.at_message);
            pending.push_back(Pending {
                step: i,
                input,
                call: st.call,
                end: None,
            });
        }
        while pending.front().is_some_and(|p| p.end.is_some()) {
            if let Some(p) = pending.pop_front() {
                finish(p);
            }
        }
    }
    for p in pending {
        finish(p);
    }
}
