//! Instructions in text: the sentences a person typed, and those of a task the agent read
//! through a tool (an issue, a spec, a TASK.md), that say what must or must not be done,
//! and the items under a task's "Definition of Done" or "Acceptance criteria". Which tool
//! results are task documents is decided from the call (a document's extension, an issue
//! viewer), so library source the agent read never yields instructions (docs/forgot.md).

use super::carry::normalize;
use super::parts::Target;

/// Extensions of documents a task is written in (no extension counts too: `ISSUE`, `TODO`).
const DOC_EXTENSIONS: &[&str] = &["md", "markdown", "txt", "rst", "adoc", "org"];
/// Programs that print a file as it is.
const PRINTERS: &[&str] = &[
    "cat", "head", "tail", "less", "more", "bat", "nl", "sed", "type",
];
/// Commands that print an issue or a pull request.
const ISSUE_VIEWERS: &[&str] = &[
    "gh issue view",
    "gh pr view",
    "glab issue view",
    "glab mr view",
];

/// Whether a path names a document (not source): a document extension, or none.
fn is_document(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rsplit_once('.') {
        Some(("", _)) => false,
        Some((_, ext)) => DOC_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()),
        None => name.chars().any(|c| c.is_ascii_uppercase()),
    }
}

/// The document a call read, when it read one: a read tool on a document, a printer
/// command with a document as its last argument, or an issue viewer.
pub fn task_document(target: &Target) -> Option<String> {
    match target {
        Target::Read(path) => is_document(path).then(|| path.clone()),
        Target::Changed(_) => None,
        Target::Ran(cmd) => {
            let first = cmd.lines().next().unwrap_or("").trim();
            if ISSUE_VIEWERS.iter().any(|v| first.starts_with(v)) {
                return Some(first.to_string());
            }
            let words: Vec<&str> = first.split_whitespace().collect();
            let program = words.first()?.rsplit('/').next()?;
            let last = words.last()?;
            (PRINTERS.contains(&program) && words.len() >= 2 && is_document(last))
                .then(|| last.to_string())
        }
    }
}

/// A Read tool's result lines carry their numbers (`    12→text`, `12\ttext`): dropped.
fn without_line_number(line: &str) -> &str {
    let t = line.trim_start();
    let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return line;
    }
    let rest = &t[digits..];
    rest.strip_prefix('\t')
        .or_else(|| rest.strip_prefix('→'))
        .unwrap_or(line)
}

/// Sentences of a line: cut after `.`, `!`, `?` or `;` followed by a space.
pub fn sentences_of_line(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let b = line.as_bytes();
    for i in 0..b.len() {
        if matches!(b[i], b'.' | b'!' | b'?' | b';') && b.get(i + 1) == Some(&b' ') {
            out.push(&line[start..=i]);
            start = i + 1;
        }
    }
    out.push(&line[start..]);
    out.into_iter()
        .map(|s| s.trim().trim_end_matches(';').trim_end())
        .filter(|s| s.chars().filter(|c| c.is_alphabetic()).count() > 3)
        .collect()
}

/// Imperatives and negations: never, don't, always, must, avoid, make sure, keep (as the
/// sentence's verb), "use X, not Y".
pub fn is_constraint(sentence: &str) -> bool {
    let n = normalize(sentence).replace('\u{2019}', "'");
    let words: Vec<&str> = n
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .collect();
    let has = |w: &str| words.contains(&w);
    [
        "never", "dont", "always", "must", "mustnt", "avoid", "ensure", "shouldnt", "cannot",
    ]
    .iter()
    .any(|w| has(w))
        || words
            .first()
            .is_some_and(|w| matches!(*w, "keep" | "preserve"))
        || n.contains("do not")
        || n.contains("make sure")
        || n.contains("instead of")
        || n.contains("should not")
        || (has("use") && has("not"))
}

/// A heading whose items are requirements.
fn is_requirements_heading(line: &str) -> bool {
    let t = line.trim();
    let heading = t.starts_with('#') || t.ends_with(':') || t.starts_with("**");
    let n = t.to_ascii_lowercase();
    heading
        && [
            "definition of done",
            "acceptance criteria",
            "requirements",
            "constraints",
            "must have",
        ]
        .iter()
        .any(|h| n.contains(h))
}

fn bullet_text(line: &str) -> Option<&str> {
    let t = line.trim_start();
    let rest = ["- [ ] ", "- [x] ", "* [ ] ", "- ", "* ", "+ "]
        .iter()
        .find_map(|b| t.strip_prefix(b))
        .or_else(|| {
            let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            (digits > 0)
                .then(|| {
                    t[digits..]
                        .strip_prefix(". ")
                        .or(t[digits..].strip_prefix(") "))
                })
                .flatten()
        })?;
    Some(rest.trim())
}

