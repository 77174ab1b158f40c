//! The items a reader would want kept, pulled out of the dropped parts deterministically
//! (docs/forgot.md lists the rules): user constraints, files changed and read, commands,
//! errors, code identifiers, URLs, numbers with units, the assistant's decisions. No model is
//! asked and nothing is judged: a word list and the shapes of paths, commands and errors.

use std::collections::HashSet;

use serde::Serialize;

use super::carry::{Reference, has_extension, normalize};
use super::parts::{Part, PartKind, Target};

/// What an item is; the order is the order not-carried items are ranked in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FactKind {
    UserConstraint,
    FileChanged,
    Error,
    Decision,
    File,
    Command,
    Identifier,
    Url,
    Number,
}

impl FactKind {
    pub fn name(self) -> &'static str {
        match self {
            FactKind::UserConstraint => "user_constraint",
            FactKind::FileChanged => "file_changed",
            FactKind::Error => "error",
            FactKind::Decision => "decision",
            FactKind::File => "file",
            FactKind::Command => "command",
            FactKind::Identifier => "identifier",
            FactKind::Url => "url",
            FactKind::Number => "number",
        }
    }
}

/// One item, where it was, and whether the summary or the kept messages mention it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fact {
    pub kind: FactKind,
    pub text: String,
    pub carried: bool,
    /// The message it was found in.
    pub message: Option<usize>,
    pub role: &'static str,
}

/// At most this many items per compaction, and this many chars of each: the report's size
/// does not grow with a session's.
pub const MAX_FACTS: usize = 400;
pub const MAX_FACT_CHARS: usize = 200;
/// Error lines taken from one part: a long build log names the same error many times.
const MAX_ERRORS_PER_PART: usize = 8;

fn clip(text: &str) -> String {
    let t = text.trim();
    match t.char_indices().nth(MAX_FACT_CHARS) {
        Some((i, _)) => format!("{}…", &t[..i]),
        None => t.to_string(),
    }
}

/// Words split on white space and the punctuation around paths in prose and logs.
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

/// A path in a word, without a `:line:col` suffix.
fn path_in(word: &str) -> Option<&str> {
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
    (has_extension(word) || rooted).then_some(word)
}

/// Sentences of a text: lines, cut after `.`, `!`, `?` or `;` followed by a space.
fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut start = 0;
        let b = line.as_bytes();
        for i in 0..b.len() {
            if matches!(b[i], b'.' | b'!' | b'?' | b';') && b.get(i + 1) == Some(&b' ') {
                out.push(&line[start..=i]);
                start = i + 1;
            }
        }
        out.push(&line[start..]);
    }
    out.into_iter()
        .map(|s| s.trim().trim_end_matches(';').trim_end())
        .filter(|s| s.len() > 3)
        .collect()
}

fn has_word(words: &[&str], w: &str) -> bool {
    words.contains(&w)
}

/// Imperatives and negations: never, don't, always, must, avoid, make sure, "use X, not Y".
pub fn is_constraint(sentence: &str) -> bool {
    let n = normalize(sentence).replace('\u{2019}', "'");
    let words: Vec<&str> = n
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .collect();
    [
        "never", "dont", "always", "must", "mustnt", "avoid", "ensure", "shouldnt", "cannot",
    ]
    .iter()
    .any(|w| has_word(&words, w))
        || n.contains("do not")
        || n.contains("make sure")
        || n.contains("instead of")
        || n.contains("should not")
        || (has_word(&words, "use") && has_word(&words, "not"))
}

/// What an assistant says it will do or has settled on.
pub fn is_decision(sentence: &str) -> bool {
    let n = format!(" {} ", normalize(sentence));
    [
        " ill ",
        " i will ",
        " we will ",
        " lets ",
        " decided ",
        " decision",
        " going to ",
        " instead of ",
        " i chose ",
        " we chose ",
        " the plan is ",
        " the fix is ",
    ]
    .iter()
    .any(|m| n.contains(m))
}

/// An exception's or error type's name: a CamelCase word ending in `Error` or `Exception`.
fn exception_names(line: &str) -> Vec<&str> {
    line.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .map(|w| w.rsplit('.').next().unwrap_or(w))
        .filter(|w| {
            (w.ends_with("Error") || w.ends_with("Exception"))
                && w.len() > "Error".len()
                && w.starts_with(|c: char| c.is_ascii_uppercase())
        })
        .collect()
}

fn is_error_line(line: &str) -> bool {
    let l = line.trim_start();
    [
        "error:",
        "error[",
        "Error:",
        "ERROR",
        "Traceback",
        "panicked at",
        "FAILED",
        "fatal:",
        "Exception",
    ]
    .iter()
    .any(|m| l.contains(m))
        || !exception_names(l).is_empty()
}

fn numbers_with_units(text: &str) -> Vec<String> {
    const UNITS: &[&str] = &[
        "ms", "s", "sec", "secs", "seconds", "min", "mins", "minutes", "h", "hours", "days", "kb",
        "mb", "gb", "tb", "kib", "mib", "gib", "%", "px", "tokens", "chars", "bytes", "lines", "k",
    ];
    let mut out = Vec::new();
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        let (start, c) = chars[i];
        let after_word = i > 0 && chars[i - 1].1.is_alphanumeric();
        if !c.is_ascii_digit() || after_word {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < chars.len()
            && (chars[j].1.is_ascii_digit()
                || (matches!(chars[j].1, '.' | ',')
                    && chars.get(j + 1).is_some_and(|d| d.1.is_ascii_digit())))
        {
            j += 1;
        }
        let mut k = j;
        if k < chars.len() && chars[k].1 == ' ' {
            k += 1;
        }
        let mut e = k;
        while e < chars.len() && (chars[e].1.is_alphabetic() || chars[e].1 == '%') {
            e += 1;
        }
        let end = chars.get(e).map_or(text.len(), |c| c.0);
        let unit_start = chars.get(k).map_or(text.len(), |c| c.0);
        let unit = text[unit_start..end].to_ascii_lowercase();
        if e > k && UNITS.contains(&unit.as_str()) {
            out.push(text[start..end].to_string());
        }
        i = e.max(j).max(i + 1);
    }
    out
}

