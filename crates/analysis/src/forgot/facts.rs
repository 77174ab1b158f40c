//! The facts worth a person's attention, pulled out of the dropped parts deterministically
//! (docs/forgot.md lists the rules): instructions (typed by a person, or in a task the agent
//! read through a tool), the pending plan, files the agent changed, files a person or a
//! task named, errors of calls that failed, decisions stated as decisions (by the agent, a
//! person, or a task read through a tool). No model is asked: word lists and the shapes of
//! calls, paths and errors. Words that merely
//! look like facts (error words in a successful output, exception names in source read,
//! narration, bare numbers) are not taken.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::carry::{Reference, components, has_extension, is_dot_file, normalize};
use super::parts::{Part, PartKind, Target};
use super::task_text::{is_decision, sentences_of_line, stated, task_document};

/// What an item is; the order is the order not-carried items are ranked in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FactKind {
    /// An instruction a person typed or a task read through a tool states.
    Constraint,
    /// An item of the agent's plan not completed (Claude Code's todo list, Codex's plan).
    Pending,
    FileChanged,
    /// A file a person or a task named.
    FileNamed,
    /// The error of a call that failed.
    Error,
    Decision,
}

impl FactKind {
    pub fn name(self) -> &'static str {
        match self {
            FactKind::Constraint => "constraint",
            FactKind::Pending => "pending",
            FactKind::FileChanged => "file_changed",
            FactKind::FileNamed => "file_named",
            FactKind::Error => "error",
            FactKind::Decision => "decision",
        }
    }
}

/// One item, where it came from, and whether the summary or the kept messages mention it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fact {
    pub kind: FactKind,
    pub text: String,
    /// `None`: unknown (the summary is not recorded or is encrypted, and the kept
    /// messages do not mention it).
    pub carried: Option<bool>,
    /// The message it was found in (the one nearest the compaction when it recurs).
    pub message: Option<usize>,
    pub role: &'static str,
    /// Where it came from: `user`, `task TASK.md`, `Write`, `failed: cargo test`, …
    pub from: String,
    /// The failed call's command (errors only): what "failed again" is matched on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// How many places it was found in (duplicates and other spellings merged).
    pub seen: usize,
}

impl Fact {
    pub fn not_carried(&self) -> bool {
        self.carried == Some(false)
    }
}

/// At most this many items per compaction, and this many chars of each: the report's size
/// does not grow with a session's.
pub const MAX_FACTS: usize = 400;
pub const MAX_FACT_CHARS: usize = 200;

fn clip(text: &str) -> String {
    let t = text.trim();
    match t.char_indices().nth(MAX_FACT_CHARS) {
        Some((i, _)) => format!("{}…", &t[..i]),
        None => t.to_string(),
    }
}

/// Words split on white space and the punctuation around paths in prose.
fn tokens(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '(' | ')' | '[' | ']' | '{' | '}' | '<' | '>' | ',' | ';' | '"' | '\'' | '`' | '='
            )
    })
    .map(|w| w.trim_end_matches(['.', ':', '!', '?']))
    .filter(|w| !w.is_empty())
}

/// A path in a word, without a `:line:col` suffix: a known extension, a dot file, or rooted
/// with two components or more.
pub fn path_in(word: &str) -> Option<&str> {
    if word.contains("://") {
        return None;
    }
    let word = word.split(':').next().unwrap_or(word);
    let pathy =
        |c: char| c.is_alphanumeric() || matches!(c, '/' | '.' | '_' | '-' | '~' | '+' | '@');
    if word.len() < 3 || !word.chars().all(pathy) || word.contains("..") && !word.starts_with("../")
    {
        return None;
    }
    let rooted = ["/", "~/", "./", "../"].iter().any(|p| word.starts_with(p))
        && word.chars().filter(|c| c.is_alphanumeric()).count() >= 2
        && word.matches('/').count() >= 2;
    // `DateTime.diff`, `Foo.patch`: a CamelCase name and a method whose name is also an
    // extension. `README.md` and `MyView.tsx` stay files.
    let method_like = !word.contains('/')
        && word.rsplit_once('.').is_some_and(|(stem, ext)| {
            matches!(ext, "diff" | "patch" | "log")
                && stem.chars().any(|c| c.is_ascii_lowercase())
                && stem.chars().skip(1).any(|c| c.is_ascii_uppercase())
        });
    ((has_extension(word) && !method_like) || rooted || is_dot_file(word)).then_some(word)
}

