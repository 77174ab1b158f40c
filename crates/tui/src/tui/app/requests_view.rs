//! The requests view of an opened `ctxlab proxy` capture (`R` in the opened session;
//! docs/capture.md, "The requests view"): every exact request with its change since the
//! previous one, and the selected request's detail (the labelled changes, the exact
//! breakdown, the strategies beside it). The rows are made by a job (`tui::analysis`, the
//! library's `capture_view`, as `ctxlab inspect FILE --requests` makes them); their lines
//! are `capture_view::text`'s, sanitized there. `draw.rs` draws it.

mod draw;

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::Rect;

use super::{App, Effect, Layer, LoadKind, Outcome, View};
use crate::capture_view::CaptureRequests;
use crate::session::SessionFormat;
use crate::tui::analysis::{AnalysisError, AnalysisWork};
use crate::tui::draw::DrawCtx;
use crate::tui::keys::section;
use crate::tui::work::Work;

/// The view's state: the rows as of its opening, the selected one, and how far the detail
/// is scrolled.
#[derive(Debug, Clone)]
pub struct RequestsView {
    requests: CaptureRequests,
    selected: usize,
    detail_top: usize,
}

impl RequestsView {
    pub fn new(requests: CaptureRequests, selected: usize) -> RequestsView {
        let selected = selected.min(requests.rows.len().saturating_sub(1));
        RequestsView {
            requests,
            selected,
            detail_top: 0,
        }
    }

    pub fn requests(&self) -> &CaptureRequests {
        &self.requests
    }

    pub fn selected(&self) -> usize {
        self.selected
    }

    /// The first line of the detail shown.
    fn detail_top(&self) -> usize {
        self.detail_top
    }

    /// Moves the selection or scrolls the detail; returns false for a key that closes.
    fn select_key(&mut self, key: KeyEvent) -> bool {
        let last = self.requests.rows.len().saturating_sub(1);
        let before = self.selected;
        match key.code {
            KeyCode::Esc | KeyCode::Char('q' | 'R') => return false,
            KeyCode::Up | KeyCode::Char('k') => self.selected = self.selected.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => self.selected = (self.selected + 1).min(last),
            KeyCode::Home | KeyCode::Char('g') => self.selected = 0,
            KeyCode::End | KeyCode::Char('G') => self.selected = last,
            KeyCode::PageDown | KeyCode::Char('J') => self.detail_top += 5,
            KeyCode::PageUp | KeyCode::Char('K') => {
                self.detail_top = self.detail_top.saturating_sub(5)
            }
            _ => {}
        }
        if self.selected != before {
            self.detail_top = 0;
        }
        true
    }
}

impl App {
    /// The requests view, when open.
    pub fn requests_view(&self) -> Option<&RequestsView> {
        self.layers().iter().find_map(|l| match l {
            Layer::Requests(v) => Some(v),
            _ => None,
        })
    }

    /// `R` in an opened session: its requests view, when it is a capture.
    pub(super) fn requests_of_opened(&mut self) -> Vec<Effect> {
        let Some(open) = self.sessions.open() else {
            return Vec::new();
        };
        if open.format() != SessionFormat::ProxyCapture {
            self.notify("R: only a ctxlab proxy capture records its requests");
            return Vec::new();
        }
        let selected = open.selected_call().unwrap_or(0);
        let (path, label) = (open.path().to_path_buf(), open.label().to_string());
        if self.busy_for("R") {
            return Vec::new();
        }
        let id = self.start_job(LoadKind::Analysis {
            relative: label,
            what: "the capture's requests:",
        });
        vec![Effect::Work(Work::Analysis(AnalysisWork::Requests {
            id,
            path,
            selected,
        }))]
    }

    /// The job's rows: the view opens on them.
    pub(super) fn requests_done(
        &mut self,
        selected: usize,
        result: Result<Box<CaptureRequests>, AnalysisError>,
    ) {
        match result {
            Ok(r) if r.rows.is_empty() => {
                self.notify("no model request with a readable body in this capture")
            }
            Ok(r) => {
                // The opened session's call is the main thread's request of that index;
                // side requests are rows too.
                let row = r
                    .rows
                    .iter()
                    .enumerate()
                    .filter(|(_, x)| !x.side)
                    .nth(selected)
                    .map_or(0, |(i, _)| i);
                self.push_layer(Layer::Requests(RequestsView::new(*r, row)));
            }
            Err(e) => self.notify(e.to_string()),
        }
    }
}

impl View for RequestsView {
    fn draw(&self, f: &mut Frame, full: Rect, ctx: &DrawCtx) {
        draw::render(ctx, f, full, self);
    }

    fn key(&mut self, key: KeyEvent, _app: &mut App) -> Outcome {
        if key.code == KeyCode::Char('?') {
            return Outcome::Pass;
        }
        Outcome::stay_if(self.select_key(key))
    }

    fn help_section(&self) -> Option<&'static str> {
        Some(section::REQUESTS)
    }

    fn hints(&self) -> Option<&'static [(&'static str, &'static str)]> {
        Some(&[("j/k", "request"), ("J/K", "detail"), ("Esc", "close")])
    }
}
