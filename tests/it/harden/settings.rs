//! Item 11: settings that make no sense are refused with the allowed range, the same way in
//! `--set`, in config.toml's `[pipeline]` table and in the workbench's `/config` panel (which
//! shows the error instead of applying).

use std::path::PathBuf;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ctxlab::compact::PipelineConfig;
use ctxlab::tui::{App, Effect, Msg};

use crate::common::scratch::Scratch;

#[test]
fn set_refuses_values_out_of_range_naming_the_range() {
    let s = Scratch::new();
    for (bad, shows) in [
        ("context_limit=0", "100..="),
        ("summary_max_tokens=0", "1..="),
        ("snip_keep_head=50", "snip_max_messages"),
        ("snip_max_messages=1", "2..="),
    ] {
        let out = s
            .pipeline_on_example(s.ws())
            .args(["--set", bad])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}: {stderr}");
        assert!(stderr.contains(shows), "{bad}: {stderr}");
        let out = s
            .ctxlab()
            .args([
                "run",
                "--provider",
                "scripted",
                "--pace-ms",
                "0",
                "--set",
                bad,
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "run {bad}");
    }
    // Bounds between keys hold once all assignments are in, in either order.
    let out = s
        .pipeline_on_example(s.ws())
        .args([
            "--set",
            "snip_keep_head=60",
            "--set",
            "snip_max_messages=100",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn config_toml_pipeline_values_are_checked_and_applied() {
    let s = Scratch::new();
    s.write_config("[pipeline]\ncontext_limit = 0\n");
    let out = s.scripted_run(s.ws()).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("config.toml") && stderr.contains("100..="),
        "{stderr}"
    );

    s.write_config("[pipeline]\ncontext_limit = 80000\nsnip_max_messages = 60\n");
    let out = s
        .ctxlab()
        .args(["run", "--provider", "scripted", "--pace-ms", "0", "--json"])
        .args(["--set", "snip_max_messages=70", "--workspace"])
        .arg(s.ws())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let first: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().next().unwrap()).unwrap();
    assert_eq!(first["event"], "ready");
    assert_eq!(first["config"]["context_limit"], 80000, "from config.toml");
    assert_eq!(first["config"]["snip_max_messages"], 70, "--set wins");
}

fn key(code: KeyCode) -> Msg {
    Msg::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

#[test]
fn the_config_panel_shows_the_range_instead_of_applying() {
    let mut app = App::new(
        PathBuf::from("/tmp/ws"),
        "test".into(),
        PipelineConfig::default(),
        true,
    );
    app.update(Msg::Resize(120, 40));
    for c in "/config".chars() {
        app.update(key(KeyCode::Char(c)));
    }
    app.update(key(KeyCode::Enter));
    let row = PipelineConfig::KEYS
        .iter()
        .position(|k| *k == "context_limit")
        .unwrap();
    for _ in 0..row {
        app.update(key(KeyCode::Char('j')));
    }
    app.update(key(KeyCode::Enter));
    for _ in 0..10 {
        app.update(key(KeyCode::Backspace));
    }
    app.update(key(KeyCode::Char('0')));
    let effects = app.update(key(KeyCode::Enter));
    assert!(
        !effects.iter().any(|e| matches!(e, Effect::Send(_))),
        "an out-of-range value was sent: {effects:?}"
    );
    assert_eq!(*app.config(), PipelineConfig::default(), "nothing applied");
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(120, 40)).unwrap();
    terminal.draw(|f| ctxlab::tui::render(&app, f)).unwrap();
    let screen: String = terminal
        .backend()
        .buffer()
        .content()
        .iter()
        .map(|c| c.symbol())
        .collect();
    assert!(
        screen.contains("100..="),
        "the panel does not show the range"
    );
}