/// Lines of a failed call's output that say nothing about the failure: the agents' own
/// headers (exit code, wall time) and tags.
fn is_header(line: &str) -> bool {
    let l = line.trim();
    l.is_empty()
        || [
            "Exit code",
            "Process exited with code",
            "Chunk ID:",
            "Wall time:",
            "Original token count:",
            "Output:",
            "Warning: truncated",
            "Total output lines:",
        ]
        .iter()
        .any(|h| l.starts_with(h))
}

fn strip_tags(line: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in line.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.trim().to_string()
}

/// The distinctive line of a failed call's output: the last `SomethingError: …` line (a
/// traceback ends with it), else the first line with an error word, else the first line.
fn error_line(text: &str) -> Option<String> {
    let lines: Vec<String> = text
        .lines()
        .filter(|l| !is_header(l))
        .map(strip_tags)
        .filter(|l| !l.is_empty())
        .collect();
    let exception = |l: &str| {
        l.split(':').next().is_some_and(|head| {
            let name = head.rsplit('.').next().unwrap_or(head).trim();
            (name.ends_with("Error") || name.ends_with("Exception"))
                && !name.contains(' ')
                && name.len() > 5
        })
    };
    let marked = |l: &str| {
        let low = l.to_ascii_lowercase();
        [
            "error",
            "failed",
            "fatal",
            "panicked",
            "cannot",
            "not found",
            "no such",
        ]
        .iter()
        .any(|m| low.contains(m))
    };
    lines
        .iter()
        .rev()
        .find(|l| exception(l))
        .or_else(|| lines.iter().find(|l| marked(l)))
        .or_else(|| lines.first())
        .cloned()
}

/// The plan a call sets: Claude Code's `TodoWrite` (`todos: [{content, status}]`), Codex's
/// `update_plan` (`plan: [{step, status}]`); the items not completed.
fn pending_items(name: &str, input: &Value) -> Option<Vec<String>> {
    let (list, text_key) = match name {
        "TodoWrite" => (input.get("todos")?, "content"),
        "update_plan" => (input.get("plan")?, "step"),
        _ => return None,
    };
    Some(
        list.as_array()?
            .iter()
            .filter(|i| i.get("status").and_then(Value::as_str) != Some("completed"))
            .filter_map(|i| i.get(text_key).and_then(Value::as_str))
            .map(str::to_string)
            .collect(),
    )
}

/// The files a shell command writes, as far as its words show: the target of a `>` or
/// `>>` redirect, of `tee`, of `sed -i`, `touch`, `rm`, and the last argument of `mv` and
/// `cp`. Scratch places (`/dev/…`, `/tmp/…`) are left out: a log written there is no
/// change to the project.
pub fn shell_writes(cmd: &str) -> Vec<String> {
    let words: Vec<String> = cmd
        .split(|c: char| c.is_whitespace() || c == ';')
        .map(|w| {
            w.trim_matches(|c| matches!(c, '"' | '\'' | '(' | ')'))
                .to_string()
        })
        .filter(|w| !w.is_empty())
        .collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let w = words[i].as_str();
        let next = words.get(i + 1).map(String::as_str);
        match w {
            ">" | ">>" | "1>" => out.extend(next.map(str::to_string)),
            _ if (w.starts_with('>') || w.starts_with("1>")) && !w.contains('&') => {
                out.push(w.trim_start_matches(['1', '>']).to_string())
            }
            "tee" | "touch" | "rm" => out.extend(
                words[i + 1..]
                    .iter()
                    .take_while(|a| !matches!(a.as_str(), "&&" | "||" | "|"))
                    .filter(|a| !a.starts_with('-'))
                    .cloned(),
            ),
            "mv" | "cp" => out.extend(
                words[i + 1..]
                    .iter()
                    .take_while(|a| !matches!(a.as_str(), "&&" | "||" | "|"))
                    .filter(|a| !a.starts_with('-'))
                    .last()
                    .cloned(),
            ),
            "sed" if words[i + 1..].iter().take(2).any(|a| a.starts_with("-i")) => out.extend(
                words[i + 1..]
                    .iter()
                    .take_while(|a| !matches!(a.as_str(), "&&" | "||" | "|"))
                    .last()
                    .cloned(),
            ),
            _ => {}
        }
        i += 1;
    }
    out.retain(|p| {
        !p.is_empty()
            && !p.starts_with("/dev/")
            && !p.starts_with("/tmp/")
            && !p.starts_with('&')
            && !p.starts_with('$')
            && path_in(p).is_some()
    });
    out
}

