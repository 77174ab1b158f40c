//! Following a session file as it grows (`ctxlab watch`, the workbench's live view,
//! `ctxlab statusline`): `tail` reads whole lines as they are written and notices a file
//! truncated, replaced or gone; `live` reads each line with the session readers themselves
//! into the same model a whole-file read makes, reporting each call, compaction, message
//! and tool call once (a `ctxlab proxy` capture through the capture reader's own fold,
//! `live_capture`); `follow` sleeps on file-change notifications (with a polling
//! fallback) and moves to a newer session of the same project (`project`); `headroom`
//! says how far the context is from the next compaction, each figure with its source
//! (`windows`); `compaction_index` keeps, for a status line, a transcript's compactions and
//! last call per path, extended from where the last run stopped; `since` reads what a
//! compaction now would summarise, from the last compaction's line. Only ever reads session
//! files (docs/architecture.md, "Following a session").

pub mod compaction_index;
pub mod follow;
pub mod headroom;
pub mod live;
mod live_capture;
mod live_item;
pub mod project;
pub mod since;
pub mod tail;
pub mod threshold;
pub mod windows;

pub use follow::{FileEvent, FollowOptions, WatchEvent, follow};
pub use headroom::{Headroom, HeadroomTracker, Limit};
pub use live::{LiveCall, LiveItem, LiveMessage, LiveSession};
pub use live_item::tool_subject;
pub use project::{ChooseError, Chosen, ProjectScope, choose_path, newest_for_cwd};
