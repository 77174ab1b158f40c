//! `ctxlab forgot ORIGINAL --against FORK`: which of the facts a compaction lost (those its
//! summary did not carry, as `ctxlab forgot` finds them) the fork carries. The same check
//! of mentions as forgot's (docs/forgot.md), run against every message of the fork instead
//! of the summary and what was kept.

use std::collections::HashMap;

use serde::Serialize;

use crate::forgot::carry::Reference;
use crate::forgot::facts::{Known, check};
use crate::forgot::from_session::inputs_of_session;
use crate::forgot::parts::{Numbered, parts_of};
use crate::forgot::{Fact, analyze};
use crate::session::Session;

/// One compaction's lost facts and whether the fork carries each (`carried`).
#[derive(Debug, Clone, Serialize)]
pub struct Against {
    pub index: usize,
    /// Facts of the dropped part the summary did not carry.
    pub lost: usize,
    /// How many of them the fork carries.
    pub carried_by_fork: usize,
    /// The lost facts; `carried` here says whether the fork mentions them.
    pub facts: Vec<Fact>,
}

/// For each compaction of `original` (or the one asked, 1-based), its lost facts checked
/// against `fork`'s messages. None: no such compaction.
pub fn against(original: &Session, fork: &Session, only: Option<usize>) -> Option<Vec<Against>> {
    let inputs = inputs_of_session(original);
    let names = HashMap::new();
    let texts: Vec<String> = fork
        .messages
        .iter()
        .flat_map(|m| parts_of(&Numbered::new(None, m.clone()), &names))
        .map(|p| p.text)
        .collect();
    let reference = Reference::new(texts.iter().map(String::as_str));
    let picked: Vec<usize> = match only {
        Some(n) if n >= 1 && n <= inputs.len() => vec![n - 1],
        Some(_) => return None,
        None => (0..inputs.len()).collect(),
    };
    Some(
        picked
            .into_iter()
            .map(|i| {
                let report = analyze(i + 1, &inputs[i]);
                let lost: Vec<Fact> = report
                    .facts
                    .into_iter()
                    // Not carried, or not known to be (no summary recorded): the fork's
                    // messages are all known, so each gets a verdict there.
                    .filter(|f| f.carried != Some(true))
                    .map(|mut f| {
                        f.carried = None;
                        f
                    })
                    .collect();
                let facts = check(lost, &reference, Known::Yes);
                Against {
                    index: i + 1,
                    lost: facts.len(),
                    carried_by_fork: facts.iter().filter(|f| f.carried == Some(true)).count(),
                    facts,
                }
            })
            .collect(),
    )
}

/// The report as lines for people.
pub fn lines(found: &[Against]) -> Vec<String> {
    let mut out = Vec::new();
    for a in found {
        out.push(format!(
            "#{}: the fork carries {} of the {} facts the summary did not carry",
            a.index, a.carried_by_fork, a.lost
        ));
        for f in &a.facts {
            let mark = if f.carried == Some(true) {
                "in the fork"
            } else {
                "still lost "
            };
            out.push(format!(
                "  {mark} {:<15} {}",
                f.kind.name(),
                f.text.replace('\n', " ")
            ));
        }
    }
    out
}
