//! The TUI in a real pseudo-terminal (the `tui_demo` example, a fake agent): it starts,
//! shows the panes, reacts to keys, and leaves the terminal clean on quit and after a panic
//! in a spawned task (alternate screen left, mouse reporting off).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::common::pty::{Pty, demo_binary};

/// A program in a pty (the shared harness) with the temp dir it runs in.
struct Session {
    pty: Pty,
    _dir: tempfile::TempDir,
}

impl std::ops::Deref for Session {
    type Target = Pty;
    fn deref(&self) -> &Pty {
        &self.pty
    }
}

impl std::ops::DerefMut for Session {
    fn deref_mut(&mut self) -> &mut Pty {
        &mut self.pty
    }
}

fn start(panic: bool) -> Option<Session> {
    let bin = demo_binary();
    if !bin.exists() {
        eprintln!("skipping: {} not built", bin.display());
        return None;
    }
    Some(start_binary(bin, &[], panic, 30, 100))
}

/// Starts `bin` in a fresh pty of `rows` x `cols`, in a temp dir with no API keys.
fn start_binary(bin: PathBuf, args: &[&str], panic: bool, rows: u16, cols: u16) -> Session {
    let dir = tempfile::tempdir().unwrap();
    let env: &[(&str, &str)] = if panic {
        &[("CTXLAB_DEMO_PANIC", "1")]
    } else {
        &[]
    };
    let pty = Pty::start_sized(&bin, args, dir.path(), dir.path(), env, (rows, cols));
    Session { pty, _dir: dir }
}

/// The real binary at full speed in a fresh `demo` workspace (kept by the returned temp
/// dir), with `args` before the workspace flag, in a pty of `rows` x `cols`.
fn start_real(args: &[&str], rows: u16, cols: u16) -> (Session, tempfile::TempDir, PathBuf) {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_ctxlab"));
    let ws = tempfile::tempdir().unwrap();
    let ws_arg = ws.path().join("demo");
    let ws_str = ws_arg.to_str().unwrap();
    let mut all = args.to_vec();
    all.extend(["--pace-ms", "0", "--workspace", ws_str]);
    let s = start_binary(bin, &all, false, rows, cols);
    (s, ws, ws_arg)
}

/// Leaves the input box, then presses `key`: a lone Esc followed at once by a key reads as
/// Alt-key, so the parser gets a moment between them.
fn esc_then(s: &mut Session, key: &[u8]) {
    s.send(b"\x1b");
    std::thread::sleep(Duration::from_millis(300));
    s.send(key);
}

#[test]
fn starts_reacts_and_quits_clean() {
    let Some(mut s) = start(false) else { return };
    // All three at once: a frame can be read half drawn ("1 Conversation" before "2 Events").
    s.wait_for_all(&["1 Conversation", "2 Events", "Context (limit 50,000 chars)"]);
    // Focus starts outside the input box: `i` types.
    s.send(b"i");
    s.send(b"hello pty\r");
    s.wait_for("You said: hello pty");
    s.send(b"\x03\x03");
    assert_eq!(s.wait_exit(), 0);
    s.assert_clean();
}

#[test]
fn a_panic_in_a_spawned_task_restores_the_terminal() {
    let Some(mut s) = start(true) else { return };
    s.wait_for("1 Conversation");
    assert_eq!(s.wait_exit(), 101);
    s.assert_clean();
    let screen = s.screen();
    assert!(screen.contains("demo panic in a spawned task"), "{screen}");
}

/// The real binary on the embedded tour: every stage reaches the events pane, the persisted
/// output opens from the outputs pane, and `q` leaves a clean terminal with exit code 0.
#[test]
fn the_real_binary_plays_the_tour_and_quits_clean() {
    let (mut s, _ws, ws_arg) = start_real(&[], 80, 160);
    // A first run shows the legend (no "seen" file in this fresh data dir): Enter closes it.
    s.wait_for("Legend");
    s.send(b"\r");
    let screen = s.wait_for_all(&[
        "Δ budget",
        "Δ snip",
        "Δ micro",
        "Δ compact",
        "Δ reactive",
        "compact tool: focus",
    ]);
    assert!(screen.contains("scripted tour"), "{screen}");
    // The tour ends with its final answer; the agent is idle again.
    s.wait_for("idle");
    // Leave the input box, switch to the outputs pane, open the persisted result.
    esc_then(&mut s, b"3");
    s.wait_for("toolu_tour_035.txt");
    s.send(b"\r");
    let viewer = s.wait_for("ingest");
    assert!(viewer.contains("toolu_tour_035"), "{viewer}");
    esc_then(&mut s, b"q");
    assert_eq!(s.wait_exit(), 0);
    s.assert_clean();
    assert!(
        ws_arg
            .join(".task_outputs/tool-results/toolu_tour_035.txt")
            .exists()
    );
}

