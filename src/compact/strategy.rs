//! Which compaction strategy runs, and what differs between them outside the stages: the
//! size unit, the per-strategy default numbers, the compact tool's answer, the note the
//! agent's system prompt ends with (docs/strategies.md).
//!
//! This is plain data about the four designs. The stages themselves live in `compact/`
//! (the s08 ones) and in `s06/`, `s08_latest/` and `guarded/`; `Pipeline` (in `mod.rs`)
//! picks them by strategy. Nothing here runs a stage or touches a file.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::json;

use super::summarize::COMPACTED_SYSTEM_NOTE;
use crate::message::{Message, ToolSpec, estimate_size, json_size};

/// One of the four strategies ctxlab can run, replay and compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Strategy {
    /// The lesson's plain-function s08 (docs/pipeline.md); `lesson` is an alias.
    #[default]
    S08,
    /// The lesson's newest s08: snip archives, micro saves, a fit step, JSON size.
    S08Latest,
    /// The older three-layer lesson: micro placeholders, auto-compact on tokens, compact tool.
    S06,
    /// ctxlab's own: the s08 stages with every documented loss removed.
    Guarded,
}

/// A strategy name that is not one of the four.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown strategy `{0}`; valid: s08 (or lesson), s08-latest, s06, guarded")]
pub struct UnknownStrategy(pub String);

impl Strategy {
    pub const ALL: [Strategy; 4] = [
        Strategy::S08,
        Strategy::S08Latest,
        Strategy::S06,
        Strategy::Guarded,
    ];

