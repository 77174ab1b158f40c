//! The compare view (`C`, `/compare`): one session under two or more strategies, over the
//! panes. Top: one timeline row per strategy (a column per model call: the size sent, in
//! `str()` chars for every strategy so the rows compare, the letter of a stage that fired,
//! `!` where a result was replaced before the model saw it; `>` on the selected strategy,
//! whose stages `F` asks about), the selected call marked under them. Then the
//! reachability at the selected call as one bar per strategy (in_context, referenced,
//! on_disk, lost chars; unseen_replaced and summary calls so far), the pieces entered
//! before the call with what each strategy kept of each, and a sentence on the selected
//! piece. Draws `App` state only.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::CompareView;
use super::parts::{
    WIDE_FROM, detail_lines, kept_name, piece_label, reach_bar, reach_name, reach_style, waiting,
};
use crate::compare::{Reach, ReachTotals, StrategyRun};
use crate::timeline::lineage::stage_letter;
use crate::tui::draw::plot::compact_number;
use crate::tui::draw::{DrawCtx, between_bars, fit, render_between_bars};
use crate::tui::theme::Theme;
use crate::util::group_digits;

const BARS: [&str; 8] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"];
/// Columns of the strategy name at the start of each row.
const NAME_W: usize = 12;

pub(super) fn render(ctx: &DrawCtx, f: &mut Frame, full: Rect, v: &CompareView) {
    let theme = ctx.theme;
    let names: Vec<&str> = v.configs().iter().map(|c| c.strategy.name()).collect();
    let mut title = vec![
        Span::styled(" Compare ", theme.title()),
        Span::raw(format!("· {} · {} ", v.label(), names.join(" vs "))),
    ];
    if let Some((_, since)) = v.job() {
        let k = v.runs().len();
        title.push(Span::styled(
            format!(
                "{} replaying {} ({} of {}) ",
                crate::tui::draw::spinner(ctx.tick.saturating_sub(since)),
                names.get(k).copied().unwrap_or("?"),
                k + 1,
                names.len()
            ),
            theme.warn(),
        ));
    } else {
        title.push(Span::styled(
            "(h/l call, j/k piece, n unseen, Esc) ",
            theme.dim(),
        ));
    }
    let area = between_bars(ctx.areas, full);
    render_between_bars(f, area, Line::from(title), theme, |w, h| {
        lines(v, w, h, theme)
    });
}

