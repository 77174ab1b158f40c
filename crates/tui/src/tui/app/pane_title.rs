//! What the panes' titles share that reads `App`: the loading line (spinner, file, size,
//! elapsed) in place of a pane's key hint while the screen waits for one of its jobs, and
//! the unit sizes are counted in. The status bar says the same loading line.

use ratatui::text::Span;

use super::{App, LoadKind, fmt_elapsed};
use crate::tui::draw::spinner;
use crate::tui::draw::text::human_bytes;
use crate::util::group_digits;

/// `⠋ loading transcript_1700000000.jsonl (48.0 MB) 1.2s` while the screen waits for a job.
pub fn loading_text(app: &App) -> Option<String> {
    let l = app.loading()?;
    let relative = l.what.relative();
    let name = relative.rsplit('/').next().unwrap_or(relative);
    let what = match &l.what {
        LoadKind::Transcript { bytes, .. } => format!("loading {name} ({})", human_bytes(*bytes)),
        LoadKind::Replay { messages, .. } => {
            format!("replaying {name} ({} messages)", group_digits(*messages))
        }
        LoadKind::Output { bytes, .. } => format!("reading {name} ({})", human_bytes(*bytes)),
        LoadKind::Session {
            progress, bytes, ..
        } => match (progress.get(), bytes) {
            (0, _) => format!("opening {name}"),
            (read, Some(total)) if read >= *total => {
                format!("opening {name}: parsing {}", human_bytes(*total))
            }
            (read, Some(total)) => format!(
                "opening {name}: {} / {} read",
                human_bytes(read),
                human_bytes(*total)
            ),
            (read, None) => format!("opening {name}: {} read", human_bytes(read)),
        },
        LoadKind::Analysis { what, .. } => format!("{what} {name}"),
    };
    let elapsed = fmt_elapsed(app.tick().saturating_sub(l.since));
    Some(format!("{} {what} {elapsed}", spinner(app.tick())))
}

/// A pane title's key hint, replaced by the loading line (spinner, file, size, elapsed)
/// while the screen waits for one of this pane's jobs (`ours`).
pub fn title_hint<'a>(app: &App, keys: &'a str, ours: fn(&LoadKind) -> bool) -> Span<'a> {
    match (app.loading(), loading_text(app)) {
        (Some(l), Some(text)) if ours(&l.what) => {
            Span::styled(format!("{text} "), app.theme().warn())
        }
        _ => Span::styled(keys, app.theme().dim()),
    }
}

/// What the strategy counts sizes in, for pane titles: `chars` (s08, guarded), `tokens`
/// (s06), `JSON chars` (s08-latest): the unit of the gauge, the limit and the stage events
/// (docs/strategies.md). Short, so a title keeps its key hints.
pub fn unit_tag(app: &App) -> &'static str {
    app.config().strategy.unit().label()
}
