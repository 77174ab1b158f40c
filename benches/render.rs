//! One frame of the conversation pane with 100,000 messages at 120x40 into a TestBackend.
//! The list is virtualized, so the frame should cost what forty rows cost (target < 2 ms).

use criterion::{Criterion, criterion_group, criterion_main};
use ctxlab::agent::events::AgentEvent;
use ctxlab::compact::PipelineConfig;
use ctxlab::message::{Message, block};
use ctxlab::tui::{App, Msg};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

const MESSAGES: usize = 100_000;

fn big_app() -> App {
    let mut app = App::new(
        "/workspace".into(),
        "bench".into(),
        PipelineConfig::default(),
        false,
    );
    app.update(Msg::Resize(120, 40));
    for i in 0..MESSAGES {
        let id = format!("toolu_{i}");
        let m = match i % 3 {
            0 => Message::user_text(format!("request number {i}: keep going")),
            1 => Message::assistant_blocks(vec![block::tool_use(
                &id,
                "bash",
                json!({"command": format!("cargo test case_{i}")}),
            )]),
            _ => Message::user_blocks(vec![block::tool_result(
                &id,
                format!("test case_{i} ... ok\n{}", "line of output\n".repeat(20)),
            )]),
        };
        app.update(Msg::Agent(AgentEvent::MessageAppended { message: m }));
    }
    app
}

fn bench(c: &mut Criterion) {
    let mut app = big_app();
    // Middle of the list, one row expanded, to include wrapping.
    app.update(Msg::Key(crossterm::event::KeyEvent::new(
        crossterm::event::KeyCode::Esc,
        crossterm::event::KeyModifiers::NONE,
    )));
    // Home, then down to the middle, as a reader would (App's fields are its own).
    let press = |app: &mut App, code| {
        app.update(Msg::Key(crossterm::event::KeyEvent::new(
            code,
            crossterm::event::KeyModifiers::NONE,
        )))
    };
    press(&mut app, crossterm::event::KeyCode::Home);
    for _ in 0..MESSAGES / 2 {
        press(&mut app, crossterm::event::KeyCode::Down);
    }
    app.update(Msg::Key(crossterm::event::KeyEvent::new(
        crossterm::event::KeyCode::Enter,
        crossterm::event::KeyModifiers::NONE,
    )));
    let mut terminal = match Terminal::new(TestBackend::new(120, 40)) {
        Ok(t) => t,
        Err(e) => panic!("test backend: {e}"),
    };
    let area = ratatui::layout::Rect::new(0, 0, 120, 40);
    let main = app.areas().map(|a| a.main).unwrap_or(area);
    c.bench_function("conversation_pane_100k_120x40", |b| {
        b.iter(|| {
            let _ = terminal.draw(|f| ctxlab::tui::app::conversation::draw::render(&app, f, main));
        })
    });
    c.bench_function("full_screen_100k_120x40", |b| {
        b.iter(|| {
            let _ = terminal.draw(|f| ctxlab::tui::render(&app, f));
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
