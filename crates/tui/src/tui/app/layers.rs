//! The views that cover the panes, as a stack of layers: the help, the legend, the config
//! panel, a diff, the viewer, the compare view, the context view, the requests view, the
//! live view and an explanation (`e`). The layer on top takes every key and mouse event and
//! is drawn last, so what has the keys is what is seen (docs/architecture.md, `tui/`). One
//! place decides: keys (`navigation.rs`), the mouse (`mouse.rs`), pasting, the hint line
//! and the help's section read `top_layer()`, and `screen::render` calls each layer's `draw`
//! in `layers()`' order. Nothing under the top layer ever gets a message: a view that wants
//! another view opens it on top, and a view's `Outcome` says whether it stays.
//!
//! `Layer`, `View` and `Outcome` are defined in `app/mod.rs`, so that each view's module
//! implements `View` without a circle through this file. A view is one `View`: its keys and
//! its mouse (given the rest of `App` as context) and its drawing (`View::draw`, given the
//! `DrawCtx`: the theme, the settings, the areas, the size, the tick and the notices, never
//! the rest of `App`), all in the view's own module (`app/<view>.rs` and its `draw.rs`);
//! the drawing pieces the views share with the panes are `tui::draw`.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind};
use ratatui::Frame;
use ratatui::layout::Rect;

use super::{App, Effect, Layer, Outcome, View};
use crate::tui::draw::DrawCtx;

/// Rows one wheel notch moves in a view (as in the panes).
const WHEEL_ROWS: usize = 3;

/// A view's mouse unless it has its own: the wheel moves as Up and Down do, a click is
/// taken (it lands on the view, whatever is drawn beneath).
pub(super) fn wheel_as_keys<V: View + ?Sized>(
    view: &mut V,
    m: MouseEvent,
    app: &mut App,
) -> Outcome {
    let code = match m.kind {
        MouseEventKind::ScrollUp => KeyCode::Up,
        MouseEventKind::ScrollDown => KeyCode::Down,
        _ => return Outcome::Consumed,
    };
    let mut effects = Vec::new();
    for _ in 0..WHEEL_ROWS {
        match view.key(KeyEvent::new(code, KeyModifiers::NONE), app) {
            Outcome::Effects(fx) => effects.extend(fx),
            Outcome::Close(fx) => {
                effects.extend(fx);
                return Outcome::Close(effects);
            }
            Outcome::Consumed | Outcome::Pass => {}
        }
    }
    Outcome::Effects(effects)
}

/// `body` with `v` bound to the view inside `layer`, whatever its kind.
macro_rules! with_view {
    ($layer:expr, $v:ident => $body:expr) => {
        match $layer {
            Layer::Help($v) => $body,
            Layer::Legend($v) => $body,
            Layer::Config($v) => $body,
            Layer::Diff($v) => $body,
            Layer::Viewer($v) => $body,
            Layer::Compare($v) => $body,
            Layer::Context($v) => $body,
            Layer::Requests($v) => $body,
            Layer::Live($v) => $body,
            Layer::Explain($v) => $body,
        }
    };
}

impl Layer {
    /// The view inside, as a `View`.
    fn view(&mut self) -> &mut dyn View {
        with_view!(self, v => v)
    }

    /// Which kind of view: two layers of one kind are never open at once.
    pub fn kind(&self) -> &'static str {
        match self {
            Layer::Help(_) => "help",
            Layer::Legend(_) => "legend",
            Layer::Config(_) => "config",
            Layer::Diff(_) => "diff",
            Layer::Viewer(_) => "viewer",
            Layer::Compare(_) => "compare",
            Layer::Context(_) => "context",
            Layer::Requests(_) => "requests",
            Layer::Live(_) => "live",
            Layer::Explain(_) => "explain",
        }
    }

    /// Draws the view inside over the panes (`View::draw`).
    pub fn draw(&self, f: &mut Frame, full: Rect, ctx: &DrawCtx) {
        with_view!(self, v => View::draw(v, f, full, ctx))
    }

    pub fn help_section(&self) -> Option<&'static str> {
        with_view!(self, v => View::help_section(v))
    }

    pub fn hints(&self) -> Option<&'static [(&'static str, &'static str)]> {
        with_view!(self, v => View::hints(v))
    }
}

impl App {
    /// The open views, the bottom one first (drawn in this order).
    pub fn layers(&self) -> &[Layer] {
        &self.layers
    }

    /// What the covering views' drawing reads besides their own state, for this frame.
    pub fn draw_ctx(&self) -> DrawCtx<'_> {
        DrawCtx {
            theme: &self.screen.theme,
            config: &self.agent.config,
            areas: self.areas(),
            size: self.screen.size,
            tick: self.screen.tick,
            events: self.events.rows(),
        }
    }

    /// The view that has the keys, if one covers the panes.
    pub fn top_layer(&self) -> Option<&Layer> {
        self.layers.last()
    }

    /// Opens `layer` on top; one of its kind already open closes first.
    pub(super) fn push_layer(&mut self, layer: Layer) {
        self.layers.retain(|l| l.kind() != layer.kind());
        self.layers.push(layer);
    }

    /// Hands a message to the view on top (None when no view covers the panes): the view
    /// is taken off the stack while it runs, and put back where it was unless it closed,
    /// under any view it opened meanwhile.
    pub(super) fn route_to_top(
        &mut self,
        handle: impl FnOnce(&mut dyn View, &mut App) -> Outcome,
        key: Option<KeyEvent>,
    ) -> Option<Vec<Effect>> {
        let mut top = self.layers.pop()?;
        let at = self.layers.len();
        let outcome = handle(top.view(), self);
        let keep = |app: &mut App, top: Layer| app.layers.insert(at.min(app.layers.len()), top);
        Some(match outcome {
            Outcome::Consumed => {
                keep(self, top);
                Vec::new()
            }
            Outcome::Effects(fx) => {
                keep(self, top);
                fx
            }
            Outcome::Close(fx) => fx,
            Outcome::Pass => {
                keep(self, top);
                if key.is_some_and(|k| k.code == KeyCode::Char('?')) {
                    self.open_help();
                }
                Vec::new()
            }
        })
    }
}
