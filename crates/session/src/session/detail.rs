//! How much of a session a read holds (issue 36, sessions of gigabytes). A full read keeps
//! every message, and for each Codex compaction the whole new history it handed the model
//! (what the workbench, `forgot`, `fork` and the breakdowns show). A numbers-only read is
//! for the commands that print figures (`inspect`, `sessions`, `watch`): each compaction's
//! new history is counted as it is read and then dropped, so memory follows the
//! conversation and not the file (a Codex rollout repeats its whole replacement history at
//! every compaction: most of a gigabyte rollout is those copies).

use serde::Serialize;

/// How much a read keeps of what it reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Detail {
    /// Everything: the model as the workbench shows it.
    #[default]
    Full,
    /// The conversation and the figures; a compaction's new history only as counts
    /// (`Compaction::counted`).
    Numbers,
    /// Every message whole, a compaction's new history only as counts: what a replay
    /// works on (`load_history`: `replay`, `export`, `pipeline`), which never looks at a
    /// compaction's new history, only at the conversation and the figures.
    Conversation,
}

impl Detail {
    /// Whether a Codex compaction's new history is held (else counted as it is parsed).
    pub fn holds_histories(self) -> bool {
        self == Detail::Full
    }
}

/// The sizes of a compaction's new history, when a numbers-only read counted it without
/// holding it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct HistoryCounts {
    /// Messages kept from before, besides the summary.
    pub kept: usize,
    /// Messages the harness wrote anew (developer instructions, environment context).
    pub reinjected: usize,
}
