//! The TUI's real loop (`run_loop`) against a `TestBackend` and an injected stream of
//! terminal events: a 50 MB transcript is opened, and the screen keeps answering keys
//! (`?` opens help) while it loads off the UI task.

use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ctxlab::agent::events::AgentEvent;
use ctxlab::compact::PipelineConfig;
use ctxlab::message::{Message, block};
use ctxlab::tui::app::Layer;
use ctxlab::tui::run::run_loop;
use ctxlab::tui::{App, render};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;
use tokio::sync::watch;

use crate::support::buffer_text;

const TRANSCRIPT: &str = ".transcripts/transcript_1700000000.jsonl";
const TARGET_BYTES: u64 = 50 * 1024 * 1024;

/// Writes a transcript of just over `TARGET_BYTES`: a request, then tool turns with 12 KB
/// outputs. Returns how many messages it holds.
fn write_big_transcript(root: &Path) -> usize {
    let path = root.join(TRANSCRIPT);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut out = BufWriter::new(std::fs::File::create(&path).unwrap());
    let mut written = 0u64;
    let mut line = |m: &Message| {
        let text = serde_json::to_string(m).unwrap();
        out.write_all(text.as_bytes()).unwrap();
        out.write_all(b"\n").unwrap();
        written += text.len() as u64 + 1;
        written
    };
    line(&Message::user_text("Summarize the build logs"));
    let mut messages = 1;
    let mut i = 0;
    loop {
        let id = format!("toolu_{i:05}");
        line(&Message::assistant_blocks(vec![block::tool_use(
            &id,
            "bash",
            json!({"command": format!("cat build_{i}.log")}),
        )]));
        let output = format!("build {i}: step ok\n").repeat(600);
        let total = line(&Message::user_blocks(vec![block::tool_result(&id, output)]));
        messages += 2;
        i += 1;
        if total >= TARGET_BYTES {
            break;
        }
    }
    out.flush().unwrap();
    drop(out);
    assert!(std::fs::metadata(&path).unwrap().len() >= TARGET_BYTES);
    messages
}

/// What the driver watches for, published after every frame.
#[derive(Debug, Clone, Default)]
struct Seen {
    listed: usize,
    loading: bool,
    help: bool,
    rows: usize,
}

fn key(code: KeyCode) -> io::Result<Event> {
    Ok(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)))
}

async fn wait(seen: &mut watch::Receiver<Seen>, what: &str, ok: fn(&Seen) -> bool) -> Seen {
    // Guards against a hang only; nothing here measures speed.
    tokio::time::timeout(Duration::from_secs(600), seen.wait_for(ok))
        .await
        .unwrap_or_else(|_| panic!("timed out waiting for {what}"))
        .unwrap()
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_50_mb_transcript_loads_while_keys_are_answered() {
    let dir = tempfile::tempdir().unwrap();
    let messages = write_big_transcript(dir.path());
    let mut app = App::new(
        dir.path().to_path_buf(),
        "test".into(),
        PipelineConfig::default(),
        false,
    );
    app.update(ctxlab::tui::Msg::Resize(120, 40));

    let (keys, input) = futures::channel::mpsc::unbounded::<io::Result<Event>>();
    // The agent stays connected (and silent) for the whole test.
    let (_agent, events) = tokio::sync::mpsc::unbounded_channel::<AgentEvent>();
    let (commands, _commands_rx) = tokio::sync::mpsc::unbounded_channel();
    let (seen_tx, mut seen) = watch::channel(Seen::default());
    // Set by a frame that shows the help overlay and the loading line at once.
    let help_while_loading = Arc::new(AtomicBool::new(false));
    let loading_screen = Arc::new(Mutex::new(String::new()));

    let mut term = Terminal::new(TestBackend::new(120, 40)).unwrap();
    let (flag, shot) = (help_while_loading.clone(), loading_screen.clone());
    let draw = move |app: &App| -> io::Result<()> {
        term.draw(|f| render(app, f)).unwrap();
        let screen = buffer_text(term.backend().buffer());
        let help = matches!(app.top_layer(), Some(Layer::Help(_)));
        let loading = app.loading().is_some();
        if loading && screen.contains("loading transcript_1700000000.jsonl") {
            *shot.lock().unwrap() = screen.clone();
            if help && screen.contains("Keys") {
                flag.store(true, Ordering::SeqCst);
            }
        }
        seen_tx.send_replace(Seen {
            listed: app.transcripts().files().len(),
            loading,
            help,
            rows: app.transcripts().open().map_or(0, |t| t.rows().len()),
        });
        Ok(())
    };

    let driver = tokio::spawn(async move {
        let send = |k| keys.unbounded_send(key(k)).unwrap();
        // Leave the input box, show the transcripts browser, wait for its listing.
        send(KeyCode::Esc);
        send(KeyCode::Char('4'));
        wait(&mut seen, "the listing", |s| s.listed == 1).await;
        send(KeyCode::Enter);
        wait(&mut seen, "the loading line", |s| s.loading).await;
        // The loop keeps answering keys while the transcript loads.
        send(KeyCode::Char('?'));
        wait(&mut seen, "the help overlay", |s| s.help).await;
        let loaded = wait(&mut seen, "the transcript", |s| s.rows > 0 && !s.loading).await;
        send(KeyCode::Esc);
        send(KeyCode::Char('q'));
        loaded
    });

    let app = run_loop(app, input, events, commands, draw).await.unwrap();
    let loaded = driver.await.unwrap();
    let screen = loading_screen.lock().unwrap().clone();
    assert!(
        help_while_loading.load(Ordering::SeqCst),
        "no frame showed help while the transcript was loading; last loading frame:\n{screen}"
    );
    assert!(screen.contains("(50.0 MB)"), "{screen}");
    assert_eq!(loaded.rows, messages);
    let t = app.transcripts().open().expect("the transcript is open");
    assert_eq!(t.rows().len(), messages);
    assert_eq!(t.bad_lines(), 0);
    assert!(app.loading().is_none());
}
