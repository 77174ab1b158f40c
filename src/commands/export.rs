//! `ctxlab export SESSION --out FILE.html`: a recorded session replayed through the
//! pipeline into a timeline, written as one self-contained HTML page
//! (`timeline::html::page`, the same page the workbench's `/export` writes). The replay
//! runs on a dry-run store: nothing is written but the page, through `write_export`
//! (`export_file`), the one writer of both exports.

use std::path::Path;

pub use crate::export_file::{ExportError, TargetChoice, write_export};

use crate::message::Message;
use crate::pipeline_replay::{ReplayOptions, ReplayTotals};
use crate::session::recorded_run::RecordedRun;
use crate::store::Store;
use crate::timeline::{Timeline, html};

/// The page for `session` (named `name` in its title), replayed with `options`; file
/// names are decided as in a workspace at `root`, which is never written. `recorded`: what
/// the file recorded of its live run (usage, compactions, stage events), shown beside the
/// replay's own figures.
pub fn export_page(
    name: &str,
    session: Vec<Message>,
    recorded: Option<&RecordedRun>,
    root: &Path,
    options: &ReplayOptions,
) -> Result<(String, ReplayTotals), ExportError> {
    let store = Store::new(root).dry_run();
    let (timeline, totals) =
        Timeline::from_recorded_replay(name, session, recorded, &store, options)?;
    Ok((html::page(&timeline), totals))
}

/// Writes `page` to `out` (`ctxlab export --out`): `write_export`, replacing a file that
/// is there, never one of `inputs`.
pub fn write_page(out: &Path, page: &str, inputs: &[&Path]) -> Result<(), ExportError> {
    write_export(out, page.as_bytes(), inputs, TargetChoice::Named).map(|_| ())
}
