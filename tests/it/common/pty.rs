//! A program in a real pseudo-terminal, read through a vt100 parser: the one harness for
//! the tests that drive the workbench through a terminal (`tui_pty`) and those that check
//! what a signal or a panic leaves on it (alternate screen, mouse reporting, cursor, and
//! with `stty` the line discipline).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};

type SharedWriter = Arc<Mutex<Box<dyn Write + Send>>>;

/// Counts the terminal bells the program rang.
#[derive(Default)]
pub struct Bells(usize);

impl vt100::Callbacks for Bells {
    fn audible_bell(&mut self, _: &mut vt100::Screen) {
        self.0 += 1;
    }
}

pub struct Pty {
    parser: Arc<Mutex<vt100::Parser<Bells>>>,
    writer: SharedWriter,
    pub child: Box<dyn portable_pty::Child + Send + Sync>,
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// The `tui_demo` example next to the test binary, built here when `cargo test --test it`
/// did not build it: a test that needs it never skips.
pub fn demo_binary() -> PathBuf {
    // tests live in target/<profile>/deps; `cargo test` builds examples next to them.
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    let bin = dir.join("examples").join("tui_demo");
    // `cargo test --test it` builds no example: build it once here rather than skip.
    static BUILT: std::sync::Mutex<bool> = std::sync::Mutex::new(false);
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if !bin.exists() && !*built {
        let mut cargo = std::process::Command::new(env!("CARGO"));
        cargo
            .args(["build", "--profile", "test", "--example", "tui_demo"])
            .current_dir(env!("CARGO_MANIFEST_DIR"));
        // Drop what cargo set for this test process: build scripts (ring's) watch some of
        // these variables, and a changed value would rebuild them, and everything above them.
        for (key, _) in std::env::vars_os() {
            let key = key.to_string_lossy();
            if key.starts_with("CARGO_PKG_")
                || key.starts_with("CARGO_BIN_EXE_")
                || key.starts_with("CARGO_MANIFEST_")
                || [
                    "CARGO_CRATE_NAME",
                    "CARGO_TARGET_TMPDIR",
                    "CARGO_PRIMARY_PACKAGE",
                    "OUT_DIR",
                ]
                .contains(&key.as_ref())
            {
                cargo.env_remove(key.as_ref());
            }
        }
        let status = cargo
            .status()
            .unwrap_or_else(|e| panic!("cannot run cargo to build examples/tui_demo: {e}"));
        assert!(status.success(), "`cargo build --example tui_demo` failed");
        *built = true;
    }
    assert!(
        bin.exists(),
        "{} is missing after building it",
        bin.display()
    );
    bin
}

impl Pty {
    /// Starts `program args` in a fresh 40x140 pty, in `cwd`, with `env` set on top of a
    /// clean environment (no provider variables; HOME and XDG dirs under `home`).
    pub fn start(
        program: &Path,
        args: &[&str],
        cwd: &Path,
        home: &Path,
        env: &[(&str, &str)],
    ) -> Pty {
        Pty::start_sized(program, args, cwd, home, env, (40, 140))
    }

    /// `start` in a pty of `rows` x `cols`.
    pub fn start_sized(
        program: &Path,
        args: &[&str],
        cwd: &Path,
        home: &Path,
        env: &[(&str, &str)],
        (rows, cols): (u16, u16),
    ) -> Pty {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let mut cmd = CommandBuilder::new(program);
        cmd.args(args);
        for key in crate::common::cli::PROVIDER_VARS {
            cmd.env_remove(key);
        }
        cmd.env_remove("RUST_BACKTRACE");
        cmd.cwd(cwd);
        cmd.env("HOME", home);
        cmd.env("XDG_CONFIG_HOME", home.join("config"));
        cmd.env("XDG_DATA_HOME", home.join("data"));
        cmd.env("TERM", "xterm-256color");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = pair.slave.spawn_command(cmd).unwrap();
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().unwrap();
        let writer = Arc::new(Mutex::new(pair.master.take_writer().unwrap()));
        let parser = Arc::new(Mutex::new(vt100::Parser::new_with_callbacks(
            rows,
            cols,
            0,
            Bells::default(),
        )));
        let (p, w) = (parser.clone(), writer.clone());
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let chunk = &buf[..n];
                // Answer what a real terminal answers: the cursor position, and the primary
                // device attributes that end crossterm's keyboard probe.
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
        // The master stays open for the session's lifetime.
        std::mem::forget(pair.master);
        Pty {
            parser,
            writer,
            child,
        }
    }

    pub fn screen(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    /// Terminal bells rung so far.
    pub fn bells(&self) -> usize {
        self.parser.lock().unwrap().callbacks().0
    }

    pub fn wait_for(&self, needle: &str) -> String {
        self.wait_for_all(&[needle])
    }

    /// Waits until one screen shows every needle (a frame can be read half drawn, so
    /// waiting for them one by one could pass on two different frames).
    pub fn wait_for_all(&self, needles: &[&str]) -> String {
        let deadline = Instant::now() + Duration::from_secs(40);
        loop {
            let screen = self.screen();
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

    pub fn send(&mut self, bytes: &[u8]) {
        let mut w = self.writer.lock().unwrap();
        w.write_all(bytes).unwrap();
        w.flush().unwrap();
    }

    pub fn pid(&self) -> i32 {
        self.child.process_id().unwrap() as i32
    }

    pub fn is_running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    pub fn signal(&self, signo: i32) {
        // SAFETY: sends a signal to the child we started.
        assert_eq!(unsafe { libc::kill(self.pid(), signo) }, 0);
    }

    /// The exit code (portable-pty reports a death by signal as 1).
    pub fn wait_exit(&mut self) -> u32 {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // Let the reader thread take the last bytes.
                std::thread::sleep(Duration::from_millis(300));
                return status.exit_code();
            }
            assert!(
                Instant::now() < deadline,
                "the program did not exit; screen:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn assert_clean(&self) {
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
