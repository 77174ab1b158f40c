//! `ctxlab watch`'s warning before a compaction (docs/forgot.md): once the followed
//! session's last call is within a set distance of the agent's compaction threshold, the
//! facts a compaction would put at risk and a ready `/compact` focus (Claude Code) or
//! message (Codex). The session is read again only when `forgot::at_risk::RiskWatch` says a
//! warning is due, and then from the last compaction's line (`session::watch::since`); the
//! rules, the list and its lines are `forgot::at_risk`'s, shared with the workbench's live
//! view.

use std::path::{Path, PathBuf};

pub use crate::forgot::at_risk::risk_lines;
use crate::forgot::at_risk::{AT_RISK_SHOWN, AtRisk, RiskWatch};
use crate::session::watch::since::LastCompaction;
use crate::session::watch::{Headroom, WatchEvent};

/// The followed file and when to warn about it (`forgot::at_risk::RiskWatch`).
#[derive(Debug, Default)]
pub struct RiskFollow {
    watch: RiskWatch,
    path: Option<PathBuf>,
    /// Where the messages a compaction now would summarise start.
    since: LastCompaction,
}

impl RiskFollow {
    pub fn new(within: Option<u64>) -> RiskFollow {
        RiskFollow {
            watch: RiskWatch::new(within),
            path: None,
            since: LastCompaction::default(),
        }
    }

    /// Every event the follower sends, before it is handled: where the last compaction's
    /// line is.
    pub fn see(&mut self, event: &WatchEvent) {
        self.since.see(event);
    }

    /// A new file is followed: start over.
    pub fn following(&mut self, path: &Path) {
        self.path = Some(path.to_path_buf());
        self.watch.restart();
    }

    /// After a main call: the warning, when one is due. The file is read from the last
    /// compaction's line, not whole (`session::watch::since`).
    pub fn after_call(&mut self, headroom: &Headroom) -> Option<AtRisk> {
        let path = self.path.as_deref()?;
        if !self.watch.due(headroom) {
            return None;
        }
        let since = self.since.read(path).ok()?;
        let risk = AtRisk::of_part(&since.session, AT_RISK_SHOWN, since.cut, since.first_index);
        (risk.total > 0).then_some(risk)
    }
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
        let mut w = RiskFollow::new(Some(2_000));
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
        let mut off = RiskFollow::new(Some(0));
        off.following(&path);
        assert!(off.after_call(&headroom(10, 9)).is_none());
    }
}
