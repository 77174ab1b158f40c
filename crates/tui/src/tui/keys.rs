//! The key map: which key means what outside the input box, and the help table drawn by
//! the `?` overlay (one source, so help can never disagree with behaviour). It turns keys
//! into `Action`s; it does not decide what an action does in a given pane (`App` does).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// What a key asks for, outside the input box.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Quit,
    Help,
    NextPane,
    PrevPane,
    /// 1-6.
    FocusPane(u8),
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
    Enter,
    Back,
    ToggleView,
    ToggleUnchanged,
    /// Step mode: past the pause (Space).
    Step,
    /// Step mode: run to the next stage that changes something (`s`).
    RunToStage,
    /// Step mode: run to the next model call (`c`).
    RunToCall,
    /// Step mode: back one model call (`p`): continue from the last call made, paused
    /// before its stages.
    StepBack,
    /// The legend of panes, stages and letters (`l`).
    Legend,
    JumpToMarker,
    Replay,
    /// Text search in the viewer (`/`); outside it, `/` starts a slash command.
    Search,
    /// Search the conversation, full session and events (`f`).
    Find,
    SearchNext,
    SearchPrev,
    OpenFull,
    Refresh,
    /// Start typing in the input box (`i`, or `:`).
    Type,
    /// Open or close the model-call timeline (`t`).
    Timeline,
    /// The diff of the stage that removed or changed the selected message (`d`).
    ShowDiff,
    /// The compare view: this session under several strategies (`C`).
    Compare,
    /// The sessions browser: recorded Claude Code and Codex sessions (`b`).
    Sessions,
    /// Where the context goes: the timeline's calls by category (`w`).
    Context,
    /// What the selected compaction forgot (`F`).
    Forgot,
    /// Fork the opened session before the selected compaction (`B`).
    Fork,
    /// `e`: what the gauge's numbers (or, in the context view, the bars') are.
    Explain,
    /// The next compaction of the opened session (`]`).
    NextCompaction,
    /// The previous compaction of the opened session (`[`).
    PrevCompaction,
}

/// Ctrl-C: cancel the turn; a second one within a second quits. Checked before any map.
pub fn is_ctrl_c(key: &KeyEvent) -> bool {
    key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c')
}

/// Keys outside the input box.
pub fn action(key: &KeyEvent) -> Option<Action> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    Some(match key.code {
        KeyCode::Char('q') if !ctrl => Action::Quit,
        KeyCode::Char('?') => Action::Help,
        KeyCode::Tab => Action::NextPane,
        KeyCode::BackTab => Action::PrevPane,
        KeyCode::Char(c @ '1'..='6') => Action::FocusPane(c as u8 - b'0'),
        KeyCode::Char('k') | KeyCode::Up => Action::Up,
        KeyCode::Char('j') | KeyCode::Down => Action::Down,
        KeyCode::Char('u') if ctrl => Action::PageUp,
        KeyCode::Char('d') if ctrl => Action::PageDown,
        KeyCode::PageUp => Action::PageUp,
        KeyCode::PageDown => Action::PageDown,
        KeyCode::Char('g') | KeyCode::Home => Action::Top,
        KeyCode::Char('G') | KeyCode::End => Action::Bottom,
        KeyCode::Enter => Action::Enter,
        KeyCode::Esc | KeyCode::Backspace => Action::Back,
        KeyCode::Char('v') => Action::ToggleView,
        KeyCode::Char('u') => Action::ToggleUnchanged,
        KeyCode::Char(' ') => Action::Step,
        KeyCode::Char('s') if !ctrl => Action::RunToStage,
        KeyCode::Char('c') if !ctrl => Action::RunToCall,
        KeyCode::Char('p') => Action::StepBack,
        KeyCode::Char('l') => Action::Legend,
        KeyCode::Char('m') => Action::JumpToMarker,
        KeyCode::Char('r') => Action::Replay,
        KeyCode::Char('/') => Action::Search,
        KeyCode::Char('f') if !ctrl => Action::Find,
        KeyCode::Char('n') => Action::SearchNext,
        KeyCode::Char('N') => Action::SearchPrev,
        KeyCode::Char('o') => Action::OpenFull,
        KeyCode::Char('R') => Action::Refresh,
        KeyCode::Char('i') | KeyCode::Char(':') => Action::Type,
        KeyCode::Char('t') => Action::Timeline,
        KeyCode::Char('d') if !ctrl => Action::ShowDiff,
        KeyCode::Char('C') => Action::Compare,
        KeyCode::Char('b') => Action::Sessions,
        KeyCode::Char('w') => Action::Context,
        KeyCode::Char('F') => Action::Forgot,
        KeyCode::Char('B') => Action::Fork,
        KeyCode::Char('e') => Action::Explain,
        KeyCode::Char(']') => Action::NextCompaction,
        KeyCode::Char('[') => Action::PrevCompaction,
        _ => return None,
    })
}

