//! A session's numbers, answered once: its project, start, end, model calls, compactions
//! and peak context. `ctxlab inspect`, `ctxlab sessions`, the browser's listing and the
//! opened session all take them from `SessionNumbers::of`, so a session shows the same
//! numbers everywhere (docs/pipeline.md, "Reading sessions"); a listing computes them
//! lazily per file with `numbers_of_file`.

use std::path::Path;

use serde::Serialize;

use super::SessionError;
use super::model::{RecordedCall, Session, SessionFormat, SessionMeta};
use super::recorded_event::{RecordedEvent, RecordedKind};

/// Where a session's project comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProjectSource {
    /// The file records the folder the agent worked in (`cwd`, Codex's `<cwd>`).
    Recorded,
    /// Claude Code's project folder name decoded (`-Users-me-app` is `/Users/me/app`): a
    /// guess, since a `-` in the name may have been a `-` in the path.
    FolderName,
}

impl ProjectSource {
    /// How a listing marks the project (nothing when the file records it).
    pub fn mark(self) -> &'static str {
        match self {
            ProjectSource::Recorded => "",
            ProjectSource::FolderName => " (decoded from the folder name)",
        }
    }
}

/// The numbers every view of a session shows.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct SessionNumbers {
    pub project: Option<String>,
    pub project_source: Option<ProjectSource>,
    /// ISO 8601 times of the first and last timestamped lines; None: not recorded.
    pub started: Option<String>,
    pub ended: Option<String>,
    /// Model calls: the assistant messages of the main conversation (a call the file
    /// records no usage for still counts) and the calls the API refused, which no answer
    /// records (a ctxlab recording's refusals): the timeline numbers a refused call too.
    pub calls: usize,
    /// Of `calls`, the ones the API refused as too long.
    #[serde(default)]
    pub refused_calls: usize,
    /// Compactions the recording tool performed in the main conversation.
    pub compactions: usize,
    /// The largest prompt a recorded call sent, in tokens.
    pub peak_context_tokens: Option<u64>,
}

impl SessionNumbers {
    pub fn of(s: &Session) -> SessionNumbers {
        SessionNumbers::of_parts(
            &s.meta,
            s.messages.iter().map(|m| m.role()),
            s.compactions.len(),
            &s.calls,
            refused_calls(&s.recorded),
        )
    }

    /// `of` for a session taken apart (the workbench's opened view): its metadata, the
    /// roles of its main conversation's messages, its compactions, its calls and how many
    /// calls the API refused (`refused_calls`).
    pub fn of_parts<'a>(
        meta: &SessionMeta,
        roles: impl Iterator<Item = &'a str>,
        compactions: usize,
        calls: &[RecordedCall],
        refused: usize,
    ) -> SessionNumbers {
        let (project, project_source) = match (&meta.cwd, &meta.project_folder) {
            (Some(cwd), _) => (Some(cwd.clone()), Some(ProjectSource::Recorded)),
            (None, Some(folder)) => (Some(folder.clone()), Some(ProjectSource::FolderName)),
            (None, None) => (None, None),
        };
        SessionNumbers {
            project,
            project_source,
            started: meta.started.clone(),
            ended: meta.ended.clone(),
            calls: roles.filter(|r| *r == "assistant").count() + refused,
            refused_calls: refused,
            compactions,
            peak_context_tokens: calls.iter().map(|c| c.usage.context_tokens()).max(),
        }
    }
}

/// A compaction's one identity, the same on every surface (`inspect`, `forgot`, the
/// workbench's `F` and compare view, the export): `#N at message M`, N counting the
/// session's compactions from 1 and M the index of the message the compaction put first
/// (its summary, when it made one): the messages before M are the ones it compacted. The
/// message index counts the session as its recording lists it, summaries included
/// (docs/pipeline.md, "Reading sessions").
pub fn compaction_label(number: usize, at_message: Option<usize>) -> String {
    match at_message {
        Some(m) => format!("#{number} at message {m}"),
        None => format!("#{number} (message not recorded)"),
    }
}

/// The calls a ctxlab recording says the API refused (its other formats record none): a
/// refused call has no answer, so the assistant messages do not count it.
pub fn refused_calls(recorded: &[RecordedEvent]) -> usize {
    recorded
        .iter()
        .filter(|e| matches!(e.kind, RecordedKind::Refusal { .. }))
        .count()
}

/// What every listing calls the project of a session that records none (and whose folder
/// name says nothing either): the CLI's heading and the browser's are this one text.
pub fn project_label(project: Option<&str>) -> &str {
    project.unwrap_or("(project not recorded)")
}

/// What a listing shows of one session file: its numbers and, for a file without
/// conversation, what it holds instead (the sentence `inspect`, `replay` and `export` give).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct FileNumbers {
    pub numbers: SessionNumbers,
    pub without_conversation: Option<String>,
}

/// The numbers of one session file, for a listing: its main conversation only (subagent
/// files are not read).
pub fn numbers_of_file(path: &Path) -> Result<SessionNumbers, SessionError> {
    file_numbers(path).map(|f| f.numbers)
}

/// `numbers_of_file` with what a conversation-less file holds.
pub fn file_numbers(path: &Path) -> Result<FileNumbers, SessionError> {
    let detail = super::detail::Detail::Numbers;
    let (mut session, _, _) = super::chunked::read_session_file(path, detail, &|_| {}, &|| false)?;
    note_project_folder(&mut session, path);
    Ok(FileNumbers {
        numbers: SessionNumbers::of(&session),
        without_conversation: super::holds::without_conversation(&session),
    })
}

/// A Claude Code session that records no `cwd`: its project folder's name, decoded.
pub(crate) fn note_project_folder(session: &mut Session, path: &Path) {
    if session.format != SessionFormat::ClaudeCode || session.meta.cwd.is_some() {
        return;
    }
    session.meta.project_folder = path
        .parent()
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
        .and_then(decode_folder_name);
}

/// Claude Code names a project's folder after its path with every `/` (and `.`) written as
/// `-`: `-Users-me-app`. Only a name of that shape is decoded.
fn decode_folder_name(name: &str) -> Option<String> {
    let rest = name.strip_prefix('-')?;
    if rest.is_empty() {
        return None;
    }
    Some(format!("/{}", rest.replace('-', "/")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claude_project_folder_name_decodes_to_a_path() {
        assert_eq!(
            decode_folder_name("-Users-user-project").as_deref(),
            Some("/Users/user/project")
        );
        assert_eq!(decode_folder_name("claude_project"), None);
        assert_eq!(decode_folder_name("-"), None);
    }
}
