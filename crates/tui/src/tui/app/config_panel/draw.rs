//! The `/config` panel: every `PipelineConfig` key with its value, unit and allowed range,
//! then the strategy; under the rows, what the selected one does (its meaning and range,
//! or each strategy's description, wrapped at the dialog's width, never cut). The dialog
//! is as tall as its text. Draws `App` state only (`app/config_panel.rs` has the keys).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{ConfigPanel, STRATEGY_ROW};
use crate::compact::{PipelineConfig, Strategy};
use crate::tui::draw::{DrawCtx, covering_frame, fit};
use crate::tui::pause::wrap_words;
use crate::tui::theme::Theme;
use crate::util::group_digits;

/// Columns of the key's name.
const KEY_W: usize = 22;
/// Columns of a strategy's name (with its mark) before its description.
const NAME_W: usize = 13;

pub(super) fn render(ctx: &DrawCtx, f: &mut Frame, area: Rect, panel: &ConfigPanel) {
    // Narrow screens give the dialog more of their width, so the text wraps less.
    let pct_w = if area.width < 100 { 92 } else { 70 };
    let width = area.width * pct_w / 100;
    let lines = lines(ctx, panel, width.saturating_sub(2) as usize);
    let height = (lines.len() as u16 + 2).min(area.height);
    let r = Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    };
    let title = Line::from(vec![
        Span::styled(" Pipeline config ", ctx.theme.title()),
        Span::styled("(applies from the next model call) ", ctx.theme.dim()),
    ]);
    let inner = covering_frame(f, r, title, ctx.theme);
    f.render_widget(Paragraph::new(lines), inner);
}

/// The dialog's lines at `width` columns: the rows, what the selected row means, the keys.
fn lines(ctx: &DrawCtx, panel: &ConfigPanel, width: usize) -> Vec<Line<'static>> {
    let theme = ctx.theme;
    let config = ctx.config;
    let mut lines = Vec::new();
    for (i, key) in PipelineConfig::KEYS.iter().enumerate() {
        let value = config.get(key).map(group_digits).unwrap_or_default();
        let selected = i == panel.selected();
        let editing = panel.editing().filter(|_| selected);
        let shown = match editing {
            Some(buf) => format!("[{buf}▏]"),
            None => value,
        };
        let (unit, range) = unit_and_range(key, config.strategy);
        let rest = fit(
            &format!("  {unit:<13} {range}"),
            width.saturating_sub(KEY_W + 14),
        );
        let mut line = Line::from(vec![
            Span::raw(if selected { "› " } else { "  " }),
            Span::raw(fit(key, KEY_W)),
            Span::styled(
                format!("{shown:>12}"),
                if editing.is_some() {
                    theme.key()
                } else {
                    Style::new()
                },
            ),
            Span::styled(rest, theme.dim()),
        ]);
        if selected {
            line = crate::tui::draw::selected_line(line, theme);
        }
        lines.push(line);
    }
    lines.push(strategy_line(ctx, panel));
    lines.push(Line::from(""));
    match panel.error() {
        Some(e) => lines.extend(wrapped(e, width, theme.error())),
        None => lines.extend(detail_lines(ctx, panel, width)),
    }
    let help = if panel.selected() == STRATEGY_ROW {
        if panel.choosing().is_some() {
            "h/l choose · Enter apply (from the next model call) · Esc cancel"
        } else {
            "h/l choose a strategy · Enter apply · k up · Esc close"
        }
    } else if panel.editing().is_some() {
        "type digits · Enter apply · Esc cancel"
    } else {
        "j/k select · Enter edit · Esc close"
    };
    lines.extend(wrapped(help, width, theme.dim()));
    lines
}