/// The help sections a view's `?` opens at (`help_section_row`).
pub mod section {
    pub const EVERYWHERE: &str = "Everywhere";
    pub const CONVERSATION: &str = "Conversation (1)";
    pub const EVENTS: &str = "Events (2)";
    pub const FILES: &str = "Outputs (3) and Transcripts (4)";
    pub const SESSIONS: &str = "Sessions browser (b) and an opened session";
    pub const TIMELINE: &str = "Timeline (6 or t)";
    pub const CONTEXT: &str = "Context view (w in the timeline)";
    pub const COMPARE: &str = "Compare (C or /compare s06,guarded)";
    pub const FORGOT: &str = "Forgot view (F on a stage row)";
    pub const REQUESTS: &str = "Requests view (R in an opened proxy capture)";
    pub const DIFF: &str = "Diff";
    pub const VIEWER: &str = "Viewer";
    pub const INPUT: &str = "Input (5)";
    pub const CONFIG: &str = "Config panel";
}

/// The help overlay's table: (keys, what they do), grouped by a header row with no keys.
pub const HELP: &[(&str, &str)] = &[
    ("", section::EVERYWHERE),
    ("Tab / Shift-Tab", "next / previous pane"),
    (
        "1 2 3 4 5 6",
        "conversation, events, outputs, transcripts, input, timeline",
    ),
    (
        "?",
        "this help, at the section of the view you are in (Esc closes)",
    ),
    ("t", "the timeline: every model call, its request and diff"),
    ("C", "compare strategies on this session"),
    ("l", "the legend: panes, stages, letters"),
    (
        "e",
        "explain the numbers (the gauge's; with the timeline open, its plot and list): what each is, where it comes from, its unit, ~ estimate or not",
    ),
    ("Ctrl-C", "cancel the running turn; twice within 1 s: quit"),
    ("q", "quit (outside the input box)"),
    ("mouse wheel", "scroll the pane under the cursor"),
    ("", "Step mode (/step, or start with --step)"),
    ("Space", "one step: past the pause (never types)"),
    (
        "s",
        "on to the next stage that changes something in a way not shown yet",
    ),
    ("c", "on to the next model call (main or summary)"),
    (
        "p",
        "back one model call: continue from the last call, paused before its stages",
    ),
    ("highlight", "rows the next stage will change"),
    ("", "Lists"),
    ("j k / Up Down", "move"),
    ("PgUp PgDn, Ctrl-U Ctrl-D", "page"),
    ("g G / Home End", "first / last"),
    ("Enter", "expand row / open diff / open file"),
    ("Esc", "close overlay or transcript, stop a load"),
    ("i or :", "type in the input box"),
    (
        "f  n  N",
        "search conversation, full session, events; next / previous hit",
    ),
    ("/", "start a slash command (conversation pane)"),
    ("", section::CONVERSATION),
    ("v", "toggle: what the model sees / full session"),
    ("o", "open the selected message in the viewer"),
    (
        "d",
        "full session: the diff of the stage that removed or changed the row",
    ),
    (
        "row",
        "tag (B S M C R = stage that touched it), #, role, kind, chars, ~tok",
    ),
    (
        "~tok",
        "token estimate (tiktoken cl100k), not the API's count",
    ),
    (
        "w / click gauge",
        "where the context goes, at the latest call",
    ),
    ("", section::EVENTS),
    ("u", "show / hide stages that changed nothing"),
    ("Enter", "before/after diff of the stage"),
    ("F", "what the selected compaction forgot"),
    ("", section::FILES),
    ("m", "jump to the conversation row pointing at the file"),
    ("r", "replay the transcript through the pipeline"),
    ("R", "refresh the file lists"),
    (
        "b",
        "sessions browser: Claude Code and Codex sessions (b again: transcripts)",
    ),
    ("", section::SESSIONS),
    (
        "Enter",
        "open the session (its first lines at once, the rest as it loads)",
    ),
    (
        "Enter Space, ← →",
        "on a project: fold / unfold its sessions (▸ folded, ▾ open)",
    ),
    (
        "/  n  N",
        "filter by project, first request, file (Esc clears); next / previous session",
    ),
    ("/  n  N", "opened: search the session; next / previous hit"),
    ("]  [", "opened: the next / previous compaction"),
    (
        "Enter / o",
        "opened: a message's text, or a compaction's summary and kept",
    ),
    (
        "r",
        "opened: replay it through the pipeline, beside what the agent did",
    ),
    (
        "F",
        "opened: what the selected compaction forgot (as `ctxlab forgot`)",
    ),
    (
        "B",
        "opened: fork it before the selected compaction (as `ctxlab fork`)",
    ),
    (
        "w",
        "opened: where the context goes, its recorded calls by category",
    ),
    (
        "R",
        "opened capture: its exact requests, the change between each two",
    ),
    (
        "Esc",
        "close the session (its scratch store is removed), then the browser",
    ),
    (
        "w",
        "browser: follow the session live, as the agent writes it (the live view)",
    ),
    ("", "Live view (ctxlab watch, or w in the sessions browser)"),
    (
        "j k, PgUp PgDn, g",
        "move (the view stops following the newest row)",
    ),
    ("G / End", "follow the newest row again"),
    (
        "Enter / o",
        "a row in full: a compaction's summary and what it kept",
    ),
    (
        "Esc",
        "close the live view (following stops); in `ctxlab watch`, quit",
    ),
    ("", section::TIMELINE),
    (
        "j k",
        "view call N: the conversation shows the selected call's request",
    ),
    (
        "x, then y",
        "continue from call N with the settings in force now (earlier branch kept)",
    ),
    ("B", "after a continue: the earlier branch / the live one"),
    (
        "Enter",
        "diff of the call's request against the previous call's",
    ),
    ("o", "the call's exact request as JSON"),
    (
        "w",
        "where the context goes: the call by category, every call stacked (~ estimate)",
    ),
    ("Esc / t", "back to the live conversation"),
    (
        "plot",
        "░ history before the pipeline, █ request sent, ┄ the limit",
    ),
    ("", section::CONTEXT),
    ("h l / j k", "select a model call"),
    (
        "e",
        "explain the bars' numbers at the selected call (source, unit, estimate)",
    ),
    (
        "bars",
        "the call's request by category; every call stacked (~ estimate)",
    ),
    ("Esc / w / q", "close the context view"),
    ("", section::REQUESTS),
    ("j k / Up Down", "select a request"),
    ("J K / PgDn PgUp", "scroll the selected request's detail"),
    (
        "rows",
        "n, time, model, msgs, tokens (~ estimate), usage, change label",
    ),
    (
        "detail",
        "labelled changes, exact breakdown, each strategy's request beside",
    ),
    ("Esc / R / q", "close the requests view"),
    ("", section::COMPARE),
    (
        "C",
        "this session (or the open transcript) under the current strategy and guarded",
    ),
    ("h l / Left Right", "select a model call, in every row"),
    (
        "j k / Up Down",
        "select a piece: what each strategy kept of it",
    ),
    ("g G", "first / last call"),
    ("Tab / Shift-Tab", "select a strategy's row"),
    (
        "F",
        "what the selected strategy's stages forgot at the call",
    ),
    (
        "n",
        "next result a strategy replaced before the model saw it",
    ),
    (
        "rows",
        "size sent per call (str() chars), letter = stage fired; ! unseen replaced",
    ),
    (
        "bars",
        "█ in_context ▓ referenced ▒ on_disk ░ lost (chars, at the call)",
    ),
    ("Esc / q", "close the compare view"),
    ("", section::FORGOT),
    (
        "F",
        "what the selected compaction forgot: kept, dropped, facts the summary lost",
    ),
    (
        "B",
        "of an opened session's compaction: fork it before that compaction (as `ctxlab fork`)",
    ),
    ("/  n  N", "search, next match, previous match"),
    ("Esc", "back to the events pane"),
    ("", section::DIFF),
    ("n  N", "next / previous change"),
    (
        "Enter",
        "a change's text before and after; unfold a folded run",
    ),
    ("", section::VIEWER),
    ("/  n  N", "search, next match, previous match"),
    ("w, h l", "wrap long lines or not; scroll sideways"),
    ("", section::INPUT),
    ("Enter", "send"),
    ("Shift-Enter / Alt-Enter", "new line"),
    ("Up / Down", "earlier inputs (on the first / last line)"),
    ("/compact [focus]", "compact the history now"),
    ("/config", "edit the pipeline thresholds"),
    ("/step", "toggle step mode"),
    (
        "/pace MS",
        "scripted model: ms between streamed pieces, live",
    ),
    (
        "/restart",
        "the scenario again from the start, fresh workspace",
    ),
    ("/export [FILE]", "write the timeline as one HTML page"),
    (
        "/compare [A,B,..|all]",
        "compare strategies on this session (default: current vs guarded)",
    ),
    ("Esc", "leave the input box"),
    ("", section::CONFIG),
    ("j k, Enter, Enter", "select, edit, apply (Esc cancels)"),
    (
        "h l",
        "on the strategy row: choose a strategy at once; Enter applies, Esc cancels",
    ),
];

