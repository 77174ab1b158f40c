//! The analysis on small histories: the extraction rules, the carried check, the ranking,
//! what a micro compaction clears, and (proptest) that an item the summary holds verbatim
//! is never reported not carried.

use proptest::prelude::*;
use serde_json::json;

use super::carry::{Reference, normalize};
use super::facts::FactKind;
use super::parts::Numbered;
use super::task_text::is_decision;
use super::*;
use crate::message::Message;

fn msg(v: serde_json::Value) -> Message {
    Message::from_value(v).unwrap()
}

fn full(before: Vec<Message>, summary: &str) -> CompactionInput {
    CompactionInput {
        kind: "test full".into(),
        micro: false,
        at: None,
        call: None,
        trigger: None,
        rule: "everything is replaced".into(),
        before: before
            .into_iter()
            .enumerate()
            .map(|(i, m)| Numbered::new(Some(i), m))
            .collect(),
        summary: SummaryText::Text(summary.into()),
        kept: KeptInput::recorded(Vec::new(), Vec::new()),
        cleared: Vec::new(),
        after: Vec::new(),
        tokens_before: None,
    }
}

fn history() -> Vec<Message> {
    vec![
        Message::user_text(
            "Port the parser in src/parser.rs. Never use unwrap() in library code; use `thiserror`, not anyhow.",
        ),
        msg(json!({"role": "assistant", "content": [
            {"type": "text", "text": "Let me now read the key files I'll be modifying. It takes 30 ms per file."},
            {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/repo/vendor/lib/compiler.py"}},
        ]})),
        msg(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "raise CompileError('x')\nlog: error: none\n see DateTime.diff"},
        ]})),
        msg(json!({"role": "assistant", "content": [
            {"type": "text", "text": "Decision: we keep the cache in memory rather than on disk."},
            {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "cargo test -p parser"}},
            {"type": "tool_use", "id": "t3", "name": "Write", "input": {"file_path": "/repo/.gitignore", "content": "target/"}},
            {"type": "tool_use", "id": "t4", "name": "TodoWrite", "input": {"todos": [
                {"content": "Port the lexer", "status": "completed"},
                {"content": "Port the error type to thiserror", "status": "in_progress"},
            ]}},
        ]})),
        msg(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t2", "is_error": true, "content": "Exit code 101\nerror[E0425]: cannot find value `since` in /repo/src/very/long/path/to/the/parser.rs"},
            {"type": "tool_result", "tool_use_id": "t3", "content": "File created successfully at: /repo/.gitignore"},
            {"type": "tool_result", "tool_use_id": "t4", "content": "ok"},
        ]})),
    ]
}

fn kinds_and_texts(r: &CompactionForgot) -> Vec<(FactKind, &str)> {
    r.facts.iter().map(|f| (f.kind, f.text.as_str())).collect()
}

#[test]
fn files_a_shell_command_writes() {
    use super::facts::shell_writes;
    assert_eq!(
        shell_writes(
            "mkdir -p \"$(dirname './.gitleaks.toml')\" && printf '%s' 'x' > './.gitleaks.toml'"
        ),
        vec!["./.gitleaks.toml"]
    );
    assert_eq!(
        shell_writes("echo a >> notes.txt; cat x.md | tee out.md"),
        vec!["notes.txt", "out.md"]
    );
    assert_eq!(
        shell_writes("sed -i 's/a/b/' src/lib.rs"),
        vec!["src/lib.rs"]
    );
    assert_eq!(
        shell_writes("mv -f a.rs b/c.rs && rm old.py"),
        vec!["b/c.rs", "old.py"]
    );
    assert!(shell_writes("cargo test > /tmp/out.log 2>&1").is_empty());
    assert!(shell_writes("cat src/lib.rs").is_empty());
}

#[test]
fn paths_and_method_names() {
    use super::facts::path_in;
    for p in [
        "README.md",
        "TASK.md",
        "MyView.tsx",
        ".gitignore",
        "src/a.rs",
        "/x/y/z",
    ] {
        assert_eq!(path_in(p), Some(p), "{p}");
    }
    for w in [
        "DateTime.diff",
        "FileUtil.patch",
        "5%",
        "e.g",
        "https://x.org/a.rs",
    ] {
        assert_eq!(path_in(w), None, "{w}");
    }
}

