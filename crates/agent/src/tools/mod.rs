//! The tools the model may call: `bash`, `read_file`, `write_file`, `edit_file`, `glob` and
//! `compact`, plus the workspace confinement every file tool goes through.
//!
//! This module owns the tool contract: the specs shown to the model ([`tool_specs`]), the
//! dispatcher ([`run_tool`]) that turns every failure into a one-line message for the model,
//! and the output limits. It must not know about the history, the pipeline or the UI: a
//! `compact` call is only reported back as [`ToolOutcome::CompactRequested`]; the agent decides
//! what that means. Nothing here writes to stdout or stderr.

mod bash;
mod files;
mod glob;
mod output;
mod secrets;
mod workspace;

use std::io;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::message::ToolSpec;

pub use bash::{BASH_TIMEOUT, EXIT_CODE_PREFIX, check_deny_list, kill_running_process_groups};
pub use files::remove_stale_temp_files;
pub use glob::GLOB_SKIPPED_DIRS;
pub use output::{TRUNCATION_NOTE_PREFIX, truncation_note};
pub use secrets::{EnvPolicy, PROVIDER_KEY_VARS, Redactions, SECRET_SUFFIXES};
pub use workspace::Workspace;

/// The exact text of a tool result when the user cancelled the call.
pub const CANCELLED_MESSAGE: &str = "Cancelled by user";

/// The description of the `compact` tool, the lesson's words (docs/pipeline.md, "The loop
/// and the compact tool").
pub const COMPACT_DESCRIPTION: &str = "Summarize earlier conversation to free context space.";

/// Default cap on the text a tool hands back, in chars (Unicode code points).
pub const OUTPUT_CAP_CHARS: usize = 50_000;

/// Default cap on the number of paths `glob` lists.
pub const GLOB_CAP_PATHS: usize = 1000;

/// Default cap on the directory entries one `glob` looks at: a large repository outside
/// the skipped folders is tens of thousands.
pub const GLOB_MAX_ENTRIES: usize = 200_000;

/// Default wall-clock limit of one `read_file`, `write_file`, `edit_file` or `glob` call. A
/// local file tool finishes in milliseconds; a slow or hung file system must not hold the
/// turn.
pub const FILE_TOOL_TIMEOUT: Duration = Duration::from_secs(30);

/// What a tool call produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolOutcome {
    /// Text for the `tool_result` block; `is_error` marks failures (and nonzero exits).
    Output { content: String, is_error: bool },
    /// The model asked to compact the history; nothing ran.
    CompactRequested { focus: Option<String> },
}

impl ToolOutcome {
    fn ok(content: impl Into<String>) -> Self {
        ToolOutcome::Output {
            content: content.into(),
            is_error: false,
        }
    }

    fn error(err: &ToolError) -> Self {
        ToolOutcome::Output {
            content: one_line(&err.to_string()),
            is_error: true,
        }
    }
}

/// Limits applied to tool calls. `Default` gives the documented values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolLimits {
    /// Wall-clock limit of one `bash` call (default 120 s).
    pub bash_timeout: Duration,
    /// Cap on returned text in chars (default 50,000).
    pub output_cap_chars: usize,
    /// Cap on the number of paths `glob` returns (default 1000).
    pub glob_cap: usize,
    /// Cap on the directory entries one `glob` looks at (default 200,000).
    pub glob_max_entries: usize,
    /// Wall-clock limit of one file tool call, `glob` included (default 30 s).
    pub file_timeout: Duration,
    /// The environment variables `bash` does not pass on (default: provider keys and names
    /// ending in `_API_KEY`, `_TOKEN`, `_SECRET`).
    pub child_env: EnvPolicy,
    /// Secret values replaced in every tool result (default: none known).
    pub redactions: Redactions,
}

impl Default for ToolLimits {
    fn default() -> Self {
        ToolLimits {
            bash_timeout: BASH_TIMEOUT,
            output_cap_chars: OUTPUT_CAP_CHARS,
            glob_cap: GLOB_CAP_PATHS,
            glob_max_entries: GLOB_MAX_ENTRIES,
            file_timeout: FILE_TOOL_TIMEOUT,
            child_env: EnvPolicy::default(),
            redactions: Redactions::default(),
        }
    }
}