/// Every line of the view's inside, `width` columns, at most `height` lines.
fn lines(v: &CompareView, width: usize, height: usize, theme: &Theme) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    let wide = width >= WIDE_FROM;
    let calls = v.calls();
    // The last call as the timeline numbers it (a continue's replay starts at its call N).
    let last = v.call_number(calls.saturating_sub(1));
    if let Some(e) = &v.error() {
        out.push(Line::from(Span::styled(fit(e, width), theme.error())));
    }
    if calls == 0 && v.complete() {
        out.push(Line::from(Span::styled(
            "no model call in this session: nothing to compare (a call is an assistant message)",
            theme.dim(),
        )));
        return out;
    }
    // Timelines.
    let head = if wide {
        format!(
            "Calls · size sent, in str() chars for every strategy · letter: stage fired · \
             ! a result replaced unseen · call {} of {last}",
            v.call_number(v.call())
        )
    } else {
        format!(
            "Calls · size sent (str() chars) · letter: stage · ! unseen · call {} of {last}",
            v.call_number(v.call())
        )
    };
    out.push(Line::from(Span::styled(fit(&head, width), theme.title())));
    if let (Some(from), Some(limits)) = (v.continued(), v.limits()) {
        // Each branch's calls replayed under the limit they ran under.
        let text = format!("continued from call {from} · {limits}");
        out.push(Line::from(Span::styled(fit(&text, width), theme.dim())));
    }
    let tail_w = if wide { 22 } else { 14 };
    let cols = width.saturating_sub(NAME_W + tail_w + 1).max(1);
    let start = window(calls, cols, v.call());
    let max = v
        .runs()
        .iter()
        .flat_map(|r| r.calls.iter().map(|c| c.size))
        .max()
        .unwrap_or(1)
        .max(1);
    for (k, config) in v.configs().iter().enumerate() {
        // The selected strategy's row (Tab) is the one `F` asks about.
        let (mark, style) = if k == v.strategy() {
            ('>', theme.key())
        } else {
            (' ', theme.title())
        };
        let mut spans = vec![Span::styled(
            fit(&format!("{mark}{}", config.strategy.name()), NAME_W),
            style,
        )];
        match v.runs().get(k) {
            Some(run) => {
                spans.extend(timeline_cells(run, start, cols, v.call(), max, theme));
                let pad = cols.saturating_sub(run.calls.len().saturating_sub(start).min(cols));
                spans.push(Span::raw(" ".repeat(pad + 1)));
                spans.push(Span::raw(call_tail(run, v.call(), wide)));
            }
            None => spans.push(Span::styled(waiting(v, k), theme.dim())),
        }
        out.push(Line::from(spans));
    }
    let col = v.call().saturating_sub(start);
    let mark = format!("▲ call {}", v.call_number(v.call()));
    let axis = if col + mark.chars().count() <= cols + tail_w {
        format!("{}{mark}", " ".repeat(NAME_W + col))
    } else {
        let text = format!("call {} ▲", v.call_number(v.call()));
        format!(
            "{}{text}",
            " ".repeat((NAME_W + col + 1).saturating_sub(text.chars().count()))
        )
    };
    out.push(Line::from(Span::styled(axis, theme.key())));
    out.extend(recorded_lines(v, width, theme));
    // Reachability.
    out.push(Line::from(vec![
        Span::styled(
            format!("Reachability at call {} ", v.call_number(v.call())),
            theme.title(),
        ),
        Span::styled("█", reach_style(Reach::InContext, theme)),
        Span::raw(" in_context "),
        Span::styled("▓", reach_style(Reach::Referenced, theme)),
        Span::raw(" referenced "),
        Span::styled("▒", reach_style(Reach::OnDisk, theme)),
        Span::raw(" on_disk "),
        Span::styled("░", reach_style(Reach::Lost, theme)),
        Span::raw(" lost"),
    ]));
    // One bar width for every row, so the classes line up.
    let tails: Vec<Option<String>> = (0..v.configs().len())
        .map(|k| {
            let run = v.runs().get(k)?;
            let c = run.calls.get(v.call())?;
            Some(reach_tail(run, v.call(), &c.reach, wide))
        })
        .collect();
    let tail_max = tails
        .iter()
        .flatten()
        .map(|t| t.chars().count())
        .max()
        .unwrap_or(0);
    let bar_w = width.saturating_sub(NAME_W + tail_max + 1).clamp(4, 40);
    for (k, config) in v.configs().iter().enumerate() {
        // The selected strategy's row (Tab) is the one `F` asks about.
        let (mark, style) = if k == v.strategy() {
            ('>', theme.key())
        } else {
            (' ', theme.title())
        };
        let mut spans = vec![Span::styled(
            fit(&format!("{mark}{}", config.strategy.name()), NAME_W),
            style,
        )];
        match (v.runs().get(k), &tails[k]) {
            (Some(run), Some(tail)) => {
                spans.extend(reach_bar(&run.calls[v.call()].reach, bar_w, theme));
                let style = if unseen_so_far(run, v.call()) > 0 {
                    theme.error()
                } else {
                    Style::new()
                };
                spans.push(Span::styled(tail.clone(), style));
            }
            _ => spans.push(Span::styled(waiting(v, k), theme.dim())),
        }
        out.push(Line::from(spans));
    }
    // Pieces.
    let n = v.configs().len();
    let left_w = if wide { 37 } else { 22 };
    let cell_w = (width.saturating_sub(left_w) / n.max(1)).max(6);
    let mut head = fit(
        &if wide {
            let what = format!("piece at call {}", v.call_number(v.call()));
            format!(" {:>3} {:>4}  {what:<16} {:>7}", "#", "msg", "chars")
        } else {
            let what = format!("at call {}", v.call_number(v.call()));
            format!(" {:>2} {what:<11} {:>5}", "#", "chars")
        },
        left_w,
    );
    for name in v.configs().iter().map(|c| c.strategy.name()) {
        head.push_str(&fit(&format!(" {name} kept"), cell_w));
    }
    out.push(Line::from(Span::styled(fit(&head, width), theme.title())));
    let detail = detail_lines(v, width);
    let rows = height.saturating_sub(out.len() + detail.len()).max(1);
    let total = v.pieces_at(v.call());
    let top = v
        .piece()
        .saturating_sub(rows / 2)
        .min(total.saturating_sub(rows));
    let pieces = v.pieces();
    for i in top..(top + rows).min(total) {
        let Some(p) = pieces.get(i) else { break };
        let left = if wide {
            format!(
                "{}{:>3} {:>4}  {} {}",
                if i == v.piece() { "▸" } else { " " },
                i + 1,
                p.message,
                fit(&piece_label(v.session(), p, 16), 16),
                fit(&format!("{:>7}", group_digits(p.chars)), 7)
            )
        } else {
            format!(
                "{}{:>2} {} {:>5}",
                if i == v.piece() { "▸" } else { " " },
                i + 1,
                fit(&piece_label(v.session(), p, 11), 11),
                compact_number(p.chars)
            )
        };
        let mut spans = vec![Span::raw(fit(&left, left_w))];
        for run in 0..n {
            let (text, style) = match v.kept(run, v.call(), i) {
                Some(s) => {
                    let unseen = v.unseen_by(run, i);
                    let long = cell_w >= 20;
                    let text = format!(
                        " {} {}{}",
                        kept_name(s.kept, long),
                        reach_name(s.reach),
                        match (unseen, long) {
                            (false, _) => "",
                            (true, true) => " !",
                            (true, false) => "!",
                        }
                    );
                    let style = if unseen {
                        theme.error()
                    } else {
                        reach_style(s.reach, theme)
                    };
                    (text, style)
                }
                None => (" –".to_string(), theme.dim()),
            };
            spans.push(Span::styled(fit(&text, cell_w), style));
        }
        let mut line = Line::from(spans);
        if i == v.piece() {
            line = crate::tui::draw::selected_line(line, theme);
        }
        out.push(line);
    }
    while out.len() + detail.len() < height {
        out.push(Line::from(""));
    }
    out.extend(
        detail
            .into_iter()
            .map(|l| Line::from(Span::styled(l, theme.key()))),
    );
    out.truncate(height);
    out
}

