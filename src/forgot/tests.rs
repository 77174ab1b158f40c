//! The analysis on small histories: the extraction rules, the carried check, the ranking,
//! what a micro compaction clears, and (proptest) that an item the summary holds verbatim
//! is never reported not carried.

use proptest::prelude::*;
use serde_json::json;

use super::carry::{Reference, normalize};
use super::facts::{FactKind, is_constraint, is_decision};
use super::parts::Numbered;
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

fn fact<'a>(r: &'a CompactionForgot, kind: FactKind, text: &str) -> &'a Fact {
    r.facts
        .iter()
        .find(|f| f.kind == kind && f.text == text)
        .unwrap_or_else(|| panic!("no {kind:?} {text:?} in {:#?}", r.facts))
}

fn history() -> Vec<Message> {
    vec![
        Message::user_text(
            "Port the parser. Never use unwrap() in library code; use `thiserror`, not anyhow.",
        ),
        msg(json!({"role": "assistant", "content": [
            {"type": "text", "text": "I'll start with the lexer, it takes 30 ms per file."},
            {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "src/lexer.rs"}},
        ]})),
        msg(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "see https://example.org/spec.html\nerror: unexpected EOF at ./src/tokens.rs:4"},
        ]})),
        msg(json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": "t2", "name": "bash", "input": {"command": "cargo test -p parser"}},
        ]})),
        msg(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t2", "content": "thread panicked: ValueError raised"},
        ]})),
    ]
}

#[test]
fn markers_of_constraints_and_decisions() {
    assert!(is_constraint("Never use unwrap() in library code"));
    assert!(is_constraint("Don't touch the migrations"));
    assert!(is_constraint("use tabs, not spaces"));
    assert!(is_constraint("You must run the tests first"));
    assert!(!is_constraint("The parser is slow"));
    assert!(is_decision("I'll start with the lexer"));
    assert!(is_decision("We decided to keep the cache"));
    assert!(!is_decision("The lexer is done"));
}

#[test]
fn each_kind_is_extracted_with_where_it_was() {
    let r = analyze(1, &full(history(), ""));
    let c = fact(
        &r,
        FactKind::UserConstraint,
        "Never use unwrap() in library code",
    );
    assert_eq!((c.message, c.role), (Some(0), "user"));
    fact(&r, FactKind::UserConstraint, "use `thiserror`, not anyhow.");
    fact(&r, FactKind::Identifier, "thiserror");
    fact(
        &r,
        FactKind::Decision,
        "I'll start with the lexer, it takes 30 ms per file.",
    );
    fact(&r, FactKind::Number, "30 ms");
    fact(&r, FactKind::File, "src/lexer.rs");
    fact(&r, FactKind::File, "./src/tokens.rs");
    fact(&r, FactKind::Url, "https://example.org/spec.html");
    fact(
        &r,
        FactKind::Error,
        "error: unexpected EOF at ./src/tokens.rs:4",
    );
    fact(&r, FactKind::Error, "ValueError");
    let cmd = fact(&r, FactKind::Command, "cargo test -p parser");
    assert_eq!((cmd.message, cmd.role), (Some(3), "assistant"));
    assert!(r.facts.iter().all(|f| !f.carried));
    assert_eq!(r.dropped.messages, 5);
    assert_eq!(r.dropped.tool_results_by_tool["read_file"].count, 1);
    assert_eq!(r.dropped.tool_results_by_tool["bash"].count, 1);
    assert_eq!(r.dropped.tool_calls.count, 2);
}

