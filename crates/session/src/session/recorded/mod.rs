//! ctxlab's own session recordings (`<data dir>/sessions/*.jsonl`): the line format
//! (`format`), the fold that reads them into the session model (`fold`), and the recorded
//! events a replay honours (`RecordedEvent`: the compact tool, `/compact`, the API's
//! refusals, a change of settings), each at the place in the conversation it happened.
//! Only reads; the `record` module writes.

pub mod fold;
pub mod format;

use super::SessionError;
use super::lines::ParsedLine;
use super::model::{LoadWarning, Session};
pub use super::recorded_event::{CompactBy, RecordedEvent, RecordedKind, RecordedStage};
pub use fold::RecordFold;
pub use format::{Header, RECORD_FORMAT, RECORD_VERSION, RecordLine, RecordedStageLine};

/// Reads a recording's parsed lines. A line that is not one of the format's is skipped
/// and counted; the first must be the header.
pub(crate) fn read_recorded(lines: Vec<ParsedLine>) -> Result<Session, SessionError> {
    let mut fold = RecordFold::new(true);
    let mut skipped = 0usize;
    let mut warnings = Vec::new();
    for ParsedLine { number, value } in lines {
        let parsed = value.and_then(serde_json::from_value::<RecordLine>);
        match parsed {
            Ok(line) => fold.line(number, line),
            Err(e) => {
                skipped += 1;
                if warnings.len() < 20 {
                    warnings.push(LoadWarning {
                        line: number,
                        message: e.to_string(),
                    });
                }
            }
        }
    }
    let mut session = fold.finish();
    if skipped > 0 {
        session
            .skipped
            .insert("line not in the recording format".to_string(), skipped);
    }
    session.warnings.extend(warnings);
    Ok(session)
}