#[test]
fn markers_of_decisions_not_narration() {
    assert!(is_decision("We decided to keep the cache"));
    assert!(is_decision("Use the session table rather than the browser"));
    assert!(!is_decision(
        "Let me now read the key files I'll be modifying."
    ));
    assert!(!is_decision("I'll start with the lexer"));
}

#[test]
fn the_facts_worth_attention_and_not_the_noise() {
    let r = analyze(1, &full(history(), ""));
    let got = kinds_and_texts(&r);
    for want in [
        (FactKind::Constraint, "Never use unwrap() in library code"),
        (FactKind::Constraint, "use `thiserror`, not anyhow."),
        (FactKind::Pending, "Port the error type to thiserror"),
        (FactKind::FileChanged, "/repo/.gitignore"),
        (FactKind::FileNamed, "src/parser.rs"),
        (
            FactKind::Error,
            "error[E0425]: cannot find value `since` in /repo/src/very/long/path/to/the/parser.rs",
        ),
        (
            FactKind::Decision,
            "Decision: we keep the cache in memory rather than on disk.",
        ),
    ] {
        assert!(got.contains(&want), "{want:?} not in {got:#?}");
    }
    // Exception names in source read, error words in a successful output, a method taken
    // for a file, narration, numbers, a completed plan item: none is a fact.
    for noise in [
        "CompileError",
        "log: error: none",
        "DateTime.diff",
        "30 ms",
        "Port the lexer",
        "Let me now read the key files I'll be modifying.",
    ] {
        assert!(
            !got.iter().any(|(_, t)| t.contains(noise)),
            "{noise} in {got:#?}"
        );
    }
    assert_eq!(got.len(), 7, "{got:#?}");
    // Ranked: constraints, then pending work, then changed files, named files, errors,
    // decisions.
    let kinds: Vec<FactKind> = r.facts.iter().map(|f| f.kind).collect();
    let mut sorted = kinds.clone();
    sorted.sort();
    assert_eq!(kinds, sorted);
    assert!(r.facts.iter().all(|f| f.not_carried()));
}

#[test]
fn dot_files_and_near_quotes_are_carried() {
    let summary = "Wrote .gitignore. The test failed: error[E0425] cannot find value since in src/very/long/path/to/the/parser.rs. Never use unwrap in library code.";
    let r = analyze(1, &full(history(), summary));
    let carried = |kind, text: &str| {
        r.facts
            .iter()
            .find(|f| f.kind == kind && f.text == text)
            .unwrap_or_else(|| panic!("no {text}"))
            .carried
    };
    assert_eq!(
        carried(FactKind::FileChanged, "/repo/.gitignore"),
        Some(true)
    );
    assert_eq!(
        carried(
            FactKind::Error,
            "error[E0425]: cannot find value `since` in /repo/src/very/long/path/to/the/parser.rs"
        ),
        Some(true)
    );
    assert_eq!(
        carried(FactKind::Constraint, "Never use unwrap() in library code"),
        Some(true)
    );
    assert_eq!(
        carried(FactKind::Pending, "Port the error type to thiserror"),
        Some(false)
    );
}

#[test]
fn without_a_recorded_summary_the_verdict_is_unknown() {
    let mut input = full(history(), "");
    input.summary = SummaryText::NotRecorded;
    let r = analyze(1, &input);
    assert_eq!(r.not_carried, 0);
    assert_eq!(r.unknown, r.facts.len());
    assert!(r.facts.iter().all(|f| f.carried.is_none()));
    let text = crate::forgot::text::report_lines(&r, &crate::forgot::text::Layout::default());
    assert!(text.iter().any(|l| l.contains("unknown")), "{text:#?}");
    assert!(!text.iter().any(|l| l.contains("NOT CARRIED")));
}

#[test]
fn one_file_under_three_spellings_is_one_fact() {
    let before = vec![
        Message::user_text("Fix src/a.rs please"),
        msg(json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Edit", "input": {"file_path": "/repo/src/a.rs"}},
            {"type": "tool_use", "id": "t2", "name": "Edit", "input": {"file_path": "./src/a.rs"}},
        ]})),
    ];
    let r = analyze(1, &full(before, ""));
    assert_eq!(r.facts.len(), 1, "{:#?}", r.facts);
    assert_eq!(r.facts[0].kind, FactKind::FileChanged);
    assert_eq!(r.facts[0].seen, 3);
}

