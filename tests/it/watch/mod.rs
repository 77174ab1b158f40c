//! `ctxlab watch --json` following a Claude Code session and a Codex rollout while a writer
//! appends them line by line in timed steps: a compaction, a half-written line, a
//! truncation and a new session file of the same project; every event arrives, in file
//! order, once; a `ctxlab proxy` capture followed as the proxy writes it gives what
//! its whole-file read gives. The workbench's live view, folded by `App::update` and in a pty. Also
//! `ctxlab statusline` on a transcript's end, and the readable lines' bell and sanitizer.

mod at_risk;
mod capture;
mod fixtures;
mod follow_json;
mod live_pty;
mod live_view;
mod readable;
mod statusline;
mod surfaces;
