//! The text `ctxlab fork --edit` opens in the editor: the original summary of the
//! compaction, then the facts of what it dropped that the summary does not carry (the
//! forgot module's check), one a line, for the user to keep, move into the summary or
//! delete. Lines starting with `#` are instructions and are removed when the file is read.

use crate::forgot::{analyze, from_session::inputs_of_session};
use crate::session::Session;

/// The editor's starting text for compaction `before` (1-based), or None if it has none.
pub fn edit_seed(session: &Session, before: usize) -> Option<String> {
    let inputs = inputs_of_session(session);
    let index = before.checked_sub(1)?;
    let input = inputs.get(index)?;
    let report = analyze(index, input);
    let mut out = String::from(
        "# The summary the fork starts from. Edit it; lines starting with # are dropped.\n\n",
    );
    out.push_str(input.summary.text().trim());
    out.push('\n');
    let missing: Vec<_> = report
        .facts
        .iter()
        .filter(|f| f.carried != Some(true))
        .collect();
    if !missing.is_empty() {
        out.push_str("\nFacts from before the compaction that the summary did not carry:\n");
        for f in missing {
            out.push_str(&format!("- {}\n", f.text.replace('\n', " ")));
        }
    }
    Some(out)
}

/// The summary as edited: without the `#` lines, trimmed.
pub fn read_edited(text: &str) -> String {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_string()
}
