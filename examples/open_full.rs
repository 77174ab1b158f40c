//! How long the workbench's full read of a session takes (`ctxlab open FILE` after its
//! first frame: the job that reads the whole file and builds the view), and the process's
//! peak memory after it, without a terminal:
//!
//! ```text
//! python3 scripts/gen_codex_session.py --template tests/fixtures/sessions/codex_0171.jsonl \
//!         --mb 2048 --out /tmp/codex-2gb.jsonl
//! CTXLAB_MAX_SESSION_BYTES=4000000000 cargo run --release --example open_full /tmp/codex-2gb.jsonl
//! ```

use std::time::Instant;

use ctxlab::tui::sessions::{Progress, open_full};

fn main() -> anyhow::Result<()> {
    let path = std::env::args_os()
        .nth(1)
        .ok_or_else(|| anyhow::anyhow!("usage: open_full FILE"))?;
    // The binary's cap on one session file, raised as `CTXLAB_MAX_SESSION_BYTES` raises it.
    if let Ok(v) = std::env::var("CTXLAB_MAX_SESSION_BYTES") {
        let bytes = v.trim().parse::<u64>().map_err(|_| {
            anyhow::anyhow!("CTXLAB_MAX_SESSION_BYTES={v}: expected a number of bytes")
        })?;
        ctxlab::session::open::set_max_file_bytes(bytes);
    }
    let started = Instant::now();
    let opened = open_full(std::path::Path::new(&path), &Progress::default())?;
    let took = started.elapsed();
    println!(
        "read {} in {:.1} s: {} rows",
        std::path::Path::new(&path).display(),
        took.as_secs_f64(),
        opened.rows().len(),
    );
    // The kernel's peak resident size of this process (Linux).
    if let Ok(status) = std::fs::read_to_string("/proc/self/status")
        && let Some(line) = status.lines().find(|l| l.starts_with("VmHWM"))
    {
        println!("{line}");
    }
    Ok(())
}
