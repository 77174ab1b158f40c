//! Where a model call's context goes: the request's size split by category (system prompt,
//! tool definitions, developer messages, user and assistant text, thinking, tool calls, tool results by tool,
//! compaction summaries and markers, persisted-output previews, images, and for a recorded
//! session what the file does not hold). `classify` sizes one message, `tokens` holds the
//! tokenizers, `calibrate` fits a chars-per-token ratio to recorded usage, `session` walks
//! a recorded session's calls. The timeline's calls are sized by `timeline::breakdown`.
//!
//! Pure: it reads messages and numbers, never a file, a terminal or the network
//! (docs/pipeline.md, "Where the context goes").

pub mod calibrate;
pub mod classify;
mod file_record;
mod image;
pub mod measured;
pub mod request;
pub mod session;
pub mod sized;
#[cfg(test)]
mod sized_tests;
pub mod tokens;

use std::collections::BTreeMap;

use serde::Serialize;

pub use calibrate::Fit;
pub use classify::{Hint, message_parts};

/// What part of a request some tokens are.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Category {
    SystemPrompt,
    ToolDefinitions,
    /// Context the agent put into a user message that the transcript does not show as
    /// one: Claude Code's rendered attachments (`<system-reminder>`s).
    Reminders,
    /// The harness's instructions sent as `developer` messages (Codex): their own part,
    /// neither the system prompt nor anything a person typed.
    DeveloperMessages,
    UserText,
    AssistantText,
    Thinking,
    ToolCalls,
    /// The results of one tool, by its name as the request names it.
    ToolResults(String),
    /// Summaries a compaction left, and the markers and placeholders compaction writes in
    /// place of what it removed.
    Summaries,
    /// ctxlab's `<persisted-output>` previews of results saved to files (its
    /// tool_result_budget stage).
    PersistedPreviews,
    /// Claude Code's persisted-output stage: a result over its limit is saved under the
    /// session's `tool-results/` and the model gets a `<persisted-output>` marker with a
    /// ~2 KB preview (the analogue of ctxlab's tool_result_budget).
    ClaudeCodePersisted,
    Images,
    /// A recorded call's usage beyond what the file holds (for older Claude Code files, the
    /// system prompt and the tool schemas they do not write): never spread over the other
    /// categories.
    NotInFile,
}

/// Tool names longer than this are clipped: they come from files.
const TOOL_NAME_CHARS: usize = 64;
/// Tools shown by name in one call; the smaller ones are summed as "other tools".
pub const TOOLS_SHOWN: usize = 12;
/// The name the smaller tools' results are summed under.
pub const OTHER_TOOLS: &str = "(other tools)";

impl Category {
    /// The category's name in JSON (`tool_results` carries its tool apart).
    pub fn key(&self) -> &'static str {
        match self {
            Category::SystemPrompt => "system_prompt",
            Category::ToolDefinitions => "tool_definitions",
            Category::Reminders => "reminders",
            Category::DeveloperMessages => "developer_messages",
            Category::UserText => "user_text",
            Category::AssistantText => "assistant_text",
            Category::Thinking => "thinking",
            Category::ToolCalls => "tool_calls",
            Category::ToolResults(_) => "tool_results",
            Category::Summaries => "summaries",
            Category::PersistedPreviews => "persisted_previews",
            Category::ClaudeCodePersisted => "claude_code_persisted_output",
            Category::Images => "images",
            Category::NotInFile => "not_in_file",
        }
    }

    /// The category as a person reads it (the tool name is outside text: sanitize it
    /// before printing).
    pub fn label(&self) -> String {
        match self {
            Category::SystemPrompt => "system prompt".into(),
            Category::ToolDefinitions => "tool definitions".into(),
            Category::Reminders => "reminders/attachments".into(),
            Category::DeveloperMessages => "developer messages".into(),
            Category::UserText => "user text".into(),
            Category::AssistantText => "assistant text".into(),
            Category::Thinking => "thinking".into(),
            Category::ToolCalls => "tool calls".into(),
            Category::ToolResults(t) => format!("tool results: {t}"),
            Category::Summaries => "summaries and markers".into(),
            Category::PersistedPreviews => "persisted-output previews".into(),
            Category::ClaudeCodePersisted => "Claude Code persisted output".into(),
            Category::Images => "images".into(),
            Category::NotInFile => "not in the file".into(),
        }
    }

    /// A tool's results, its name clipped.
    pub fn tool(name: &str) -> Category {
        Category::ToolResults(name.chars().take(TOOL_NAME_CHARS).collect())
    }
}

