//! The pipeline's replay of an opened session, beside the recording: where the agent
//! compacted and what it kept, where the pipeline would have acted (its stage rows, sizes
//! in the strategy's unit with tokens beside chars) and what it kept and persisted into
//! the scratch store, in call order from the selected row's call. Draws what it is given.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::compact::SizeUnit;
use crate::session::Compaction;
use crate::tui::draw::{clip, fit, pane_block};
use crate::tui::sessions::text::{compaction_headline, kept_words};
use crate::tui::sessions::{OpenedSession, SessionReplay};
use crate::tui::theme::Theme;
use crate::util::group_digits;

/// `12,000 chars (~3,000 tok)`: sizes in the strategy's unit, tokens beside chars.
fn size_text(n: usize, unit: SizeUnit) -> String {
    match unit {
        SizeUnit::Tokens => format!("{} tok", group_digits(n)),
        _ => format!("{} ch (~{} tok)", group_digits(n), group_digits(n / 4)),
    }
}

/// The recorded call a compaction came before (1-based): calls whose reply precedes it.
fn call_before(open: &OpenedSession, c: &Compaction) -> usize {
    open.calls()
        .iter()
        .filter(|call| call.message.is_some_and(|m| m < c.at))
        .count()
        + 1
}

pub fn render(f: &mut Frame, area: Rect, open: &OpenedSession, r: &SessionReplay, theme: &Theme) {
    let unit = r.strategy().unit();
    let title = Line::from(vec![
        Span::styled(" Replay ", theme.title()),
        Span::raw(format!(
            "· {} · limit {} · scratch store ",
            r.strategy().name(),
            size_text(r.replay().context_limit, unit)
        )),
    ]);
    let block = pane_block(title, false, theme);
    let inner = block.inner(area);
    f.render_widget(block, area);
    let width = inner.width as usize;
    let full: Vec<(usize, &Compaction)> = open
        .compactions()
        .iter()
        .filter(|c| c.kind.replaces_history())
        .map(|c| (call_before(open, c), c))
        .collect();
    let changed: Vec<&(usize, crate::compact::StageReport)> = r
        .replay()
        .stages
        .iter()
        .filter(|(_, s)| s.changed)
        .collect();
    let compacts: Vec<String> = changed
        .iter()
        .filter(|(_, s)| s.stage == crate::compact::Stage::CompactHistory)
        .map(|(t, _)| t.to_string())
        .collect();
    let calls_list = |v: &[String]| {
        if v.is_empty() {
            "none".to_string()
        } else {
            clip(&v.join(", "), 40)
        }
    };
    let agent_at: Vec<String> = full.iter().map(|(n, _)| n.to_string()).collect();
    let mut lines = vec![
        Line::from(Span::styled(
            fit(
                &format!(
                    "agent compacted before calls {} ({} full of {})",
                    calls_list(&agent_at),
                    full.len(),
                    open.compactions().len()
                ),
                width,
            ),
            theme.warn(),
        )),
        Line::from(fit(
            &format!(
                "pipeline compact_history before calls {} · {} stage rows",
                calls_list(&compacts),
                changed.len(),
            ),
            width,
        )),
        Line::from(fit(
            &format!(
                "pipeline kept {} msgs, {} · persisted {} results, {} transcripts",
                group_digits(r.replay().final_messages),
                size_text(r.replay().final_chars, unit),
                r.persisted().len(),
                r.transcripts().len()
            ),
            width,
        )),
    ];
    for said in r.replay().not_applied() {
        lines.push(Line::from(Span::styled(
            fit(&format!("recorded {said}"), width),
            theme.warn(),
        )));
    }
    if let Some(e) = &r.replay().error {
        lines.push(Line::from(Span::styled(
            fit(&format!("stopped: {e}"), width),
            theme.error(),
        )));
    }
    // Both sides' events in call order, from the selected row's call on.
    let from = open.selected_call().map(|k| k + 1).unwrap_or(0);
    let mut events: Vec<(usize, u8, Line)> = Vec::new();
    for (k, c) in open.compactions().iter().enumerate() {
        let n = call_before(open, c);
        let text = format!(
            "call {n:>4} agent {} · {}",
            compaction_headline(c, k),
            kept_words(c)
        );
        events.push((
            n,
            0,
            Line::from(Span::styled(fit(&text, width), theme.warn())),
        ));
    }
    for (n, s) in &changed {
        let text = format!(
            " {} -> {} · {}",
            size_text(s.size_before, unit),
            size_text(s.size_after, unit),
            clip(&s.delta().what, 60)
        );
        events.push((
            *n,
            1,
            Line::from(vec![
                Span::styled(format!("call {n:>4} pipe  "), theme.dim()),
                Span::styled(s.stage.name(), theme.stage(s.stage)),
                Span::raw(fit(&text, width.saturating_sub(16 + s.stage.name().len()))),
            ]),
        ));
    }
    events.sort_by_key(|(n, side, _)| (*n, *side));
    let room = (inner.height as usize).saturating_sub(lines.len());
    let shown: Vec<Line> = events
        .into_iter()
        .filter(|(n, _, _)| *n >= from)
        .map(|(_, _, l)| l)
        .take(room)
        .collect();
    if shown.is_empty() && room > 0 {
        lines.push(Line::from(Span::styled(
            "no compaction by either from this call on",
            theme.dim(),
        )));
    }
    lines.extend(shown);
    f.render_widget(Paragraph::new(lines), inner);
}