/// One screen row of the help.
pub enum HelpRow {
    Heading(&'static str),
    /// The keys' column (blank on a description's later rows) and a row of the description.
    Key(String, String),
}

/// The help's rows at `width` columns: a description too long for the room beside the keys
/// wraps between words onto rows of its own. Scrolling counts these rows.
pub fn help_rows(width: usize) -> Vec<HelpRow> {
    let key_w = HELP
        .iter()
        .map(|(k, _)| crate::util::display_width(k))
        .max()
        .unwrap_or(0)
        + 4;
    let text_w = width.saturating_sub(key_w).max(10);
    let mut out = Vec::new();
    for (k, what) in HELP {
        if k.is_empty() {
            out.push(HelpRow::Heading(what));
            continue;
        }
        for (i, piece) in crate::tui::pause::wrap_words(what, text_w)
            .into_iter()
            .enumerate()
        {
            let keys = if i == 0 {
                crate::util::fit_width(&format!("  {k}"), key_w)
            } else {
                " ".repeat(key_w)
            };
            out.push(HelpRow::Key(keys, piece));
        }
    }
    out
}

/// The row of the help (at `width` columns) where `heading`'s section starts; 0 when no
/// section has that heading.
pub fn help_section_row(heading: &str, width: usize) -> usize {
    help_rows(width)
        .iter()
        .position(|r| matches!(r, HelpRow::Heading(h) if *h == heading))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_focus_panes() {
        let k = KeyEvent::new(KeyCode::Char('3'), KeyModifiers::NONE);
        assert_eq!(action(&k), Some(Action::FocusPane(3)));
        let c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert!(is_ctrl_c(&c));
    }
}