/// Everything that can go wrong inside a tool. [`run_tool`] turns these into messages for the
/// model; the `Display` text is what the model reads, so it says what to do differently.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("Unknown tool: {0}")]
    UnknownTool(String),
    #[error("Invalid input: {0}")]
    InvalidInput(String),
    #[error("Path escapes the workspace: {0}")]
    PathEscape(String),
    #[error("Workspace root {path} is unusable: {source}")]
    WorkspaceRoot { path: PathBuf, source: io::Error },
    #[error("{op} {path}: {source}")]
    Io {
        op: &'static str,
        path: String,
        source: io::Error,
    },
    #[error("{0}")]
    NotAFile(String),
    #[error("Text to replace was not found in {path}")]
    EditNotFound { path: String },
    #[error(
        "Text to replace occurs {count} times in {path}; it must occur exactly once (include more surrounding lines)"
    )]
    EditAmbiguous { path: String, count: usize },
    #[error("Permission denied: {0}")]
    Denied(String),
    #[error("Cannot start bash: {0}")]
    Spawn(io::Error),
    #[error("Command timed out after {} and was killed (with its whole process group)", fmt_duration(*.0))]
    Timeout(Duration),
    #[error("{tool} took longer than {} and was stopped", fmt_duration(*.limit))]
    FileTimeout { tool: &'static str, limit: Duration },
    #[error("Cancelled by user")]
    Cancelled,
    #[error("Internal error: {0}")]
    Internal(String),
}

fn fmt_duration(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}

