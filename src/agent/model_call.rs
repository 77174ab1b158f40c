//! One streaming model call, and the summary request that finishes a compaction.
//!
//! The call's stream events become `AgentEvent`s as they arrive; a Cancel or Quit read
//! meanwhile drops the stream, so nothing partial is ever appended. Provider errors come
//! back typed: the loop in `turn` decides what each one means (reactive compaction, error).

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
        ProviderError::StreamCut => ErrorKind::StreamCut,
    }
}

impl Agent {
    /// One model call, streaming deltas out as events (text only when `forward_text`: a
    /// summary is not the assistant talking); Cancel drops the stream.
    pub(super) async fn call_model(
        &mut self,
        request: ModelRequest,
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

    /// Step 2 of a compaction: ask the model for the summary and install the new history.
    /// In step mode it pauses before the summary call (the transcript is already saved).
    pub(super) async fn summarize(&mut self, pending: PendingCompaction) -> Result<(), Stop> {
        let request = ModelRequest {
            system: pending.request().system.clone(),
            messages: vec![Message::user_text(pending.request().user_text.clone())],
            tools: Vec::new(),
            max_tokens: u32::try_from(pending.request().max_tokens).unwrap_or(u32::MAX),
        };
        let chars = estimate_size(&request.messages);
        self.pause(NextStep::SummaryCall {
            stage: pending.stage(),
            replaced: pending.replaced(),
            chars,
            focus: pending.focus.clone(),
            transcript: pending.transcript().path.clone(),
        })
        .await?;
        self.emit(AgentEvent::RequestSent {
            estimate_chars: chars,
            messages: 1,
            summary: true,
        });
        let response = self.call_model(request, false).await?;
        let response = response.map_err(|e| {
            Stop::Failed(
                error_kind(&e),
                format!(
                    "the summary request failed: {e}; the transcript was saved to {}",
                    pending.transcript().path
                ),
            )
        })?;
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