/// A part's size: its characters, and its tokens where they were counted (exactly, or an
/// image's estimate, which has no characters).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Size {
    pub chars: u64,
    pub tokens: u64,
}

/// The sizes of a message or a request by category.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parts(BTreeMap<Category, Size>);

impl Parts {
    pub fn add(&mut self, category: Category, size: Size) {
        let e = self.0.entry(category).or_default();
        e.chars += size.chars;
        e.tokens += size.tokens;
    }

    pub fn merge(&mut self, other: &Parts) {
        for (c, s) in &other.0 {
            self.add(c.clone(), *s);
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = (&Category, &Size)> {
        self.0.iter()
    }

    /// Characters of every part (images have none).
    pub fn chars(&self) -> u64 {
        self.0.values().map(|s| s.chars).sum()
    }

    pub fn get(&self, c: &Category) -> Size {
        self.0.get(c).copied().unwrap_or_default()
    }
}

/// How a breakdown's tokens were had.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Counting {
    /// The model family's own tokenizer counted the text (`o200k_base`, `cl100k_base`).
    Exact(tokens::Family),
    /// A tokenizer of another family counted it: a stand-in when nothing better is known.
    Proxy(tokens::Family),
    /// Characters divided by a ratio fit on the session's recorded usage.
    Calibrated(Fit),
}

impl Counting {
    /// Whether the text categories are estimates (`~`).
    pub fn is_estimate(&self) -> bool {
        !matches!(self, Counting::Exact(_))
    }

    /// One phrase for headers: `exact (o200k_base)`, `~ estimate: 3.6 chars per token
    /// fit on 12 calls`.
    pub fn describe(&self) -> String {
        match self {
            Counting::Exact(f) => format!("exact ({})", f.name()),
            Counting::Proxy(f) => format!("~ estimate: counted with {}", f.name()),
            Counting::Calibrated(fit) => fit.describe(),
        }
    }
}

/// One category's tokens in one call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CategoryTokens {
    pub category: &'static str,
    /// For `tool_results`: the tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    pub tokens: u64,
    /// The count is an estimate (`~`).
    pub estimate: bool,
    #[serde(skip)]
    pub kind: Option<Category>,
}

impl CategoryTokens {
    /// The category's label for people (sanitize before printing: the tool name is
    /// outside text).
    pub fn label(&self) -> String {
        self.kind
            .as_ref()
            .map(Category::label)
            .unwrap_or_else(|| self.category.to_string())
    }

    /// `12,000` or `~12,000`, the way every view writes a count.
    pub fn text(&self) -> String {
        crate::session::model::token_text(self.tokens, self.estimate)
    }
}

/// One model call's request by category, in tokens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CallBreakdown {
    /// 1-based.
    pub call: usize,
    /// The assistant message the call produced, in the session's messages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The prompt's tokens as recorded (the API's usage), when known.
    pub recorded_tokens: Option<u64>,
    /// The sum of the categories.
    pub total_tokens: u64,
    /// Whether the total holds an estimate.
    pub estimate: bool,
    pub categories: Vec<CategoryTokens>,
}

impl CallBreakdown {
    pub fn total_text(&self) -> String {
        crate::session::model::token_text(self.total_tokens, self.estimate)
    }

    /// The tokens of one category key (summed over tools for `tool_results`).
    pub fn tokens_of(&self, key: &str) -> u64 {
        self.categories
            .iter()
            .filter(|c| c.category == key)
            .map(|c| c.tokens)
            .sum()
    }
}

