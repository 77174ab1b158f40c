//! How far the context is from the agent's next automatic compaction, and how fast it
//! grows, from the calls and compactions of a followed session. Never a number without its
//! source: the size the session compacted at last time (as the file records it, or
//! estimated from the last call before it, marked `~`), the window the file records, the
//! window the caller was given (Claude Code's status line input), or the window table
//! (`windows`); with none of them, only the curve.

use serde::Serialize;

use super::live::{LiveCall, LiveItem};
use super::threshold::{self, AgentSettings};
use super::windows::window_of;
use crate::session::model::{SessionFormat, TokenCount, Trigger};

/// Where the limit headroom is measured against comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Limit {
    /// Where the agent compacts by itself, by its own rule and settings (`threshold`).
    Threshold { tokens: u64, source: String },
    /// The session compacted at this size last time.
    CompactedAt { tokens: TokenCount },
    /// The model's context window, and where that figure comes from.
    Window { tokens: u64, source: String },
}

impl Limit {
    pub fn tokens(&self) -> u64 {
        match self {
            Limit::Threshold { tokens, .. } | Limit::Window { tokens, .. } => *tokens,
            Limit::CompactedAt { tokens } => tokens.tokens,
        }
    }

    /// The limit in words: "compacted at 167,012 tokens last time".
    pub fn text(&self) -> String {
        match self {
            // Its source is long: the front ends name it once (`source`), not on every line.
            Limit::Threshold { tokens, .. } => format!(
                "auto-compacts at {}",
                crate::util::group_digits(usize::try_from(*tokens).unwrap_or(usize::MAX))
            ),
            Limit::CompactedAt { tokens } => {
                format!("compacted at {} tokens last time", tokens.text())
            }
            // Its source likewise (issue 38: it was cited on every call line).
            Limit::Window { tokens, .. } => format!(
                "window {} tokens",
                crate::util::group_digits(usize::try_from(*tokens).unwrap_or(usize::MAX))
            ),
        }
    }

    /// Where the figure comes from, in words.
    pub fn source(&self) -> String {
        match self {
            Limit::Threshold { source, .. } | Limit::Window { source, .. } => source.clone(),
            Limit::CompactedAt { tokens } => format!(
                "the size this session compacted at last time ({})",
                if tokens.is_estimate() {
                    "estimated from the call before it"
                } else {
                    "as the file records it"
                }
            ),
        }
    }
}

/// The headroom now.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Headroom {
    /// The context of the last main call.
    pub context_tokens: Option<u64>,
    pub limit: Option<Limit>,
    /// The model's window, with its source (a `Limit::Window`), whatever the limit is.
    pub window: Option<Limit>,
    /// `limit - context_tokens`, when both are known (negative past the limit).
    pub tokens_left: Option<i64>,
    /// Main calls since the last full compaction (or since the start).
    pub calls_since_compaction: usize,
    /// Context growth from the first main call after the last full compaction to the last.
    pub growth_since_compaction: Option<i64>,
    /// That growth per call.
    pub tokens_per_call: Option<f64>,
    /// Full and micro compactions seen.
    pub compactions: usize,
}

impl Headroom {
    /// One short line: `84,210 tokens · 52,802 to go (compacted at 137,012 tokens last
    /// time) · ~3,100 tokens a call · about 17 calls left`. The growth a call is an
    /// average over the calls since the last compaction: an estimate, marked `~`.
    pub fn text(&self) -> String {
        let g = |n: u64| crate::util::group_digits(usize::try_from(n).unwrap_or(usize::MAX));
        let mut parts = Vec::new();
        match self.context_tokens {
            Some(t) => parts.push(format!("{} tokens", g(t))),
            None => parts.push("no call yet".to_string()),
        }
        if let (Some(left), Some(limit)) = (self.tokens_left, &self.limit) {
            let word = if left >= 0 { "to go" } else { "past" };
            parts.push(format!(
                "{} {word} ({})",
                g(left.unsigned_abs()),
                limit.text()
            ));
        }
        if let Some(rate) = self.tokens_per_call {
            let per_call = g(rate.abs().round() as u64);
            parts.push(if rate < 0.0 {
                format!("shrinking ~{per_call} tokens a call")
            } else {
                format!("~{per_call} tokens a call")
            });
        }
        if let Some(n) = self.calls_left() {
            parts.push(format!("about {n} calls left"));
        }
        parts.join(" · ")
    }

