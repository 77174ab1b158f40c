//! What a compaction's losses cost afterwards, from the messages after it up to the next
//! full compaction (docs/forgot.md): the not-carried files read again (and the tokens their
//! results cost), the pending items and named files never touched, the failed commands
//! that failed again the same way, and the user messages that restate a lost instruction.
//! Evidence, not proof: a re-read may have other reasons; it is listed with its cost.

use std::collections::HashMap;

use serde::Serialize;

use super::carry::{Reference, components, content_words, normalize};
use super::facts::{Fact, FactKind, path_in};
use super::parts::{Part, PartKind, Target};

/// A not-carried file that later calls read again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReadAgain {
    pub file: String,
    pub calls: usize,
    /// chars / 4 of what those calls brought back.
    pub tokens: usize,
    pub first_message: Option<usize>,
}

/// A failed call whose command failed again with the same error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FailedAgain {
    pub command: String,
    pub error: String,
    pub times: usize,
    pub first_message: Option<usize>,
}

/// A user message after the compaction that says a lost instruction again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Restated {
    pub instruction: String,
    pub message: Option<usize>,
}

/// The evidence for one compaction.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Aftermath {
    /// Messages searched (the ones after the compaction, up to the next full one).
    pub messages: usize,
    pub read_again: Vec<ReadAgain>,
    /// Pending items and named files not carried that nothing afterwards touches.
    pub never_touched: Vec<String>,
    pub failed_again: Vec<FailedAgain>,
    pub restated: Vec<Restated>,
}

impl Aftermath {
    pub fn is_empty(&self) -> bool {
        self.read_again.is_empty()
            && self.never_touched.is_empty()
            && self.failed_again.is_empty()
            && self.restated.is_empty()
    }
}

/// Whether a call touched a file: its path, or a word of its command, names the file.
fn touches(target: &Target, file: &[String]) -> bool {
    let same = |p: &str| {
        let c = components(p);
        !c.is_empty() && (c.ends_with(file) || file.ends_with(&c))
    };
    match target {
        Target::Read(p) | Target::Changed(p) => same(p),
        Target::Ran(cmd) => cmd
            .split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '>' | '<' | '|'))
            .filter_map(path_in)
            .any(same),
    }
}

/// The evidence after a compaction, for its not-carried facts; `after` is every part of
/// the messages after it.
pub fn aftermath(facts: &[Fact], after: &[Part], messages: usize) -> Aftermath {
    let lost: Vec<&Fact> = facts.iter().filter(|f| f.not_carried()).collect();
    let results: HashMap<&str, &Part> = after
        .iter()
        .filter(|p| matches!(p.kind, PartKind::ToolResult(_)))
        .filter_map(|p| p.tool_id.as_deref().map(|id| (id, p)))
        .collect();
    let calls: Vec<&Part> = after
        .iter()
        .filter(|p| matches!(p.kind, PartKind::ToolCall(_)))
        .collect();
    let mut out = Aftermath {
        messages,
        ..Aftermath::default()
    };
    for f in &lost {
        match f.kind {
            FactKind::FileChanged | FactKind::FileNamed => {
                let file = components(&f.text);
                let hits: Vec<&&Part> = calls
                    .iter()
                    .filter(|c| c.target.as_ref().is_some_and(|t| touches(t, &file)))
                    .collect();
                let reads: Vec<&&&Part> = hits
                    .iter()
                    .filter(|c| !matches!(c.target, Some(Target::Changed(_))))
                    .collect();
                if !reads.is_empty() {
                    let chars: usize = reads
                        .iter()
                        .filter_map(|c| c.tool_id.as_deref().and_then(|id| results.get(id)))
                        .map(|r| r.chars())
                        .sum();
                    out.read_again.push(ReadAgain {
                        file: f.text.clone(),
                        calls: reads.len(),
                        tokens: chars.div_ceil(4),
                        first_message: reads[0].message,
                    });
                }
                if hits.is_empty() && f.kind == FactKind::FileNamed {
                    out.never_touched.push(f.text.clone());
                }
            }
            FactKind::Pending => {
                let later = Reference::new(
                    after
                        .iter()
                        .filter(|p| {
                            matches!(p.kind, PartKind::ToolCall(_) | PartKind::AssistantText)
                        })
                        .map(|p| p.text.as_str()),
                );
                if !later.mentions_words(&f.text) {
                    out.never_touched.push(f.text.clone());
                }
            }
            FactKind::Error => {
                let Some(cmd) = &f.command else { continue };
                let same: Vec<&&Part> = calls
                    .iter()
                    .filter(|c| matches!(&c.target, Some(Target::Ran(x)) if normalize(x.lines().next().unwrap_or("")) == normalize(cmd)))
                    .filter(|c| {
                        c.tool_id
                            .as_deref()
                            .and_then(|id| results.get(id))
                            .is_some_and(|r| r.failed && normalize(&r.text).contains(&normalize(&f.text)))
                    })
                    .collect();
                if !same.is_empty() {
                    out.failed_again.push(FailedAgain {
                        command: cmd.clone(),
                        error: f.text.clone(),
                        times: same.len(),
                        first_message: same[0].message,
                    });
                }
            }
            FactKind::Constraint => {
                let words = content_words(&f.text);
                if words.is_empty() {
                    continue;
                }
                let restated = after
                    .iter()
                    .filter(|p| p.kind == PartKind::UserText)
                    .find(|p| {
                        let said: Vec<String> = content_words(&p.text);
                        let found = words.iter().filter(|w| said.contains(w)).count();
                        found * 10 >= words.len() * 7
                    });
                if let Some(p) = restated {
                    out.restated.push(Restated {
                        instruction: f.text.clone(),
                        message: p.message,
                    });
                }
            }
            FactKind::Decision => {}
        }
    }
    out
}
