//! A summary request that does not fit the model's window (issue 25, point 1): against a
//! model with a small token window and token-dense text (fewer chars a token than the
//! summarizer's estimate), the next attempt is sized from the server's count and, below a
//! floor, the history is reduced without a model. Whatever the refusals, the session goes
//! on: the request after them is answered.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use ctxlab::agent::{AgentEvent, AgentSetup, UserCommand, spawn};
use ctxlab::compact::{Change, PipelineConfig, Stage};
use ctxlab::message::block;
use ctxlab::provider::{Model, ModelRequest, ModelResponse, ProviderError, StreamEvent, Usage};
use ctxlab::tools::Workspace;
use proptest::prelude::*;
use tokio::sync::mpsc::UnboundedSender;

use crate::common::agent::{HistoryMirror, SUMMARY_PREFIX, stop_reason, until_done};

/// A refusal the test forces on a call whatever its size (a server with more overhead
/// than it says), with or without its numbers.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Forced {
    Pass,
    Refuse,
    RefuseWithoutNumbers,
}

/// A model with a window of `window` tokens that counts `tokens_per_100_chars` tokens per
/// 100 chars of system and message text, answering every turn with `answer_chars` of a
/// dense file list and every summary request with a short summary.
struct DenseModel {
    window: u64,
    tokens_per_100_chars: u64,
    answer_chars: usize,
    forced: Mutex<Vec<Forced>>,
    /// (summary?, chars, refused?) of every call.
    calls: Mutex<Vec<(bool, usize, bool)>>,
}

impl DenseModel {
    fn new(
        window: u64,
        tokens_per_100_chars: u64,
        answer_chars: usize,
        forced: Vec<Forced>,
    ) -> Self {
        DenseModel {
            window,
            tokens_per_100_chars,
            answer_chars,
            forced: Mutex::new(forced.into_iter().rev().collect()),
            calls: Mutex::new(Vec::new()),
        }
    }

    fn answer(&self) -> String {
        let mut s = String::new();
        let mut i = 0;
        while s.len() < self.answer_chars {
            s.push_str(&format!("src/f{i}.rs\n"));
            i += 1;
        }
        s.truncate(self.answer_chars);
        s
    }
}

fn text_chars(req: &ModelRequest) -> usize {
    req.system.chars().count()
        + req
            .messages
            .iter()
            .map(|m| m.joined_text().chars().count())
            .sum::<usize>()
}

#[async_trait]
impl Model for DenseModel {
    fn describe(&self) -> String {
        "dense test model".into()
    }

    async fn stream(
        &self,
        req: &ModelRequest,
        _events: &UnboundedSender<StreamEvent>,
    ) -> Result<ModelResponse, ProviderError> {
        let chars = text_chars(req);
        let tokens = chars as u64 * self.tokens_per_100_chars / 100;
        let summary = req.system.starts_with(SUMMARY_PREFIX);
        let forced = self.forced.lock().unwrap().pop().unwrap_or(Forced::Pass);
        let refused = tokens > self.window || forced != Forced::Pass;
        self.calls.lock().unwrap().push((summary, chars, refused));
        if refused {
            let numbers = forced != Forced::RefuseWithoutNumbers;
            return Err(ProviderError::ContextTooLong {
                message: format!(
                    "request ({tokens} tokens) exceeds the available context size ({} tokens)",
                    self.window
                ),
                prompt_tokens: numbers.then_some(tokens.max(self.window + 1)),
                window_tokens: numbers.then_some(self.window),
                window_chars: None,
            });
        }
        let text = if summary {
            "Goal: list files. Facts: many files under src.".to_string()
        } else {
            self.answer()
        };
        Ok(ModelResponse {
            content: vec![block::text(text)],
            stop_reason: Some("end_turn".into()),
            usage: Usage::default(),
        })
    }
}

struct Run {
    commands: UnboundedSender<UserCommand>,
    events: tokio::sync::mpsc::UnboundedReceiver<AgentEvent>,
    mirror: HistoryMirror,
    _ws: tempfile::TempDir,
}

fn start(model: Arc<DenseModel>, context_limit: usize) -> Run {
    let ws = tempfile::tempdir().unwrap();
    let config = PipelineConfig {
        context_limit,
        ..PipelineConfig::default()
    };
    let mut setup = AgentSetup::new(model, Workspace::new(ws.path()).unwrap(), config);
    setup.clock = || 1_700_000_000;
    setup.tools = Vec::new();
    let (commands, events, _handle) = spawn(setup);
    Run {
        commands,
        events,
        mirror: HistoryMirror::default(),
        _ws: ws,
    }
}

impl Run {
    async fn turn(&mut self, text: &str) -> Vec<AgentEvent> {
        self.commands
            .send(UserCommand::Submit(text.into()))
            .unwrap();
        let evs = until_done(&mut self.events, Duration::from_secs(20)).await;
        self.mirror.apply_all(&evs);
        evs
    }

    async fn compact(&mut self) -> Vec<AgentEvent> {
        self.commands
            .send(UserCommand::Compact { focus: None })
            .unwrap();
        let evs = until_done(&mut self.events, Duration::from_secs(20)).await;
        self.mirror.apply_all(&evs);
        evs
    }
}

