//! How long the sessions browser takes to its first screen, and to every count filled in:
//! the workbench's state from `b` (or `ctxlab open`) on, the listing job run as the loop
//! runs it, the first frame drawn at 120x40, then the filling batches one after another.
//! It lists what `ctxlab sessions` lists, from the same variables:
//!
//! ```text
//! python3 scripts/gen_home.py /tmp/home            # 2,100 sessions, 288 MB
//! export CLAUDE_CONFIG_DIR=/tmp/home/claude CODEX_HOME=/tmp/home/codex \
//!        CTXLAB_DATA_DIR=/tmp/home/data
//! rm -f /tmp/home/data/listing-cache.json          # cold: no listing cache
//! cargo run --release --example listing_first_screen
//! cargo run --release --example listing_first_screen   # warm: the cache the first run wrote
//! ```
//!
//! CTXLAB_DATA_DIR must be set: the run writes the listing cache there.

use std::time::Instant;

use ctxlab::compact::PipelineConfig;
use ctxlab::tui::app::{StartSessions, Startup};
use ctxlab::tui::sessions::{BrowserRow, SessionDone};
use ctxlab::tui::work::Done;
use ctxlab::tui::{App, Effect, Msg};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn main() -> anyhow::Result<()> {
    let data = std::env::var_os("CTXLAB_DATA_DIR")
        .filter(|d| !d.is_empty())
        .ok_or_else(|| anyhow::anyhow!("set CTXLAB_DATA_DIR (the listing cache goes there)"))?;
    let data = std::path::PathBuf::from(data);
    let cold = !data.join(ctxlab::listing_cache::FILE_NAME).exists();
    let mut app = App::new(
        std::env::temp_dir(),
        "example".into(),
        PipelineConfig::default(),
        true,
    );
    app.update(Msg::Start(Box::new(Startup {
        scratch_root: Some(data.join("scratch")),
        ..Startup::default()
    })));
    app.update(Msg::Resize(120, 40));
    let mut terminal = Terminal::new(TestBackend::new(120, 40))?;

    let start = Instant::now();
    let cpu0 = cpu_ms();
    let mut queue = app.update(Msg::OpenSessions(StartSessions::Browse(Vec::new())));
    let mut first_screen = None;
    let mut batches = 0usize;
    let mut first_batch = None;
    while let Some(effect) = queue.pop() {
        let Effect::Work(work) = effect else {
            continue;
        };
        let done = work.run();
        let is_batch = matches!(&done, Done::Session(SessionDone::Stats { .. }));
        let listed = matches!(&done, Done::Session(SessionDone::Discovered { .. }));
        queue.extend(app.update(Msg::Done(done)));
        terminal.draw(|f| ctxlab::tui::render(&app, f))?;
        if listed && first_screen.is_none() {
            let (t, waiting) = (start.elapsed(), pending(&app));
            println!(
                "{} listing cache: first screen (rows drawn): {:.1} ms ({} ms of CPU), {waiting} rows with counts pending",
                if cold { "cold" } else { "warm" },
                t.as_secs_f64() * 1e3,
                cpu_ms().map_or("?".to_string(), |c| (c - cpu0.unwrap_or(0)).to_string()),
            );
            first_screen = Some(t);
        }
        if is_batch {
            batches += 1;
            first_batch.get_or_insert(start.elapsed());
        }
    }
    let all = start.elapsed();
    let sessions = app
        .sessions()
        .rows()
        .iter()
        .filter(|r| matches!(r, BrowserRow::Session(_)))
        .count();
    first_screen.ok_or_else(|| anyhow::anyhow!("no listing came"))?;
    println!("{sessions} sessions listed");
    if let Some(t) = first_batch {
        println!("first filled batch: {:.1} ms", t.as_secs_f64() * 1e3);
    }
    println!(
        "every count filled: {:.1} ms ({} ms of CPU) in {batches} batches, {} still pending",
        all.as_secs_f64() * 1e3,
        cpu_ms().map_or("?".to_string(), |c| (c - cpu0.unwrap_or(0)).to_string()),
        pending(&app)
    );
    Ok(())
}

/// The process's CPU time so far (every thread, user and system), in ms: on a shared
/// machine the wall time says as much about the others as about the listing.
fn cpu_ms() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command's name, which is in parentheses.
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // Linux counts them at 100 a second on every common build.
    Some(ticks * 10)
}

fn pending(app: &App) -> usize {
    app.sessions()
        .rows()
        .iter()
        .filter(|r| matches!(r, BrowserRow::Session(s) if s.stats().is_none()))
        .count()
}