/// What happens to a recorded count beyond the categories.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Remainder {
    /// A recorded session: the rest of the usage is "not in the file".
    NotInFile,
    /// The request holds everything (live, replay): no remainder is made.
    None,
    /// The request holds everything and the API reported its size: the estimate is
    /// scaled to that count, up or down (the split stays an estimate).
    ScaleToRecorded,
}

/// Turns one call's parts into tokens by category; with `Remainder::NotInFile` and a
/// recorded count, what the parts leave of it becomes its own category. An estimate over
/// the recorded count is scaled down to it (the recorded count is the API's own); an exact
/// count never is.
pub fn finish(
    call: usize,
    parts: &Parts,
    counting: &Counting,
    recorded: Option<u64>,
    remainder: Remainder,
) -> CallBreakdown {
    let estimate_text = counting.is_estimate();
    let mut cats: Vec<(Category, u64, bool)> = parts
        .iter()
        .map(|(c, s)| {
            let (tokens, estimate) = match (c, counting) {
                (Category::Images, _) => (s.tokens, true),
                (_, Counting::Calibrated(fit)) => (fit.tokens(s.chars) + s.tokens, true),
                _ => (s.tokens, estimate_text),
            };
            (c.clone(), tokens, estimate)
        })
        .filter(|(_, t, _)| *t > 0)
        .collect();
    let sum: u64 = cats.iter().map(|c| c.1).sum();
    if let (Some(rec), Remainder::NotInFile) = (recorded, remainder) {
        if sum <= rec {
            if rec > sum {
                // The remainder is exact only when every part was counted exactly.
                let est = cats.iter().any(|c| c.2);
                cats.push((Category::NotInFile, rec - sum, est));
            }
        } else if estimate_text {
            scale_to(&mut cats, rec);
        }
    }
    if let (Some(rec), Remainder::ScaleToRecorded) = (recorded, remainder)
        && estimate_text
    {
        scale_history_to(&mut cats, rec);
    }
    cats = lump_small_tools(cats);
    let total_tokens = cats.iter().map(|c| c.1).sum();
    let estimate = cats.iter().any(|c| c.2);
    CallBreakdown {
        call,
        message: None,
        model: None,
        recorded_tokens: recorded,
        total_tokens,
        estimate,
        categories: cats
            .into_iter()
            .map(|(c, tokens, estimate)| CategoryTokens {
                category: c.key(),
                tool: match &c {
                    Category::ToolResults(t) => Some(t.clone()),
                    _ => None,
                },
                tokens,
                estimate,
                kind: Some(c),
            })
            .collect(),
    }
}

/// Scales the history's categories so the call sums to `total`; the system prompt and tool
/// definitions keep their estimate, since they are the same text at every call and a
/// per-call scale would give one prompt a different size at each (issue 38). When the fixed
/// parts alone exceed `total` (a count that leaves them out, as the scripted model's
/// synthetic one leaves out the tool definitions), nothing is scaled: the estimate stands.
fn scale_history_to(cats: &mut Vec<(Category, u64, bool)>, total: u64) {
    let fixed = |c: &Category| matches!(c, Category::SystemPrompt | Category::ToolDefinitions);
    let fixed_sum: u64 = cats.iter().filter(|c| fixed(&c.0)).map(|c| c.1).sum();
    if fixed_sum == 0 {
        scale_to(cats, total);
        return;
    }
    if fixed_sum > total {
        return;
    }
    let (mut rest, kept): (Vec<_>, Vec<_>) = std::mem::take(cats)
        .into_iter()
        .enumerate()
        .partition(|(_, c)| !fixed(&c.0));
    let mut history: Vec<(Category, u64, bool)> = rest.iter().map(|(_, c)| c.clone()).collect();
    scale_to(&mut history, total - fixed_sum);
    for ((_, slot), scaled) in rest.iter_mut().zip(history) {
        *slot = scaled;
    }
    let mut all: Vec<(usize, (Category, u64, bool))> = kept.into_iter().chain(rest).collect();
    all.sort_by_key(|(i, _)| *i);
    *cats = all.into_iter().map(|(_, c)| c).collect();
}

