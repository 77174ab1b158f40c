//! The run's stable ids: a model call's number, a stage step, an appended message (an
//! entry of the full session) and a compaction. Each is handed out once by the run's fold
//! (`run::Run`) when the thing it names joins the run, and never reused, so every view keeps
//! the id instead of a position or a count of its own.

/// A stage step's id: the `n`th stage that ran in the run (from 0), changed or not. The
/// timeline's `steps` hold the step under the same index (`Timeline::step`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StepId(usize);

impl StepId {
    pub fn new(index: usize) -> StepId {
        StepId(index)
    }

    /// Its index in the timeline's steps.
    pub fn index(self) -> usize {
        self.0
    }
}

impl std::fmt::Display for StepId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// An appended message's id: its index in the full session (`Timeline::session`), where
/// its fate is read. A summary a compaction put in is not an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EntryId(usize);

impl EntryId {
    pub(crate) fn new(index: usize) -> EntryId {
        EntryId(index)
    }

    /// Its index in the timeline's session entries.
    pub fn index(self) -> usize {
        self.0
    }
}

/// A compaction's id: `#1`, `#2`, ... in the order the run summarized (a stage whose report
/// holds a summary). The stage step that made it is `Run::compaction`'s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CompactionId(usize);

impl CompactionId {
    /// Its number, from 1, as the views say it (`#2`).
    pub fn number(self) -> usize {
        self.0
    }
}

/// Which request a fact is about: a model call of the conversation (numbered from 1, as the
/// timeline numbers `ModelCall`s), or a summary request, which is no call of its own and
/// sits after the `after` calls sent before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallRef {
    Call(usize),
    Summary { after: usize },
}

impl CallRef {
    pub fn is_summary(self) -> bool {
        matches!(self, CallRef::Summary { .. })
    }

    /// The call number a recording line carries: the call itself, or for a summary request
    /// the last call before it (`docs/architecture.md`, "Session recordings").
    pub fn recorded_call(self) -> usize {
        match self {
            CallRef::Call(n) => n,
            CallRef::Summary { after } => after,
        }
    }
}

impl CompactionId {
    pub(crate) fn new(number: usize) -> CompactionId {
        CompactionId(number)
    }
}