#[test]
fn the_cap_starts_nearest_the_compaction_and_says_what_was_not_checked() {
    let before: Vec<Message> = (0..facts::MAX_FACTS + 50)
        .map(|i| Message::user_text(format!("Never touch file{i}.rs")))
        .collect();
    let r = analyze(1, &full(before, ""));
    assert!(r.facts_capped);
    // Messages are numbered from 0: the newest ones were checked, the oldest were not.
    let newest = facts::MAX_FACTS + 49;
    assert!(r.facts.iter().any(|f| f.message == Some(newest)));
    assert!(!r.facts.iter().any(|f| f.message == Some(0)));
    assert!(r.unchecked_through.is_some_and(|m| m < newest));
}

#[test]
fn kept_messages_count_as_carried_and_are_not_dropped() {
    let before = history();
    let mut input = full(before.clone(), "");
    input.kept = KeptInput::recorded(vec![before[0].clone()], vec![0]);
    let r = analyze(1, &input);
    assert_eq!(r.dropped.messages, 4);
    assert_eq!(r.kept.messages, 1);
    assert!(r.facts.iter().all(|f| f.kind != FactKind::Constraint));
}

#[test]
fn what_the_losses_cost_afterwards() {
    let mut input = full(history(), "");
    input.after = vec![
        Numbered::new(
            Some(5),
            Message::user_text("Again: never use unwrap() in library code!"),
        ),
        Numbered::new(
            Some(6),
            msg(json!({"role": "assistant", "content": [
                {"type": "tool_use", "id": "a1", "name": "Bash", "input": {"command": "cat .gitignore"}},
                {"type": "tool_use", "id": "a2", "name": "Bash", "input": {"command": "cargo test -p parser"}},
            ]})),
        ),
        Numbered::new(
            Some(7),
            msg(json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "a1", "content": "x".repeat(400)},
                {"type": "tool_result", "tool_use_id": "a2", "is_error": true, "content": "Exit code 101\nerror[E0425]: cannot find value `since` in /repo/src/very/long/path/to/the/parser.rs"},
            ]})),
        ),
    ];
    let r = analyze(1, &input);
    let a = &r.afterwards;
    assert_eq!(a.messages, 3);
    assert_eq!(a.read_again.len(), 1, "{a:#?}");
    assert_eq!(a.read_again[0].file, "/repo/.gitignore");
    assert_eq!(a.read_again[0].tokens, 100);
    assert_eq!(a.failed_again.len(), 1);
    assert_eq!(a.failed_again[0].command, "cargo test -p parser");
    assert_eq!(a.restated.len(), 1);
    assert_eq!(a.restated[0].message, Some(5));
    assert!(
        a.never_touched
            .contains(&"Port the error type to thiserror".to_string())
    );
    assert!(a.never_touched.contains(&"src/parser.rs".to_string()));
}

#[test]
fn lines_wrap_to_the_width() {
    let r = analyze(
        1,
        &full(
            history(),
            "a summary line that is quite long ".repeat(10).as_str(),
        ),
    );
    for width in [60, 80] {
        let layout = crate::forgot::text::Layout {
            width,
            all: true,
            summary: true,
        };
        let lines = crate::forgot::text::report_lines(&r, &layout);
        assert!(
            lines.iter().all(|l| l.chars().count() <= width),
            "{lines:#?}"
        );
        // The facts come before the summary.
        let fact = lines
            .iter()
            .position(|l| l.contains("NOT CARRIED"))
            .unwrap();
        let summary = lines
            .iter()
            .position(|l| l.starts_with("  summary:"))
            .unwrap();
        assert!(fact < summary);
    }
}

