//! Whether an item was carried: a check of mentions, not of meaning (docs/forgot.md). The
//! reference (the summary and what the compaction kept) is normalised once: lower case, no
//! quotes or backticks, runs of white space as one space, backslashes as slashes. An item
//! is carried when its normalised text appears in it, or, failing that, by its kind's
//! looser rule: a path whose trailing components name the same file, a command whose first
//! two words appear, a sentence whose every content word appears.

use std::cell::OnceCell;
use std::collections::HashSet;

/// Lower case, quotes dropped, white space collapsed, `\` as `/`, `./` prefixes dropped.
pub fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.chars() {
        if matches!(
            c,
            '"' | '\'' | '`' | '\u{2018}' | '\u{2019}' | '\u{201c}' | '\u{201d}'
        ) {
            continue;
        }
        if c.is_whitespace() {
            space = !out.is_empty();
            continue;
        }
        if space {
            out.push(' ');
            space = false;
        }
        let c = if c == '\\' { '/' } else { c };
        // Most text is ASCII: its lower case is one char, without the Unicode tables.
        if c.is_ascii() {
            out.push(c.to_ascii_lowercase());
        } else {
            out.extend(c.to_lowercase());
        }
    }
    // Without a `./` there is nothing to take out: the text is not copied again.
    if !out.contains("./") {
        return out;
    }
    out.replace(" ./", " ").trim_start_matches("./").to_string()
}

/// A path's components, normalised, without `.` and empty ones.
pub fn components(path: &str) -> Vec<String> {
    normalize(path)
        .trim_end_matches(['.', ',', ':', ';', ')'])
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .map(str::to_string)
        .collect()
}

/// Words a sentence check looks for: letters, digits, `_`, `-`, `.` runs of three chars
/// or more, not on the stop list.
pub fn content_words(text: &str) -> Vec<String> {
    words(&normalize(text))
        .filter(|w| w.chars().count() >= 3 && !STOP_WORDS.contains(w))
        .map(str::to_string)
        .collect()
}

/// Words and paths of a normalised text. A leading `.` stays (`.gitignore`,
/// `.github/workflows/ci.yml` are names, not sentence ends); trailing dots, dashes and
/// slashes go.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/')))
        .map(|w| {
            w.trim_end_matches(['.', '-', '/'])
                .trim_start_matches(['-', '/'])
                .trim_start_matches("./")
        })
        .filter(|w| !w.is_empty() && *w != ".")
}

/// Whether a word is a path (it has a `/` between names or a known extension).
fn is_pathlike(w: &str) -> bool {
    w.trim_matches('/').contains('/') || has_extension(w) || is_dot_file(w)
}

/// A dot file's name: `.gitignore`, `.env`, `.gitleaks.toml`.
pub fn is_dot_file(w: &str) -> bool {
    let name = w.rsplit('/').next().unwrap_or(w);
    name.strip_prefix('.').is_some_and(|rest| {
        rest.len() >= 2
            && rest.starts_with(|c: char| c.is_ascii_alphanumeric())
            && rest
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    })
}

/// Function words and the constraint markers themselves: a summary that keeps a
/// constraint's content in other words still mentions it.
const STOP_WORDS: &[&str] = &[
    "the", "and", "for", "you", "your", "that", "this", "with", "from", "are", "was", "were",
    "but", "not", "never", "dont", "don't", "always", "must", "should", "please", "use", "using",
    "any", "all", "its", "it's", "into", "then", "than", "will", "ill", "i'll", "we'll", "let",
    "lets", "let's", "also", "only", "make", "sure", "avoid", "instead", "have", "has", "can",
    "cannot", "can't", "would", "could", "our", "out", "what", "when", "there", "here", "them",
    "they", "just", "more", "some", "very", "going", "decided", "ensure", "keep", "decision",
    "rather", "error", "errors", "failed", "done", "does", "not", "should", "shall", "need",
    "needs", "each", "which", "who", "how", "why", "being", "been", "had", "did", "may", "might",
    "yes", "now", "next",
];

/// `CONTENT_SHARE` = 7/10: the share of a sentence's content words that must appear.
const CONTENT_SHARE_NUM: usize = 7;
const CONTENT_SHARE_DEN: usize = 10;

/// The summary and kept text, normalised once for every check.
pub struct Reference {
    text: String,
    /// Its words and paths, split out the first time a check needs them: most items are
    /// found in the text as they are, and a Codex compaction's reference holds thousands of
    /// kept prompts (issue 36).
    split: OnceCell<Split>,
}

