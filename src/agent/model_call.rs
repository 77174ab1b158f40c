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
use super::turn::{Agent, Stop};
use crate::compact::{PendingCompaction, estimate_size};
use crate::message::{Message, block_type};
use crate::provider::{ModelRequest, ModelResponse, ProviderError, StreamEvent};

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
    /// summary is not the assistant talking); Cancel drops the stream.
    pub(super) async fn call_model(
        &mut self,
        request: Arc<ModelRequest>,
        forward_text: bool,
    ) -> Result<Result<ModelResponse, ProviderError>, Stop> {
        let model = Arc::clone(&self.setup.model);
        let (tx, mut rx) = unbounded_channel();
        let call = async move { model.stream(&request, &tx).await };
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
    /// When the summary request itself overflows and the server names its window, the
    /// request is sized to that window and sent once more. In step mode it pauses before the
    /// summary call.
    pub(super) async fn summarize(&mut self, mut pending: PendingCompaction) -> Result<(), Stop> {
        let mut fitted_to = self.fit_summary(&mut pending)?;
        let mut attempts = 0;
        let response = loop {
            attempts += 1;
            let request = Arc::new(ModelRequest {
                system: pending.request().system.clone(),
                messages: vec![Message::user_text(pending.request().user_text.clone())],
                tools: Vec::new(),
                max_tokens: u32::try_from(pending.request().max_tokens).unwrap_or(u32::MAX),
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
            self.emit(AgentEvent::RequestSent {
                estimate_chars: chars,
                messages: 1,
                summary: true,
                request: Some(Arc::clone(&request)),
            });
            match self.call_model(request, false).await? {
                Ok(response) => break response,
                Err(ProviderError::ContextTooLong { .. })
                    if attempts == 1
                        && self.window_tokens().is_some_and(|w| Some(w) != fitted_to) =>
                {
                    fitted_to = self.fit_summary(&mut pending)?;
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
            .filter(|b| block_type(b) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect();
        let active = self.active_request.clone();
        let (history, report) = pending.finish(&texts, &active);
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
        Ok(())
    }
}
