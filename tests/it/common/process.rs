//! Watching processes the tests start through `bash`: whether a pid still runs, waiting for
//! it to die, and reading the pid a command wrote to a file.

use std::path::Path;
use std::time::{Duration, Instant};

/// Whether a process is still running. A zombie (killed, not yet reaped) counts as gone:
/// it runs nothing.
pub fn process_alive(pid: u32) -> bool {
    let state = if Path::new("/proc/self/stat").exists() {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            // The state letter follows the `)` that closes the command name.
            .and_then(|stat| {
                stat.rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().next().map(str::to_string))
            })
    } else {
        // No procfs (macOS, the BSDs): ask ps, which prints nothing for a pid that is gone.
        std::process::Command::new("ps")
            .args(["-o", "stat=", "-p", &pid.to_string()])
            .output()
            .ok()
            .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string())
            .filter(|s| !s.is_empty())
    };
    match state {
        Some(s) => !s.starts_with('Z') && !s.starts_with('X'),
        None => false,
    }
}

/// Polls until `pid` is gone; false if it still runs after 3 seconds.
pub async fn wait_until_dead(pid: u32) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(3) {
        if !process_alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

/// The pid a command wrote to `path` (`echo $! > bg.pid`).
pub fn read_pid(path: &Path) -> u32 {
    std::fs::read_to_string(path)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Waits until `path` exists and holds something, failing the test after 5 seconds.
pub async fn wait_for_file(path: &Path) {
    let start = Instant::now();
    while !path.exists()
        || std::fs::read_to_string(path)
            .unwrap_or_default()
            .trim()
            .is_empty()
    {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{path:?} never appeared"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
