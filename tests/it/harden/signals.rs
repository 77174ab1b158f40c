//! Item 5: SIGTERM, SIGHUP or an external SIGINT restore the terminal (alternate screen,
//! mouse reporting, cursor, and the line discipline when started from `sh -c`), kill every
//! tool process group, and exit with 128 + the signal's number: the workbench in a pty, and
//! `ctxlab run` as a plain process. The tool is a `bash` call started before the signal
//! (`sleep 300` in the background, waited for) that must not survive.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use crate::common::process::{process_gone, wait_for_pid, wait_until};
use crate::common::pty::Pty;
use crate::common::scratch::{Scratch, binary};
use crate::common::stub_server::{Stub, bash_once, start};

const KEY: &str = "sk-ant-stub-key-signals";
const TOOL: &str = "echo $$ > shell.pid; sleep 300 & echo $! > sleep.pid; wait";

fn stub() -> Stub {
    start(bash_once(TOOL))
}

fn anthropic_env(stub: &Stub) -> Vec<(&'static str, String)> {
    vec![
        ("ANTHROPIC_API_KEY", KEY.to_string()),
        ("ANTHROPIC_BASE_URL", stub.url.clone()),
        ("CTXLAB_MAX_ATTEMPTS", "1".to_string()),
    ]
}

/// The tool's shell and its background `sleep`, once both run.
fn tool_pids(ws: &Path) -> [i32; 2] {
    [
        wait_for_pid(&ws.join("shell.pid")),
        wait_for_pid(&ws.join("sleep.pid")),
    ]
}

fn assert_tools_gone(pids: [i32; 2]) {
    wait_until(Duration::from_secs(10), "the tool processes die", || {
        pids.iter().all(|p| process_gone(*p))
    });
}

/// The parent of a process (the bash tool's shell is a child of ctxlab).
fn parent_of(pid: i32) -> i32 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let rest = stat.rsplit_once(')').unwrap().1;
    rest.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn workbench_in_pty(s: &Scratch, stub: &Stub, via_sh: bool) -> Pty {
    std::fs::create_dir_all(s.ws()).unwrap();
    let env = anthropic_env(stub);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let bin = binary();
    let ws = s.ws();
    let mut pty = if via_sh {
        // A non-interactive shell does not reset the terminal after its child: whatever
        // ctxlab leaves is what `stty` sees.
        let script = format!(
            "'{}' --workspace '{}'; echo $? > code.txt; stty -a > stty.txt; echo finished",
            bin.display(),
            ws.display()
        );
        Pty::start(
            Path::new("/bin/sh"),
            &["-c", &script],
            s.path(),
            &s.home(),
            &env,
        )
    } else {
        Pty::start(
            &bin,
            &["--workspace", ws.to_str().unwrap()],
            s.path(),
            &s.home(),
            &env,
        )
    };
    pty.wait_for("1 Conversation");
    // A first start shows the legend (Enter closes it); focus starts outside the input
    // box, so `i` types.
    pty.wait_for("Legend");
    pty.send(b"\r");
    std::thread::sleep(std::time::Duration::from_millis(300));
    pty.send(b"i");
    pty.send(b"start the tool\r");
    pty
}

fn signal(pid: i32, signo: i32) {
    // SAFETY: sends a signal to a process this test started.
    assert_eq!(unsafe { libc::kill(pid, signo) }, 0);
}

#[test]
fn sigterm_to_the_workbench_restores_the_terminal_and_kills_the_tools() {
    let s = Scratch::new();
    let stub = stub();
    let mut pty = workbench_in_pty(&s, &stub, false);
    let pids = tool_pids(&s.ws());
    pty.signal(libc::SIGTERM);
    assert_eq!(pty.wait_exit(), 128 + libc::SIGTERM as u32);
    pty.assert_clean();
    assert_tools_gone(pids);
}

#[test]
fn an_external_sigint_to_the_workbench_restores_the_terminal_and_kills_the_tools() {
    let s = Scratch::new();
    let stub = stub();
    let mut pty = workbench_in_pty(&s, &stub, false);
    let pids = tool_pids(&s.ws());
    pty.signal(libc::SIGINT);
    assert_eq!(pty.wait_exit(), 128 + libc::SIGINT as u32);
    pty.assert_clean();
    assert_tools_gone(pids);
}

#[test]
fn sighup_to_the_workbench_started_from_sh_leaves_a_sane_terminal() {
    let s = Scratch::new();
    let stub = stub();
    let mut pty = workbench_in_pty(&s, &stub, true);
    let pids = tool_pids(&s.ws());
    let ctxlab = parent_of(pids[0]);
    signal(ctxlab, libc::SIGHUP);
    pty.wait_for("finished");
    assert_eq!(pty.wait_exit(), 0, "the shell itself ends normally");
    pty.assert_clean();
    let code = std::fs::read_to_string(s.path().join("code.txt")).unwrap();
    assert_eq!(code.trim(), (128 + libc::SIGHUP).to_string());
    // Raw mode is off again: canonical input and echo, as the shell left them.
    let stty = std::fs::read_to_string(s.path().join("stty.txt")).unwrap();
    let words: Vec<&str> = stty.split_whitespace().collect();
    for mode in ["icanon", "echo", "isig"] {
        assert!(words.contains(&mode), "{mode} is off:\n{stty}");
    }
    assert_tools_gone(pids);
}

#[test]
fn ctxlab_run_stops_its_tools_and_exits_128_plus_the_signal() {
    for signo in [libc::SIGTERM, libc::SIGHUP, libc::SIGINT] {
        let s = Scratch::new();
        std::fs::create_dir_all(s.ws()).unwrap();
        let stub = stub();
        let mut child = s
            .ctxlab_anthropic(&stub.url, KEY)
            .args(["run", "--workspace"])
            .arg(s.ws())
            .arg("start the tool")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let pids = tool_pids(&s.ws());
        signal(child.id() as i32, signo);
        let mut status = None;
        wait_until(Duration::from_secs(10), "ctxlab run exits", || {
            status = child.try_wait().unwrap();
            status.is_some()
        });
        assert_eq!(status.unwrap().code(), Some(128 + signo), "signal {signo}");
        assert_tools_gone(pids);
    }
}