    /// The name used on the command line, in config.toml and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::S08 => "s08",
            Strategy::S08Latest => "s08-latest",
            Strategy::S06 => "s06",
            Strategy::Guarded => "guarded",
        }
    }

    /// One line for help texts and pane titles.
    pub fn describe(self) -> &'static str {
        match self {
            Strategy::S08 => "the lesson's s08: budget, snip, micro, compact_history",
            Strategy::S08Latest => "the lesson's newest s08: snip archives, micro saves, fit",
            Strategy::S06 => "the lesson's s06: micro placeholders, auto_compact on tokens",
            Strategy::Guarded => "ctxlab's own: s08 with every documented loss removed",
        }
    }

    /// The unit its sizes and its `context_limit` are counted in.
    pub fn unit(self) -> SizeUnit {
        match self {
            Strategy::S08 | Strategy::Guarded => SizeUnit::Chars,
            Strategy::S08Latest => SizeUnit::JsonChars,
            Strategy::S06 => SizeUnit::Tokens,
        }
    }

    /// The sentence the agent's system prompt ends with, telling the model how to read a
    /// summary message; s06's summary carries no request field, so it adds none.
    pub fn system_note(self) -> Option<&'static str> {
        match self {
            Strategy::S08 | Strategy::Guarded => Some(COMPACTED_SYSTEM_NOTE),
            Strategy::S08Latest => Some(super::s08_latest::SYSTEM_NOTE),
            Strategy::S06 => None,
        }
    }

    /// The text a `compact` tool call answers.
    pub fn compact_tool_result(self) -> &'static str {
        match self {
            Strategy::S08 | Strategy::Guarded => COMPACT_TOOL_RESULT,
            Strategy::S08Latest => super::s08_latest::COMPACT_TOOL_RESULT,
            Strategy::S06 => super::s06::COMPACT_TOOL_RESULT,
        }
    }

    /// Whether the turn ends once the history was compacted for a `compact` call (s06);
    /// the others go on with the next model call.
    pub fn compact_ends_turn(self) -> bool {
        self == Strategy::S06
    }

    /// The agent's system prompt: `base`, then the strategy's note on summary messages.
    pub fn system_prompt(self, base: &str) -> String {
        match self.system_note() {
            Some(note) => format!("{base}\n\n{note}"),
            None => base.to_string(),
        }
    }

    /// The tools offered to the model, with the `compact` tool worded as this strategy
    /// words it.
    pub fn tools(self, tools: &[ToolSpec]) -> Vec<ToolSpec> {
        let compact = self.compact_tool_override();
        tools
            .iter()
            .map(|t| match &compact {
                Some(c) if t.name == c.name => c.clone(),
                _ => t.clone(),
            })
            .collect()
    }

    /// The `compact` tool as this strategy describes it to the model, when that differs
    /// from the tool list's own (`tools::tool_specs`): only s06 words it its way.
    pub fn compact_tool_override(self) -> Option<ToolSpec> {
        (self == Strategy::S06).then(|| ToolSpec {
            name: "compact".into(),
            description: super::s06::COMPACT_TOOL_DESCRIPTION.into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "focus": {"type": "string", "description": super::s06::FOCUS_DESCRIPTION}
                }
            }),
        })
    }

    /// How many reactive retries may follow one failed call before the error goes to the
    /// user: s06 has no reactive stage, the lessons' s08 retry once, guarded shrinks its
    /// tail (5, 2, 0) and so may retry three times.
    pub fn reactive_attempts(self) -> usize {
        match self {
            Strategy::S06 => 0,
            Strategy::S08 | Strategy::S08Latest => 1,
            Strategy::Guarded => 3,
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Strategy {
    type Err = UnknownStrategy;

    fn from_str(s: &str) -> Result<Strategy, UnknownStrategy> {
        match s.trim() {
            "s08" | "lesson" => Ok(Strategy::S08),
            "s08-latest" => Ok(Strategy::S08Latest),
            "s06" => Ok(Strategy::S06),
            "guarded" => Ok(Strategy::Guarded),
            other => Err(UnknownStrategy(other.to_string())),
        }
    }
}

impl Serialize for Strategy {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Strategy {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// The answer to a `compact` tool call in the s08 lesson (and guarded).
pub const COMPACT_TOOL_RESULT: &str =
    "[Compaction requested. This completed turn will be summarized.]";

/// What a strategy counts sizes in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SizeUnit {
    /// Code points of Python's `str()` of the history (s08, guarded).
    #[default]
    Chars,
    /// Code points of `json.dumps(history, ensure_ascii=False)` (s08-latest).
    JsonChars,
    /// `len(str(history)) // 4` (s06).
    Tokens,
}

impl SizeUnit {
    /// The size of a history in this unit, from the messages' cached lengths.
    pub fn measure(self, messages: &[Message]) -> usize {
        match self {
            SizeUnit::Chars => estimate_size(messages),
            SizeUnit::JsonChars => json_size(messages),
            SizeUnit::Tokens => estimate_size(messages) / 4,
        }
    }

    /// The word after a number: `chars`, `JSON chars`, `tokens`.
    pub fn label(self) -> &'static str {
        match self {
            SizeUnit::Chars => "chars",
            SizeUnit::JsonChars => "JSON chars",
            SizeUnit::Tokens => "tokens",
        }
    }

    /// How many chars of Python `str()` one unit stands for: 4 for s06's tokens, else 1.
    pub fn chars_per_unit(self) -> usize {
        match self {
            SizeUnit::Tokens => 4,
            SizeUnit::Chars | SizeUnit::JsonChars => 1,
        }
    }

    pub(crate) fn is_chars(&self) -> bool {
        *self == SizeUnit::Chars
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_and_lesson_is_s08() {
        for s in Strategy::ALL {
            assert_eq!(s.name().parse::<Strategy>(), Ok(s));
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(serde_json::from_str::<Strategy>(&json).unwrap(), s);
        }
        assert_eq!("lesson".parse::<Strategy>(), Ok(Strategy::S08));
        let e = "s07".parse::<Strategy>().unwrap_err();
        assert!(e.to_string().contains("s08-latest"), "{e}");
        assert_eq!(Strategy::default(), Strategy::S08);
    }

    #[test]
    fn units_measure_the_same_history_three_ways() {
        let h = vec![Message::user_text("é\"x")];
        // {'role': 'user', 'content': 'é"x'} in a list; the JSON escapes the quote.
        assert_eq!(SizeUnit::Chars.measure(&h), 36);
        assert_eq!(SizeUnit::JsonChars.measure(&h), 37);
        assert_eq!(SizeUnit::Tokens.measure(&h), 9);
    }

    /// A tool list in the shape the agent hands over: a compact tool among others. The
    /// pipeline does not import the tools module (docs/architecture.md), so the test builds
    /// its own.
    fn tool_list() -> Vec<ToolSpec> {
        let tool = |name: &str| ToolSpec {
            name: name.to_string(),
            description: format!("the {name} tool"),
            input_schema: serde_json::json!({"type": "object", "properties": {}}),
        };
        vec![tool("bash"), tool("compact"), tool("read_file")]
    }

    #[test]
    fn only_s06_ends_the_turn_after_the_compact_tool_and_has_no_note() {
        assert!(Strategy::S06.compact_ends_turn());
        assert_eq!(Strategy::S06.system_note(), None);
        assert_eq!(Strategy::S06.compact_tool_result(), "Compressing...");
        assert_eq!(Strategy::S06.system_prompt("base"), "base");
        let tools = Strategy::S06.tools(&tool_list());
        assert_eq!(tools.len(), tool_list().len());
        let spec = Strategy::S06.compact_tool_override().unwrap();
        assert!(tools.contains(&spec));
        assert_eq!(spec.description, "Trigger manual conversation compression.");
        assert_eq!(
            spec.input_schema["properties"]["focus"]["description"],
            "What to preserve in the summary"
        );
        for s in [Strategy::S08, Strategy::S08Latest, Strategy::Guarded] {
            assert!(!s.compact_ends_turn());
            assert_eq!(s.compact_tool_override(), None);
            assert_eq!(s.tools(&tool_list()), tool_list());
            assert!(
                s.system_prompt("base")
                    .starts_with("base\n\nIn compacted messages, ")
            );
            assert!(s.system_note().is_some());
        }
        assert_eq!(
            Strategy::S08Latest.compact_tool_result(),
            "Compaction requested after this tool batch."
        );
    }
}
