//! The `bash` tool: runs one command line with `bash -c` in the workspace root and captures
//! its output within the cap.
//!
//! This file checks the input and the deny-list; `bash/process_group.rs` owns the child's
//! whole life: the child starts in a new session (so it has no controlling terminal and
//! cannot fight the TUI for it) and therefore leads its own process group; on timeout,
//! cancellation, a dropped future, and also right after the shell exits, that whole group
//! gets SIGKILL, so no background job or pipeline member outlives the call; on Linux the
//! processes that left the group (`setpgid`, `setsid`) are found and killed too
//! (`bash/descendants.rs`). Running groups are
//! registered so a front end exiting on a signal can kill them all
//! ([`kill_running_process_groups`]); the child gets no provider keys (`ToolLimits::child_env`).
//!
//! **This is not a sandbox.** The command runs with the user's rights and can read and write
//! anything the user can, anywhere; the deny-list only stops a few obviously destructive
//! commands typed plainly, and on macOS a process that calls `setpgid` or `setsid` itself
//! escapes the group kill.
//! Confinement to the workspace applies to the file tools, not to `bash`.

use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{ToolError, ToolLimits, ToolOutcome, Workspace, required_str};

/// Ending the processes that left the command's group.
mod descendants;
/// Spawning and killing the command's process group and its descendants.
mod process_group;
pub use process_group::kill_running_process_groups;

/// Default wall-clock limit of one command.
pub const BASH_TIMEOUT: Duration = Duration::from_secs(120);

/// Start of the line reporting a nonzero exit: `[exit code: N]`.
pub const EXIT_CODE_PREFIX: &str = "[exit code:";

/// Words refused anywhere in a command, matched at word boundaries (`sudoku.txt` is fine).
const DENIED_WORDS: [&str; 4] = ["sudo", "shutdown", "reboot", "mkfs"];

/// Runs the `bash` tool.
///
/// Result format, in this order:
/// - everything the command wrote to stdout, then everything it wrote to stderr (the two are
///   captured separately, not interleaved in time; a newline is inserted between them when
///   stdout does not end with one);
/// - if that text is longer than the cap, only its first `output_cap_chars` chars followed by
///   `\n[output truncated: N chars cut]`;
/// - if the exit status is nonzero, a last line `[exit code: N]`, or `[killed by signal N]`
///   when a signal ended the shell (on its own line: a newline is added before it unless
///   the text is empty or already ends with one);
/// - `(no output)` when there is none of the above.
///
/// `is_error` is true when the exit status is not 0. A timeout, a cancellation, a refused
/// command or a failure to start is an error with a one-line message instead.
pub(super) async fn run(
    ws: &Workspace,
    input: &Value,
    limits: &ToolLimits,
    cancel: &CancellationToken,
) -> Result<ToolOutcome, ToolError> {
    let command = required_str(input, "command")?;
    if command.trim().is_empty() {
        return Err(ToolError::InvalidInput(
            "`command` must not be empty".into(),
        ));
    }
    check_deny_list(command)?;
    process_group::run(ws.root(), command, limits, cancel).await
}

