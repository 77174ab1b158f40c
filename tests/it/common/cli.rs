//! The real `ctxlab` binary as a command: bare (for `pipeline` and `replay`, which read only
//! their arguments), or sealed off from the caller's setup (for `run`, which resolves a
//! provider from the environment, `.env` and `config.toml`).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// `ctxlab run` on the scripted model at full speed; the workspace path comes next.
pub const SCRIPTED_RUN: [&str; 6] = [
    "run",
    "--provider",
    "scripted",
    "--pace-ms",
    "0",
    "--workspace",
];

/// Every variable the provider resolution reads (and the context window it may name),
/// removed from sealed runs so a developer's own keys or settings never change a test.
pub const PROVIDER_VARS: [&str; 7] = [
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "MODEL_ID",
    "CTXLAB_MAX_ATTEMPTS",
    "CTXLAB_CONTEXT_WINDOW_TOKENS",
];

/// The example history that crosses every stage (`assets/examples/every-stage.json`).
pub fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/examples/every-stage.json")
}

/// The binary `cargo test` built for this package.
pub fn ctxlab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ctxlab"))
}

/// The binary for the session readers (`sessions`, `inspect`): discovery never wanders
/// into the real home of whoever runs the tests.
pub fn homeless() -> Command {
    let mut cmd = ctxlab();
    cmd.env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        // ctxlab's own recordings are a default root too (the data dir).
        .env_remove("CTXLAB_DATA_DIR")
        .env_remove("XDG_DATA_HOME")
        .env("HOME", "/nonexistent-ctxlab-home");
    cmd
}

/// Runs `cmd`, asserts it succeeded (its stderr as the message) and parses its stdout as
/// one JSON value.
pub fn json_out(cmd: &mut Command) -> serde_json::Value {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `ctxlab pipeline --input INPUT --workspace WS` (add flags).
pub fn pipeline(input: impl AsRef<OsStr>, ws: impl AsRef<OsStr>) -> Command {
    let mut cmd = ctxlab();
    cmd.args(["pipeline", "--input"])
        .arg(input)
        .arg("--workspace")
        .arg(ws);
    cmd
}

/// `ctxlab replay SESSION --workspace WS` (add flags).
pub fn replay(session: impl AsRef<OsStr>, ws: impl AsRef<OsStr>) -> Command {
    let mut cmd = ctxlab();
    cmd.arg("replay").arg(session).arg("--workspace").arg(ws);
    cmd
}

/// The binary run in `cwd` (so a `.env` there is the only one read), with HOME and the XDG
/// folders under `home` (no `config.toml` unless the test writes one), and without any
/// provider variable from the calling environment.
pub fn sealed(cwd: &Path, home: &Path) -> Command {
    let mut cmd = ctxlab();
    cmd.current_dir(cwd)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .timeout(std::time::Duration::from_secs(120));
    for var in PROVIDER_VARS {
        cmd.env_remove(var);
    }
    cmd
}

/// Three empty folders for a sealed run: working directory, home, workspace.
pub struct Scratch {
    pub cwd: tempfile::TempDir,
    pub home: tempfile::TempDir,
    pub ws: tempfile::TempDir,
}

impl Scratch {
    /// The binary sealed off in these folders.
    pub fn sealed(&self) -> Command {
        sealed(self.cwd.path(), self.home.path())
    }

    /// `ctxlab run` on the scripted model at full speed in the workspace (add flags and
    /// the request).
    pub fn scripted_run(&self) -> Command {
        let mut cmd = self.sealed();
        cmd.args(SCRIPTED_RUN).arg(self.ws.path());
        cmd
    }
}

pub fn scratch() -> Scratch {
    Scratch {
        cwd: tempfile::tempdir().unwrap(),
        home: tempfile::tempdir().unwrap(),
        ws: tempfile::tempdir().unwrap(),
    }
}
