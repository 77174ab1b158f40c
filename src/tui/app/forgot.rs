//! The forgot view: `F` on a stage row of the events pane (the live agent or a replay, both
//! folded into the timeline) shows what that compaction forgot (docs/forgot.md): the rule,
//! sizes before, kept and dropped, the summary, the facts not carried and the cleared
//! results read again. The analysis is `forgot`'s, on the timeline's own before and after
//! of the step (`timeline::forgot_inputs`); the text goes through the sanitizer and opens
//! in the viewer, which draws it.

use super::{App, EventKind};
use crate::forgot::analyze;
use crate::forgot::text::{CHECK_RULE, report_lines};
use crate::sanitize::sanitize_line;
use crate::timeline::forgot_inputs::timeline_inputs;

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
        let inputs = timeline_inputs(&self.timeline);
        let Some(n) = inputs.iter().position(|(s, _)| *s == step) else {
            self.notify("this stage forgot nothing: it dropped no message and cleared no result");
            return;
        };
        let report = analyze(n + 1, &inputs[n].1);
        let mut lines: Vec<String> = report_lines(&report, true)
            .iter()
            .map(|l| sanitize_line(l).into_owned())
            .collect();
        lines.push(String::new());
        lines.push(format!("facts check: {CHECK_RULE}"));
        let title = format!("what {} forgot", sanitize_line(&report.kind));
        self.open_viewer(title, &lines.join("\n"));
        if let Some(super::Overlay::Viewer(v)) = &mut self.overlay {
            v.set_help_section(crate::tui::keys::section::FORGOT);
        }
    }
}
