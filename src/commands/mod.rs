//! The headless front ends, one file per command: `run` (one request to completion),
//! `pipeline` (the stages on one history, as JSON), `replay` (a recorded session call by
//! call; `compare` for `replay --compare`, strategies side by side), `export` (a recorded
//! session's timeline as an HTML page), `forgot` (what each compaction forgot), `inspect` (a
//! session's summary; `inspect_calls` for `--calls`: each call's context by category),
//! `sessions` (what discovery finds), `watch` and `watch_text` (a session followed as it is
//! written, as JSON lines or readable lines) and `statusline` (Claude Code's status line).
//! Each is a library function over a writer; `main.rs` only parses flags and chooses exit
//! codes. `run` consumes the same `AgentEvent` stream as the workbench.

pub mod compare;
pub mod export;
pub mod forgot;
pub mod inspect;
pub mod inspect_calls;
pub mod pipeline;
pub mod replay;
pub mod run;
pub mod sessions;
pub mod statusline;
pub mod statusline_risk;
pub mod watch;
pub mod watch_risk;
pub mod watch_text;
