//! Watching processes the tests start (through `bash`, or the real binary): whether a pid
//! still runs, waiting for it to die, reading the pid a command wrote to a file, and
//! polling a condition until a limit.

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

/// Whether a process is gone: the opposite of `process_alive`, for the signal tests that
/// hold pids as `i32` (what `kill` takes).
pub fn process_gone(pid: i32) -> bool {
    u32::try_from(pid).map_or(true, |pid| !process_alive(pid))
}

/// Polls `check` until it holds or `limit` passes (then panics with `what`).
pub fn wait_until(limit: Duration, what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !check() {
        assert!(Instant::now() < deadline, "timed out: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits (up to 30 seconds, without an async runtime) for a pid a command writes to
/// `path`, and reads it.
pub fn wait_for_pid(path: &Path) -> i32 {
    wait_until(Duration::from_secs(30), "the tool wrote its pid", || {
        std::fs::read_to_string(path).is_ok_and(|s| s.trim().parse::<i32>().is_ok())
    });
    read_pid(path) as i32
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
