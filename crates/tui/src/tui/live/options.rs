//! How the workbench follows a session (`LiveOptions`): the bell, how the follower waits,
//! the session `ctxlab watch` named, and where the facts at risk are listed.

use std::time::Duration;

use crate::forgot::at_risk::DEFAULT_WITHIN;
use crate::session::watch::Chosen;

/// How the workbench follows: the bell on a compaction (`bell_on_compaction`,
/// `--no-bell`), how the follower waits, and the session to follow at start.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveOptions {
    pub(super) bell: bool,
    pub(super) poll: Duration,
    pub(super) notify: bool,
    pub(super) follow: Option<Chosen>,
    /// Tokens from the threshold at which the facts at risk are listed; None: never.
    pub(super) at_risk_within: Option<u64>,
}

impl Default for LiveOptions {
    fn default() -> Self {
        LiveOptions {
            bell: true,
            poll: Duration::from_secs(1),
            notify: true,
            follow: None,
            at_risk_within: Some(DEFAULT_WITHIN),
        }
    }
}

impl LiveOptions {
    /// The bell on (`bell`) or off for each compaction written while following.
    pub fn new(bell: bool) -> LiveOptions {
        LiveOptions {
            bell,
            ..LiveOptions::default()
        }
    }

    /// The follower's longest sleep and whether it asks for change notifications.
    pub fn waiting(self, poll: Duration, notify: bool) -> LiveOptions {
        LiveOptions {
            poll,
            notify,
            ..self
        }
    }

    /// Follows `chosen` as soon as the loop runs.
    pub fn following(self, chosen: Chosen) -> LiveOptions {
        LiveOptions {
            follow: Some(chosen),
            ..self
        }
    }

    /// Lists the facts at risk within `tokens` of the threshold (`watch --at-risk-within`;
    /// None or 0: never).
    pub fn at_risk_within(self, tokens: Option<u64>) -> LiveOptions {
        LiveOptions {
            at_risk_within: tokens.filter(|t| *t > 0),
            ..self
        }
    }

    pub fn bell(&self) -> bool {
        self.bell
    }

    /// Whether a session is to be followed at start.
    pub fn follows(&self) -> bool {
        self.follow.is_some()
    }
}
