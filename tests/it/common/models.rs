//! Small models written for the agent: a fixed text, a panic, one tool call then a text.

use std::sync::Arc;

use async_trait::async_trait;
use ctxlab::message::block;
use ctxlab::provider::{Model, ModelRequest, ModelResponse, ProviderError, StreamEvent};
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;

/// A model that answers every call with one text block.
pub struct TextModel(pub &'static str);

#[async_trait]
impl Model for TextModel {
    fn describe(&self) -> String {
        "text test model".into()
    }

    async fn stream(
        &self,
        _req: &ModelRequest,
        _events: &UnboundedSender<StreamEvent>,
    ) -> Result<ModelResponse, ProviderError> {
        Ok(ModelResponse {
            content: vec![block::text(self.0)],
            stop_reason: Some("end_turn".into()),
            usage: Default::default(),
        })
    }
}

/// A model whose every call panics.
pub struct PanicModel;

#[async_trait]
impl Model for PanicModel {
    fn describe(&self) -> String {
        "panicking test model".into()
    }

    async fn stream(
        &self,
        _req: &ModelRequest,
        _events: &UnboundedSender<StreamEvent>,
    ) -> Result<ModelResponse, ProviderError> {
        panic!("model exploded on purpose");
    }
}

/// A model that calls one tool once, then answers `done`.
pub struct ToolOnceModel {
    pub name: &'static str,
    pub input: Value,
}

#[async_trait]
impl Model for ToolOnceModel {
    fn describe(&self) -> String {
        "tool-once test model".into()
    }

    async fn stream(
        &self,
        req: &ModelRequest,
        _events: &UnboundedSender<StreamEvent>,
    ) -> Result<ModelResponse, ProviderError> {
        let ran = req
            .messages
            .last()
            .is_some_and(|m| m.is_tool_result_message());
        let (content, stop) = if ran {
            (vec![block::text("done")], "end_turn")
        } else {
            (
                vec![block::tool_use("toolu_once", self.name, self.input.clone())],
                "tool_use",
            )
        };
        Ok(ModelResponse {
            content,
            stop_reason: Some(stop.into()),
            usage: Default::default(),
        })
    }
}

pub fn arc<M: Model + 'static>(m: M) -> Arc<dyn Model> {
    Arc::new(m)
}
