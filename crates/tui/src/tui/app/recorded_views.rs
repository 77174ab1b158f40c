//! The forgot and "where the context goes" views from the places that need a job to make
//! them: `F` on an opened session's compaction row and `w` in an opened session (the file
//! is analysed as `ctxlab forgot FILE --compaction N` and `ctxlab inspect FILE --calls`
//! analyse it), and `F` on the compare view's selected strategy and call (that strategy
//! replayed again, its stages' inputs kept). Also `w` in the conversation pane and a click
//! on the gauge: the context view at the latest call, made at once from the timeline. The
//! jobs are `tui::analysis`'s; their results land in `analysis_done`.

use super::{App, CompareView, ContextView, Effect, Layer, LoadKind};
use crate::breakdown::session::SessionBreakdown;
use crate::tui::analysis::{AnalysisDone, AnalysisWork, CallPick, SharedSession};
// `B`: the fork is the library's (`fork::fork_whole`), run as a job.
use crate::tui::sessions::ViewRow;
use crate::tui::work::Work;

impl App {
    /// Whether a job is awaited: a second one would take its place, so it is refused.
    pub(super) fn busy_for(&mut self, key: &str) -> bool {
        if let Some(l) = &self.jobs.loading {
            let text = format!("{key}: wait for {} first", l.what.relative());
            self.notify(text);
            return true;
        }
        false
    }

    /// `F` in an opened session: the forgot view of the selected compaction row.
    pub(super) fn forgot_of_opened_row(&mut self) -> Vec<Effect> {
        let Some(open) = self.sessions.open() else {
            return Vec::new();
        };
        let k = match open.rows().get(open.list().selected) {
            Some(ViewRow::Compaction(k)) => *k,
            _ => {
                self.notify(
                    "F: select a compaction row of the session (the rows between messages)",
                );
                return Vec::new();
            }
        };
        let (path, label) = (open.path().to_path_buf(), open.label().to_string());
        if self.busy_for("F") {
            return Vec::new();
        }
        let id = self.start_job(LoadKind::Analysis {
            relative: label,
            what: "what compaction forgot:",
        });
        vec![Effect::Work(Work::Analysis(AnalysisWork::Forgot {
            id,
            path,
            compaction: k + 1,
        }))]
    }

    /// `B` in an opened session: fork it before the selected compaction (the whole history)
    /// and show where the fork went and the command that resumes it.
    pub(super) fn fork_of_opened_row(&mut self) -> Vec<Effect> {
        let Some(open) = self.sessions.open() else {
            return Vec::new();
        };
        let k = match open.rows().get(open.list().selected) {
            Some(ViewRow::Compaction(k)) => *k,
            _ => {
                self.notify("B: select a compaction row of the session to fork before it");
                return Vec::new();
            }
        };
        let (path, label) = (open.path().to_path_buf(), open.label().to_string());
        self.fork_job(path, label, k + 1)
    }

    /// `B` in the forgot view: fork before the compaction it shows, when it is of a session
    /// file (an opened session's `F`); the forgot view of a replay's stage has none.
    pub(super) fn fork_from_viewer(
        &mut self,
        source: Option<(std::path::PathBuf, usize)>,
    ) -> Vec<Effect> {
        let Some((path, compaction)) = source else {
            self.notify("B: fork from the forgot view of a session file's compaction (F on an opened session's compaction row)");
            return Vec::new();
        };
        let label = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        self.fork_job(path, label, compaction)
    }

    /// The fork before compaction `compaction` (1-based) of `path`, as a job.
    fn fork_job(
        &mut self,
        path: std::path::PathBuf,
        label: String,
        compaction: usize,
    ) -> Vec<Effect> {
        if self.busy_for("B") {
            return Vec::new();
        }
        let id = self.start_job(LoadKind::Analysis {
            relative: label,
            what: "forking before a compaction:",
        });
        vec![Effect::Work(Work::Analysis(AnalysisWork::Fork {
            id,
            path,
            compaction,
            homes: crate::fork::place::homes_from_env(),
        }))]
    }

