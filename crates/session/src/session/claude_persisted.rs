//! Claude Code's persisted-output stage, as its files show it: a tool result over Claude
//! Code's limit is saved to `<session>/tool-results/<id>.txt` and the model gets, in the
//! result's place, a `<persisted-output>` marker naming the file with a preview of about
//! 2 KB. It is the analogue of ctxlab's tool_result_budget (docs/pipeline.md), whose marker
//! starts the same way but reads `Full output: <path>`; this module tells the two apart.

/// What a Claude Code marker says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PersistedOutput<'a> {
    /// The full output's file, as the marker names it.
    pub path: &'a str,
    /// The full output's size as the marker writes it (`109.4KB`).
    pub size: &'a str,
}

const START: &str = "<persisted-output>\nOutput too large (";
const SAVED_TO: &str = "). Full output saved to: ";

/// The marker's facts when `text` is Claude Code's persisted-output marker.
pub fn claude_code_persisted(text: &str) -> Option<PersistedOutput<'_>> {
    let rest = text.strip_prefix(START)?;
    let first = rest.split('\n').next()?;
    let (size, path) = first.split_once(SAVED_TO)?;
    Some(PersistedOutput { path, size })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_codes_marker_is_told_from_ctxlabs() {
        let cc = "<persisted-output>\nOutput too large (109.4KB). Full output saved to: /h/.claude/projects/p/s/tool-results/b1.txt\n\nPreview (first 2KB):\n1\n...\n</persisted-output>";
        assert_eq!(
            claude_code_persisted(cc),
            Some(PersistedOutput {
                path: "/h/.claude/projects/p/s/tool-results/b1.txt",
                size: "109.4KB"
            })
        );
        let ours = "<persisted-output>\nFull output: .task_outputs/tool-results/t.txt\nPreview:\nab\n</persisted-output>";
        assert_eq!(claude_code_persisted(ours), None);
    }
}
