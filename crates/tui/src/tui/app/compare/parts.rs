//! The compare view's pieces: the reachability bar and the names the cells use, each
//! piece's label (its kind and tool) and the sentence on the selected piece. Pure
//! functions of what they are given; `compare` lays them out.

use ratatui::style::Style;
use ratatui::text::Span;

use super::CompareView;
use crate::compare::{Kept, Piece, PieceKind, Reach, ReachTotals};
use crate::message::Message;
use crate::tui::draw::fit;
use crate::tui::pause::wrap_words;
use crate::tui::theme::{Level, Theme};
use crate::util::group_digits;

/// From this inner width on, the compare view says more (its sentences and columns).
pub(super) const WIDE_FROM: usize = 100;

/// The four classes as one bar `width` cells long, each in proportion to its chars (a
/// class with any chars gets at least one cell).
pub(super) fn reach_bar(t: &ReachTotals, width: usize, theme: &Theme) -> Vec<Span<'static>> {
    let total = t.total().chars.max(1);
    let mut cells: Vec<usize> = Reach::ALL
        .iter()
        .map(|r| {
            let c = t.get(*r).chars;
            if c == 0 {
                0
            } else {
                (c * width / total).max(1)
            }
        })
        .collect();
    // Rounding: the largest class takes what is left over (or gives back the excess).
    let sum: usize = cells.iter().sum();
    if let Some(big) = (0..4).max_by_key(|&i| cells[i]) {
        cells[big] = (cells[big] + width).saturating_sub(sum).max(1);
        if t.get(Reach::ALL[big]).chars == 0 {
            cells[big] = 0;
        }
    }
    let glyph = ["█", "▓", "▒", "░"];
    let mut out: Vec<Span<'static>> = Reach::ALL
        .iter()
        .zip(cells)
        .zip(glyph)
        .filter(|((_, n), _)| *n > 0)
        .map(|((r, n), g)| Span::styled(g.repeat(n), reach_style(*r, theme)))
        .collect();
    let drawn: usize = out.iter().map(|s| s.content.chars().count()).sum();
    out.push(Span::raw(" ".repeat(width.saturating_sub(drawn))));
    out
}

pub(super) fn reach_style(r: Reach, theme: &Theme) -> Style {
    match r {
        Reach::InContext => theme.level(Level::Ok),
        Reach::Referenced => theme.key(),
        Reach::OnDisk => theme.warn(),
        Reach::Lost => theme.error(),
    }
}

pub(super) fn reach_name(r: Reach) -> &'static str {
    match r {
        Reach::InContext => "ctx",
        Reach::Referenced => "ref",
        Reach::OnDisk => "disk",
        Reach::Lost => "LOST",
    }
}

pub(super) fn kept_name(k: Kept, long: bool) -> &'static str {
    match (k, long) {
        (Kept::Placeholder, false) => "placeh.",
        (Kept::Nothing, false) => "none",
        (k, _) => k.name(),
    }
}

pub(super) fn waiting(v: &CompareView, k: usize) -> String {
    if v.error().is_some() {
        " not replayed".into()
    } else if k == v.runs().len() {
        " replaying…".into()
    } else {
        " waiting".into()
    }
}

/// A piece in a few words: `user text`, `assistant text`, `bash result`.
pub(super) fn piece_label(session: &[Message], p: &Piece, width: usize) -> String {
    let text = match p.kind {
        PieceKind::UserText => "user text".to_string(),
        PieceKind::AssistantText if width < 14 => "asst text".to_string(),
        PieceKind::AssistantText => "assistant text".to_string(),
        PieceKind::ToolResult => {
            let tool = p
                .tool_use_id
                .as_deref()
                .and_then(|id| tool_of(session, p.message, id))
                .unwrap_or_else(|| "tool".to_string());
            format!("{tool} result")
        }
    };
    fit(&text, width)
}

/// The name and input of the tool call `id`, looked for in the messages before `before`.
pub(super) fn tool_call(session: &[Message], before: usize, id: &str) -> Option<(String, String)> {
    session[..before.min(session.len())]
        .iter()
        .rev()
        .flat_map(|m| m.tool_uses())
        .find(|b| b.get("id").and_then(|v| v.as_str()) == Some(id))
        .map(|b| {
            let name = b.get("name").and_then(|v| v.as_str()).unwrap_or("tool");
            let input = b.get("input").map(|v| v.to_string()).unwrap_or_default();
            (name.to_string(), input)
        })
}

pub(super) fn tool_of(session: &[Message], before: usize, id: &str) -> Option<String> {
    tool_call(session, before, id).map(|(name, _)| name)
}

/// The sentence under the table: the selected piece, and what each strategy did with it.
pub(super) fn detail_lines(v: &CompareView, width: usize) -> Vec<String> {
    let Some(p) = v.pieces().get(v.piece()) else {
        return Vec::new();
    };
    if v.piece() >= v.pieces_at(v.call()) {
        return Vec::new();
    }
    let what = match (&p.kind, p.tool_use_id.as_deref()) {
        (PieceKind::ToolResult, Some(id)) => match tool_call(v.session(), p.message, id) {
            Some((name, input)) => format!("{name} {}", crate::util::clip_chars(&input, 40)),
            None => format!("result {id}"),
        },
        _ => piece_label(v.session(), p, 20).trim_end().to_string(),
    };
    let mut parts = Vec::new();
    for (run, config) in v.configs().iter().enumerate() {
        let Some(s) = v.kept(run, v.call(), v.piece()) else {
            continue;
        };
        let mut text = format!(
            "{} kept {} ({})",
            config.strategy.name(),
            s.kept.name(),
            s.reach.name()
        );
        if let Some((at, _)) = v.unseen_at(run, v.piece())
            && at <= v.call()
        {
            text.push_str(&if width >= WIDE_FROM {
                format!(
                    ", replaced at call {} before the model ever saw it",
                    v.call_number(at)
                )
            } else {
                format!(", replaced unseen at call {}", v.call_number(at))
            });
        }
        parts.push(text);
    }
    let sentence = format!(
        "msg {} · {what} · {} chars: {}.",
        p.message,
        group_digits(p.chars),
        parts.join("; ")
    );
    let mut lines = wrap_words(&sentence, width.max(1));
    lines.truncate(3);
    lines
}