#[test]
fn carried_by_mention_after_normalising_case_quotes_and_paths() {
    let summary = "Read /repo/SRC/lexer.rs and tokens.rs; \"cargo test\" fails with valueerror. \
                   NEVER use unwrap() in library code.";
    let r = analyze(1, &full(history(), summary));
    assert!(fact(&r, FactKind::File, "src/lexer.rs").carried);
    assert!(fact(&r, FactKind::File, "./src/tokens.rs").carried);
    assert!(fact(&r, FactKind::Command, "cargo test -p parser").carried);
    assert!(fact(&r, FactKind::Error, "ValueError").carried);
    assert!(
        fact(
            &r,
            FactKind::UserConstraint,
            "Never use unwrap() in library code"
        )
        .carried
    );
    // Not mentioned: not carried, and ranked first by kind.
    assert!(!fact(&r, FactKind::Url, "https://example.org/spec.html").carried);
    let first = &r.facts[0];
    assert_eq!(
        (first.kind, first.carried),
        (FactKind::UserConstraint, false)
    );
    let kinds: Vec<(bool, FactKind)> = r.facts.iter().map(|f| (f.carried, f.kind)).collect();
    let mut sorted = kinds.clone();
    sorted.sort();
    assert_eq!(kinds, sorted);
}

#[test]
fn kept_messages_count_as_carried_and_are_not_dropped() {
    let before = history();
    let mut input = full(before.clone(), "");
    input.kept = KeptInput::recorded(vec![before[0].clone()], vec![0]);
    let r = analyze(1, &input);
    assert_eq!(r.dropped.messages, 4);
    assert_eq!(r.kept.messages, 1);
    assert!(r.facts.iter().all(|f| f.kind != FactKind::UserConstraint));
}

#[test]
fn a_micro_compaction_drops_only_its_results_and_sees_them_read_again() {
    let before = history();
    let mut input = full(before, "");
    input.micro = true;
    input.summary = SummaryText::None;
    input.cleared = vec!["t1".into()];
    input.after = vec![
        Numbered::new(
            Some(5),
            msg(json!({"role": "assistant", "content": [
                {"type": "tool_use", "id": "t9", "name": "read_file", "input": {"path": "./src/lexer.rs"}},
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
        ("read_file", Some("src/lexer.rs"))
    );
    assert_eq!(c.message, Some(2));
    assert_eq!(c.calls_again, 1);
    assert_eq!(c.read_again[0].message, Some(5));
    assert_eq!(c.tokens_again, 100);
    // What only the cleared result named is gone from the context: not carried.
    assert!(!fact(&r, FactKind::File, "./src/tokens.rs").carried);
    assert!(
        !fact(
            &r,
            FactKind::Error,
            "error: unexpected EOF at ./src/tokens.rs:4"
        )
        .carried
    );
    // The file its call names is still in the context.
    assert!(!r.facts.iter().any(|f| f.text == "src/lexer.rs"));
}

#[test]
fn normalising_is_stable() {
    assert_eq!(normalize("  Use  `Foo`\n\"bar\" "), "use foo bar");
    assert_eq!(normalize("./src\\a.rs"), "src/a.rs");
    let r = Reference::new(["see ./SRC/a.rs"].into_iter());
    assert!(r.mentions_path("/home/x/src/a.rs"));
    assert!(!r.mentions_path("/home/x/lib/b.rs"));
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
        "https://h.example/p",
        "12 ms",
        "40%",
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
                {"type": "tool_result", "tool_use_id": "t1", "content": result},
            ]})),
        ];
        let found = analyze(1, &full(before.clone(), ""));
        prop_assume!(!found.facts.is_empty());
        let item = &found.facts[pick.index(found.facts.len())];
        let summary = format!("Summary.\n{}\nDone.", item.text);
        let again = analyze(1, &full(before, &summary));
        let same = again.facts.iter().find(|f| f.kind == item.kind && f.text == item.text).unwrap();
        prop_assert!(same.carried, "{:?} not carried by {:?}", same, summary);
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
    let lines = super::text::report_lines(&r, true);
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
    let lines = super::text::report_lines(&short, true);
    assert!(lines.iter().any(|l| l == "    | two"));
    assert!(!lines.iter().any(|l| l.contains("--json")));
}