/// Refuses a few plainly destructive commands before anything runs. It is a tripwire for
/// accidents, not a security boundary: quoting, variables or `eval` get around it.
pub fn check_deny_list(command: &str) -> Result<(), ToolError> {
    for word in DENIED_WORDS {
        if contains_word(command, word) {
            return Err(ToolError::Denied(format!(
                "commands using `{word}` are not allowed"
            )));
        }
    }
    if contains_dd_if(command) {
        return Err(ToolError::Denied(
            "`dd if=` is not allowed (raw device copies)".into(),
        ));
    }
    if removes_root(command) {
        return Err(ToolError::Denied(
            "recursive removal of `/` is not allowed".into(),
        ));
    }
    Ok(())
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Byte offsets where `word` occurs with a non-word char (or the text edge) on both sides.
fn word_positions<'a>(text: &'a str, word: &'a str) -> impl Iterator<Item = usize> + 'a {
    let bytes = text.as_bytes();
    text.match_indices(word).filter_map(move |(at, _)| {
        let end = at + word.len();
        let before_ok = at == 0 || !is_word_byte(bytes[at - 1]);
        let after_ok = end == bytes.len() || !is_word_byte(bytes[end]);
        (before_ok && after_ok).then_some(at)
    })
}

fn contains_word(text: &str, word: &str) -> bool {
    word_positions(text, word).next().is_some()
}

/// `dd` as a word, then blanks, then `if=`.
fn contains_dd_if(command: &str) -> bool {
    word_positions(command, "dd").any(|at| {
        let rest = &command[at + 2..];
        let trimmed = rest.trim_start_matches([' ', '\t']);
        trimmed.len() < rest.len() && trimmed.starts_with("if=")
    })
}

/// An `rm` with a recursive flag whose operands include the file-system root itself (`/`,
/// `/*`, `//`, quoted or not). Other absolute paths such as `/tmp/x` are allowed.
fn removes_root(command: &str) -> bool {
    command
        .split([';', '&', '|', '\n', '(', ')', '`'])
        .any(|segment| {
            let mut words = segment.split_whitespace();
            while let Some(word) = words.next() {
                if word == "rm" || word.ends_with("/rm") {
                    let args: Vec<&str> = words.by_ref().collect();
                    return rm_args_remove_root(&args);
                }
            }
            false
        })
}

fn rm_args_remove_root(args: &[&str]) -> bool {
    let mut recursive = false;
    let mut root_target = false;
    for arg in args {
        let arg = arg.trim_matches(['"', '\'']);
        if arg == "--recursive" {
            recursive = true;
        } else if let Some(flags) = arg.strip_prefix('-').filter(|f| !f.starts_with('-')) {
            recursive |= flags.contains(['r', 'R']);
        } else if is_root_target(arg) {
            root_target = true;
        }
    }
    recursive && root_target
}

fn is_root_target(arg: &str) -> bool {
    let without_glob = arg.strip_suffix('*').unwrap_or(arg);
    !without_glob.is_empty() && without_glob.chars().all(|c| c == '/')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deny_list_refuses_dangerous_commands() {
        for cmd in [
            "sudo ls",
            "echo hi && sudo rm x",
            "/usr/bin/sudo ls",
            "shutdown -h now",
            "reboot",
            "mkfs.ext4 /dev/sda1",
            "mkfs -t ext4 /dev/sda1",
            "dd if=/dev/zero of=/dev/sda",
            "x; dd  if=/dev/zero of=f",
            "rm -rf /",
            "rm -fr /",
            "rm -rf /*",
            "rm -Rf /",
            "rm -r -f /",
            "rm --recursive --force /",
            "rm -rf --no-preserve-root /",
            "cd /tmp && rm -rf / ",
            "rm -rf '/'",
            "/bin/rm -rf /",
            "true; rm -rf //",
        ] {
            assert!(
                matches!(check_deny_list(cmd), Err(ToolError::Denied(_))),
                "should refuse: {cmd}"
            );
        }
    }

    #[test]
    fn deny_list_allows_look_alikes() {
        for cmd in [
            "cat sudoku.txt",
            "ls pseudo_dir",
            "echo rebooting_soon",
            "grep shutdownHook src",
            "rm -rf /tmp/build",
            "rm -rf ./target",
            "rm -rf build/",
            "rm /",
            "odd if=x",
            "dd of=out.img",
            "echo add if=1",
            "ls -la /",
        ] {
            assert!(check_deny_list(cmd).is_ok(), "should allow: {cmd}");
        }
    }

    #[test]
    fn root_targets() {
        assert!(is_root_target("/"));
        assert!(is_root_target("/*"));
        assert!(is_root_target("//"));
        assert!(!is_root_target("/tmp"));
        assert!(!is_root_target("*"));
        assert!(!is_root_target(""));
    }
}