/// Keeps a failure message on one line: an io error or a user-given path could carry a
/// newline, and the model should see a single clear sentence.
fn one_line(text: &str) -> String {
    text.split(['\n', '\r'])
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The tools offered to the model, in a stable order: bash, read_file, write_file, edit_file,
/// glob, compact.
pub fn tool_specs() -> Vec<ToolSpec> {
    let spec = |name: &str, description: String, input_schema: Value| ToolSpec {
        name: name.to_string(),
        description,
        input_schema,
    };
    vec![
        spec(
            "bash",
            format!(
                "Run a shell command with `bash -c` in the workspace root. stdin is empty, so \
                 nothing can prompt for input. The result is stdout followed by stderr; a \
                 nonzero exit adds a last line `{EXIT_CODE_PREFIX} N]`. Output longer than \
                 {OUTPUT_CAP_CHARS} chars is cut with a note saying how much was cut. The \
                 command is killed after {} s, and any background process it started is \
                 killed when it finishes, so do not start servers with `&`. Commands using \
                 sudo, shutdown, reboot, mkfs, `dd if=` or `rm -rf /` are refused.",
                BASH_TIMEOUT.as_secs()
            ),
            object_schema(
                json!({
                    "command": string_property("The bash command line to run.")
                }),
                &["command"],
            ),
        ),
        spec(
            "read_file",
            format!(
                "Read a text file in the workspace. `path` is relative to the workspace root \
                 (absolute paths must lie inside it). Invalid UTF-8 is shown as U+FFFD. With \
                 `limit`, only the first `limit` lines are returned plus a note saying how \
                 many lines follow. Text longer than {OUTPUT_CAP_CHARS} chars is cut with a note."
            ),
            object_schema(
                json!({
                    "path": string_property(PATH_DESCRIPTION),
                    "limit": {
                        "type": "integer",
                        "minimum": 0,
                        "description": "Return at most this many lines from the start."
                    }
                }),
                &["path"],
            ),
        ),
        spec(
            "write_file",
            "Create or overwrite a file in the workspace with `content`. Missing parent \
             directories are created. The write is atomic: readers see the old file or the \
             new one, never half of it. Reports the number of bytes written."
                .to_string(),
            object_schema(
                json!({
                    "path": string_property(PATH_DESCRIPTION),
                    "content": string_property("The complete new content of the file.")
                }),
                &["path", "content"],
            ),
        ),
        spec(
            "edit_file",
            "Replace one exact occurrence of `old` with `new` in a UTF-8 text file in the \
             workspace. `old` must match the file byte for byte (whitespace and indentation \
             included) and must occur exactly once; if it occurs several times, include more \
             surrounding lines to make it unique."
                .to_string(),
            object_schema(
                json!({
                    "path": string_property(PATH_DESCRIPTION),
                    "old": string_property("The exact text to replace; must occur exactly once."),
                    "new": string_property("The replacement text.")
                }),
                &["path", "old", "new"],
            ),
        ),
        spec(
            "glob",
            format!(
                "List files in the workspace whose path relative to the root matches `pattern`. \
                 `*` matches any chars within one path segment, `?` one char, and a `**` \
                 segment any number of directories: `src/**/*.rs` finds Rust files at any \
                 depth under src, `*.log` only at the root, `**/*.log` everywhere. Results are \
                 sorted, at most {GLOB_CAP_PATHS}. Directories named {} are not searched.",
                GLOB_SKIPPED_DIRS.join(", ")
            ),
            object_schema(
                json!({
                    "pattern": string_property("Glob pattern relative to the workspace root, e.g. `src/**/*.rs`.")
                }),
                &["pattern"],
            ),
        ),
        spec(
            "compact",
            COMPACT_DESCRIPTION.to_string(),
            object_schema(
                json!({
                    "focus": string_property("What the summary should keep in detail.")
                }),
                &[],
            ),
        ),
    ]
}

/// What a `path` argument means, the same for every file tool.
const PATH_DESCRIPTION: &str = "File path, relative to the workspace root.";

/// A tool's input schema: an object with `properties` (in their order), the `required`
/// ones listed when there are any, and no other keys. The key order is the one sent.
fn object_schema(properties: Value, required: &[&str]) -> Value {
    let mut schema = json!({"type": "object", "properties": properties});
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema["additionalProperties"] = json!(false);
    schema
}

fn string_property(description: &str) -> Value {
    json!({"type": "string", "description": description})
}

/// Runs one tool call. Never panics and never fails: every problem (unknown tool, bad input,
/// refused path, timeout, cancellation) comes back as `Output { is_error: true, .. }` with a
/// one-line message; a cancellation's message is exactly [`CANCELLED_MESSAGE`].
///
/// Cancellation: `bash` kills its process group and returns at once; `read_file` and `glob`
/// return at once and their file work stops at its next step; `edit_file` honours a
/// cancellation until the moment it writes, `write_file` one that arrived before it started,
/// so a reported cancel never hides a write that happened. The file tools and `glob` have a
/// time limit as `bash` has (`limits.file_timeout`), with the same rules: a read stops at
/// once, a write is asked to stop and its own answer kept. No tool opens anything but a
/// regular file, so none can block on a FIFO or a device. Every output has the secret
/// values of `limits.redactions` replaced.
pub async fn run_tool(
    ws: &Workspace,
    name: &str,
    input: &Value,
    limits: &ToolLimits,
    cancel: &CancellationToken,
) -> ToolOutcome {
    let outcome = dispatch(ws, name, input, limits, cancel).await;
    match outcome {
        ToolOutcome::Output { content, is_error } if !limits.redactions.is_empty() => {
            ToolOutcome::Output {
                content: limits.redactions.text(&content).into_owned(),
                is_error,
            }
        }
        other => other,
    }
}

async fn dispatch(
    ws: &Workspace,
    name: &str,
    input: &Value,
    limits: &ToolLimits,
    cancel: &CancellationToken,
) -> ToolOutcome {
    if cancel.is_cancelled() {
        return ToolOutcome::error(&ToolError::Cancelled);
    }
    let result = match name {
        "bash" => {
            return match bash::run(ws, input, limits, cancel).await {
                Ok(outcome) => outcome,
                Err(err) => ToolOutcome::error(&err),
            };
        }
        "read_file" | "glob" => {
            // Read-only: on a timeout or a cancel the answer is at once, and the work stops
            // at its next step (`work` sees the child token).
            let work = cancel.child_token();
            let _stop = work.clone().drop_guard();
            let run = async {
                if name == "glob" {
                    glob::run(ws, input, limits, &work).await
                } else {
                    files::read_file(ws, input, limits, &work).await
                }
            };
            let tool = if name == "glob" { "glob" } else { "read_file" };
            cancellable(cancel, time_limited(tool, limits.file_timeout, run)).await
        }
        "write_file" | "edit_file" => {
            // A write is never reported as stopped while it went ahead: past the limit the
            // work is asked to stop, then its own answer is awaited (edit_file stops before
            // writing, or reports the write it made).
            let work = cancel.child_token();
            let run = async {
                if name == "write_file" {
                    files::write_file(ws, input).await
                } else {
                    files::edit_file(ws, input, &work).await
                }
            };
            tokio::pin!(run);
            let tool = if name == "write_file" {
                "write_file"
            } else {
                "edit_file"
            };
            match tokio::time::timeout(limits.file_timeout, &mut run).await {
                Ok(result) => result,
                Err(_) => {
                    work.cancel();
                    match run.await {
                        Err(ToolError::Cancelled) if !cancel.is_cancelled() => {
                            Err(ToolError::FileTimeout {
                                tool,
                                limit: limits.file_timeout,
                            })
                        }
                        other => other,
                    }
                }
            }
        }
        "compact" => {
            return match compact_focus(input) {
                Ok(focus) => ToolOutcome::CompactRequested { focus },
                Err(err) => ToolOutcome::error(&err),
            };
        }
        other => Err(ToolError::UnknownTool(other.to_string())),
    };
    match result {
        Ok(content) => ToolOutcome::ok(content),
        Err(err) => ToolOutcome::error(&err),
    }
}

async fn cancellable<F>(cancel: &CancellationToken, work: F) -> Result<String, ToolError>
where
    F: Future<Output = Result<String, ToolError>>,
{
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Err(ToolError::Cancelled),
        result = work => result,
    }
}

