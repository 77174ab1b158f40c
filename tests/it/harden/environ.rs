//! Issue 19, §7: a tool's shell cannot read the provider key out of ctxlab's own
//! environment (`/proc/$PPID/environ`) and print it transformed, past the redaction of its
//! literal value. Linux: ctxlab is not dumpable, so its /proc files are root's. The test runs
//! ctxlab as an ordinary user (through `setpriv` when the suite runs as root, since root reads
//! every process's /proc files whatever ctxlab does).

use std::os::unix::fs::chown;
use std::path::Path;
use std::process::Command;

use crate::common::scratch::{Scratch, binary};
use crate::common::stub_server::{bash_then_done, start};

const KEY: &str = "sk-ant-stub-key-environ-0123456789";

/// Reads the parent's environment and prints the key reversed, which redaction cannot see.
const TOOL: &str = "tr '\\0' '\\n' < /proc/$PPID/environ | grep '^ANTHROPIC_API_KEY=' | rev; \
                    echo read-done-$((6 * 7))";

const NOBODY: u32 = 65534;

fn chown_all(path: &Path) {
    chown(path, Some(NOBODY), Some(NOBODY)).unwrap();
    if path.is_dir() {
        for entry in std::fs::read_dir(path).unwrap() {
            chown_all(&entry.unwrap().path());
        }
    }
}

/// `cmd` run as an ordinary user: itself unless we are root, else through `setpriv`.
fn as_ordinary_user(cmd: Command, scratch: &Path) -> Command {
    if rustix::process::geteuid().as_raw() != 0 {
        return cmd;
    }
    chown_all(scratch);
    let mut wrapped = Command::new("setpriv");
    wrapped.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"]);
    wrapped.arg(binary()).args(cmd.get_args());
    if let Some(dir) = cmd.get_current_dir() {
        wrapped.current_dir(dir);
    }
    for (name, value) in cmd.get_envs() {
        match value {
            Some(v) => wrapped.env(name, v),
            None => wrapped.env_remove(name),
        };
    }
    wrapped
}

#[test]
fn a_tool_cannot_read_the_key_from_ctxlabs_environment() {
    let s = Scratch::new();
    std::fs::create_dir_all(s.ws()).unwrap();
    std::fs::create_dir_all(s.home()).unwrap();
    let stub = start(bash_then_done(TOOL));
    let mut cmd = s.ctxlab_anthropic(&stub.url, KEY);
    cmd.args(["run", "--json", "--workspace"])
        .arg(s.ws())
        .arg("read the key");
    let out = as_ordinary_user(cmd, s.path()).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The command's output (not its text, which the events show too): the tool ran.
    assert!(stdout.contains("read-done-42"), "the tool ran: {stdout}");
    let reversed: String = KEY.chars().rev().collect();
    assert!(
        !stdout.contains(&reversed),
        "the key leaked reversed:\n{stdout}"
    );
    assert!(!stdout.contains(KEY), "{stdout}");
}
