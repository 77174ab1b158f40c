//! Owns the terminal's modes: raw mode, the alternate screen, mouse capture, bracketed
//! paste and (where supported) disambiguated keys so Shift-Enter is seen. `init` turns
//! them on, `restore` turns them off (idempotent), `TerminalGuard` restores on every exit
//! path, and the panic hook restores before the panic message prints and then exits the
//! process, so a panic in any task (a spawned one too) never leaves a raw terminal behind.
//! The one exception is a panic inside the supervised agent task: the agent's supervisor
//! reports it as an error event, and the workbench stays up to show it.
//! It draws nothing and knows nothing of `App`.

use std::io::{self, Stdout, Write, stdout};
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
    KeyboardEnhancementFlags, PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::execute;
use crossterm::terminal::{
    Clear, ClearType, EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode,
    enable_raw_mode, supports_keyboard_enhancement,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

pub type Tui = Terminal<CrosstermBackend<Stdout>>;

/// The TUI owns the terminal right now.
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Keyboard enhancement flags were pushed and must be popped.
static ENHANCED: AtomicBool = AtomicBool::new(false);
static HOOK_INSTALLED: AtomicBool = AtomicBool::new(false);

/// Exit status after a panic while the TUI owned the terminal (Rust's panic status).
const PANIC_EXIT_CODE: i32 = 101;

/// Restores the terminal when dropped (quit, error, or unwinding out of the loop).
pub struct TerminalGuard;

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        let _ = restore();
    }
}

/// Rings the terminal's bell (`Effect::Bell`), between two frames; only while the TUI owns
/// the terminal, so a test loop drawing on a test backend rings nothing.
pub fn bell() {
    if ACTIVE.load(Ordering::SeqCst) {
        let mut out = stdout();
        // A bell that cannot be written is not worth stopping the workbench for.
        let _ = out.write_all(b"\x07").and_then(|()| out.flush());
    }
}

/// Takes over the terminal. The guard restores it.
pub fn init() -> io::Result<(Tui, TerminalGuard)> {
    install_panic_hook();
    enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    let guard = TerminalGuard;
    let mut out = stdout();
    // Cleared with a plain escape: `Terminal::clear` would ask the terminal for the cursor
    // position, which some terminals (and pty test harnesses) never answer.
    execute!(
        out,
        EnterAlternateScreen,
        Clear(ClearType::All),
        EnableMouseCapture,
        EnableBracketedPaste
    )?;
    if supports_keyboard_enhancement().unwrap_or(false) {
        execute!(
            out,
            PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
        )?;
        ENHANCED.store(true, Ordering::SeqCst);
    }
    let mut terminal = Terminal::new(CrosstermBackend::new(out))?;
    terminal.hide_cursor()?;
    Ok((terminal, guard))
}

/// Gives the terminal back. Safe to call more than once and when never initialized.
pub fn restore() -> io::Result<()> {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return Ok(());
    }
    let mut out = stdout();
    if ENHANCED.swap(false, Ordering::SeqCst) {
        let _ = execute!(out, PopKeyboardEnhancementFlags);
    }
    // Every step is attempted even if one fails: a half-restored terminal is the worst case.
    let a = execute!(
        out,
        DisableBracketedPaste,
        DisableMouseCapture,
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
    let b = disable_raw_mode();
    let _ = out.flush();
    a.and(b)
}

/// Chains a hook in front of the current one: restore, print the panic, exit. Outside the
/// TUI's lifetime the previous hook runs alone.
pub fn install_panic_hook() {
    if HOOK_INSTALLED.swap(true, Ordering::SeqCst) {
        return;
    }
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let was_active = ACTIVE.load(Ordering::SeqCst);
        if was_active && crate::agent::in_agent_task() {
            // The agent's supervisor turns this panic into an error event the workbench
            // shows; the session stays on screen, so neither restore nor print over it.
            tracing::error!("panic in the agent task: {info}");
            return;
        }
        let _ = restore();
        tracing::error!("panic: {info}");
        previous(info);
        if was_active {
            // A panic in a spawned task would otherwise leave the UI running without the
            // task it depends on; the terminal is already restored, so leave now.
            std::process::exit(PANIC_EXIT_CODE);
        }
    }));
}

/// Raw mode while a command waits before any screen is drawn (`ctxlab watch` waiting for
/// the project's first session), so that q, Esc and Ctrl-C are read as keys; line mode
/// comes back when it is dropped.
pub struct QuitKeys;

impl QuitKeys {
    pub fn start() -> io::Result<QuitKeys> {
        enable_raw_mode()?;
        Ok(QuitKeys)
    }

    /// Whether q, Esc or Ctrl-C was pressed within `within` (other keys are passed over).
    pub fn pressed(&self, within: std::time::Duration) -> io::Result<bool> {
        use crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
        if !event::poll(within)? {
            return Ok(false);
        }
        Ok(match event::read()? {
            Event::Key(k) if k.kind == KeyEventKind::Press => {
                matches!(k.code, KeyCode::Char('q') | KeyCode::Esc)
                    || (k.code == KeyCode::Char('c') && k.modifiers.contains(KeyModifiers::CONTROL))
            }
            _ => false,
        })
    }
}

impl Drop for QuitKeys {
    fn drop(&mut self) {
        let _ = disable_raw_mode();
    }
}
