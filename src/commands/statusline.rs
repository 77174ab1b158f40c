//! `ctxlab statusline`: Claude Code's status line command. Claude Code runs it after each
//! answer with a JSON object on stdin (`transcript_path`, `model`, and in recent versions
//! `context_window` with `current_usage`, `context_window_size` and `used_percentage`); it
//! prints one line: the context of the last call against the window, the compactions of
//! the whole session, and the headroom to where Claude Code compacts by itself (its rule,
//! `session::watch::threshold`, moved by an automatic compaction seen below it).
//!
//! Claude Code's own figures come first; the transcript second, through a per-path index
//! (`session::watch::compaction_index`) that is extended from where the previous run
//! stopped, so the count covers the whole session and a run reads only what is new. Right
//! after a compaction, before the next call, the context is the compaction's `postTokens`
//! (Claude Code's `current_usage` still holds the call before it). The line fits the width
//! it is given. Within the set distance of the threshold it adds "N at risk": the facts a
//! compaction now would have to carry (`statusline_risk`, from the tail since the last
//! compaction; none while the index is still counting). Whatever goes wrong, the answer is one short line saying so: a status line
//! must never break the agent's screen, so there is no error exit.

use std::path::Path;

use serde_json::Value;

use super::statusline_risk;
use crate::forgot::at_risk::DEFAULT_WITHIN;
use crate::sanitize::sanitize_line;
use crate::session::SessionError;
use crate::session::model::SessionFormat;
use crate::session::watch::compaction_index::{Scanned, call_at, indexed};
use crate::session::watch::threshold::{self, AgentSettings};
use crate::session::watch::windows::window_of;
use crate::util::group_digits;

/// Characters of the model's name shown at most.
const MODEL_CHARS: usize = 24;
/// The width when neither `--max-width` nor `COLUMNS` gives one.
pub const DEFAULT_WIDTH: usize = 120;
/// The narrowest line it will make.
const MIN_WIDTH: usize = 20;

/// What the line is fitted to and where its index is kept.
#[derive(Debug, Clone, Default)]
pub struct StatusOptions<'a> {
    /// Columns at most (`--max-width`, else `COLUMNS`, else `DEFAULT_WIDTH`).
    pub max_width: usize,
    /// ctxlab's data dir, for the index; None scans from the start every run.
    pub data_dir: Option<&'a Path>,
    /// What moves Claude Code's threshold (`AgentSettings::read`; default: nothing).
    pub settings: AgentSettings,
    /// Tokens from the threshold at which "N at risk" shows (None: `DEFAULT_WITHIN`; 0: never).
    pub at_risk_within: Option<u64>,
}

fn g(n: u64) -> String {
    group_digits(usize::try_from(n).unwrap_or(usize::MAX))
}

/// Claude Code's own figures of the moment, from its status JSON.
#[derive(Debug, Default, PartialEq)]
struct Given {
    /// `context_window.current_usage`: input + cache read + cache creation.
    context: Option<u64>,
    window: Option<u64>,
    percent: Option<u64>,
}

fn given(input: &Value) -> Given {
    let Some(w) = input.get("context_window") else {
        return Given::default();
    };
    // Older versions passed the window as a bare number.
    if let Some(n) = w.as_u64() {
        return Given {
            window: Some(n).filter(|n| *n > 0),
            ..Given::default()
        };
    }
    let context = w.get("current_usage").and_then(|u| {
        let obj = u.as_object()?;
        let n = |k: &str| obj.get(k).and_then(Value::as_u64).unwrap_or(0);
        Some(n("input_tokens") + n("cache_read_input_tokens") + n("cache_creation_input_tokens"))
    });
    Given {
        context,
        window: w
            .get("context_window_size")
            .and_then(Value::as_u64)
            .filter(|n| *n > 0),
        percent: w.get("used_percentage").and_then(Value::as_u64),
    }
}