/// What two items of one kind are the same fact by: a file's components, else the
/// normalised text.
pub fn dedup_key(kind: FactKind, text: &str) -> String {
    match kind {
        FactKind::FileChanged | FactKind::FileNamed => components(text).join("/"),
        _ => normalize(text),
    }
}

/// A call as its result is read: its tool and target.
struct Call {
    target: Option<Target>,
}

/// Collects the items of the dropped parts, from the end nearest the compaction back,
/// each once, at most `MAX_FACTS`.
pub struct Extractor {
    seen: HashMap<(FactKind, String), usize>,
    pub items: Vec<Fact>,
    calls: HashMap<String, Call>,
    plan_taken: bool,
    /// The cap was reached at this message: it and the ones before it were not checked.
    pub unchecked_through: Option<Option<usize>>,
}

impl Extractor {
    /// `parts`: every dropped part, in order; calls are looked up for their results.
    pub fn new(parts: &[&Part]) -> Extractor {
        let calls = parts
            .iter()
            .filter(|p| matches!(p.kind, PartKind::ToolCall(_)))
            .filter_map(|p| {
                let id = p.tool_id.clone()?;
                Some((
                    id,
                    Call {
                        target: p.target.clone(),
                    },
                ))
            })
            .collect();
        Extractor {
            seen: HashMap::new(),
            items: Vec::new(),
            calls,
            plan_taken: false,
            unchecked_through: None,
        }
    }

    /// Whether a plan was taken (the latest one: the plans before it are superseded).
    pub fn took_plan(&self) -> bool {
        self.plan_taken
    }

    /// Every part, nearest the compaction first; stops at the cap.
    pub fn run(mut self, parts: &[&Part]) -> Extractor {
        for p in parts.iter().rev() {
            if self.items.len() >= MAX_FACTS {
                self.unchecked_through = Some(p.message);
                break;
            }
            self.part(p);
        }
        self
    }

    fn add(&mut self, kind: FactKind, text: &str, part: &Part, from: String) -> Option<usize> {
        let text = clip(text);
        if text.is_empty() || self.items.len() >= MAX_FACTS {
            return None;
        }
        let key = dedup_key(kind, &text);
        if let Some(&i) = self.seen.get(&(kind, key.clone())) {
            self.items[i].seen += 1;
            return None;
        }
        self.seen.insert((kind, key), self.items.len());
        self.items.push(Fact {
            kind,
            text,
            carried: Some(false),
            message: part.message,
            role: part.role,
            from,
            command: None,
            seen: 1,
        });
        Some(self.items.len() - 1)
    }

    fn part(&mut self, p: &Part) {
        match &p.kind {
            PartKind::UserText => {
                let said = stated(&p.text, false);
                for s in said.instructions {
                    self.add(FactKind::Constraint, &s, p, "user".into());
                }
                for s in said.decisions {
                    self.add(FactKind::Decision, &s, p, "user".into());
                }
                self.named_files(p, "user");
            }
            PartKind::AssistantText => {
                for line in p.text.lines() {
                    for s in sentences_of_line(line) {
                        if is_decision(s) {
                            self.add(FactKind::Decision, s, p, "assistant".into());
                        }
                    }
                }
            }
            PartKind::ToolCall(name) => self.call(name, p),
            PartKind::ToolResult(tool) => self.result(tool, p),
            PartKind::Thinking | PartKind::InjectedText | PartKind::Other => {}
        }
    }

    fn call(&mut self, name: &str, p: &Part) {
        match &p.target {
            Some(Target::Changed(path)) => {
                self.add(FactKind::FileChanged, path, p, name.to_string());
            }
            Some(Target::Ran(cmd)) => {
                for path in shell_writes(cmd) {
                    self.add(FactKind::FileChanged, &path, p, format!("{name} (shell)"));
                }
            }
            _ => {}
        }
        if name.to_ascii_lowercase().contains("patch") {
            // The patch's text is the call's input as JSON: its lines are `\n`-joined.
            for line in p.text.split("\\n") {
                for head in ["*** Update File: ", "*** Add File: ", "*** Delete File: "] {
                    if let Some(path) = line.split(head).nth(1) {
                        let path = path.trim().trim_end_matches(['"', '}']);
                        self.add(FactKind::FileChanged, path, p, name.to_string());
                    }
                }
            }
        }
        // The latest plan is the pending work; older plans are superseded.
        if !self.plan_taken
            && let Ok(input) = serde_json::from_str::<Value>(&p.text)
            && let Some(items) = pending_items(name, &input)
        {
            self.plan_taken = true;
            for item in items {
                self.add(FactKind::Pending, &item, p, name.to_string());
            }
        }
    }