    /// The compactions seen, in words ("no compaction yet", "2 compactions"), as the live
    /// view's header and `watch --text` say them.
    pub fn compactions_text(&self) -> String {
        match self.compactions {
            0 => "no compaction yet".into(),
            n => crate::util::plural(n, "compaction"),
        }
    }

    /// Calls left before the limit at the recent growth per call, when it grows.
    pub fn calls_left(&self) -> Option<u64> {
        let left = self.tokens_left?;
        let rate = self.tokens_per_call?;
        (left > 0 && rate >= 1.0).then(|| (left as f64 / rate).floor() as u64)
    }
}

/// Folds the calls and compactions of a followed session.
#[derive(Debug, Clone, Default)]
pub struct HeadroomTracker {
    last: Option<u64>,
    first_after: Option<u64>,
    calls_since: usize,
    compacted_at: Option<TokenCount>,
    compactions: usize,
    recorded_window: Option<u64>,
    model: Option<String>,
    given_window: Option<(u64, String)>,
    format: Option<SessionFormat>,
    settings: AgentSettings,
    /// The context before the last automatic full compaction.
    auto_at: Option<u64>,
}

impl HeadroomTracker {
    pub fn new() -> HeadroomTracker {
        HeadroomTracker::default()
    }

    /// A tracker that measures to the agent's threshold as `settings` move it.
    pub fn with_settings(settings: AgentSettings) -> HeadroomTracker {
        HeadroomTracker {
            settings,
            ..HeadroomTracker::default()
        }
    }

    /// A window the caller knows (Claude Code's status line input), and its source.
    pub fn set_given_window(&mut self, tokens: u64, source: impl Into<String>) {
        self.given_window = Some((tokens, source.into()));
    }

    /// The session's format, once the follower recognised it: which agent's rule applies.
    pub fn set_format(&mut self, format: SessionFormat) {
        self.format = Some(format);
    }

    /// What the user set that moves the agent's threshold (`AgentSettings::read`).
    pub fn set_settings(&mut self, settings: AgentSettings) {
        self.settings = settings;
    }

    /// A model id the caller knows (used when no call names one).
    pub fn set_model(&mut self, model: &str) {
        if self.model.is_none() {
            self.model = Some(model.to_string());
        }
    }

    pub fn push(&mut self, item: &LiveItem) {
        match item {
            LiveItem::Call(call) => self.call(call),
            LiveItem::Compaction {
                compaction, update, ..
            } => {
                if !update {
                    self.compactions += 1;
                }
                if !compaction.kind.replaces_history() {
                    return;
                }
                if !update {
                    self.first_after = None;
                    self.calls_since = 0;
                }
                // An automatic compaction's size says where the next one comes; a manual
                // one is the best figure only until an automatic one is seen.
                if let Some(before) = compaction.tokens_before {
                    let auto = compaction.trigger != Some(Trigger::Manual);
                    if auto || self.compacted_at.is_none() {
                        self.compacted_at = Some(before);
                    }
                    // Only a compaction the agent made by itself says where it does.
                    if compaction.trigger == Some(Trigger::Auto) {
                        self.auto_at = Some(before.tokens);
                    }
                }
            }
            _ => {}
        }
    }

    fn call(&mut self, call: &LiveCall) {
        if call.summary {
            return;
        }
        if let Some(m) = &call.model {
            self.model = Some(m.clone());
        }
        if let Some(w) = call.context_window {
            self.recorded_window = Some(w);
        }
        self.last = Some(call.context_tokens);
        if self.first_after.is_none() {
            self.first_after = Some(call.context_tokens);
        }
        self.calls_since += 1;
    }

    /// The agent's own threshold when its rule is known, else where the session compacted
    /// last time, else the window.
    fn limit(&self) -> Option<Limit> {
        let window = self.window().map(|w| w.tokens());
        if let Some(t) = threshold::of_session(
            self.format,
            window,
            self.recorded_window,
            self.auto_at,
            &self.settings,
        ) {
            return Some(Limit::Threshold {
                tokens: t.tokens,
                source: t.source,
            });
        }
        match self.compacted_at {
            Some(tokens) => Some(Limit::CompactedAt { tokens }),
            None => self.window(),
        }
    }