/// The instructions in a text: each constraint sentence, and each item under a
/// requirements heading. `document` true when the text is a task read through a tool
/// (its lines may carry a Read tool's line numbers).
pub fn instructions(text: &str, document: bool) -> Vec<String> {
    stated(text, document).instructions
}

/// What a person or a task states: its instructions, and its decisions (sentences that
/// settle a choice, `is_decision`, and are not also instructions). A decision is as easily
/// lost when the user typed it or a task records it as when the agent said it.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Stated {
    pub instructions: Vec<String>,
    pub decisions: Vec<String>,
}

pub fn stated(text: &str, document: bool) -> Stated {
    let mut out = Stated::default();
    let mut under_requirements = false;
    for raw in text.lines() {
        let line = if document {
            without_line_number(raw)
        } else {
            raw
        };
        let t = line.trim();
        // Markup the agents wrap around what a person typed is not what they typed.
        if t.starts_with('<') {
            continue;
        }
        if is_requirements_heading(t) {
            under_requirements = true;
            continue;
        }
        if t.starts_with('#') {
            under_requirements = false;
            continue;
        }
        if under_requirements && let Some(item) = bullet_text(t) {
            if item.chars().filter(|c| c.is_alphabetic()).count() > 3 {
                out.instructions.push(item.to_string());
            }
            continue;
        }
        for s in sentences_of_line(t) {
            let s = bullet_text(s).unwrap_or(s);
            if is_constraint(s) {
                out.instructions.push(s.to_string());
            } else if is_decision(s) {
                out.decisions.push(s.to_string());
            }
        }
    }
    out
}

/// What a sentence states as settled (said by the assistant, typed by a person or written
/// in a task): a decision, not narration ("Let me now read …").
pub fn is_decision(sentence: &str) -> bool {
    let n = format!(" {} ", normalize(sentence));
    [
        " decided ",
        " decision",
        " i chose ",
        " we chose ",
        " chosen ",
        " the plan is ",
        " the fix is ",
        " the approach is ",
        " going with ",
        " rather than ",
        " instead of ",
        " opted ",
        " settled on ",
    ]
    .iter()
    .any(|m| n.contains(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_file_yields_its_constraints_and_done_items() {
        let task = "     1\t# Task\n     2\tKeep expansion state server-authoritative.\n     3\tThe cache must not reset on page reload.\n     4\tWe read the logs.\n     5\t## Definition of Done\n     6\t- `make test` passes\n     7\t- README.md documents the cache\n";
        let got = instructions(task, true);
        assert_eq!(
            got,
            vec![
                "Keep expansion state server-authoritative.",
                "The cache must not reset on page reload.",
                "`make test` passes",
                "README.md documents the cache",
            ]
        );
    }

    #[test]
    fn a_person_or_a_task_states_decisions_apart_from_instructions() {
        let task = "     1\t# Task\n     2\tKeep the cache small.\n     3\t## From the design review\n     4\tWe chose SQLite over Redis for the cache store.\n     5\tThe parser is slow.\n";
        let got = stated(task, true);
        assert_eq!(got.instructions, vec!["Keep the cache small."]);
        assert_eq!(
            got.decisions,
            vec!["We chose SQLite over Redis for the cache store."]
        );
        let typed = stated(
            "Never push to main; use a feature branch. We decided to key the cache by node id, not by path.",
            false,
        );
        assert_eq!(typed.instructions, vec!["Never push to main"]);
        assert_eq!(
            typed.decisions,
            vec!["We decided to key the cache by node id, not by path."]
        );
        // An instruction that also reads as a choice stays an instruction, once.
        let both = stated("Use tabs instead of spaces.", false);
        assert_eq!(both.instructions.len() + both.decisions.len(), 1);
        assert!(both.decisions.is_empty());
    }

    #[test]
    fn documents_are_told_from_source() {
        assert_eq!(
            task_document(&Target::Ran("cat TASK.md".into())).as_deref(),
            Some("TASK.md")
        );
        assert!(task_document(&Target::Ran("cat vendor/lib/compiler.py".into())).is_none());
        assert!(task_document(&Target::Read("/r/docs/spec.md".into())).is_some());
        assert!(task_document(&Target::Read("/r/.gitignore".into())).is_none());
        assert!(task_document(&Target::Ran("gh issue view 34".into())).is_some());
        assert!(task_document(&Target::Ran("sh tools/lint.sh".into())).is_none());
    }

    #[test]
    fn markers_of_constraints() {
        assert!(is_constraint("Never use unwrap() in library code"));
        assert!(is_constraint("Don't touch the migrations"));
        assert!(is_constraint("use tabs, not spaces"));
        assert!(is_constraint("Keep expansion state server-authoritative"));
        assert!(!is_constraint("We keep a cache"));
        assert!(!is_constraint("The parser is slow"));
    }
}
