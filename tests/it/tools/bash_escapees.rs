//! bash: processes that leave the command's process group (`setpgid`) still end with the
//! call, whether it finishes or is cancelled (issue 19, §7). Linux only: on macOS the group
//! kill is all ctxlab does (README.md, "Security model").

use super::*;

/// Starts a perl that moves itself into a process group of its own, then sleeps; its pid
/// goes to `escaper.pid` once it has left the group.
const ESCAPER: &str = "perl -e 'setpgrp(0, 0); open(my $f, \">\", \"escaper.pid\"); \
                       print $f \"$$\\n\"; close($f); sleep 300' &";

#[tokio::test]
async fn a_child_in_its_own_process_group_ends_with_the_call() {
    let f = fixture();
    let r = f
        .bash(&format!(
            "{ESCAPER} while [ ! -s escaper.pid ]; do sleep 0.05; done; echo started"
        ))
        .await;
    assert_eq!(r, ("started\n".to_string(), false));
    let pid = read_pid(&f.root().join("escaper.pid"));
    assert!(
        wait_until_dead(pid).await,
        "perl {pid} in its own group survived the call"
    );
}

#[tokio::test]
async fn a_child_in_its_own_process_group_ends_when_the_call_is_cancelled() {
    let f = fixture();
    let ws = f.ws.clone();
    let cancel = CancellationToken::new();
    let task = {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            let command = format!("{ESCAPER} sleep 300");
            run_tool(
                &ws,
                "bash",
                &json!({ "command": command }),
                &ToolLimits::default(),
                &cancel,
            )
            .await
        })
    };
    let pid_file = f.root().join("escaper.pid");
    wait_for_file(&pid_file).await;
    let pid = read_pid(&pid_file);
    cancel.cancel();
    tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .expect("run_tool returns after cancel")
        .unwrap();
    assert!(
        wait_until_dead(pid).await,
        "perl {pid} in its own group survived the cancel"
    );
}
