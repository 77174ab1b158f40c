//! Properties of the `guarded` strategy over generated agent sessions: requests, tool
//! rounds (read_file and bash results of every size, list contents, null content), text
//! answers, the compact tool and prompt-too-long errors, played through the strategy the
//! way the agent plays them. After every stage:
//! - no tool pair is broken (every result answers a use in the message before it);
//! - no result the model has not seen is replaced (budget may move one to disk behind a
//!   marker that names its full copy; only reactive_compact's last resort, a tail of 0,
//!   may summarize it);
//! - nothing is lost: every text that entered the history is in the request, or in a file
//!   the request names, directly or through the files those name;
//! - the archive only grows.
//!
//! `guarded_reach` replays the same kind of sessions and judges them by the reachability
//! accounting of `ctxlab replay --compare`.
//!
//! Cases: 24 by default, `PROPTEST_CASES` when set.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use ctxlab::compact::{
    Change, CompactTrigger, PendingCompaction, Pipeline, PipelineConfig, Stage, StageReport,
    Strategy as CompactStrategy,
};
use ctxlab::message::{Message, ResultContent, block, tool_pairing_error};
use ctxlab::store::{ARCHIVE_PATH, Store};
use proptest::prelude::*;
use serde_json::{Value, json};

pub(crate) fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(24)
}

/// Small numbers so every stage fires within a few calls.
pub(crate) fn config() -> PipelineConfig {
    PipelineConfig {
        budget_chars: 2_000,
        persist_threshold: 500,
        preview_chars: 60,
        snip_max_messages: 10,
        snip_keep_head: 3,
        micro_keep_recent: 2,
        micro_min_chars: 120,
        context_limit: 3_000,
        reactive_keep_tail: 5,
        summary_input_chars: 1_000,
        summary_max_tokens: 500,
        ..PipelineConfig::for_strategy(CompactStrategy::Guarded)
    }
}

#[derive(Debug, Clone)]
pub(crate) enum Content {
    Text(usize),
    List(usize),
    Null,
}

#[derive(Debug, Clone)]
pub(crate) enum Event {
    Request,
    Tools(Vec<(bool, Content)>),
    Answer,
    CompactTool,
    /// The next model call fails this many times with "prompt is too long".
    Overflow(usize),
}

pub(crate) fn content() -> impl Strategy<Value = Content> {
    prop_oneof![
        10 => prop_oneof![5 => 0usize..80, 4 => 80usize..600, 1 => 600usize..2_500].prop_map(Content::Text),
        1 => (1usize..4).prop_map(Content::List),
        1 => Just(Content::Null),
    ]
}

pub(crate) fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        2 => Just(Event::Request),
        8 => prop::collection::vec((any::<bool>(), content()), 1..4).prop_map(Event::Tools),
        2 => Just(Event::Answer),
        1 => Just(Event::CompactTool),
        1 => (1usize..4).prop_map(Event::Overflow),
    ]
}

/// A text of `n` chars that no other generated text contains: a unique prefix, then a
/// filler with a quote, a backslash, a newline and non-ASCII chars (escaped in the
/// transcripts, read back by parsing them).
pub(crate) fn unique_text(tag: &str, n: usize) -> String {
    let filler = "abc \"q\" \\ é解\nxyz ";
    let mut s = format!("<{tag}>");
    while s.chars().count() < n {
        s.push_str(filler);
    }
    s
}

/// The session being played and everything the checks need.
struct Session {
    pipeline: Pipeline,
    store: Store,
    root: std::path::PathBuf,
    history: Vec<Message>,
    request: String,
    /// Every text that entered the history.
    entered: BTreeSet<String>,
    next_id: usize,
    calls: usize,
    /// How often each stage changed the history.
    fired: HashMap<Stage, usize>,
}

/// All string values in a JSON value.
fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(m) => m.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