    fn result(&mut self, tool: &str, p: &Part) {
        let target = p
            .tool_id
            .as_deref()
            .and_then(|id| self.calls.get(id))
            .and_then(|c| c.target.clone());
        if p.failed {
            let command = match &target {
                Some(Target::Ran(c)) => Some(c.lines().next().unwrap_or("").to_string()),
                _ => None,
            };
            let from = format!("failed: {}", command.as_deref().unwrap_or(tool));
            if let Some(line) = error_line(&p.text)
                && let Some(i) = self.add(FactKind::Error, &line, p, clip(&from))
            {
                self.items[i].command = command;
            }
            return;
        }
        if let Some(doc) = target.as_ref().and_then(task_document) {
            let from = clip(&format!("task {doc}"));
            let said = stated(&p.text, true);
            for s in said.instructions {
                self.add(FactKind::Constraint, &s, p, from.clone());
            }
            for s in said.decisions {
                self.add(FactKind::Decision, &s, p, from.clone());
            }
            self.named_files(p, &from);
        }
    }

    fn named_files(&mut self, p: &Part, from: &str) {
        for w in tokens(&p.text) {
            if let Some(path) = path_in(w) {
                self.add(FactKind::FileNamed, path, p, from.to_string());
            }
        }
    }
}

/// Files the same file is named by: one's components end with the other's.
fn same_file(a: &[String], b: &[String]) -> bool {
    !a.is_empty() && !b.is_empty() && (a.ends_with(b) || b.ends_with(a))
}

/// One fact per file: a changed file is not also listed as named, and `/repo/src/a.rs`,
/// `src/a.rs` and `./src/a.rs` are one (the longest spelling kept, the places added up).
fn merge_files(facts: Vec<Fact>) -> Vec<Fact> {
    let mut out: Vec<Fact> = Vec::new();
    let mut sorted = facts;
    // Changed before named, so a named file merges into its change.
    sorted.sort_by_key(|f| f.kind);
    for f in sorted {
        let is_file = matches!(f.kind, FactKind::FileChanged | FactKind::FileNamed);
        let c = components(&f.text);
        let twin = is_file
            .then(|| {
                out.iter().position(|o| {
                    matches!(o.kind, FactKind::FileChanged | FactKind::FileNamed)
                        && same_file(&components(&o.text), &c)
                })
            })
            .flatten();
        match twin {
            Some(i) => {
                let o = &mut out[i];
                o.seen += f.seen;
                if f.kind == o.kind && f.text.len() > o.text.len() {
                    o.text = f.text;
                }
            }
            None => out.push(f),
        }
    }
    out
}

/// Whether the reference is readable: with a summary recorded (or none needed), a fact it
/// does not mention is not carried; without one, it is unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Known {
    Yes,
    /// The summary is not recorded or encrypted: only the kept messages can be searched.
    OnlyKept,
}

/// Merges duplicates, marks each item carried, not carried or unknown, then ranks: not
/// carried first (by kind: constraints, pending work, changed files, named files, errors,
/// decisions; nearest the compaction first within a kind), then unknown, then carried.
pub fn check(facts: Vec<Fact>, reference: &Reference, known: Known) -> Vec<Fact> {
    let mut facts = merge_files(facts);
    for f in &mut facts {
        let found = match f.kind {
            FactKind::FileChanged | FactKind::FileNamed => reference.mentions_path(&f.text),
            FactKind::Constraint | FactKind::Decision | FactKind::Error | FactKind::Pending => {
                reference.mentions_words(&f.text)
            }
        };
        f.carried = match (found, known) {
            (true, _) => Some(true),
            (false, Known::Yes) => Some(false),
            (false, Known::OnlyKept) => None,
        };
    }
    let order = |c: Option<bool>| match c {
        Some(false) => 0,
        None => 1,
        Some(true) => 2,
    };
    facts.sort_by_key(|f| {
        (
            order(f.carried),
            f.kind,
            std::cmp::Reverse(f.message.unwrap_or(0)),
        )
    });
    facts
}
