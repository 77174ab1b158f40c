//! Issue 19, §7: a `bash` call's children that leave its process group (`setpgid`) or its
//! session (`setsid`, then their parent dies) do not outlive the call. `ctxlab run` on a
//! stub server runs one such command; afterwards none of the processes it started runs.
//! Linux only: on macOS the group kill is all ctxlab does (README.md, "Security model").

use std::process::Stdio;
use std::time::Duration;

use crate::common::process::{process_gone, wait_for_pid, wait_until};
use crate::common::scratch::Scratch;
use crate::common::stub_server::{bash_then_done, start};

/// One child in a group of its own, and one that starts a session of its own from a
/// subshell that exits at once (so it is orphaned while the call still runs). Each writes
/// its pid once it has left; the shell waits for both, then ends normally.
const TOOL: &str = "perl -e 'setpgrp(0, 0); open(my $f, \">\", \"group.pid\"); \
                    print $f \"$$\\n\"; close($f); sleep 300' & \
                    (perl -e 'use POSIX; POSIX::setsid(); open(my $f, \">\", \"session.pid\"); \
                    print $f \"$$\\n\"; close($f); sleep 300' &); \
                    while [ ! -s group.pid ] || [ ! -s session.pid ]; do sleep 0.05; done; \
                    echo both-left-$((1 + 1))";

#[test]
fn ctxlab_run_leaves_no_process_that_left_the_tools_group_or_session() {
    let s = Scratch::new();
    std::fs::create_dir_all(s.ws()).unwrap();
    let stub = start(bash_then_done(TOOL));
    let out = s
        .ctxlab_anthropic(&stub.url, "sk-ant-stub-key-escapees")
        .args(["run", "--json", "--workspace"])
        .arg(s.ws())
        .arg("start the tool")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The command's output, not its text: the tool ran to its end.
    assert!(stdout.contains("both-left-2"), "{stdout}");
    let pids = [
        wait_for_pid(&s.ws().join("group.pid")),
        wait_for_pid(&s.ws().join("session.pid")),
    ];
    wait_until(Duration::from_secs(5), "the escaped processes die", || {
        pids.iter().all(|p| process_gone(*p))
    });
}
