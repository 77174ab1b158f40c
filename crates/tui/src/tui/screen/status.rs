//! The status bar (provider, workspace, what the agent is doing with a tick-driven spinner
//! and elapsed time, step mode, a "run to" under way, the pause's next step) and the hint
//! line (a notice, page by page when it is wider than the line, or the keys of the focused
//! pane, always ending with `? help  q quit`). Draws `App` state only.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::agent::events::{NextStep, StepTarget};
use crate::tui::app::pane_title::loading_text;
use crate::tui::app::{
    App, Layer, NOTICE_PAGE_TICKS, Pane, RunState, fmt_elapsed, notice_pages, search, sessions,
};
use crate::tui::draw::text::{human_bytes, key_hint};
use crate::tui::draw::{clip, spinner};
use crate::tui::theme::Theme;
use crate::util::{display_width, group_digits};

/// `idle` (`idle · last answer cut at max_tokens: 512` after a cut answer), `⠋ streaming 1.2s`, `⠋ running bash 3.4s`, `⠋ waiting 0.5s`.
pub fn state_text(app: &App) -> String {
    let since = |s: u64| fmt_elapsed(app.tick().saturating_sub(s));
    match &app.run_state() {
        RunState::Idle if app.agent_gone() => "agent stopped".into(),
        RunState::Idle => match app.conversation().last_turn_cut() {
            Some(limit) => format!(
                "idle · last answer cut at max_tokens: {}",
                group_digits(limit as usize)
            ),
            None => "idle".into(),
        },
        RunState::Waiting { since: s } => format!("{} waiting {}", spinner(app.tick()), since(*s)),
        RunState::Streaming { since: s } => {
            format!("{} streaming {}", spinner(app.tick()), since(*s))
        }
        RunState::Summarizing { since: s } => {
            format!("{} summarizing {}", spinner(app.tick()), since(*s))
        }
        RunState::Tool { name, since: s } => {
            format!("{} running {name} {}", spinner(app.tick()), since(*s))
        }
    }
}

/// What is open while the sessions browser or an opened session has focus (the agent's
/// provider and workspace are not what is being read): `session rollout-….jsonl · codex ·
/// 7.6 KB`, `sessions browser · Claude Code and Codex folders · 5 sessions`.
fn browsing_text(app: &App) -> Option<String> {
    if !app.browsing() {
        return None;
    }
    let s = app.sessions();
    if let Some(open) = s.open() {
        return Some(
            crate::sanitize::sanitize_line(&format!(
                "session {} · {} · {}",
                open.label(),
                open.format().name(),
                human_bytes(open.bytes())
            ))
            .into_owned(),
        );
    }
    let where_ = sessions::draw::where_text(app.sessions());
    let count = s
        .rows()
        .iter()
        .filter(|r| matches!(r, crate::tui::sessions::BrowserRow::Session(_)))
        .count();
    Some(
        crate::sanitize::sanitize_line(&format!(
            "sessions browser · {where_} · {}",
            crate::util::plural(count, "session")
        ))
        .into_owned(),
    )
}

