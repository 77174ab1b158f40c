//! Where a fork goes and how it is written. The agent's own place by default: Claude Code
//! `<config dir>/projects/<cwd, every character but letters and digits made '-'>/<id>.jsonl`,
//! Codex `<CODEX_HOME>/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`; `--out DIR`
//! instead puts the same file name in DIR. The file is written once, atomically, mode
//! 0600, through `safe_fs`'s no-clobber write: an existing file is never replaced.

use std::path::{Path, PathBuf};

use super::ids::{codex_date_parts, uuid_v4, uuid_v7};
use super::{AgentHomes, Fork, ForkError, ForkOptions};
use crate::safe_fs::Dir;
use crate::session::Tool;

/// The fork's id, folder and file name.
#[derive(Debug, Clone)]
pub struct Place {
    pub session_id: String,
    pub dir: PathBuf,
    pub file_name: String,
}

/// Where the agents keep their sessions, as they themselves look it up: Claude Code
/// `$CLAUDE_CONFIG_DIR`, else `~/.claude`; Codex `$CODEX_HOME`, else `~/.codex`.
pub fn homes_from_env() -> AgentHomes {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let home = var("HOME");
    AgentHomes {
        claude: var("CLAUDE_CONFIG_DIR").or_else(|| home.as_ref().map(|h| h.join(".claude"))),
        codex: var("CODEX_HOME").or_else(|| home.as_ref().map(|h| h.join(".codex"))),
    }
}

/// Claude Code's project folder name for a working directory.
pub fn claude_project_folder(cwd: &str) -> String {
    cwd.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// A new id and the place the agent looks for it.
pub fn place_for(tool: Tool, cwd: Option<&str>, options: &ForkOptions) -> Result<Place, ForkError> {
    match tool {
        Tool::Codex => {
            let id = uuid_v7(options.now_ms);
            let (y, m, d, stamp) = codex_date_parts(options.now_ms);
            let file_name = format!("rollout-{stamp}-{id}.jsonl");
            let dir = match (&options.out, &options.homes.codex) {
                (Some(out), _) => out.clone(),
                (None, Some(home)) => home.join("sessions").join(y).join(m).join(d),
                (None, None) => return Err(ForkError::NoCwd),
            };
            Ok(Place {
                session_id: id,
                dir,
                file_name,
            })
        }
        _ => {
            let id = uuid_v4();
            let file_name = format!("{id}.jsonl");
            let dir = match (&options.out, &options.homes.claude) {
                (Some(out), _) => out.clone(),
                (None, Some(home)) => home
                    .join("projects")
                    .join(claude_project_folder(cwd.ok_or(ForkError::NoCwd)?)),
                (None, None) => return Err(ForkError::NoCwd),
            };
            Ok(Place {
                session_id: id,
                dir,
                file_name,
            })
        }
    }
}

/// Creates the folders down to `dir` (never through a symlink below the first that exists).
fn open_dir(dir: &Path) -> Result<Dir, ForkError> {
    let err = |source| ForkError::Write {
        path: dir.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(err)?;
    Dir::open(dir).map_err(|e| err(std::io::Error::other(e.to_string())))
}

/// Writes the fork: once, whole, 0600; an existing file of that name is an error.
pub fn write_fork(fork: &Fork) -> Result<PathBuf, ForkError> {
    let path = fork.path();
    let dir = open_dir(&fork.dir)?;
    let written = dir
        .write_new(&fork.file_name, fork.text.as_bytes())
        .map_err(|source| ForkError::Write {
            path: path.clone(),
            source,
        })?;
    if !written {
        return Err(ForkError::Exists(path));
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_folder_is_the_cwd_with_every_other_character_a_dash() {
        assert_eq!(claude_project_folder("/tmp/ra1/proj"), "-tmp-ra1-proj");
        assert_eq!(claude_project_folder("/home/u/my.app"), "-home-u-my-app");
    }

    #[test]
    fn write_refuses_an_existing_file_and_leaves_it_alone() {
        let dir = tempfile::tempdir().unwrap();
        let fork = Fork {
            tool: Tool::ClaudeCode,
            session_id: "x".into(),
            dir: dir.path().join("a/b"),
            file_name: "x.jsonl".into(),
            text: "{}\n".into(),
            cwd: None,
            holds: String::new(),
            subagents_left_out: 0,
        };
        let path = write_fork(&fork).unwrap();
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let again = Fork {
            text: "changed\n".into(),
            ..fork
        };
        assert!(matches!(write_fork(&again), Err(ForkError::Exists(_))));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{}\n");
    }
}
