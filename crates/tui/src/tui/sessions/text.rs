//! Text for a recorded session's compactions that both the sessions state (the viewer's
//! text of a row) and the drawing (its rows and headlines) use: a leaf, so neither reaches
//! into the other.

use crate::session::{Compaction, CompactionKind, Summary, TokenCount};
use crate::util::{group_digits, plural};

/// A token count as shown, `?` when the file does not record it.
pub fn tokens(t: Option<TokenCount>) -> String {
    t.map(|t| t.text()).unwrap_or_else(|| "?".into())
}

/// Compaction `k` (from 0) by its one label, `#2 at message 62`, as `inspect`, `forgot`
/// and the export name it (`numbers::compaction_label`).
pub fn compaction_name(c: &Compaction, k: usize) -> String {
    crate::session::numbers::compaction_label(k + 1, Some(c.at))
}

/// `compaction #2 at message 62 · full · auto · 152,949 -> 12,000 tok · 30.0 s`.
pub fn compaction_headline(c: &Compaction, k: usize) -> String {
    let kind = c.kind.name();
    let trigger = c
        .trigger
        .as_ref()
        .map(|t| t.name())
        .unwrap_or("trigger not recorded");
    let mut text = format!(
        "compaction {} · {kind} · {trigger} · {} -> {} tok",
        compaction_name(c, k),
        tokens(c.tokens_before),
        tokens(c.tokens_after)
    );
    if let Some(ms) = c.duration_ms {
        text.push_str(&format!(" · {:.1} s", ms as f64 / 1000.0));
    }
    text
}

/// What the compaction kept, in a few words.
pub fn kept_words(c: &Compaction) -> String {
    match (&c.kept, c.kind) {
        (Some(kept), _) => format!("kept {}", plural(kept.len(), "msg")),
        (None, CompactionKind::Micro) => "rest kept".into(),
        (None, CompactionKind::Full | CompactionKind::Server) => "kept: not recorded".into(),
    }
}

/// The messages a compaction kept, one line each (for the viewer).
pub fn kept_text(c: &Compaction) -> String {
    match &c.kept {
        None if c.kind == CompactionKind::Micro => format!(
            "everything but {} cleared tool results: {}",
            c.cleared_tool_ids.len(),
            c.cleared_tool_ids.join(", ")
        ),
        None => "not recorded by the file".into(),
        Some(kept) => kept
            .iter()
            .map(|m| {
                let from = m
                    .from
                    .map(|i| format!(" (message {i})"))
                    .unwrap_or_default();
                let text =
                    crate::timeline::label::label(&m.message, |s| crate::util::clip_width(s, 200))
                        .label;
                format!(
                    "- {}{from}: {}",
                    m.message.role(),
                    crate::util::clip_width(&text, 200)
                )
            })
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// A recorded compaction in full, as the viewer shows it (an opened session and the live
/// view): `headline`, a blank line, the summary or why there is none (`no_summary` when the
/// file records none) and what it kept.
pub fn compaction_detail(c: &Compaction, headline: String, no_summary: &str) -> String {
    let mut text = headline;
    text.push_str("\n\n");
    match &c.summary {
        Summary::Text(t) => text.push_str(t),
        Summary::Encrypted => text.push_str(
            "The summary is encrypted by the provider: the model read it, nobody else can.",
        ),
        Summary::NotRecorded => text.push_str(no_summary),
        Summary::None => {}
    }
    let kept = kept_text(c);
    if !kept.is_empty() {
        text.push_str("\n\nKept:\n");
        text.push_str(&kept);
    }
    text
}

/// What the summary is, in a few words.
pub fn summary_words(c: &Compaction) -> String {
    match &c.summary {
        Summary::Text(t) => format!(
            "summary ({} ch): {}",
            group_digits(t.chars().count()),
            t.split_whitespace().collect::<Vec<_>>().join(" ")
        ),
        Summary::Encrypted => "summary: encrypted by the provider".into(),
        Summary::NotRecorded => "summary: not recorded".into(),
        Summary::None => format!("{} tool results cleared", c.cleared_tool_ids.len()),
    }
}

/// The compaction's event row: `⟳ compaction #1 at message 5 full auto 2,150->900 tok 12.0 s
/// · kept … · summary …`.
pub fn compaction_row(c: &Compaction, k: usize) -> String {
    let kind = c.kind.name();
    let trigger = c
        .trigger
        .as_ref()
        .map(|t| format!(" {}", t.name()))
        .unwrap_or_default();
    let duration = c
        .duration_ms
        .map(|ms| format!(" {:.1} s", ms as f64 / 1000.0))
        .unwrap_or_default();
    format!(
        "⟳ compaction {} {kind}{trigger} {}->{} tok{duration} · {} · {}",
        compaction_name(c, k),
        tokens(c.tokens_before),
        tokens(c.tokens_after),
        kept_words(c),
        summary_words(c)
    )
}