/// `ctxlab --step` in front of a class: it starts paused, and pressing `s` (run to the next
/// stage that changes something) again and again walks the tour until every stage has
/// changed the history, with the pause before reactive_compact showing the API's words.
#[test]
fn step_mode_walks_the_tour_stage_by_stage() {
    let (mut s, _ws, _) = start_real(&["--step"], 70, 160);
    let legend = s.wait_for("Legend");
    // The tour waits for the legend: nothing is sent, nothing paused, behind it.
    std::thread::sleep(Duration::from_millis(500));
    let behind = s.screen();
    assert!(
        !behind.contains("PAUSED") && !legend.contains("PAUSED"),
        "the tour started behind the legend:\n{behind}"
    );
    s.send(b"\r");
    let closed = Instant::now() + Duration::from_secs(10);
    while s.screen().contains("Legend") {
        assert!(Instant::now() < closed, "Enter did not close the legend");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Paused before the first model call: nothing has run yet.
    let first = s.wait_for("PAUSED  before the model call");
    assert!(
        !first.contains("Δ budget") && !first.contains("Δ micro"),
        "a stage ran before the first step:\n{first}"
    );
    let stages = [
        "Δ budget",
        "Δ snip",
        "Δ micro",
        "Δ compact_history",
        "Δ reactive",
    ];
    let mut presses = 0;
    let mut saw_api_words = false;
    let screen = loop {
        let screen = s.screen();
        saw_api_words |= screen.contains("PAUSED  before reactive_compact")
            && screen.contains("the API said: prompt is too long");
        if stages.iter().all(|st| screen.contains(st)) {
            break screen;
        }
        assert!(
            presses < 60,
            "not every stage after {presses} presses:\n{screen}"
        );
        let status = screen.lines().next().unwrap_or("").to_string();
        s.send(b"s");
        presses += 1;
        // Wait for the next pause (or the end of the tour), so each press is one stop.
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            let now = s.screen();
            let top = now.lines().next().unwrap_or("");
            if (top.contains("PAUSED") && top != status) || top.contains("idle") {
                break;
            }
            std::thread::sleep(Duration::from_millis(30));
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        saw_api_words,
        "the pause before reactive_compact never showed the API's words"
    );
    assert!(screen.contains("compact tool: focus"), "{screen}");
    // Far fewer presses than single steps (the tour takes about 87 of those): one per
    // kind of change, the README's eight (it was 28 when every repeated micro stopped).
    assert!(presses <= 8, "{presses} presses");
    s.send(b"q");
    assert_eq!(s.wait_exit(), 0);
    s.assert_clean();
}

/// The real binary under `--strategy s06`: the events pane shows s06's two stages (micro,
/// auto_compact) and none of the stages s06 does not have, the gauge counts tokens; `q`
/// leaves a clean terminal.
#[test]
fn the_real_binary_plays_the_tour_under_s06() {
    let (mut s, _ws, _) = start_real(&["--strategy", "s06"], 80, 160);
    // The first start's legend covers the events pane: Enter closes it.
    s.wait_for("Legend");
    s.send(b"\r");
    let screen = s.wait_for_all(&["Δ micro", "Δ auto", "scripted tour", "tokens)"]);
    for absent in ["Δ budget", "Δ snip", "Δ compact", "Δ reactive", "Δ fit"] {
        assert!(!screen.contains(absent), "{absent} under s06:\n{screen}");
    }
    s.wait_for("idle");
    esc_then(&mut s, b"q");
    assert_eq!(s.wait_exit(), 0);
    s.assert_clean();
}