/// A key's unit and its allowed values, as the rows show them.
fn unit_and_range(key: &str, strategy: Strategy) -> (String, String) {
    let unit = match PipelineConfig::meaning(key) {
        // context_limit is counted in the strategy's unit.
        Some(_) if key == "context_limit" => strategy.unit().label().to_string(),
        Some((unit, _)) => unit.to_string(),
        None => String::new(),
    };
    let range = PipelineConfig::range(key)
        .map(|(lo, hi)| format!("{} – {}", group_digits(lo), group_digits(hi)))
        .unwrap_or_default();
    (unit, range)
}

/// What the selected row does: a number's meaning and range, or the strategies.
fn detail_lines(ctx: &DrawCtx, panel: &ConfigPanel, width: usize) -> Vec<Line<'static>> {
    let theme = ctx.theme;
    let Some(key) = panel.selected_key() else {
        return strategy_detail(ctx, panel, width);
    };
    let strategy = ctx.config.strategy;
    let (unit, range) = unit_and_range(key, strategy);
    let meaning = PipelineConfig::meaning(key).map_or("", |m| m.1);
    let mut out = wrapped(&format!("{key}: {meaning}."), width, Style::new());
    let mut allowed = format!("Allowed {range} {unit}");
    if key == "snip_keep_head" {
        allowed.push_str(", and below snip_max_messages");
    }
    let default = PipelineConfig::for_strategy(strategy)
        .get(key)
        .map(group_digits)
        .unwrap_or_default();
    allowed.push_str(&format!("; {strategy}'s default {default}."));
    out.extend(wrapped(&allowed, width, theme.dim()));
    out
}

/// Each strategy on a line of its own (wrapped), the one in force and the one chosen marked.
fn strategy_detail(ctx: &DrawCtx, panel: &ConfigPanel, width: usize) -> Vec<Line<'static>> {
    let theme = ctx.theme;
    let in_force = ctx.config.strategy;
    let shown = panel.choosing().unwrap_or(in_force);
    let mut out = Vec::new();
    for s in Strategy::ALL {
        let mark = match (s == shown, s == in_force) {
            (true, _) => "›",
            _ => " ",
        };
        let now = if s == in_force { " (in force)" } else { "" };
        let text = format!("{} (counts {}){now}", s.describe(), s.unit().label());
        let style = if s == shown { theme.key() } else { theme.dim() };
        // The name in a column of its own; the description wraps beside it.
        for (i, piece) in wrap_words(&text, width.saturating_sub(NAME_W).max(10))
            .into_iter()
            .enumerate()
        {
            let head = if i == 0 {
                format!("{mark} {:<w$}", s.name(), w = NAME_W - 2)
            } else {
                " ".repeat(NAME_W)
            };
            out.push(Line::from(Span::styled(format!("{head}{piece}"), style)));
        }
    }
    out
}

/// `text` wrapped between words at `width`, in `style`.
fn wrapped(text: &str, width: usize, style: Style) -> Vec<Line<'static>> {
    wrap_words(text, width.max(1))
        .into_iter()
        .map(|l| Line::from(Span::styled(l, style)))
        .collect()
}

/// The strategy's row: the one in force, or the one being chosen.
fn strategy_line(ctx: &DrawCtx, panel: &ConfigPanel) -> Line<'static> {
    let theme: &Theme = ctx.theme;
    let selected = panel.selected() == STRATEGY_ROW;
    let mut line = match panel.choosing() {
        Some(s) => Line::from(vec![
            Span::raw("› "),
            Span::raw(fit("strategy", KEY_W)),
            Span::styled(format!("‹ {s} ›"), theme.key()),
            Span::styled("  not applied yet: Enter applies", theme.dim()),
        ]),
        None => Line::from(vec![
            Span::raw(if selected { "› " } else { "  " }),
            Span::raw(fit("strategy", KEY_W)),
            Span::raw(ctx.config.strategy.name().to_string()),
            Span::styled(if selected { "  h/l to choose" } else { "" }, theme.dim()),
        ]),
    };
    if selected {
        line = crate::tui::draw::selected_line(line, theme);
    }
    line
}
