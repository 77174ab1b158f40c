//! What a tool call's input names, read from the keys the agents' tools use: a path
//! (`file_path`, `path`, `notebook_path`, `filename`) or a command (`command`, `cmd`, as a
//! string or a list of words). One reading for the live view's tool rows and `forgot`'s
//! targets, so the two never disagree on what a call touched.

use serde_json::Value;

/// What a tool call's input names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Named {
    Path(String),
    /// The command as written: `["bash", "-lc", SCRIPT]` is its script, other lists of
    /// words are joined with spaces. Not trimmed.
    Command(String),
}

/// The path the input names, else its command; None when it names neither.
pub fn named_in(input: &Value) -> Option<Named> {
    for key in ["file_path", "path", "notebook_path", "filename"] {
        if let Some(p) = input.get(key).and_then(Value::as_str) {
            return Some(Named::Path(p.to_string()));
        }
    }
    for key in ["command", "cmd"] {
        match input.get(key) {
            Some(Value::String(c)) => return Some(Named::Command(c.clone())),
            Some(Value::Array(words)) => {
                let words: Vec<&str> = words.iter().filter_map(Value::as_str).collect();
                return Some(Named::Command(match words.as_slice() {
                    [sh, flag, script] if sh.ends_with("sh") && flag.starts_with('-') => {
                        script.to_string()
                    }
                    _ => words.join(" "),
                }));
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_path_comes_before_a_command_and_a_shell_list_is_its_script() {
        assert_eq!(
            named_in(&json!({"path": "a.rs", "command": "ls"})),
            Some(Named::Path("a.rs".into()))
        );
        assert_eq!(
            named_in(&json!({"cmd": ["bash", "-lc", "cargo test"]})),
            Some(Named::Command("cargo test".into()))
        );
        assert_eq!(
            named_in(&json!({"command": ["git", "status"]})),
            Some(Named::Command("git status".into()))
        );
        assert_eq!(named_in(&json!({"query": "x"})), None);
    }
}