/// Scales the counts so they sum to `total`, by largest remainder.
fn scale_to(cats: &mut [(Category, u64, bool)], total: u64) {
    let sum: u128 = cats.iter().map(|c| c.1 as u128).sum();
    if sum == 0 {
        return;
    }
    let mut rest: Vec<(usize, u128)> = Vec::with_capacity(cats.len());
    let mut given = 0u64;
    for (i, c) in cats.iter_mut().enumerate() {
        let exact = c.1 as u128 * total as u128;
        let share = (exact / sum) as u64;
        rest.push((i, exact % sum));
        c.1 = share;
        c.2 = true;
        given += share;
    }
    rest.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    for (i, _) in rest.into_iter().take((total - given) as usize) {
        cats[i].1 += 1;
    }
}

/// Past `TOOLS_SHOWN` tools, the smaller ones' results are summed under one name, so a
/// file with thousands of tool names cannot make a table of thousands of rows.
fn lump_small_tools(cats: Vec<(Category, u64, bool)>) -> Vec<(Category, u64, bool)> {
    let mut tools: Vec<(u64, String)> = cats
        .iter()
        .filter_map(|c| match &c.0 {
            Category::ToolResults(t) => Some((c.1, t.clone())),
            _ => None,
        })
        .collect();
    if tools.len() <= TOOLS_SHOWN {
        return cats;
    }
    tools.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let keep: Vec<String> = tools
        .into_iter()
        .take(TOOLS_SHOWN - 1)
        .map(|t| t.1)
        .collect();
    let mut out = Vec::with_capacity(cats.len());
    let mut other = (0u64, false);
    for c in cats {
        match &c.0 {
            Category::ToolResults(t) if !keep.contains(t) => {
                other.0 += c.1;
                other.1 |= c.2;
            }
            _ => out.push(c),
        }
    }
    out.push((Category::ToolResults(OTHER_TOOLS.into()), other.0, other.1));
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(items: &[(Category, u64)]) -> Parts {
        let mut p = Parts::default();
        for (c, n) in items {
            p.add(
                c.clone(),
                Size {
                    chars: *n,
                    tokens: *n / 4,
                },
            );
        }
        p
    }

    #[test]
    fn the_rest_of_a_recorded_count_is_its_own_category() {
        let p = parts(&[(Category::UserText, 400), (Category::tool("bash"), 800)]);
        let b = finish(
            1,
            &p,
            &Counting::Exact(tokens::Family::O200k),
            Some(1000),
            Remainder::NotInFile,
        );
        assert_eq!(b.tokens_of("user_text"), 100);
        assert_eq!(b.tokens_of("tool_results"), 200);
        assert_eq!(b.tokens_of("not_in_file"), 700);
        assert_eq!(b.total_tokens, 1000);
        assert!(!b.estimate);
    }

    #[test]
    fn an_estimate_over_the_recorded_count_is_scaled_to_it() {
        let p = parts(&[(Category::UserText, 400), (Category::AssistantText, 404)]);
        let fit = Fit::ratio_only(1.0);
        let b = finish(
            1,
            &p,
            &Counting::Calibrated(fit),
            Some(101),
            Remainder::NotInFile,
        );
        assert_eq!(b.total_tokens, 101);
        assert_eq!(b.tokens_of("not_in_file"), 0);
        assert!(b.estimate);
    }

    #[test]
    fn many_tools_fold_into_other_tools() {
        let items: Vec<(Category, u64)> = (0..30)
            .map(|i| (Category::tool(&format!("t{i:02}")), 40 + i))
            .collect();
        let b = finish(
            1,
            &parts(&items),
            &Counting::Exact(tokens::Family::Cl100k),
            None,
            Remainder::None,
        );
        assert_eq!(b.categories.len(), TOOLS_SHOWN);
        let want: u64 = items.iter().map(|i| i.1 / 4).sum();
        assert_eq!(b.total_tokens, want);
        assert!(
            b.categories
                .iter()
                .any(|c| c.tool.as_deref() == Some(OTHER_TOOLS))
        );
    }
}