/// Paths of the store's files a text names.
fn named_paths(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for prefix in [".task_outputs/tool-results/", ".transcripts/"] {
        let mut rest = text;
        while let Some(at) = rest.find(prefix) {
            let tail = &rest[at..];
            let end = tail
                .find(|c: char| c.is_whitespace() || matches!(c, ']' | ';' | '"' | '\''))
                .unwrap_or(tail.len());
            out.push(tail[..end].to_string());
            rest = &tail[end..];
        }
    }
    out
}

impl Session {
    fn new(root: &Path) -> Session {
        Session {
            pipeline: Pipeline::new(config()),
            store: Store::new(root),
            root: root.to_path_buf(),
            history: Vec::new(),
            request: String::new(),
            entered: BTreeSet::new(),
            next_id: 0,
            calls: 0,
            fired: HashMap::new(),
        }
    }

    fn archive(&self) -> String {
        std::fs::read_to_string(self.root.join(ARCHIVE_PATH)).unwrap_or_default()
    }

    /// Every string the request holds and every string in the files it names, followed
    /// transitively.
    fn reachable(&self) -> Vec<String> {
        let mut texts = Vec::new();
        for m in &self.history {
            strings(&m.to_value(), &mut texts);
        }
        let mut seen = BTreeSet::new();
        let mut queue: Vec<String> = texts.iter().flat_map(|t| named_paths(t)).collect();
        while let Some(path) = queue.pop() {
            if !seen.insert(path.clone()) {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(self.root.join(&path)) else {
                continue;
            };
            let mut found = Vec::new();
            if path.ends_with(".jsonl") {
                for line in text.lines() {
                    if let Ok(v) = serde_json::from_str::<Value>(line) {
                        strings(&v, &mut found);
                    }
                }
            } else {
                found.push(text);
            }
            for f in &found {
                queue.extend(named_paths(f));
            }
            texts.extend(found);
        }
        texts
    }

    /// The unseen results: id -> content, for the results after the last assistant message.
    fn unseen(&self) -> HashMap<String, Value> {
        let from = self
            .history
            .iter()
            .rposition(|m| m.role() == "assistant")
            .map_or(0, |i| i + 1);
        self.history[from..]
            .iter()
            .flat_map(|m| m.tool_results())
            .filter_map(|b| {
                let id = b["tool_use_id"].as_str()?.to_string();
                Some((id, b.get("content").cloned().unwrap_or(Value::Null)))
            })
            .collect()
    }

    /// The checks after one stage; `before_unseen` and `archive_before` from before it.
    fn check(
        &self,
        report: &StageReport,
        before_unseen: &HashMap<String, Value>,
        archive_before: &str,
    ) -> Result<(), TestCaseError> {
        let stage = report.stage.name();
        prop_assert_eq!(tool_pairing_error(&self.history), None, "after {}", stage);
        let archive = self.archive();
        prop_assert!(
            archive.starts_with(archive_before),
            "the archive shrank in {}",
            stage
        );
        let last_resort = report.changes.iter().any(|c| {
            matches!(
                c,
                Change::Summarized {
                    kept_tail: 0,
                    trigger: CompactTrigger::PromptTooLong,
                    ..
                }
            )
        });
        let now: HashMap<String, Value> = self
            .history
            .iter()
            .flat_map(|m| m.tool_results())
            .filter_map(|b| {
                let id = b["tool_use_id"].as_str()?.to_string();
                Some((id, b.get("content").cloned().unwrap_or(Value::Null)))
            })
            .collect();
        for (id, old) in before_unseen {
            match now.get(id) {
                Some(new) if new == old => {}
                Some(new) => {
                    // Only the budget may move an unseen result to disk, behind a marker
                    // naming a file that holds it whole.
                    prop_assert_eq!(
                        report.stage,
                        Stage::ToolResultBudget,
                        "{} replaced unseen {}",
                        stage,
                        id
                    );
                    let marker = new.as_str().unwrap_or("");
                    let path = named_paths(marker);
                    prop_assert_eq!(path.len(), 1);
                    let full = std::fs::read_to_string(self.root.join(&path[0])).unwrap();
                    let old_text = ResultContent::of(&json!({"content": old})).to_text();
                    prop_assert_eq!(full, old_text);
                }
                None => prop_assert!(last_resort, "{} removed unseen result {}", stage, id),
            }
        }
        let reachable = self.reachable();
        for text in &self.entered {
            prop_assert!(
                reachable.iter().any(|r| r.contains(text.as_str())),
                "after {} ({}): lost {:?}",
                stage,
                report.reason,
                text.chars().take(40).collect::<String>()
            );
        }
        Ok(())
    }

    /// Runs one stage-producing step with the checks around it.
    fn step(
        &mut self,
        run: impl FnOnce(&mut Session) -> Option<StageReport>,
    ) -> Result<Option<StageReport>, TestCaseError> {
        let unseen = self.unseen();
        let archive = self.archive();
        let report = run(self);
        if let Some(r) = &report {
            self.check(r, &unseen, &archive)?;
            if r.changed {
                *self.fired.entry(r.stage).or_default() += 1;
            }
        }
        Ok(report)
    }

    fn finish(&mut self, pending: Option<PendingCompaction>) -> Option<StageReport> {
        let pending = pending?;
        let (history, report) = pending.finish(&[format!("summary {}", self.calls)], &self.request);
        self.history = history;
        Some(report)
    }

    /// The pre-call pipeline, stage by stage, as the agent runs it; then `overflows`
    /// prompt-too-long errors answered by reactive compaction.
    fn before_call(&mut self, overflows: usize) -> Result<(), TestCaseError> {
        self.calls += 1;
        for &stage in self.pipeline.stages() {
            self.step(|s| {
                Some(
                    s.pipeline
                        .run_stage(stage, &mut s.history, &s.store)
                        .unwrap(),
                )
            })?;
        }
        if self.pipeline.over_limit(&self.history) {
            self.step(|s| {
                let p = s
                    .pipeline
                    .begin_compact(&s.history, &s.store, None, CompactTrigger::OverLimit, 7)
                    .unwrap();
                s.finish(p)
            })?;
        }
        for attempt in 0..overflows {
            let went = self.step(|s| {
                let p = s
                    .pipeline
                    .begin_reactive(&s.history, &s.store, 7, attempt, None)
                    .unwrap();
                s.finish(p)
            })?;
            if went.is_none() {
                break;
            }
        }
        Ok(())
    }

    fn id(&mut self) -> String {
        self.next_id += 1;
        format!("t{}", self.next_id)
    }

    fn push(&mut self, m: Message) {
        self.history.push(m);
    }
}

fn play(events: &[Event], root: &Path) -> Result<HashMap<Stage, usize>, TestCaseError> {
    play_under(config(), events, root)
}

/// Plays a session under any strategy with the same checks.
fn play_under(
    config: PipelineConfig,
    events: &[Event],
    root: &Path,
) -> Result<HashMap<Stage, usize>, TestCaseError> {
    let mut s = Session::new(root);
    s.pipeline = Pipeline::new(config);
    let mut overflows = 0;
    for (n, ev) in events.iter().enumerate() {
        match ev {
            Event::Request => {
                let text = unique_text(&format!("request {n}"), 40);
                s.request = text.clone();
                s.entered.insert(text.clone());
                s.push(Message::user_text(text));
            }
            Event::Overflow(k) => overflows = *k,
            Event::Answer => {
                if s.history.is_empty() {
                    continue;
                }
                s.before_call(std::mem::take(&mut overflows))?;
                let text = unique_text(&format!("answer {n}"), 30);
                s.entered.insert(text.clone());
                s.push(Message::assistant_blocks(vec![block::text(text)]));
            }
            Event::Tools(calls) => {
                if s.history.is_empty() {
                    continue;
                }
                s.before_call(std::mem::take(&mut overflows))?;
                let mut uses = Vec::new();
                let mut results = Vec::new();
                for (i, (read, c)) in calls.iter().enumerate() {
                    let id = s.id();
                    let tool = if *read { "read_file" } else { "bash" };
                    uses.push(block::tool_use(&id, tool, json!({"n": n, "i": i})));
                    let tag = format!("result {id}");
                    let content = match c {
                        Content::Text(len) => {
                            let t = unique_text(&tag, *len);
                            s.entered.insert(t.clone());
                            json!(t)
                        }
                        Content::List(items) => {
                            // Plain words: the persisted str() of the list holds them as is.
                            let parts: Vec<String> = (0..*items)
                                .map(|k| format!("{tag}part{k}{}", "w".repeat(200)))
                                .collect();
                            s.entered.extend(parts.iter().cloned());
                            Value::Array(
                                parts
                                    .iter()
                                    .map(|p| json!({"type": "text", "text": p}))
                                    .collect(),
                            )
                        }
                        Content::Null => Value::Null,
                    };
                    results.push(
                        json!({"type": "tool_result", "tool_use_id": id, "content": content}),
                    );
                }
                s.push(Message::assistant_blocks(uses));
                s.push(Message::user_blocks(results));
            }
            Event::CompactTool => {
                if s.history.is_empty() {
                    continue;
                }
                s.before_call(std::mem::take(&mut overflows))?;
                let id = s.id();
                s.push(Message::assistant_blocks(vec![block::tool_use(
                    &id,
                    "compact",
                    json!({"focus": "the parser"}),
                )]));
                s.push(Message::user_blocks(vec![block::tool_result(
                    &id,
                    CompactStrategy::Guarded.compact_tool_result(),
                )]));
                s.step(|s| {
                    let p = s
                        .pipeline
                        .begin_compact(
                            &s.history,
                            &s.store,
                            Some("the parser"),
                            CompactTrigger::Requested,
                            7,
                        )
                        .unwrap();
                    s.finish(p)
                })?;
            }
        }
    }
    Ok(s.fired)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn guarded_keeps_pairs_spares_unseen_results_and_loses_nothing(
        events in prop::collection::vec(event(), 1..60)
    ) {
        let dir = tempfile::tempdir().unwrap();
        play(&events, dir.path())?;
    }
}

/// One long session fires every guarded stage under the same checks, so the property
/// above is not vacuous.
#[test]
fn a_long_session_fires_every_guarded_stage_under_the_checks() {
    let dir = tempfile::tempdir().unwrap();
    let mut events = vec![Event::Request];
    // Small rounds first (snip, micro), then large ones (budget, compaction).
    for round in 0..14 {
        events.push(Event::Tools(if round < 7 {
            vec![(round % 2 == 0, Content::Text(130))]
        } else {
            vec![
                (round % 3 == 0, Content::Text(700)),
                (false, Content::Text(1_500)),
            ]
        }));
        if round == 6 {
            events.push(Event::CompactTool);
        }
        if round == 10 {
            events.push(Event::Overflow(3));
        }
    }
    events.push(Event::Answer);
    let fired = play(&events, dir.path()).unwrap();
    for stage in [
        Stage::ToolResultBudget,
        Stage::SnipCompact,
        Stage::MicroCompact,
        Stage::CompactHistory,
        Stage::ReactiveCompact,
    ] {
        assert!(
            fired.contains_key(&stage),
            "{} never fired: {fired:?}",
            stage.name()
        );
    }
    let archive = std::fs::read_to_string(dir.path().join(ARCHIVE_PATH)).unwrap();
    assert!(archive.lines().count() > 1);
}

/// The checks themselves catch a loss: the same session played under s08 fails the
/// "nothing lost" check, because s08's micro placeholder drops a result's text.
#[test]
fn the_loss_check_fails_on_the_lesson_s_micro() {
    let dir = tempfile::tempdir().unwrap();
    let events = [
        Event::Request,
        Event::Tools(vec![(false, Content::Text(300))]),
        Event::Tools(vec![(false, Content::Text(300))]),
        Event::Tools(vec![(false, Content::Text(300))]),
        Event::Answer,
    ];
    let s08 = PipelineConfig {
        strategy: CompactStrategy::S08,
        ..config()
    };
    let err = play_under(s08, &events, dir.path()).unwrap_err();
    assert!(err.to_string().contains("lost"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    assert!(play(&events, dir.path()).is_ok());
}
