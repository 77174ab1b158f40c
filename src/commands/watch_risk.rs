//! `ctxlab watch`'s warning before a compaction (docs/forgot.md): once the followed
//! session's last call is within a set distance of the agent's compaction threshold, the
//! facts a compaction would put at risk and a ready `/compact` focus (Claude Code) or
//! message (Codex). The session is read again only when a new call lands in that zone and
//! at most once per `MIN_CALLS_BETWEEN` calls: reading it is the expensive part.

use std::path::{Path, PathBuf};

use crate::forgot::at_risk::{AtRisk, at_risk};
use crate::session::load_session;
use crate::session::watch::Headroom;

/// Facts listed in a warning.
pub const AT_RISK_SHOWN: usize = 5;
/// Calls between two warnings at least.
const MIN_CALLS_BETWEEN: usize = 3;

/// When to warn, and what was last said.
#[derive(Debug, Default)]
pub struct RiskWatch {
    /// Tokens from the threshold at which warnings start; `None`: never.
    within: Option<u64>,
    path: Option<PathBuf>,
    last_warned_at_call: Option<usize>,
}

impl RiskWatch {
    pub fn new(within: Option<u64>) -> RiskWatch {
        RiskWatch {
            within: within.filter(|w| *w > 0),
            ..RiskWatch::default()
        }
    }

    /// A new file is followed: start over.
    pub fn following(&mut self, path: &Path) {
        self.path = Some(path.to_path_buf());
        self.last_warned_at_call = None;
    }

    /// After a main call: the warning, when one is due.
    pub fn after_call(&mut self, headroom: &Headroom) -> Option<AtRisk> {
        let within = self.within?;
        let left = headroom.tokens_left?;
        if left > i64::try_from(within).unwrap_or(i64::MAX) {
            return None;
        }
        let call = headroom.calls_since_compaction;
        if self
            .last_warned_at_call
            .is_some_and(|last| call >= last && call - last < MIN_CALLS_BETWEEN)
        {
            return None;
        }
        let session = load_session(self.path.as_deref()?).ok()?;
        self.last_warned_at_call = Some(call);
        let risk = at_risk(&session, AT_RISK_SHOWN);
        (risk.total > 0).then_some(risk)
    }
}

/// The warning as readable lines (the caller sanitizes them).
pub fn risk_lines(r: &AtRisk, tokens_left: Option<i64>) -> Vec<String> {
    let left = tokens_left
        .map(|l| {
            format!(
                "{} tokens from the threshold",
                crate::util::group_digits(l.max(0) as usize)
            )
        })
        .unwrap_or_default();
    let mut out = vec![format!(
        "AT RISK: {} facts a compaction now would have to carry ({left}); the first {}:",
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

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = "tests/fixtures/forgot/eval_claude.jsonl";

    fn headroom(tokens_left: i64, calls: usize) -> Headroom {
        Headroom {
            context_tokens: None,
            limit: None,
            window: None,
            tokens_left: Some(tokens_left),
            calls_since_compaction: calls,
            growth_since_compaction: None,
            tokens_per_call: None,
            compactions: 1,
        }
    }

    #[test]
    fn warns_within_the_distance_and_not_at_every_call() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE);
        let mut w = RiskWatch::new(Some(2_000));
        w.following(&path);
        assert!(w.after_call(&headroom(5_000, 1)).is_none(), "far away");
        let r = w
            .after_call(&headroom(1_459, 2))
            .expect("within the distance");
        // The facts since the compaction: the restated instruction, the failure again.
        assert!(r.top.iter().any(|f| f.text.contains("E501")), "{r:#?}");
        assert!(r.claude_compact.starts_with("/compact Keep: "));
        assert!(r.claude_compact.contains("E501"));
        assert!(r.codex_message.contains("E501"));
        assert!(
            w.after_call(&headroom(1_300, 3)).is_none(),
            "said a call ago"
        );
        assert!(w.after_call(&headroom(1_000, 5)).is_some());
        let lines = risk_lines(&r, Some(1_459));
        assert!(lines[0].starts_with("AT RISK: "), "{lines:#?}");
        assert!(
            lines
                .iter()
                .any(|l| l.contains("Claude Code: /compact Keep:"))
        );
        // 0 turns it off.
        let mut off = RiskWatch::new(Some(0));
        off.following(&path);
        assert!(off.after_call(&headroom(10, 9)).is_none());
    }
}