pub fn render(app: &App, f: &mut Frame, area: Rect) {
    let theme = app.theme();
    let width = area.width as usize;
    if let Some(next) = app.step_state().next_step() {
        // The pause is what matters now: it gets the whole line.
        f.render_widget(Paragraph::new(paused_line(app, next, width)), area);
        return;
    }
    let browsing = browsing_text(app);
    let mut spans = vec![
        Span::styled(" ctxlab ", theme.title()),
        Span::raw("│ "),
        Span::raw(
            browsing
                .clone()
                .unwrap_or_else(|| app.provider().to_string()),
        ),
        Span::raw(" │ "),
    ];
    {
        // Reading a session, the agent's state matters only when it is doing something.
        if browsing.is_some() && *app.run_state() == RunState::Idle {
            spans.pop();
        } else {
            spans.push(Span::raw(state_text(app)));
        }
        if app.step_state().mode() {
            spans.push(Span::raw(" │ "));
            spans.push(Span::styled(
                match app.step_state().run_to() {
                    Some(StepTarget::Stage) => "step mode: running to the next stage",
                    Some(StepTarget::ModelCall) => "step mode: running to the next model call",
                    None => "step mode",
                },
                theme.warn(),
            ));
        }
        if let Some(text) = loading_text(app) {
            let used: usize = spans.iter().map(|s| display_width(&s.content)).sum();
            spans.push(Span::raw(" │ "));
            spans.push(Span::styled(
                clip(&text, width.saturating_sub(used + 3)),
                theme.warn(),
            ));
        }
        let used: usize = spans.iter().map(|s| display_width(&s.content)).sum();
        let ws = app.workspace().display().to_string();
        let room = width.saturating_sub(used + 3);
        if room > 8 && browsing.is_none() {
            spans.push(Span::raw(" │ "));
            spans.push(Span::styled(clip(&ws, room), theme.dim()));
        }
    }
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// The step keys as the paused status line offers them.
const PAUSED_KEYS: &str = "Space step · s stage · c call · p back";

/// The paused status line at `width` columns, never cut: the full sentence with the keys
/// and the provider when they fit, then without the provider, the keys, then the short
/// sentence (`pause::short`) the same way (the card below has the rest).
pub fn paused_line(app: &App, next: &NextStep, width: usize) -> Line<'static> {
    let theme = app.theme();
    let badge = " PAUSED ";
    let provider = format!("  │ {}", app.provider());
    let full = next.describe();
    let short = crate::tui::pause::short(next);
    let fits = |text: &str, keys: bool, prov: bool| {
        display_width(badge)
            + 1
            + display_width(text)
            + if keys {
                2 + display_width(PAUSED_KEYS)
            } else {
                0
            }
            + if prov { display_width(&provider) } else { 0 }
            <= width
    };
    let choice = [&full, &short]
        .into_iter()
        .flat_map(|t| [(t, true, true), (t, true, false), (t, false, false)])
        .find(|(t, k, p)| fits(t, *k, *p));
    let (text, keys, prov) = match choice {
        Some((t, k, p)) => (t.clone(), k, p),
        None => (
            clip(&short, width.saturating_sub(display_width(badge) + 1)),
            false,
            false,
        ),
    };
    let mut spans = vec![
        Span::styled(badge, theme.paused()),
        Span::raw(" "),
        Span::styled(text, theme.warn()),
    ];
    if keys {
        spans.push(Span::raw("  "));
        spans.push(Span::styled(PAUSED_KEYS, theme.key()));
    }
    if prov {
        spans.push(Span::raw(provider));
    }
    Line::from(spans)
}

/// The part of a notice shown now: a notice wider than the line is shown a page at a time
/// (`(1/2)`, `(2/2)`), so every word of it is seen, at any width.
pub fn notice_page(text: &str, width: usize, ticks_shown: u64) -> String {
    let pages = notice_pages(text, width as u16);
    if pages.len() <= 1 {
        return clip(text, width);
    }
    let n = pages.len();
    let k = ((ticks_shown / NOTICE_PAGE_TICKS) as usize).min(n - 1);
    clip(&format!("{} ({}/{n})", pages[k], k + 1), width)
}