fn summary_reports(evs: &[AgentEvent]) -> Vec<&ctxlab::compact::StageReport> {
    evs.iter()
        .filter_map(|e| match e {
            AgentEvent::StageRan { report, .. }
                if report.ran
                    && matches!(report.stage, Stage::CompactHistory | Stage::ReactiveCompact) =>
            {
                Some(report)
            }
            _ => None,
        })
        .collect()
}

/// The session: a 2,048-token window, about 1.5 chars a token, a first answer of
/// 3,282 chars and `context_limit=3000`. The summary request sized at 3 chars a token is
/// refused; the next attempt is sized from the server's count and answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_summary_is_resized_from_the_servers_count_and_the_session_goes_on() {
    let model = Arc::new(DenseModel::new(2_048, 66, 3_282, Vec::new()));
    let mut run = start(Arc::clone(&model), 3_000);
    assert_eq!(
        stop_reason(&run.turn("list the files").await),
        Some("end_turn")
    );
    let evs = run.turn("hello").await;
    assert_eq!(stop_reason(&evs), Some("end_turn"), "{evs:#?}");
    let calls = model.calls.lock().unwrap().clone();
    let summaries: Vec<_> = calls.iter().filter(|c| c.0).collect();
    assert!(summaries.len() >= 2, "{calls:?}");
    assert!(
        summaries[0].2,
        "the first summary attempt is refused: {calls:?}"
    );
    assert!(!summaries.last().unwrap().2, "{calls:?}");
    // Each attempt smaller than the one before.
    assert!(summaries.windows(2).all(|w| w[1].1 < w[0].1), "{calls:?}");
    let reports = summary_reports(&evs);
    assert_eq!(reports.len(), 1);
    assert!(
        reports[0]
            .reason
            .contains("summary request refused: the server counted"),
        "{}",
        reports[0].reason
    );
    assert!(
        run.mirror.messages[0]
            .joined_text()
            .starts_with("[Compacted]")
    );
    // The next request is answered too, and `/compact` works the same way.
    assert_eq!(stop_reason(&run.turn("what next").await), Some("end_turn"));
    let evs = run.compact().await;
    assert_eq!(stop_reason(&evs), Some("compacted"), "{evs:#?}");
}

/// Every summary attempt refused: below the floor the history before a short tail goes
/// to the transcript with a marker, no model needed, and the events say so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn below_the_floor_the_history_is_reduced_without_a_model() {
    let forced = vec![Forced::RefuseWithoutNumbers; 12];
    let model = Arc::new(DenseModel::new(2_048, 66, 3_282, Vec::new()));
    let mut run = start(Arc::clone(&model), 3_000);
    assert_eq!(
        stop_reason(&run.turn("list the files").await),
        Some("end_turn")
    );
    *model.forced.lock().unwrap() = forced;
    let evs = run.turn("hello").await;
    let reports = summary_reports(&evs);
    assert!(!reports.is_empty(), "{evs:#?}");
    let reduced = reports
        .iter()
        .find(|r| r.reason.contains("reduced without a model"))
        .unwrap_or_else(|| panic!("{reports:#?}"));
    assert!(matches!(
        reduced.changes[0],
        Change::Summarized {
            summary_chars: 0,
            ..
        }
    ));
    let transcripts = std::fs::read_dir(run._ws.path().join(".transcripts"))
        .unwrap()
        .count();
    // One transcript per compaction (summarized or reduced), not one per refused attempt.
    let refused_summaries = model
        .calls
        .lock()
        .unwrap()
        .iter()
        .filter(|c| c.0 && c.2)
        .count();
    assert!(
        transcripts <= reports.len(),
        "{transcripts} transcripts, {reports:#?}"
    );
    assert!(
        refused_summaries > transcripts,
        "{refused_summaries} refused, {transcripts} transcripts"
    );
    // Once the server stops refusing, the next request is answered.
    model.forced.lock().unwrap().clear();
    let done = run.turn("hi").await;
    assert_eq!(stop_reason(&done), Some("end_turn"), "{done:#?}");
}

fn forced() -> impl Strategy<Value = Forced> {
    prop_oneof![
        2 => Just(Forced::Pass),
        2 => Just(Forced::Refuse),
        1 => Just(Forced::RefuseWithoutNumbers),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::guarded_props::cases().min(48), ..ProptestConfig::default() })]

    /// After any sequence of refusals (forced on whichever calls come, summaries or
    /// turns, with or without numbers, at any token density), the next request is
    /// answered.
    #[test]
    fn after_any_sequence_of_refusals_the_next_request_is_answered(
        refusals in prop::collection::vec(forced(), 0..14),
        tokens_per_100_chars in 25u64..90,
        answer_share in 10u64..60,
    ) {
        let window = 2_048u64;
        let answer_chars = (window * answer_share / 100 * 100 / tokens_per_100_chars) as usize;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let model = Arc::new(DenseModel::new(window, tokens_per_100_chars, answer_chars, refusals));
            let mut run = start(Arc::clone(&model), 3_000);
            for text in ["list the files", "hello", "what next"] {
                run.turn(text).await;
            }
            // The forced refusals are used up (or were never reached): the next request
            // is answered.
            model.forced.lock().unwrap().clear();
            let done = run.turn("hi").await;
            prop_assert_eq!(stop_reason(&done), Some("end_turn"), "{:#?}", done);
            let last = run.mirror.messages.last().unwrap();
            prop_assert_eq!(last.role(), "assistant");
            Ok(())
        })?;
    }
}