/// The first call drawn so that `selected` shows in `cols` columns.
fn window(n: usize, cols: usize, selected: usize) -> usize {
    if n <= cols {
        return 0;
    }
    selected.saturating_sub(cols / 2).min(n - cols)
}

fn timeline_cells(
    run: &StrategyRun,
    start: usize,
    cols: usize,
    selected: usize,
    max: usize,
    theme: &Theme,
) -> Vec<Span<'static>> {
    run.calls
        .iter()
        .enumerate()
        .skip(start)
        .take(cols)
        .map(|(k, c)| {
            let (text, style) = if c.refused {
                ("×".to_string(), theme.error())
            } else if c.unseen_replaced > 0 {
                ("!".to_string(), theme.error())
            } else if let Some(stage) = c.stages.last() {
                (stage_letter(*stage).to_string(), theme.stage(*stage))
            } else {
                let level = (c.size * 8).div_ceil(max).clamp(1, 8);
                (BARS[level - 1].to_string(), Style::new())
            };
            let style = if k == selected {
                style.patch(theme.selected())
            } else {
                style
            };
            Span::styled(text, style)
        })
        .collect()
}

/// The selected call of one run: its size and the stages that fired before it.
fn call_tail(run: &StrategyRun, call: usize, wide: bool) -> String {
    let Some(c) = run.calls.get(call) else {
        return String::new();
    };
    let letters: String = c.stages.iter().map(|s| stage_letter(*s)).collect();
    let size = if wide {
        format!("{} chars", group_digits(c.size))
    } else {
        compact_number(c.size)
    };
    let size = if c.refused {
        format!("{size} refused")
    } else {
        size
    };
    if letters.is_empty() {
        size
    } else {
        format!("{size} {letters}")
    }
}

/// What the replays followed from a recording, and what each strategy could not follow:
/// a recorded refusal or compact tool call is not the pipeline's decision, so the view says
/// where it came from.
fn recorded_lines(v: &CompareView, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    if v.recorded().is_empty() {
        return out;
    }
    let followed: Vec<String> = v.recorded().iter().map(|e| e.describe()).collect();
    let text = format!("recorded in the live run: {}", followed.join("; "));
    out.push(Line::from(Span::styled(fit(&text, width), theme.dim())));
    for run in v.runs() {
        for why in &run.totals.not_applied {
            let text = format!("{}: {why}", run.strategy.name());
            out.push(Line::from(Span::styled(fit(&text, width), theme.error())));
        }
    }
    out
}

/// Results replaced before the model saw them, up to and with call `call`.
fn unseen_so_far(run: &StrategyRun, call: usize) -> usize {
    run.calls
        .iter()
        .take(call + 1)
        .map(|c| c.unseen_replaced)
        .sum()
}

fn reach_tail(run: &StrategyRun, call: usize, t: &ReachTotals, wide: bool) -> String {
    let summaries = run
        .calls
        .iter()
        .take(call + 1)
        .filter(|c| c.summary_input_chars.is_some())
        .count();
    let unseen = unseen_so_far(run, call);
    if wide {
        format!(
            " in {} · ref {} · disk {} · lost {} · unseen_replaced {unseen} · summary calls {summaries}",
            group_digits(t.in_context.chars),
            group_digits(t.referenced.chars),
            group_digits(t.on_disk.chars),
            group_digits(t.lost.chars),
        )
    } else {
        format!(
            " in {} ref {} disk {} lost {} unseen {unseen} sum {summaries}",
            compact_number(t.in_context.chars),
            compact_number(t.referenced.chars),
            compact_number(t.on_disk.chars),
            compact_number(t.lost.chars),
        )
    }
}
