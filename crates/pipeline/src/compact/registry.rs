//! Which `Design` each `Strategy` names, and what the agent asks of a strategy outside
//! the stages (its system prompt's note, its tools, the compact tool's answer): the one
//! place that knows all four strategy folders (docs/strategies.md).

use super::design::Design;
use super::guarded::GuardedDesign;
use super::s06::S06Design;
use super::s08::S08Design;
use super::s08_latest::LatestDesign;
use super::strategy::Strategy;
use crate::message::ToolSpec;

impl Strategy {
    /// What this strategy does, as its folder implements it.
    pub fn design(self) -> &'static dyn Design {
        match self {
            Strategy::S08 => &S08Design,
            Strategy::S08Latest => &LatestDesign,
            Strategy::S06 => &S06Design,
            Strategy::Guarded => &GuardedDesign,
        }
    }

    /// The sentence the agent's system prompt ends with, telling the model how to read a
    /// summary message; s06's summary carries no request field, so it adds none.
    pub fn system_note(self) -> Option<&'static str> {
        self.design().system_note()
    }

    /// The text a `compact` tool call answers.
    pub fn compact_tool_result(self) -> &'static str {
        self.design().compact_tool_result()
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
        self.design().compact_tool_override()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
