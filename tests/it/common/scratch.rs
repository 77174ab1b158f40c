//! The real binary in a scratch home (no keys, no config, no `.env`). The waits the
//! process tests need (a pid file read, a process gone) are `common::process`'s.

use crate::common::cli::SCRIPTED_RUN;
use std::path::{Path, PathBuf};
use std::process::Command;

pub use super::cli::PROVIDER_VARS;

pub fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_ctxlab"))
}

/// A scratch folder: `home/` (HOME, XDG dirs), `ws/` (not created) and room for files.
pub struct Scratch {
    pub dir: tempfile::TempDir,
}

impl Scratch {
    pub fn new() -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        Scratch { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    pub fn ws(&self) -> PathBuf {
        self.dir.path().join("ws")
    }

    /// `config.toml` where ctxlab looks for it under this home.
    pub fn write_config(&self, text: &str) {
        let dir = self.home().join("config/ctxlab");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.toml"), text).unwrap();
    }

    /// The real binary, run in this scratch folder with a clean environment.
    pub fn ctxlab(&self) -> Command {
        let mut cmd = Command::new(binary());
        cmd.current_dir(self.path())
            .env("HOME", self.home())
            .env("XDG_CONFIG_HOME", self.home().join("config"))
            .env("XDG_DATA_HOME", self.home().join("data"))
            .env_remove("RUST_BACKTRACE");
        for var in PROVIDER_VARS {
            cmd.env_remove(var);
        }
        cmd
    }

    /// `ctxlab run` on the scripted model at full speed in `ws` (add flags and the request).
    pub fn scripted_run(&self, ws: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = self.ctxlab();
        cmd.args(SCRIPTED_RUN).arg(ws);
        cmd
    }

    /// `ctxlab pipeline` on the example history in `ws` (add flags).
    pub fn pipeline_on_example(&self, ws: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = self.ctxlab();
        cmd.args(["pipeline", "--input"])
            .arg(super::cli::example())
            .arg("--workspace")
            .arg(ws);
        cmd
    }

    /// `ctxlab <args>` against an Anthropic stub at `url` with `key`.
    pub fn ctxlab_anthropic(&self, url: &str, key: &str) -> Command {
        let mut cmd = self.ctxlab();
        cmd.env("ANTHROPIC_API_KEY", key)
            .env("ANTHROPIC_BASE_URL", url)
            .env("CTXLAB_MAX_ATTEMPTS", "1");
        cmd
    }
}

/// The demo project, written into `dir` (as the scripted tour expects).
pub fn write_demo(dir: &Path) {
    ctxlab::demo::write_demo_project(dir).unwrap();
}
