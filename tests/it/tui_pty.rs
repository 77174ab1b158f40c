//! The TUI in a real pseudo-terminal (the `tui_demo` example, a fake agent): it starts,
//! shows the panes, reacts to keys, and leaves the terminal clean on quit and after a panic
//! in a spawned task (alternate screen left, mouse reporting off).

use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::pty::demo_binary;
use portable_pty::{CommandBuilder, PtySize, native_pty_system};

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

type SharedWriter = Arc<Mutex<Box<dyn Write + Send>>>;

struct Session {
    parser: Arc<Mutex<vt100::Parser>>,
    writer: SharedWriter,
    child: Box<dyn portable_pty::Child + Send + Sync>,
    _dir: tempfile::TempDir,
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
    let pair = native_pty_system()
        .openpty(PtySize {
            rows,
            cols,
            pixel_width: 0,
            pixel_height: 0,
        })
        .unwrap();
    let mut cmd = CommandBuilder::new(bin);
    cmd.args(args);
    for key in [
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "MODEL_ID",
    ] {
        cmd.env_remove(key);
    }
    cmd.env("XDG_CONFIG_HOME", dir.path().join("config"));
    cmd.cwd(dir.path());
    cmd.env("XDG_DATA_HOME", dir.path().join("data"));
    cmd.env("HOME", dir.path());
    cmd.env("TERM", "xterm-256color");
    cmd.env_remove("RUST_BACKTRACE");
    if panic {
        cmd.env("CTXLAB_DEMO_PANIC", "1");
    }
    let child = pair.slave.spawn_command(cmd).unwrap();
    drop(pair.slave);
    let mut reader = pair.master.try_clone_reader().unwrap();
    let writer = Arc::new(Mutex::new(pair.master.take_writer().unwrap()));
    let parser = Arc::new(Mutex::new(vt100::Parser::new(rows, cols, 0)));
    let p = parser.clone();
    let w = writer.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            let chunk = &buf[..n];
            // Answer the queries a real terminal answers (vt100 only parses): cursor
            // position, and primary device attributes (ends crossterm's keyboard probe).
            let mut w = w.lock().unwrap();
            if contains(chunk, b"\x1b[6n") {
                let _ = w.write_all(b"\x1b[1;1R");
            }
            if contains(chunk, b"\x1b[c") {
                let _ = w.write_all(b"\x1b[?62c");
            }
            let _ = w.flush();
            drop(w);
            p.lock().unwrap().process(chunk);
        }
    });
    // Keep the master alive for the session's lifetime.
    std::mem::forget(pair.master);
    Session {
        parser,
        writer,
        child,
        _dir: dir,
    }
}

impl Session {
    fn wait_for(&self, needle: &str) -> String {
        self.wait_for_all(&[needle])
    }

    fn wait_for_all(&self, needles: &[&str]) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let screen = self.parser.lock().unwrap().screen().contents();
            if needles.iter().all(|n| screen.contains(n)) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {needles:?}; screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn send(&mut self, bytes: &[u8]) {
        let mut w = self.writer.lock().unwrap();
        w.write_all(bytes).unwrap();
        w.flush().unwrap();
    }

    fn wait_exit(&mut self) -> u32 {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // Let the reader thread take the last bytes.
                std::thread::sleep(Duration::from_millis(200));
                return status.exit_code();
            }
            assert!(Instant::now() < deadline, "the TUI did not exit");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn assert_clean(&self) {
        let parser = self.parser.lock().unwrap();
        let screen = parser.screen();
        assert!(!screen.alternate_screen(), "still on the alternate screen");
        assert_eq!(
            screen.mouse_protocol_mode(),
            vt100::MouseProtocolMode::None,
            "mouse reporting left on"
        );
        assert!(!screen.hide_cursor(), "cursor left hidden");
    }
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
    let screen = s.parser.lock().unwrap().screen().contents();
    assert!(screen.contains("demo panic in a spawned task"), "{screen}");
}

