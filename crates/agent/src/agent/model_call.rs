//! One streaming model call, and the summary request that finishes a compaction.
//!
//! The call's stream events become `AgentEvent`s as they arrive; a Cancel or Quit read
//! meanwhile drops the stream, so nothing partial is ever appended. Provider errors come
//! back typed: the loop in `turn` decides what each one means (reactive compaction, error).
//! A window the server names in an overflow error is remembered here, and every summary
//! request is sized to the known window (configured or learned) before it is sent.

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::mpsc::unbounded_channel;

use super::events::{AgentEvent, ErrorKind, NextStep};
use super::state::{Agent, Stop};
use crate::compact::summary_refit::{Refusal, next_no_model_tail};
use crate::compact::{PendingCompaction, StageReport, estimate_size};
use crate::message::{BlockKind, Message};
use crate::provider::{
    ModelRequest, ModelResponse, ProviderError, RequestKind, SentRequest, StreamEvent,
};
use crate::util::group_digits;

/// Summary attempts for one compaction before it is reduced without a model; each is
/// smaller than the one before, so the floor is usually reached first.
const MAX_SUMMARY_ATTEMPTS: usize = 8;

/// The kind of failure a front end shows for a provider error.
pub(super) fn error_kind(e: &ProviderError) -> ErrorKind {
    match e {
        ProviderError::ContextTooLong { .. } => ErrorKind::ContextTooLong,
        ProviderError::RateLimited { .. } => ErrorKind::RateLimited,
        ProviderError::Overloaded => ErrorKind::Overloaded,
        ProviderError::Server { .. } => ErrorKind::Server,
        ProviderError::Auth { .. } => ErrorKind::Auth,
        ProviderError::BadRequest { .. } => ErrorKind::BadRequest,
        ProviderError::Network { .. } => ErrorKind::Network,
        ProviderError::Timeout => ErrorKind::Timeout,
        ProviderError::StreamCut | ProviderError::InvalidStream { .. } => ErrorKind::StreamCut,
        ProviderError::Deadline { .. } => ErrorKind::Timeout,
    }
}

impl Agent {
    /// One model call, streaming deltas out as events (text only when `forward_text`: a
    /// summary is not the assistant talking); Cancel drops the stream. `body` is `request`
    /// as the model's `encode` made it: those bytes are sent.
    pub(super) async fn call_model(
        &mut self,
        request: Arc<ModelRequest>,
        body: Arc<SentRequest>,
        forward_text: bool,
    ) -> Result<Result<ModelResponse, ProviderError>, Stop> {
        let model = Arc::clone(&self.setup.model);
        let (tx, mut rx) = unbounded_channel();
        let call = async move { model.send(&request, &body, &tx).await };
        tokio::pin!(call);
        loop {
            tokio::select! {
                biased;
                Some(ev) = rx.recv() => self.forward(ev, forward_text),
                result = &mut call => {
                    while let Ok(ev) = rx.try_recv() {
                        self.forward(ev, forward_text);
                    }
                    if let Err(ProviderError::ContextTooLong {
                        window_tokens: Some(window),
                        ..
                    }) = &result
                    {
                        self.learned_window_tokens = Some(*window);
                    }
                    return Ok(result);
                }
                cmd = self.commands.recv() => {
                    if let Some(stop) = self.on_command_during_work(cmd) {
                        return Err(stop);
                    }
                }
            }
        }
    }

    fn forward(&self, ev: StreamEvent, forward_text: bool) {
        match ev {
            StreamEvent::TextDelta(text) if forward_text => {
                self.emit(AgentEvent::TextDelta { text })
            }
            StreamEvent::TextDelta(_) | StreamEvent::ToolUseStarted { .. } => {}
            StreamEvent::Usage(u) => self.emit(AgentEvent::Usage {
                input_tokens: u.input_tokens,
                output_tokens: u.output_tokens,
                cached_input_tokens: u.cached_input_tokens,
            }),
            StreamEvent::Retrying {
                attempt,
                reason,
                wait,
            } => self.emit(AgentEvent::Retrying {
                attempt,
                reason,
                wait,
            }),
        }
    }

    /// The model's context window, when known: the one the server named last, else the
    /// configured one.
    pub(super) fn window_tokens(&self) -> Option<u64> {
        self.learned_window_tokens
            .or(self.setup.context_window_tokens)
    }

    /// Ends a compaction whose summary could not be had (refused down to the floor, or no
    /// room in the window at all): the history before a short tail is replaced by a marker
    /// naming the transcript. Each such reduction in a turn keeps a shorter tail (5, 2, 0).
    pub(super) fn no_model_fallback(
        &mut self,
        pending: PendingCompaction,
        why: &str,
    ) -> Result<(), Stop> {
        let Some(keep) = next_no_model_tail(self.no_model_tail) else {
            return Err(Stop::Failed(
                ErrorKind::ContextTooLong,
                format!(
                    "{why}, and the history was already reduced without a model to the request \
                     alone; the transcript was saved to {}",
                    pending.transcript().path
                ),
            ));
        };
        self.no_model_tail = Some(keep);
        let active = self.active_request.clone();
        let config = self.pipeline.config;
        let (history, report) =
            pending.finish_without_summary(&self.history, keep, &config, &active, why);
        self.install_compacted(history, report);
        Ok(())
    }