pub fn render_hints(app: &App, f: &mut Frame, area: Rect) {
    let theme = app.theme();
    let width = area.width as usize;
    if let Some(line) = search::draw::hint_line(app, width) {
        f.render_widget(Paragraph::new(line), area);
        return;
    }
    if let (Some(n), Some((_, at))) = (app.notice_text(), app.notice()) {
        f.render_widget(
            Paragraph::new(Span::styled(
                notice_page(n, width, app.tick().saturating_sub(at)),
                theme.warn(),
            )),
            area,
        );
        return;
    }
    // The topmost covering view that offers keys here (an overlay names its own in its
    // title): it has the keys, so only its own are offered.
    let covering = app.layers().iter().rev().find_map(|l| l.hints());
    let pane: &[(&str, &str)] = match app.focus() {
        _ if covering.is_some() => covering.unwrap_or_default(),
        Pane::Input => &[("Enter", "send"), ("Alt-Enter", "newline")],
        Pane::Conversation => &[
            ("j/k", "move"),
            ("Enter", "expand"),
            ("v", "view"),
            ("o", "open"),
        ],
        Pane::Events => &[
            ("j/k", "move"),
            ("Enter", "open"),
            ("F", "forgot"),
            ("u", "unchanged"),
        ],
        Pane::Outputs => &[("Enter", "view"), ("m", "jump"), ("R", "refresh")],
        Pane::Transcripts
            if app
                .sessions()
                .open()
                .is_some_and(|o| o.format() == crate::session::SessionFormat::ProxyCapture) =>
        {
            &[
                ("j/k", "move"),
                ("R", "requests"),
                ("F", "forgot"),
                ("w", "context"),
                ("o", "text"),
                ("r", "replay"),
                ("C", "compare"),
                ("Esc", "close"),
            ]
        }
        Pane::Transcripts if app.sessions().open().is_some() => &[
            ("j/k", "move"),
            ("F", "forgot"),
            ("w", "context"),
            ("o", "text"),
            ("/", "search"),
            ("r", "replay"),
            ("C", "compare"),
            ("Esc", "close"),
        ],
        Pane::Transcripts if app.sessions().active() => &[
            ("Enter", "open/fold"),
            ("/", "filter"),
            ("w", "follow live"),
            ("R", "refresh"),
            ("b", "transcripts"),
        ],
        Pane::Transcripts => &[
            ("Enter", "open"),
            ("r", "replay"),
            ("C", "compare"),
            ("b", "sessions"),
            ("Esc", "back"),
        ],
        Pane::Timeline => &[
            ("j/k", "call"),
            ("Enter", "diff"),
            ("o", "request"),
            ("w", "context"),
            ("C", "compare"),
        ],
    };
    // In step mode the step keys come first: they are what a class is waiting for.
    let mut items: Vec<(&str, &str)> = Vec::new();
    let comparing = covering.is_some();
    if app.step_state().mode() && app.focus() != Pane::Input && !comparing {
        items.extend([
            ("Space", "step"),
            ("s", "stage"),
            ("c", "call"),
            ("p", "back"),
        ]);
    }
    items.extend(pane.iter().copied());
    if !app.step_state().mode() && app.focus() != Pane::Input && !comparing {
        items.push(("i", "type"));
    }
    // Dropped first when the line is short; the two views a class is shown come first.
    let optional: &[(&str, &str)] = if comparing {
        &[]
    } else if app.focus() == Pane::Input {
        // `t` and `C` are text in the input box.
        &[("Tab/1-5", "panes"), ("^C", "cancel")]
    } else if app.focus() == Pane::Timeline {
        &[("C", "compare"), ("Tab/1-5", "panes"), ("^C", "cancel")]
    } else {
        &[
            ("t", "timeline"),
            ("C", "compare"),
            ("Tab/1-5", "panes"),
            ("^C", "cancel"),
        ]
    };
    let tail = hint_tail(app, theme);
    let tail_w: usize = tail.iter().map(|s| display_width(&s.content)).sum();
    let item_w = |(k, w): &(&str, &str)| display_width(k) + display_width(w) + 3;
    let mut used: usize = items.iter().map(item_w).sum::<usize>() + tail_w;
    for &o in optional {
        if items.iter().any(|(k, _)| *k == o.0) {
            continue;
        }
        if used + item_w(&o) <= width {
            used += item_w(&o);
            items.push(o);
        }
    }
    // A key the pane can spare goes before the others: the browser keeps `b transcripts`
    // at 80 columns and lets `R refresh` (also in `?` help) go.
    let spare: &[&str] = match app.focus() {
        Pane::Transcripts if app.sessions().open().is_none() && app.sessions().active() => &["R"],
        _ => &[],
    };
    for key in spare {
        if used <= width {
            break;
        }
        if let Some(at) = items.iter().position(|(k, _)| k == key) {
            used -= item_w(&items.remove(at));
        }
    }
    while used > width && items.len() > 1 {
        if let Some(last) = items.pop() {
            used -= item_w(&last);
        }
    }
    let mut spans = Vec::new();
    for (k, w) in &items {
        spans.extend(key_hint(theme, k, w));
    }
    spans.extend(tail);
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// `? help  q quit` ends every hint line; in the input box, where `?` and `q` are text,
/// after the key that leaves it.
fn hint_tail<'a>(app: &App, theme: &Theme) -> Vec<Span<'a>> {
    let mut spans = Vec::new();
    if app.focus() == Pane::Input {
        spans.push(Span::styled("Esc", theme.key()));
        spans.push(Span::raw(" leave, then "));
    }
    spans.push(Span::styled("?", theme.key()));
    let covering = app.layers().iter().rev().find(|l| l.hints().is_some());
    if matches!(covering, Some(Layer::Compare(_))) {
        // In the compare view `q` closes the view (its own hint says so).
        spans.push(Span::raw(" help"));
        return spans;
    }
    spans.push(Span::raw(" help  "));
    spans.push(Span::styled("q", theme.key()));
    spans.push(Span::raw(" quit"));
    spans
}
