//! The forgot view: `F` on a stage row of the events pane (the live agent or a replay, both
//! folded into the timeline) shows what that compaction forgot (docs/forgot.md): the rule,
//! sizes before, kept and dropped, the summary, the facts not carried and the cleared
//! results read again. The analysis is `forgot`'s, on the timeline's own before and after
//! of the step (`timeline::forgot_inputs`); the text goes through the sanitizer and opens
//! in the viewer, which draws it. The view's text is `tui::analysis::forgot_view`, the
//! same for every place that opens it.

use super::{App, EventKind};
use crate::timeline::forgot_inputs::timeline_reports;
use crate::tui::analysis::forgot_view;

impl App {
    /// The forgot view of the selected events-pane row, or a notice saying why there is none.
    pub(super) fn forgot_of_selected_event(&mut self) {
        let step = self.events.selected_row().and_then(|e| match e.kind {
            EventKind::Stage { step, .. } => step,
            _ => None,
        });
        let Some(step) = step else {
            self.notify("F: select a stage row (a compaction) in the events pane");
            return;
        };
        let reports = timeline_reports(&self.timeline);
        let Some((_, report)) = reports.iter().find(|(s, _)| *s == step) else {
            self.notify("this stage forgot nothing: it dropped no message and cleared no result");
            return;
        };
        let (title, lines) = forgot_view(report, &[]);
        self.open_viewer(title, &lines.join("\n"));
        if let Some(super::Layer::Viewer(v)) = self.layers.last_mut() {
            v.set_help_section(crate::tui::keys::section::FORGOT);
        }
    }
}