/// The status line for Claude Code's JSON `input`.
pub fn status_line(input: &str, options: &StatusOptions) -> String {
    let width = options.max_width.max(MIN_WIDTH);
    let Ok(input) = serde_json::from_str::<Value>(input) else {
        return fit(
            vec!["ctxlab: no status (stdin is not Claude Code's status JSON)".into()],
            width,
        );
    };
    let Some(path) = input.get("transcript_path").and_then(Value::as_str) else {
        return fit(
            vec!["ctxlab: no status (no transcript_path in the input)".into()],
            width,
        );
    };
    let model_id = input
        .get("model")
        .and_then(|m| m.get("id"))
        .and_then(Value::as_str);
    let name = input
        .get("model")
        .and_then(|m| m.get("display_name"))
        .and_then(Value::as_str)
        .or(model_id)
        .map(|n| {
            sanitize_line(n)
                .chars()
                .take(MODEL_CHARS)
                .collect::<String>()
        });
    let given = given(&input);
    let scanned = match indexed(Path::new(path), options.data_dir) {
        Ok(s) => Some(s),
        // Claude Code names the transcript before it writes the first line.
        Err(SessionError::Read(e)) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            return fit(
                vec![sanitize_line(&format!("ctxlab: no status (transcript: {e})")).into_owned()],
                width,
            );
        }
    };
    let mut parts: Vec<String> = name.into_iter().collect();
    let Some(scanned) = scanned else {
        parts.push("new session".into());
        return fit(parts, width);
    };
    let index = &scanned.index;
    let last_call = index
        .last_call
        .and_then(|off| call_at(Path::new(path), off));
    // The window Claude Code passes, else the table's for its model or the last call's.
    let window = given.window.or_else(|| {
        model_id
            .or(last_call.as_ref().and_then(|(_, m)| m.as_deref()))
            .and_then(window_of)
            .map(|w| w.tokens)
    });
    // The context now: after a compaction with no call since, its postTokens; else Claude
    // Code's own figure; else the last call the transcript records.
    // Only a scan that reached the end knows the last compaction is the last event.
    let since = index
        .compacted_since_last_call()
        .filter(|_| scanned.complete);
    let (context, after_compaction, percent_given) = match since {
        Some(c) if c.post_tokens.is_some() => (c.post_tokens, true, None),
        _ => match given.context {
            Some(n) => (Some(n), false, given.percent),
            None => (last_call.as_ref().map(|(n, _)| *n), false, None),
        },
    };
    match context {
        None if index.compactions == 0 => {
            parts.push("new session".into());
            return fit(parts, width);
        }
        None => parts.push("ctx unknown".into()),
        Some(tokens) => {
            let mut text = match window {
                Some(w) => format!(
                    "ctx {}/{} ({}%)",
                    g(tokens),
                    g(w),
                    percent_given.unwrap_or(tokens.saturating_mul(100) / w.max(1))
                ),
                None => format!("ctx {} tokens", g(tokens)),
            };
            if after_compaction {
                text.push_str(" after compaction");
            }
            parts.push(text);
        }
    }
    parts.push(compactions_part(&scanned));
    // Headroom to where Claude Code compacts by itself: its rule for the window, moved by
    // an automatic compaction seen below it (a manual one says nothing of it).
    let threshold = threshold::of_session(
        Some(SessionFormat::ClaudeCode),
        window,
        None,
        index.last_auto_pre_tokens,
        &options.settings,
    );
    if let (Some(t), Some(now)) = (threshold, context) {
        let within = options.at_risk_within.unwrap_or(DEFAULT_WITHIN);
        // While the index is still counting, the last compaction it knows may not be the
        // file's: the tail would hold messages a compaction already summarised.
        if within > 0 && t.tokens.saturating_sub(now) <= within && scanned.complete {
            let from = index.last_compaction.as_ref().map_or(0, |c| c.offset);
            if let Some((n, cut)) =
                statusline_risk::at_risk_count(Path::new(path), from, options.data_dir)
            {
                parts.extend(statusline_risk::part(n, cut));
            }
        }
        parts.push(format!(
            "{} to go (auto-compacts at {})",
            g(t.tokens.saturating_sub(now)),
            g(t.tokens)
        ));
    }
    fit(parts, width)
}

fn compactions_part(scanned: &Scanned) -> String {
    let n = scanned.index.compactions;
    let word = if n == 1 { "compaction" } else { "compactions" };
    match (n, scanned.complete) {
        (0, true) => "no compaction".into(),
        (n, true) => format!("{} {word}", g(n)),
        (n, false) => format!("{}+ {word} (counting)", g(n)),
    }
}

/// Joins `parts` within `width` columns: the last parts give way first, then the line is
/// cut with an ellipsis. The first part (the model, or the message) stays.
fn fit(mut parts: Vec<String>, width: usize) -> String {
    use unicode_width::UnicodeWidthStr;
    loop {
        let line = parts.join(" · ");
        if line.width() <= width || parts.len() <= 2 {
            return cut(&line, width);
        }
        parts.pop();
    }
}

fn cut(line: &str, width: usize) -> String {
    use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};
    if line.width() <= width {
        return line.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for ch in line.chars() {
        let w = ch.width().unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        used += w;
        out.push(ch);
    }
    out.push('…');
    out
}

#[cfg(test)]
#[path = "statusline_tests.rs"]
mod tests;