/// `work` within `limit`; past it, a `FileTimeout` naming `tool`.
async fn time_limited<F>(tool: &'static str, limit: Duration, work: F) -> Result<String, ToolError>
where
    F: Future<Output = Result<String, ToolError>>,
{
    tokio::time::timeout(limit, work)
        .await
        .unwrap_or(Err(ToolError::FileTimeout { tool, limit }))
}

/// A blank focus means "no particular focus", so it is reported as `None`.
fn compact_focus(input: &Value) -> Result<Option<String>, ToolError> {
    let focus = input_object(input)?
        .get("focus")
        .filter(|v| !v.is_null())
        .map(|v| {
            v.as_str()
                .map(str::to_string)
                .ok_or_else(|| ToolError::InvalidInput("`focus` must be a string".into()))
        })
        .transpose()?;
    Ok(focus.filter(|f| !f.trim().is_empty()))
}

fn input_object(input: &Value) -> Result<&serde_json::Map<String, Value>, ToolError> {
    input
        .as_object()
        .ok_or_else(|| ToolError::InvalidInput("the tool input must be a JSON object".into()))
}

/// A required string field of the tool input.
fn required_str<'a>(input: &'a Value, field: &str) -> Result<&'a str, ToolError> {
    match input_object(input)?.get(field) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(ToolError::InvalidInput(format!(
            "`{field}` must be a string"
        ))),
        None => Err(ToolError::InvalidInput(format!(
            "missing required field `{field}`"
        ))),
    }
}

/// An optional non-negative integer field. Models sometimes send numbers as strings
/// (`"20"`), so a string holding an integer is accepted too.
fn optional_count(input: &Value, field: &str) -> Result<Option<usize>, ToolError> {
    let bad = || ToolError::InvalidInput(format!("`{field}` must be a non-negative integer"));
    match input_object(input)?.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .map(Some)
            .ok_or_else(bad),
        Some(Value::String(s)) => s.trim().parse::<usize>().map(Some).map_err(|_| bad()),
        Some(_) => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_have_expected_names_and_required_fields() {
        let specs = tool_specs();
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "bash",
                "read_file",
                "write_file",
                "edit_file",
                "glob",
                "compact"
            ]
        );
        let required = |name: &str| -> Vec<String> {
            let spec = specs.iter().find(|s| s.name == name).unwrap();
            assert_eq!(spec.input_schema["type"], "object");
            spec.input_schema["required"]
                .as_array()
                .map(|a| a.iter().map(|v| v.as_str().unwrap().to_string()).collect())
                .unwrap_or_default()
        };
        assert_eq!(required("bash"), ["command"]);
        assert_eq!(required("read_file"), ["path"]);
        assert_eq!(required("write_file"), ["path", "content"]);
        assert_eq!(required("edit_file"), ["path", "old", "new"]);
        assert_eq!(required("glob"), ["pattern"]);
        assert!(required("compact").is_empty());
        let compact = specs.iter().find(|s| s.name == "compact").unwrap();
        assert_eq!(
            compact.description,
            "Summarize earlier conversation to free context space."
        );
    }

    #[test]
    fn one_line_joins_lines() {
        assert_eq!(one_line("a\nb\r\nc"), "a b c");
    }

    #[test]
    fn optional_count_accepts_numbers_and_numeric_strings() {
        let v = json!({"a": 3, "b": "4", "c": -1, "d": "x", "e": null});
        assert_eq!(optional_count(&v, "a").unwrap(), Some(3));
        assert_eq!(optional_count(&v, "b").unwrap(), Some(4));
        assert!(optional_count(&v, "c").is_err());
        assert!(optional_count(&v, "d").is_err());
        assert_eq!(optional_count(&v, "e").unwrap(), None);
        assert_eq!(optional_count(&v, "missing").unwrap(), None);
    }

    #[tokio::test]
    async fn a_file_tool_past_its_time_limit_is_stopped_with_a_message() {
        let limit = Duration::from_millis(20);
        let never = std::future::pending::<Result<String, ToolError>>();
        let err = time_limited("glob", limit, never).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            "glob took longer than 20 ms and was stopped"
        );
        let quick = async { Ok("done".to_string()) };
        assert_eq!(time_limited("glob", limit, quick).await.unwrap(), "done");
    }

    #[test]
    fn timeout_message_names_the_duration() {
        let msg = ToolError::Timeout(Duration::from_millis(300)).to_string();
        assert!(msg.contains("300 ms"), "{msg}");
        let msg = ToolError::Timeout(Duration::from_secs(120)).to_string();
        assert!(msg.contains("120 s"), "{msg}");
    }
}
