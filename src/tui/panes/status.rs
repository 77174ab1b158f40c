//! The status bar (provider, workspace, what the agent is doing with a tick-driven spinner
//! and elapsed time, step mode, the pause's next step) and the hint line (notices, or the
//! keys of the focused pane). Draws `App` state only.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{clip, fmt_elapsed, human_bytes, key_hint};
use crate::tui::app::{App, LoadKind, Pane, RunState};
use crate::util::{display_width, group_digits};

const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

pub fn spinner(tick: u64) -> &'static str {
    SPINNER[(tick % SPINNER.len() as u64) as usize]
}

/// `idle`, `⠋ streaming 1.2s`, `⠋ running bash 3.4s`, `⠋ waiting 0.5s`.
pub fn state_text(app: &App) -> String {
    let since = |s: u64| fmt_elapsed(app.tick.saturating_sub(s));
    match &app.run_state {
        RunState::Idle if app.agent_gone => "agent stopped".into(),
        RunState::Idle => "idle".into(),
        RunState::Waiting { since: s } => format!("{} waiting {}", spinner(app.tick), since(*s)),
        RunState::Streaming { since: s } => {
            format!("{} streaming {}", spinner(app.tick), since(*s))
        }
        RunState::Tool { name, since: s } => {
            format!("{} running {name} {}", spinner(app.tick), since(*s))
        }
    }
}

/// `⠋ loading transcript_1700000000.jsonl (48.0 MB) 1.2s` while the screen waits for a job.
pub fn loading_text(app: &App) -> Option<String> {
    let l = app.loading.as_ref()?;
    let relative = l.what.relative();
    let name = relative.rsplit('/').next().unwrap_or(relative);
    let what = match &l.what {
        LoadKind::Transcript { bytes, .. } => format!("loading {name} ({})", human_bytes(*bytes)),
        LoadKind::Replay { messages, .. } => {
            format!("replaying {name} ({} messages)", group_digits(*messages))
        }
        LoadKind::Output { bytes, .. } => format!("reading {name} ({})", human_bytes(*bytes)),
    };
    let elapsed = fmt_elapsed(app.tick.saturating_sub(l.since));
    Some(format!("{} {what} {elapsed}", spinner(app.tick)))
}

pub fn render(app: &App, f: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let width = area.width as usize;
    if let Some(next) = &app.paused {
        // The pause is what matters now: it gets the whole line.
        let spans = vec![
            Span::styled(" PAUSED ", theme.paused()),
            Span::raw(" "),
            Span::styled(next.clone(), theme.warn()),
            Span::raw("  "),
            Span::styled("Space: step", theme.key()),
            Span::raw(format!("  │ {}", app.provider)),
        ];
        f.render_widget(Paragraph::new(Line::from(spans)), area);
        return;
    }
    let mut spans = vec![
        Span::styled(" ctxlab ", theme.title()),
        Span::raw("│ "),
        Span::raw(app.provider.clone()),
        Span::raw(" │ "),
    ];
    {
        spans.push(Span::raw(state_text(app)));
        if app.step_mode {
            spans.push(Span::raw(" │ "));
            spans.push(Span::styled("step mode", theme.warn()));
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
        let ws = app.workspace.display().to_string();
        let room = width.saturating_sub(used + 3);
        if room > 8 {
            spans.push(Span::raw(" │ "));
            spans.push(Span::styled(clip(&ws, room), theme.dim()));
        }
    }
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

pub fn render_hints(app: &App, f: &mut Frame, area: Rect) {
    let theme = &app.theme;
    if let Some(line) = super::search::hint_line(app, area.width as usize) {
        f.render_widget(Paragraph::new(line), area);
        return;
    }
    if let Some(n) = app.notice_text() {
        f.render_widget(
            Paragraph::new(Span::styled(clip(n, area.width as usize), theme.warn())),
            area,
        );
        return;
    }
    let pane: &[(&str, &str)] = match app.focus {
        Pane::Input => &[
            ("Enter", "send"),
            ("Alt-Enter", "newline"),
            ("Esc", "leave"),
            ("/compact /config /step", ""),
        ],
        Pane::Conversation => &[
            ("j/k", "move"),
            ("Enter", "expand"),
            ("v", "view"),
            ("o", "open"),
        ],
        Pane::Events => &[("j/k", "move"), ("Enter", "diff"), ("u", "unchanged")],
        Pane::Outputs => &[("Enter", "view"), ("m", "jump"), ("R", "refresh")],
        Pane::Transcripts => &[("Enter", "open"), ("r", "replay"), ("Esc", "back")],
        Pane::Timeline => &[("j/k", "call"), ("Enter", "diff"), ("o", "request")],
    };
    let mut spans = Vec::new();
    for (k, w) in pane {
        spans.extend(key_hint(theme, k, w));
    }
    spans.extend(key_hint(theme, "Tab/1-5", "panes"));
    spans.extend(key_hint(theme, "^C", "cancel"));
    // In the input box `?` and `q` are text; outside it they are keys.
    if app.focus != Pane::Input {
        spans.extend(key_hint(theme, "?", "help"));
        spans.extend(key_hint(theme, "q", "quit"));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}