    /// The window: recorded in the file, given by the caller, or from the table.
    fn window(&self) -> Option<Limit> {
        if let Some(w) = self.recorded_window {
            return Some(Limit::Window {
                tokens: w,
                source: "recorded in the session file".into(),
            });
        }
        if let Some((w, source)) = &self.given_window {
            return Some(Limit::Window {
                tokens: *w,
                source: source.clone(),
            });
        }
        let row = window_of(self.model.as_deref()?)?;
        Some(Limit::Window {
            tokens: row.tokens,
            source: format!("{} for {}", row.source, row.prefix),
        })
    }

    pub fn headroom(&self) -> Headroom {
        let limit = self.limit();
        let tokens_left = match (&limit, self.last) {
            (Some(l), Some(t)) => Some(l.tokens() as i64 - t as i64),
            _ => None,
        };
        let growth = match (self.first_after, self.last) {
            (Some(a), Some(b)) => Some(b as i64 - a as i64),
            _ => None,
        };
        let tokens_per_call = match growth {
            Some(g) if self.calls_since > 1 => Some(g as f64 / (self.calls_since - 1) as f64),
            _ => None,
        };
        Headroom {
            context_tokens: self.last,
            limit,
            window: self.window(),
            tokens_left,
            calls_since_compaction: self.calls_since,
            growth_since_compaction: growth,
            tokens_per_call,
            compactions: self.compactions,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::model::{Compaction, CompactionKind, RecordedUsage, TokenSource};

    fn call(tokens: u64, summary: bool) -> LiveItem {
        LiveItem::Call(LiveCall {
            line: 1,
            timestamp: None,
            model: Some("claude-sonnet-4-5".into()),
            usage: RecordedUsage {
                input_tokens: tokens,
                ..RecordedUsage::default()
            },
            context_tokens: tokens,
            context_window: None,
            summary,
        })
    }

    #[test]
    fn the_last_compaction_is_the_limit_and_summary_calls_stay_off_the_curve() {
        let mut t = HeadroomTracker::new();
        for n in [1000, 3000, 5000] {
            t.push(&call(n, false));
        }
        let h = t.headroom();
        // Before any compaction: the model's window from the table, with its source.
        assert!(
            matches!(&h.limit, Some(Limit::Window { tokens: 200_000, source }) if source.contains("8606395"))
        );
        assert_eq!(h.tokens_per_call, Some(2000.0));
        // Issue 38: plain words, the estimate marked, the window's source not on the line
        // (the front ends name it once, from `source()`).
        assert_eq!(
            h.text(),
            "5,000 tokens · 195,000 to go (window 200,000 tokens) · ~2,000 tokens a call · about 97 calls left"
        );
        let mut c = Compaction::new(CompactionKind::Full, 3, 9);
        c.trigger = Some(Trigger::Auto);
        c.tokens_before = Some(TokenCount {
            tokens: 167_012,
            source: TokenSource::Recorded,
        });
        t.push(&LiveItem::Compaction {
            index: 0,
            compaction: Box::new(c),
            update: false,
            at: 3,
        });
        t.push(&call(150_000, true));
        t.push(&call(20_000, false));
        t.push(&call(26_000, false));
        let h = t.headroom();
        assert_eq!(h.context_tokens, Some(26_000));
        assert_eq!(h.tokens_left, Some(141_012));
        assert_eq!(h.growth_since_compaction, Some(6000));
        assert_eq!(h.calls_since_compaction, 2);
        assert_eq!(h.compactions, 1);
        assert!(
            h.text().contains("compacted at 167,012 tokens last time"),
            "{}",
            h.text()
        );
    }

    #[test]
    fn without_a_source_there_is_no_limit() {
        let mut t = HeadroomTracker::new();
        t.push(&LiveItem::Call(LiveCall {
            line: 1,
            timestamp: None,
            model: Some("some-local-model".into()),
            usage: RecordedUsage::default(),
            context_tokens: 10,
            context_window: None,
            summary: false,
        }));
        let h = t.headroom();
        assert_eq!(h.limit, None);
        assert_eq!(h.tokens_left, None);
        assert_eq!(h.text(), "10 tokens");
        assert_eq!(h.compactions_text(), "no compaction yet");
    }
}
