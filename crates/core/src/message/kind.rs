//! The two closed vocabularies of a message, typed: who speaks (`Role`) and what a content
//! block is (`BlockKind`). The message itself stays the raw JSON map (its exact size is the
//! pipeline's unit), so these are read from it, never stored in its place; a word the
//! vocabulary does not know reads as `Other` and the raw text stays where it was.

use serde_json::Value;

/// The `role` of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    User,
    Assistant,
    System,
    /// Codex's instructions role.
    Developer,
    /// Missing or a word not listed here.
    Other,
}

impl Role {
    pub fn of(word: &str) -> Role {
        match word {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "system" => Role::System,
            "developer" => Role::Developer,
            _ => Role::Other,
        }
    }

    /// The wire word (`Other` has none of its own and reads as empty).
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::System => "system",
            Role::Developer => "developer",
            Role::Other => "",
        }
    }
}

/// The `type` of a content block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockKind {
    Text,
    ToolUse,
    ToolResult,
    Thinking,
    RedactedThinking,
    Image,
    /// Missing or a type not listed here (kept as is in the raw block).
    Other,
}

impl BlockKind {
    /// The kind of a block (any JSON value: a non-object reads as `Other`).
    pub fn of(block: &Value) -> BlockKind {
        match block.get("type").and_then(Value::as_str) {
            Some(word) => BlockKind::from_word(word),
            None => BlockKind::Other,
        }
    }

    pub fn from_word(word: &str) -> BlockKind {
        match word {
            "text" => BlockKind::Text,
            "tool_use" => BlockKind::ToolUse,
            "tool_result" => BlockKind::ToolResult,
            "thinking" => BlockKind::Thinking,
            "redacted_thinking" => BlockKind::RedactedThinking,
            "image" => BlockKind::Image,
            _ => BlockKind::Other,
        }
    }

    /// The wire word (`Other` reads as empty).
    pub fn as_str(self) -> &'static str {
        match self {
            BlockKind::Text => "text",
            BlockKind::ToolUse => "tool_use",
            BlockKind::ToolResult => "tool_result",
            BlockKind::Thinking => "thinking",
            BlockKind::RedactedThinking => "redacted_thinking",
            BlockKind::Image => "image",
            BlockKind::Other => "",
        }
    }
}

/// The `id` of a `tool_use` block, or `tool_use_id` of a `tool_result` block.
pub fn block_tool_id(block: &Value) -> Option<&str> {
    match BlockKind::of(block) {
        BlockKind::ToolUse => block.get("id").and_then(Value::as_str),
        BlockKind::ToolResult => block.get("tool_use_id").and_then(Value::as_str),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_listed_word_reads_back_as_itself() {
        for role in [Role::User, Role::Assistant, Role::System, Role::Developer] {
            assert_eq!(Role::of(role.as_str()), role);
        }
        assert_eq!(Role::of("tool"), Role::Other);
        for kind in [
            BlockKind::Text,
            BlockKind::ToolUse,
            BlockKind::ToolResult,
            BlockKind::Thinking,
            BlockKind::RedactedThinking,
            BlockKind::Image,
        ] {
            assert_eq!(BlockKind::of(&json!({"type": kind.as_str()})), kind);
        }
        assert_eq!(
            BlockKind::of(&json!({"type": "server_tool_use"})),
            BlockKind::Other
        );
        assert_eq!(BlockKind::of(&json!("text")), BlockKind::Other);
    }
}