/// Collects the items of the dropped parts, each once (its first place), at most
/// `MAX_FACTS`.
pub struct Extractor {
    seen: HashSet<(FactKind, String)>,
    pub items: Vec<Fact>,
}

impl Extractor {
    pub fn new() -> Extractor {
        Extractor {
            seen: HashSet::new(),
            items: Vec::new(),
        }
    }

    fn add(&mut self, kind: FactKind, text: &str, part: &Part) {
        let text = clip(text);
        if text.is_empty() || self.items.len() >= MAX_FACTS {
            return;
        }
        if !self.seen.insert((kind, normalize(&text))) {
            return;
        }
        self.items.push(Fact {
            kind,
            text,
            carried: false,
            message: part.message,
            role: part.role,
        });
    }

    pub fn part(&mut self, p: &Part) {
        match &p.kind {
            PartKind::UserText => {
                for s in sentences(&p.text) {
                    if is_constraint(s) {
                        self.add(FactKind::UserConstraint, s, p);
                    }
                }
                self.prose(p);
                self.errors(p);
            }
            PartKind::AssistantText => {
                for s in sentences(&p.text) {
                    if is_decision(s) {
                        self.add(FactKind::Decision, s, p);
                    }
                }
                self.prose(p);
            }
            PartKind::ToolCall(name) => {
                match &p.target {
                    Some(Target::Changed(path)) => self.add(FactKind::FileChanged, path, p),
                    Some(Target::Read(path)) => self.add(FactKind::File, path, p),
                    Some(Target::Ran(cmd)) => {
                        self.add(FactKind::Command, cmd.lines().next().unwrap_or(""), p);
                        self.paths_and_urls(&Part {
                            text: cmd.clone(),
                            ..p.clone()
                        });
                    }
                    None => {}
                }
                if name.to_ascii_lowercase().contains("patch") {
                    for line in p.text.split("\\n") {
                        for head in ["*** Update File: ", "*** Add File: ", "*** Delete File: "] {
                            if let Some(path) = line.split(head).nth(1) {
                                self.add(FactKind::FileChanged, path.trim(), p);
                            }
                        }
                    }
                }
            }
            PartKind::ToolResult(_) => {
                self.errors(p);
                self.paths_and_urls(p);
            }
            PartKind::Thinking | PartKind::InjectedText | PartKind::Other => {}
        }
    }

    /// Paths, URLs, code spans and numbers with units in text people and the model wrote.
    fn prose(&mut self, p: &Part) {
        self.paths_and_urls(p);
        let mut spans = p.text.split('`');
        spans.next();
        while let Some(span) = spans.next() {
            let single =
                !span.is_empty() && span.len() <= 80 && !span.contains(char::is_whitespace);
            if single && path_in(span).is_none() && span.chars().any(char::is_alphabetic) {
                self.add(FactKind::Identifier, span, p);
            }
            spans.next();
        }
        for n in numbers_with_units(&p.text) {
            self.add(FactKind::Number, &n, p);
        }
    }

    fn paths_and_urls(&mut self, p: &Part) {
        for w in tokens(&p.text) {
            if w.starts_with("http://") || w.starts_with("https://") {
                self.add(FactKind::Url, w.trim_end_matches(['/', '.', ')']), p);
            } else if let Some(path) = path_in(w) {
                self.add(FactKind::File, path, p);
            }
        }
    }

    fn errors(&mut self, p: &Part) {
        let mut taken = 0;
        for line in p.text.lines() {
            if taken >= MAX_ERRORS_PER_PART {
                break;
            }
            if !is_error_line(line) {
                continue;
            }
            taken += 1;
            let names = exception_names(line);
            if names.is_empty() {
                self.add(FactKind::Error, line, p);
            }
            for n in names {
                self.add(FactKind::Error, n, p);
            }
        }
    }
}

impl Default for Extractor {
    fn default() -> Extractor {
        Extractor::new()
    }
}

/// Marks each item carried or not against the reference, then ranks: not carried first,
/// by kind (user constraints, files changed, errors, decisions, the rest), then carried.
pub fn check(mut facts: Vec<Fact>, reference: &Reference) -> Vec<Fact> {
    for f in &mut facts {
        f.carried = match f.kind {
            FactKind::File | FactKind::FileChanged => reference.mentions_path(&f.text),
            FactKind::Command => reference.mentions_command(&f.text),
            FactKind::UserConstraint | FactKind::Decision | FactKind::Error => {
                reference.mentions_words(&f.text)
            }
            FactKind::Number => {
                reference.mentions(&f.text) || reference.mentions(&f.text.replace(' ', ""))
            }
            FactKind::Identifier | FactKind::Url => reference.mentions(&f.text),
        };
    }
    facts.sort_by_key(|f| (f.carried, f.kind));
    facts
}
