//! Text the panes and the status bar share, reading nothing of `App`: sizes and ages in
//! words a person reads at a glance, and a key hint's spans.

use ratatui::text::Span;

use super::super::theme::Theme;

pub fn human_bytes(n: u64) -> String {
    const K: f64 = 1024.0;
    let f = n as f64;
    if f < K {
        format!("{n} B")
    } else if f < K * K {
        format!("{:.1} KB", f / K)
    } else {
        format!("{:.1} MB", f / K / K)
    }
}

pub fn human_age(secs: Option<u64>) -> String {
    match secs {
        None => "?".into(),
        Some(s) if s < 60 => format!("{s}s"),
        Some(s) if s < 3_600 => format!("{}m", s / 60),
        Some(s) if s < 86_400 => format!("{}h", s / 3_600),
        Some(s) => format!("{}d", s / 86_400),
    }
}

/// A label and the rest of the line in a second style, for single-line key hints.
pub fn key_hint<'a>(theme: &Theme, key: &'a str, what: &'a str) -> Vec<Span<'a>> {
    vec![
        Span::styled(key, theme.key()),
        Span::raw(" "),
        Span::raw(what),
        Span::raw("  "),
    ]
}