/// A reference's words, each once, and its path-like words by their components.
struct Split {
    words: HashSet<String>,
    paths: Vec<Vec<String>>,
}

impl Split {
    fn of(text: &str) -> Split {
        // A word is copied the first time only: a reference repeats most of its words.
        let mut words: HashSet<String> = HashSet::new();
        for w in self::words(text) {
            if !words.contains(w) {
                words.insert(w.to_string());
            }
        }
        let paths = words
            .iter()
            .filter(|w| is_pathlike(w))
            .map(|w| components(w))
            .filter(|c| !c.is_empty())
            .collect();
        Split { words, paths }
    }
}

impl Reference {
    pub fn new<'a>(texts: impl Iterator<Item = &'a str>) -> Reference {
        let mut text = String::new();
        for t in texts {
            text.push_str(&normalize(t));
            text.push('\n');
        }
        Reference::of_text(text)
    }

    /// The reference of texts already normalised (`normalize`), each as `new` adds it.
    pub fn of_normalized<'a>(texts: impl Iterator<Item = &'a str> + Clone) -> Reference {
        // Sized first: the text is tens of kilobytes, grown by doubling it was copied often.
        let mut text = String::with_capacity(texts.clone().map(|t| t.len() + 1).sum());
        for t in texts {
            text.push_str(t);
            text.push('\n');
        }
        Reference::of_text(text)
    }

    fn of_text(text: String) -> Reference {
        Reference {
            text,
            split: OnceCell::new(),
        }
    }

    fn split(&self) -> &Split {
        self.split.get_or_init(|| Split::of(&self.text))
    }

    /// The normalised text appears as it is.
    pub fn mentions(&self, item: &str) -> bool {
        let n = normalize(item);
        !n.is_empty() && self.text.contains(&n)
    }

    /// A path is carried when some path in the reference names the same file: one of the
    /// two ends with the other, component by component (`/repo/src/main.rs` and
    /// `src/main.rs`, or `main.rs`).
    pub fn mentions_path(&self, path: &str) -> bool {
        if self.mentions(path) {
            return true;
        }
        let p = components(path);
        if p.is_empty() {
            return false;
        }
        self.split()
            .paths
            .iter()
            .any(|r| r.ends_with(&p) || (p.ends_with(r) && r.last() == p.last()))
    }

    /// A command is carried when its first two words appear together.
    pub fn mentions_command(&self, command: &str) -> bool {
        if self.mentions(command) {
            return true;
        }
        let head: Vec<&str> = command.split_whitespace().take(2).collect();
        !head.is_empty() && self.mentions(&head.join(" "))
    }

    /// A sentence is carried when at least `CONTENT_SHARE` of its content words appear (a
    /// path among them as a path, by its trailing components): a summary that quotes an
    /// error almost word for word, or spells a long path shorter, still carries it.
    pub fn mentions_words(&self, sentence: &str) -> bool {
        if self.mentions(sentence) {
            return true;
        }
        let words = content_words(sentence);
        if words.is_empty() {
            return false;
        }
        let found = words
            .iter()
            .filter(|w| {
                self.split().words.contains(w.as_str()) || (is_pathlike(w) && self.mentions_path(w))
            })
            .count();
        found * CONTENT_SHARE_DEN >= words.len() * CONTENT_SHARE_NUM
    }
}

/// Extensions that make a word a file name.
const EXTENSIONS: &[&str] = &[
    "rs", "py", "js", "mjs", "cjs", "ts", "tsx", "jsx", "go", "java", "kt", "c", "h", "cc", "cpp",
    "hpp", "cs", "rb", "php", "swift", "scala", "zig", "lua", "ex", "exs", "md", "txt", "json",
    "jsonl", "toml", "yaml", "yml", "lock", "sh", "bash", "zsh", "html", "css", "scss", "sql",
    "xml", "csv", "log", "cfg", "ini", "env", "conf", "vue", "svelte", "proto", "tf", "ipynb",
    "mk", "gradle", "pdf", "png", "jpg", "svg", "patch", "diff",
];

/// Whether a word's last component ends in a known file extension.
pub fn has_extension(word: &str) -> bool {
    let name = word.rsplit('/').next().unwrap_or(word);
    match name.rsplit_once('.') {
        Some((stem, ext)) => {
            !stem.is_empty() && EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str())
        }
        None => false,
    }
}
