//! What a compaction made now would put at risk (docs/forgot.md): the facts of the
//! messages since the last full compaction, ranked as `forgot` ranks them, and a ready
//! focus text for Claude Code's `/compact` and for Codex; when to say so (`RiskWatch`: near
//! the agent's threshold, not at every call) and the lines that say it, one text for
//! `watch --text` and the workbench's live view. Pure: it is given the session.

use super::facts::Fact;
use super::from_session::numbered;
use super::parts::Numbered;
use super::{CompactionInput, KeptInput, SummaryText, analyze};
use crate::session::watch::Headroom;
use crate::session::{MessageKind, Session};

/// Chars of a focus text at most: long enough for a handful of facts, short enough to type.
const MAX_FOCUS_CHARS: usize = 600;
/// Facts listed in a warning.
pub const AT_RISK_SHOWN: usize = 5;
/// Tokens from the threshold at which warnings start, unless told otherwise
/// (`watch --at-risk-within`).
pub const DEFAULT_WITHIN: u64 = 20_000;
/// Calls between two warnings at least: reading the session again is the expensive part.
const MIN_CALLS_BETWEEN: usize = 3;

/// The facts at risk and what to send to keep them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AtRisk {
    /// Facts found since the last full compaction.
    pub total: usize,
    /// The messages read began after that compaction (a capped read of a large file,
    /// `session::watch::since`): `total` counts those read, and there may be more.
    pub cut: bool,
    /// The most important ones, ranked.
    pub top: Vec<Fact>,
    /// `/compact Keep: …` for Claude Code.
    pub claude_compact: String,
    /// Codex's `/compact` takes no focus: a message to send before it compacts.
    pub codex_message: String,
}

fn focus(facts: &[Fact]) -> String {
    let mut out = String::new();
    for f in facts {
        let item = f.text.replace('\n', " ");
        if out.chars().count() + item.chars().count() + 2 > MAX_FOCUS_CHARS {
            break;
        }
        if !out.is_empty() {
            out.push_str("; ");
        }
        out.push_str(&item);
    }
    out
}

/// The messages a compaction now would summarise, whose facts are at risk: the
/// conversation since the last full compaction (what nobody typed left out). The status
/// line's resumed count (src/commands/statusline_resume.rs) reads the same messages.
pub fn since_last_compaction(s: &Session) -> Vec<Numbered> {
    let from = s
        .compactions
        .iter()
        .filter(|c| c.kind.replaces_history())
        .map(|c| c.at)
        .max()
        .unwrap_or(0)
        .min(s.messages.len());
    (from..s.messages.len())
        .filter(|&i| {
            s.info
                .get(i)
                .is_none_or(|o| o.kind == MessageKind::Conversation)
        })
        .map(|i| numbered(s, i))
        .collect()
}

/// The facts at risk in `s`, the first `shown` of them listed.
pub fn at_risk(s: &Session, shown: usize) -> AtRisk {
    let before = since_last_compaction(s);
    let input = CompactionInput {
        kind: "at risk".into(),
        micro: false,
        at: Some(s.messages.len()),
        call: None,
        trigger: None,
        rule: "a compaction now, with a summary that names none of them".into(),
        before,
        summary: SummaryText::Text(String::new()),
        kept: KeptInput::recorded(Vec::new(), Vec::new()),
        cleared: Vec::new(),
        after: Vec::new(),
        tokens_before: None,
    };
    let report = analyze(1, &input);
    let top: Vec<Fact> = report.facts.into_iter().take(shown.max(1)).collect();
    let keep = focus(&top);
    AtRisk {
        total: report.not_carried,
        cut: false,
        claude_compact: format!("/compact Keep: {keep}"),
        codex_message: format!("Before you compact, keep these in the summary: {keep}"),
        top,
    }
}

impl AtRisk {
    /// The facts found in a read of part of a file (`session::watch::since`): their
    /// messages numbered as the whole file numbers them, from `first` (its first message's
    /// index); none where that is not known, rather than a number that points elsewhere.
    pub fn of_part(s: &Session, shown: usize, cut: bool, first: Option<usize>) -> AtRisk {
        let mut risk = at_risk(s, shown);
        risk.cut = cut;
        for f in &mut risk.top {
            f.message = first.and_then(|first| f.message.map(|m| m + first));
        }
        risk
    }
}

/// When a warning is due: a main call within `within` tokens of the threshold, and not
/// within `MIN_CALLS_BETWEEN` calls of the last one. The caller reads the session when it
/// is (`at_risk`).
#[derive(Debug, Default, Clone)]
pub struct RiskWatch {
    /// Tokens from the threshold at which warnings start; `None`: never.
    within: Option<u64>,
    last_warned_at_call: Option<usize>,
}

impl RiskWatch {
    pub fn new(within: Option<u64>) -> RiskWatch {
        RiskWatch {
            within: within.filter(|w| *w > 0),
            last_warned_at_call: None,
        }
    }

    /// Another file is followed, or the same one from its start: start over.
    pub fn restart(&mut self) {
        self.last_warned_at_call = None;
    }

    /// Whether `headroom` is close enough to warn now; true marks the warning as given.
    pub fn due(&mut self, headroom: &Headroom) -> bool {
        let (Some(within), Some(left)) = (self.within, headroom.tokens_left) else {
            return false;
        };
        if left > i64::try_from(within).unwrap_or(i64::MAX) {
            return false;
        }
        let call = headroom.calls_since_compaction;
        if self
            .last_warned_at_call
            .is_some_and(|last| call >= last && call - last < MIN_CALLS_BETWEEN)
        {
            return false;
        }
        self.last_warned_at_call = Some(call);
        true
    }
}

/// The warning as readable lines, for `watch --text` and the live view (the caller
/// sanitizes them).
pub fn risk_lines(r: &AtRisk, tokens_left: Option<i64>) -> Vec<String> {
    let left = tokens_left
        .map(|l| {
            format!(
                "{} tokens from the threshold",
                crate::util::group_digits(usize::try_from(l.max(0)).unwrap_or(usize::MAX))
            )
        })
        .unwrap_or_else(|| "near the threshold".into());
    let more = if r.cut { "+" } else { "" };
    let mut out = vec![format!(
        "AT RISK: {}{more} facts a compaction now would have to carry ({left}); the first {}:",
        r.total,
        r.top.len()
    )];
    for f in &r.top {
        out.push(format!(
            "  {:<12} {} ({})",
            f.kind.name(),
            f.text.replace('\n', " "),
            f.from
        ));
    }
    out.push(format!("  Claude Code: {}", r.claude_compact));
    out.push(format!(
        "  Codex (its /compact takes no focus; send first): {}",
        r.codex_message
    ));
    out
}