    /// Sizes a pending summary request to the known window; returns the window used.
    fn fit_summary(&self, pending: &mut PendingCompaction) -> Result<Option<u64>, Stop> {
        let Some(window) = self.window_tokens() else {
            return Ok(None);
        };
        let tokens = usize::try_from(window).unwrap_or(usize::MAX);
        pending.fit_window(tokens).map_err(|e| {
            Stop::Failed(
                ErrorKind::ContextTooLong,
                format!(
                    "cannot summarize: {e}; the transcript was saved to {}",
                    pending.transcript().path
                ),
            )
        })?;
        Ok(Some(window))
    }

    /// Step 2 of a compaction: ask the model for the summary and install the new history.
    /// When the server refuses the summary request as too long, the next attempt is sized
    /// from its count of this request (`compact::summary_refit`), smaller each time; below
    /// the floor the history is reduced without a model (`no_model_fallback`). One attempt
    /// at a time, one transcript (written by `begin_*`). In step mode it pauses before the
    /// first summary call.
    pub(super) async fn summarize(&mut self, mut pending: PendingCompaction) -> Result<(), Stop> {
        let mut fitted_to = match self.fit_summary(&mut pending) {
            Ok(window) => window,
            // No window the request could fit: reduce without a model instead of failing.
            Err(Stop::Failed(_, why)) => return self.no_model_fallback(pending, &why),
            Err(stop) => return Err(stop),
        };
        let mut attempts = 0;
        let response = loop {
            attempts += 1;
            let request = Arc::new(ModelRequest {
                system: pending.request().system.clone(),
                messages: vec![Message::user_text(pending.request().user_text.clone())],
                tools: Vec::new(),
                max_tokens: u32::try_from(pending.request().max_tokens).unwrap_or(u32::MAX),
                kind: RequestKind::Summary,
            });
            let chars = estimate_size(&request.messages);
            if attempts == 1 {
                // Step mode pauses once before the summary call (the transcript is saved).
                self.pause(NextStep::SummaryCall {
                    stage: pending.stage(),
                    replaced: pending.replaced(),
                    chars,
                    focus: pending.focus.clone(),
                    transcript: pending.transcript().path.clone(),
                })
                .await?;
            }
            let body = Arc::new(self.setup.model.encode(&request));
            self.emit(AgentEvent::RequestSent {
                estimate_chars: chars,
                messages: 1,
                summary: true,
                request: Some(Arc::clone(&request)),
                body: Some(Arc::clone(&body)),
            });
            match self.call_model(request, body, false).await? {
                Ok(response) => break response,
                Err(ProviderError::ContextTooLong {
                    message,
                    prompt_tokens,
                    window_tokens,
                    ..
                }) => {
                    // The refused attempt is a refusal in the events, like a turn's.
                    self.prompt_too_long(&message);
                    let refusal = Refusal {
                        prompt_tokens,
                        window_tokens,
                    };
                    let mut refit = if attempts >= MAX_SUMMARY_ATTEMPTS {
                        None
                    } else {
                        pending
                            .refit_after_refusal(refusal, self.window_tokens())
                            .ok()
                    };
                    if refit.is_some() && self.window_tokens() != fitted_to {
                        // A window learned from this refusal: the request also fits it at
                        // the usual estimate, whichever cut is shorter.
                        match self.fit_summary(&mut pending) {
                            Ok(window) => fitted_to = window,
                            Err(_) => refit = None,
                        }
                    }
                    if refit.is_none() {
                        let why = format!(
                            "the summary request was refused as too long {attempts} time{} \
                             (the last at {} chars of history)",
                            if attempts == 1 { "" } else { "s" },
                            group_digits(pending.input_chars())
                        );
                        return self.no_model_fallback(pending, &why);
                    }
                }
                Err(e) => {
                    return Err(Stop::Failed(
                        error_kind(&e),
                        format!(
                            "the summary request failed: {e}; the transcript was saved to {}",
                            pending.transcript().path
                        ),
                    ));
                }
            }
        };
        if response.stop_reason.as_deref() == Some("max_tokens") {
            pending.mark_summary_cut();
        }
        let texts: Vec<&str> = response
            .content
            .iter()
            .filter(|b| BlockKind::of(b) == BlockKind::Text)
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect();
        let active = self.active_request.clone();
        let (history, report) = pending.finish(&texts, &active);
        self.install_compacted(history, report);
        Ok(())
    }

    /// Puts a compaction's history in place and reports it: the stage's report with the
    /// new history, then the replacement itself.
    fn install_compacted(&mut self, history: Vec<Message>, report: StageReport) {
        self.history = history;
        let snapshot = Arc::new(self.history.clone());
        self.emit(AgentEvent::StageRan {
            report,
            history: Some(Arc::clone(&snapshot)),
        });
        self.emit(AgentEvent::HistoryReplaced {
            history: snapshot,
            messages: self.history.len(),
        });
    }
}
