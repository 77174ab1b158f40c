//! The covering views' drawing half (`tui::app::layers` is their update half): each layer
//! draws itself over the panes in its module, bottom first, so the view that has the keys
//! is the one drawn last. Every covering view has one frame, `panes::covering_frame`.

use ratatui::Frame;
use ratatui::layout::Rect;

use super::{compare, config, context, diff, explain, help, legend, live, requests, viewer};
use crate::tui::app::{App, Layer};

/// Draws the open layers over the panes, the top one last.
pub fn render(app: &App, f: &mut Frame, full: Rect) {
    for layer in app.layers() {
        draw(app, f, full, layer);
    }
}

/// One layer, in the area its kind takes of `full` (the whole screen).
fn draw(app: &App, f: &mut Frame, full: Rect, layer: &Layer) {
    match layer {
        Layer::Help(h) => help::render(app, f, full, h.top()),
        Layer::Legend(l) => legend::render(app, f, full, l.top()),
        Layer::Config(p) => config::render(app, f, full, p),
        Layer::Diff(d) => diff::render(app, f, full, d),
        Layer::Viewer(v) => viewer::render(app, f, full, v),
        Layer::Compare(v) => compare::render(app, f, full, v),
        Layer::Context(v) => context::render(app, f, full, v),
        Layer::Requests(v) => requests::render(app, f, full, v),
        Layer::Live(v) => live::render(app, f, full, v),
        Layer::Explain(v) => explain::render(app, f, full, v),
    }
}
