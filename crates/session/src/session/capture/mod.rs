//! `ctxlab proxy`'s captures (`<data dir>/captures/*.jsonl`, docs/capture.md): the line
//! format (`format`, shared with the writer in the `proxy` module), a request body as the
//! exact conversation it sent (`request`), and the fold that reads a capture as a session
//! (`read`, line by line in `fold`, which the follower uses too): each model call with the
//! exact messages it sent, and what the agent's own compaction changed between two calls
//! (`changes`, the labelled diff of two requests; `compaction`, a full one read from two
//! requests). `kind` says what a request is before any thread is chosen (refused, the
//! agent's compaction request, a call); `server_edits` what the server did to a request's
//! context itself (the edits asked for and applied, its own compaction). Only reads.

pub mod changes;
mod compaction;
pub mod fold;
pub mod format;
pub mod kind;
mod read;
#[cfg(test)]
mod read_tests;
pub mod request;
pub mod server_edits;
#[cfg(test)]
pub(crate) mod test_captures;

pub use changes::{RequestChange, headline, message_changes, request_changes};
pub use fold::CaptureFold;
pub(crate) use fold::{read_capture, read_capture_chunks};
pub use format::{
    ApiKind, CAPTURE_FORMAT, CAPTURE_VERSION, CaptureHeader, CaptureLine, CapturedRequest,
    CapturedResponse, CapturedToolCall, CapturedUsage, Exchange, RecordedHeader, ServerCompaction,
    Timing, WebsocketMessage, header_value_kept, is_header,
};
pub use kind::{RequestKind, request_kind};
pub use read::CaptureHead;
pub(crate) use read::{MAX_WARNINGS, each_exchange_of, parse_line};
pub use request::{ExactRequest, exact_request};
pub use server_edits::{ServerEdits, server_edits};