/// The real binary on the embedded tour: every stage reaches the events pane, the persisted
/// output opens from the outputs pane, and `q` leaves a clean terminal with exit code 0.
#[test]
fn the_real_binary_plays_the_tour_and_quits_clean() {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_ctxlab"));
    let ws = tempfile::tempdir().unwrap();
    let ws_arg = ws.path().join("demo");
    let ws_str = ws_arg.to_str().unwrap();
    let mut s = start_binary(
        bin,
        &["--pace-ms", "0", "--workspace", ws_str],
        false,
        80,
        160,
    );
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
    // A lone Esc followed at once by a key reads as Alt-key: give the parser a moment.
    s.send(b"\x1b");
    std::thread::sleep(Duration::from_millis(300));
    s.send(b"3");
    s.wait_for("toolu_tour_035.txt");
    s.send(b"\r");
    let viewer = s.wait_for("ingest");
    assert!(viewer.contains("toolu_tour_035"), "{viewer}");
    s.send(b"\x1b");
    std::thread::sleep(Duration::from_millis(300));
    s.send(b"q");
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
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_ctxlab"));
    let ws = tempfile::tempdir().unwrap();
    let ws_arg = ws.path().join("demo");
    let ws_str = ws_arg.to_str().unwrap();
    let mut s = start_binary(
        bin,
        &["--step", "--pace-ms", "0", "--workspace", ws_str],
        false,
        70,
        160,
    );
    s.wait_for("Legend");
    // Paused before the first model call: nothing has run yet.
    let first = s.wait_for("PAUSED  before the model call");
    assert!(
        !first.contains("Δ budget") && !first.contains("Δ micro"),
        "a stage ran before the first step:\n{first}"
    );
    s.send(b"\r");
    let closed = Instant::now() + Duration::from_secs(10);
    while s
        .parser
        .lock()
        .unwrap()
        .screen()
        .contents()
        .contains("Legend")
    {
        assert!(Instant::now() < closed, "Enter did not close the legend");
        std::thread::sleep(Duration::from_millis(50));
    }
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
        let screen = s.parser.lock().unwrap().screen().contents();
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
        // Wait for the next pause (or the end of the tour).
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            let now = s.parser.lock().unwrap().screen().contents();
            if now.lines().next().unwrap_or("") != status {
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
    // Far fewer presses than single steps (the tour takes about 87 of those).
    assert!(presses < 40, "{presses} presses");
    s.send(b"q");
    assert_eq!(s.wait_exit(), 0);
    s.assert_clean();
}

/// The real binary under `--strategy s06`: the events pane shows s06's two stages (micro,
/// auto_compact) and none of the stages s06 does not have, the gauge counts tokens; `q`
/// leaves a clean terminal.
#[test]
fn the_real_binary_plays_the_tour_under_s06() {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_ctxlab"));
    let ws = tempfile::tempdir().unwrap();
    let ws_arg = ws.path().join("demo");
    let ws_str = ws_arg.to_str().unwrap();
    let mut s = start_binary(
        bin,
        &["--strategy", "s06", "--pace-ms", "0", "--workspace", ws_str],
        false,
        80,
        160,
    );
    // The first start's legend covers the events pane: Enter closes it.
    s.wait_for("Legend");
    s.send(b"\r");
    let screen = s.wait_for_all(&["Δ micro", "Δ auto", "scripted tour", "tokens)"]);
    for absent in ["Δ budget", "Δ snip", "Δ compact", "Δ reactive", "Δ fit"] {
        assert!(!screen.contains(absent), "{absent} under s06:\n{screen}");
    }
    s.wait_for("idle");
    s.send(b"\x1b");
    std::thread::sleep(Duration::from_millis(300));
    s.send(b"q");
    assert_eq!(s.wait_exit(), 0);
    s.assert_clean();
}