    /// `w` in an opened session: its recorded calls by category, on the selected row's call.
    pub(super) fn context_of_opened(&mut self) -> Vec<Effect> {
        let Some(open) = self.sessions.open() else {
            return Vec::new();
        };
        // Without recorded usage (ctxlab's transcripts) each answer is a call: the row's
        // message says which.
        let message = match open.rows().get(open.list().selected) {
            Some(ViewRow::Message { index, .. }) => Some(*index),
            Some(ViewRow::Compaction(k)) => {
                open.compactions().get(*k).map(|c| c.at.saturating_sub(1))
            }
            None => None,
        };
        let pick = CallPick {
            call: open.selected_call(),
            message,
        };
        let (path, label) = (open.path().to_path_buf(), open.label().to_string());
        if self.busy_for("w") {
            return Vec::new();
        }
        let id = self.start_job(LoadKind::Analysis {
            relative: label,
            what: "where the context goes:",
        });
        vec![Effect::Work(Work::Analysis(AnalysisWork::Calls {
            id,
            path,
            pick,
        }))]
    }

    /// `F` in the compare view: what the selected strategy's stages forgot before the
    /// selected call.
    pub(super) fn forgot_in_compare(&mut self, v: &CompareView) -> Vec<Effect> {
        let k = v.strategy();
        let (Some(config), Some(run)) = (v.configs().get(k).copied(), v.runs().get(k)) else {
            self.notify("F: wait for this strategy's replay");
            return Vec::new();
        };
        let Some(call) = run.calls.get(v.call()) else {
            return Vec::new();
        };
        if call.stages.is_empty() {
            let text = format!(
                "F: {} ran no stage before call {}: select a call with a stage letter (h/l)",
                config.strategy.name(),
                v.call_number(v.call())
            );
            self.notify(text);
            return Vec::new();
        }
        let (session, recorded, call) = (
            SharedSession(v.session().clone()),
            v.recorded().to_vec(),
            call.call,
        );
        if self.busy_for("F") {
            return Vec::new();
        }
        let id = self.start_job(LoadKind::Analysis {
            relative: config.strategy.name().to_string(),
            what: "what this strategy forgot:",
        });
        vec![Effect::Work(Work::Analysis(AnalysisWork::ReplayForgot {
            id,
            session,
            config,
            recorded,
            call,
        }))]
    }

    /// `w` in the conversation pane, a click on the gauge: where the context goes, at the
    /// latest call.
    pub(super) fn context_at_latest(&mut self) {
        if self.timeline().calls.is_empty() {
            self.notify("no model call yet: nothing to break down");
            return;
        }
        let view = ContextView::of(self.timeline(), usize::MAX);
        self.push_layer(Layer::Context(view));
    }

    pub(super) fn analysis_done(&mut self, done: AnalysisDone) {
        match done {
            AnalysisDone::Forgot { id, result, fork } => {
                if self.finish_job(id).is_none() {
                    return;
                }
                match result {
                    Ok((title, lines)) => {
                        self.open_viewer_lines(title, lines);
                        if let (Some(Layer::Viewer(v)), Some((path, k))) =
                            (self.layers.last_mut(), fork)
                        {
                            v.set_fork_source(path, k);
                        }
                    }
                    Err(e) => self.notify(e.to_string()),
                }
            }
            AnalysisDone::Forked { id, result } => {
                if self.finish_job(id).is_none() {
                    return;
                }
                match result {
                    Ok((title, lines)) => self.open_viewer_lines(title, lines),
                    Err(e) => self.notify(e.to_string()),
                }
            }
            AnalysisDone::Calls { id, pick, result } => {
                if self.finish_job(id).is_none() {
                    return;
                }
                match result {
                    Ok(b) if b.calls.is_empty() => {
                        self.notify("no model call recorded in this session: nothing to break down")
                    }
                    Ok(b) => {
                        let selected = picked(&b, pick);
                        self.push_layer(Layer::Context(ContextView::of_session(*b, selected)));
                    }
                    Err(e) => self.notify(e.to_string()),
                }
            }
            AnalysisDone::Requests {
                id,
                selected,
                result,
            } => {
                if self.finish_job(id).is_none() {
                    return;
                }
                self.requests_done(selected, result);
            }
        }
    }
}

/// The breakdown's call the opened session's row belongs to: its recorded call, else the
/// last answer at or before its message, else the last call.
fn picked(b: &SessionBreakdown, pick: CallPick) -> usize {
    let last = b.calls.len().saturating_sub(1);
    if let Some(k) = pick.call.filter(|&k| k <= last) {
        return k;
    }
    pick.message
        .and_then(|m| {
            b.calls
                .iter()
                .rposition(|c| c.message.is_some_and(|cm| cm <= m))
        })
        .unwrap_or(last)
}