#[test]
fn a_micro_compaction_drops_only_its_results_and_sees_them_read_again() {
    let before = history();
    let mut input = full(before, "");
    input.micro = true;
    input.summary = SummaryText::None;
    input.cleared = vec!["t2".into()];
    input.after = vec![
        Numbered::new(
            Some(5),
            msg(json!({"role": "assistant", "content": [
                {"type": "tool_use", "id": "t9", "name": "Bash", "input": {"command": "cargo  test -p parser"}},
            ]})),
        ),
        Numbered::new(
            Some(6),
            msg(json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t9", "content": "x".repeat(400)},
            ]})),
        ),
    ];
    let r = analyze(1, &input);
    assert_eq!(r.dropped.tool_results.count, 1);
    assert_eq!(r.cleared.len(), 1);
    let c = &r.cleared[0];
    assert_eq!(
        (c.tool.as_str(), c.target.as_deref()),
        ("Bash", Some("cargo test -p parser"))
    );
    assert_eq!(c.message, Some(4));
    assert_eq!(c.calls_again, 1);
    assert_eq!(c.read_again[0].message, Some(5));
    assert_eq!(c.tokens_again, 100);
    // What only the cleared result said is gone from the context: not carried.
    assert_eq!(r.facts.len(), 1, "{:#?}", r.facts);
    assert_eq!(r.facts[0].kind, FactKind::Error);
    assert!(r.facts[0].not_carried());
}

#[test]
fn normalising_is_stable() {
    assert_eq!(normalize("  Use  `Foo`\n\"bar\" "), "use foo bar");
    assert_eq!(normalize("./src\\a.rs"), "src/a.rs");
    let r = Reference::new(["see ./SRC/a.rs and .github/workflows/ci.yml."].into_iter());
    assert!(r.mentions_path("/home/x/src/a.rs"));
    assert!(!r.mentions_path("/home/x/lib/b.rs"));
    assert!(r.mentions_path("/repo/.github/workflows/ci.yml"));
}

fn text_strategy() -> impl Strategy<Value = String> {
    let words = prop::sample::select(vec![
        "never",
        "don't",
        "must",
        "use",
        "not",
        "I'll",
        "error:",
        "ValueError",
        "src/a.rs",
        "/x/b/c.py",
        "`ident_1`",
        "Decision:",
        "rather than",
        "keep",
        "12 ms",
        ".gitignore",
        "cargo",
        "build",
        "the",
        "file",
        "\"quoted\"",
        "Tab\tsep",
        "ÄÖ",
        ".",
        ";",
        "\n",
        "x",
    ]);
    prop::collection::vec(words, 1..25).prop_map(|w| w.join(" "))
}

proptest! {
    #[test]
    fn an_item_in_the_summary_verbatim_is_carried(
        user in text_strategy(),
        assistant in text_strategy(),
        result in text_strategy(),
        pick in any::<prop::sample::Index>(),
    ) {
        let before = vec![
            Message::user_text(user),
            msg(json!({"role": "assistant", "content": [
                {"type": "text", "text": assistant},
                {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "cargo build"}},
            ]})),
            msg(json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "is_error": true, "content": result},
            ]})),
        ];
        let found = analyze(1, &full(before.clone(), ""));
        prop_assume!(!found.facts.is_empty());
        let item = &found.facts[pick.index(found.facts.len())];
        let summary = format!("Summary.\n{}\nDone.", item.text);
        let again = analyze(1, &full(before, &summary));
        let same = again.facts.iter().find(|f| f.kind == item.kind && f.text == item.text).unwrap();
        prop_assert!(same.carried == Some(true), "{:?} not carried by {:?}", same, summary);
    }
}

/// Issue 39, item 8: a summary of 91 MB was printed whole in readable mode.
#[test]
fn a_huge_summary_is_shown_by_its_start_with_the_way_to_all_of_it() {
    let summary = format!(
        "{}\n{}",
        "a line of the summary\n".repeat(100_000),
        "x".repeat(50_000)
    );
    let r = analyze(1, &full(history(), &summary));
    let lines = super::text::report_lines(&r, &super::text::Layout::default());
    let shown: Vec<&String> = lines.iter().filter(|l| l.starts_with("    | ")).collect();
    assert_eq!(shown.len(), super::text::SUMMARY_LINES_SHOWN + 1);
    let last = shown.last().unwrap();
    assert!(
        last.contains("99,602 more lines") && last.contains("--json"),
        "{last}"
    );
    let text: usize = lines.iter().map(String::len).sum();
    assert!(text < 100_000, "{text} bytes printed");
    let short = analyze(1, &full(history(), "one\ntwo"));
    let lines = super::text::report_lines(&short, &super::text::Layout::default());
    assert!(lines.iter().any(|l| l == "    | two"));
    assert!(!lines.iter().any(|l| l.contains("--json")));
}
