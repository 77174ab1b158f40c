//! `ctxlab forgot` on sessions written for these tests in the three formats (Claude Code,
//! Codex, a ctxlab message array replayed), each with facts planted before a compaction: a
//! user constraint the summary omits, an error and a file seen only in a tool output the
//! summary omits, a file and an error the summary names, a tool result cleared and read
//! again. Each is asserted carried or not carried as planted, through the library and
//! through the binary's JSON.

use std::path::{Path, PathBuf};

use ctxlab::commands::forgot::{ForgotOptions, find_forgotten};
use ctxlab::compact::{PipelineConfig, Strategy};
use ctxlab::forgot::{CompactionForgot, FactKind, KeptHow};
use ctxlab::pipeline_replay::ReplayOptions;
use serde_json::Value;

use crate::common::cli::ctxlab;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/forgot")
        .join(name)
}

fn carried(c: &CompactionForgot, kind: FactKind, text: &str) -> bool {
    c.facts
        .iter()
        .find(|f| f.kind == kind && f.text == text)
        .unwrap_or_else(|| panic!("no {kind:?} {text:?} in {:#?}", c.facts))
        .carried
        == Some(true)
}

fn listed(c: &CompactionForgot, text: &str) -> bool {
    c.facts.iter().any(|f| f.text.contains(text))
}

fn recorded(name: &str) -> Vec<CompactionForgot> {
    find_forgotten(&fixture(name), &ForgotOptions::default())
        .unwrap()
        .report
        .compactions
}

#[test]
fn claude_code_planted_facts_and_a_cleared_result_read_again() {
    let cs = recorded("claude_planted.jsonl");
    assert_eq!(cs.len(), 2);
    let micro = &cs[0];
    assert_eq!(micro.kind, "claude-code micro");
    assert_eq!(micro.cleared.len(), 1);
    let cleared = &micro.cleared[0];
    assert_eq!(cleared.tool_use_id, "toolu_r1");
    assert_eq!(cleared.tool, "Read");
    assert_eq!(
        cleared.target.as_deref(),
        Some("/home/dev/ledger/src/report.rs")
    );
    assert!(cleared.chars > 1000, "{cleared:?}");
    assert_eq!(cleared.calls_again, 1);
    assert!(cleared.tokens_again > 0);

    let full = &cs[1];
    assert_eq!(full.kind, "claude-code full");
    assert_eq!(full.trigger.as_deref(), Some("auto"));
    assert_eq!(
        full.tokens_before.map(|t| (t.tokens, t.is_estimate())),
        Some((4200, false))
    );
    assert_eq!(full.kept.how, KeptHow::ByRule);
    assert_eq!(full.kept.messages, 0);
    assert!(full.summary_chars > 100);
    // Planted: a constraint the summary omits.
    assert!(!carried(
        full,
        FactKind::Constraint,
        "Never change the public API of src/ledger.rs"
    ));
    // An error line in the output of a call that did not fail, and a file only an output
    // names: not facts (the old rules listed both).
    assert!(!listed(full, "E0425"));
    assert!(!listed(full, "src/filters.rs"));
    // A file the summary names.
    assert!(carried(
        full,
        FactKind::FileChanged,
        "/home/dev/ledger/src/report.rs"
    ));
    // Ranked: the constraint first.
    assert_eq!(full.facts[0].kind, FactKind::Constraint);
    assert_eq!(full.dropped.tool_results_by_tool["Bash"].count, 2);
    assert_eq!(full.dropped.thinking.count, 1);
}

#[test]
fn codex_local_rule_and_remote_replacement_history() {
    let cs = recorded("codex_planted.jsonl");
    assert_eq!(cs.len(), 2);
    let local = &cs[0];
    assert_eq!(local.kind, "codex local");
    // The rollout records no kept list: Codex's rule keeps the user's request.
    assert_eq!(local.kept.how, KeptHow::ByRule);
    assert_eq!(local.kept.messages, 1);
    assert!(!local.facts.iter().any(|f| f.kind == FactKind::Constraint));

    // Its summary is the server's own `compaction` item: a server compaction.
    let remote = &cs[1];
    assert_eq!(remote.kind, "codex server");
    assert_eq!(remote.kept.how, KeptHow::Recorded);
    // The request is kept; the encrypted item is the summary, not a kept message.
    assert_eq!(remote.kept.messages, 1);
    // Its summary is encrypted: whether the constraint was carried is unknown.
    let f = remote
        .facts
        .iter()
        .find(|f| f.text == "Never log the card number.")
        .unwrap();
    assert_eq!((f.kind, f.carried), (FactKind::Constraint, None));
    assert_eq!((remote.not_carried, remote.unknown), (0, 1));
}

fn replayed(limit: usize, micro_min: Option<usize>) -> Vec<CompactionForgot> {
    let mut config = PipelineConfig::for_strategy(Strategy::S08);
    config.context_limit = limit;
    if let Some(m) = micro_min {
        config.micro_min_chars = m;
    }
    let options = ForgotOptions {
        compaction: None,
        replay: Some(ReplayOptions {
            config,
            summary_text: Some(
                "Importer: src/importer.py loads every row; tests fail with KeyError 'amount'."
                    .into(),
            ),
            summarizer: None,
            now_secs: 1_700_000_000,
            recorded: Vec::new(),
        }),
    };
    find_forgotten(&fixture("ctxlab_planted.json"), &options)
        .unwrap()
        .report
        .compactions
}

#[test]
fn ctxlab_replay_summary_and_micro_compact() {
    let cs = replayed(2200, Some(100_000));
    assert_eq!(cs.len(), 1, "{cs:#?}");
    let c = &cs[0];
    assert_eq!(c.kind, "s08 compact_history");
    assert!(!carried(
        c,
        FactKind::Constraint,
        "Always keep the header row in the output."
    ));

    let cs = replayed(1_000_000, None);
    let micro = cs.iter().find(|c| c.kind == "s08 micro_compact").unwrap();
    let first = &micro.cleared[0];
    assert_eq!(
        (first.tool_use_id.as_str(), first.tool.as_str()),
        ("t1", "read_file")
    );
    assert_eq!(first.calls_again, 1);
}

#[test]
fn the_binary_writes_the_json_shape() {
    let out = ctxlab()
        .arg("forgot")
        .arg(fixture("claude_planted.jsonl"))
        .args(["--compaction", "2", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let cs = v["compactions"].as_array().unwrap();
    assert_eq!(cs.len(), 1);
    let c = &cs[0];
    assert_eq!(c["index"], 2);
    assert_eq!(c["kind"], "claude-code full");
    assert!(c["summary_chars"].as_u64().unwrap() > 100);
    assert!(c["dropped"]["messages"].as_u64().unwrap() > 0);
    assert!(c["cleared"].as_array().unwrap().is_empty());
    let f = &c["facts"][0];
    assert_eq!(f["kind"], "constraint");
    assert_eq!(f["from"], "user");
    assert_eq!(f["carried"], false);
    assert_eq!(f["message"], 0);
    assert!(f["text"].as_str().unwrap().starts_with("Never change"));

    let out = ctxlab()
        .arg("forgot")
        .arg(fixture("claude_planted.jsonl"))
        .args(["--compaction", "3"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn human_output_is_sanitized() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture("claude_planted.jsonl")).unwrap();
    let path = dir.path().join("s.jsonl");
    std::fs::write(
        &path,
        text.replace("Never change", "Never \\u001b[31mchange"),
    )
    .unwrap();
    let out = ctxlab().arg("forgot").arg(&path).output().unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(!stdout.contains('\u{1b}'));
    assert!(stdout.contains("NOT CARRIED constraint  Never"));
    assert!(
        stdout.contains("a check of mentions, not of meaning")
            || stdout.contains("A check of mentions, not of meaning")
    );
}

#[test]
fn claude_code_preserved_messages_are_the_kept_set() {
    // The planted session again, its boundary recording `preservedMessages` (the newer
    // field): the first prompt, the last read and its result are kept. One listed uuid is
    // an attachment line (it stands for the message it hangs after, the first prompt), one
    // is no line of the file: passed over with a warning, the others still count.
    let cs = recorded("claude_preserved.jsonl");
    let full = &cs[1];
    assert_eq!(full.kept.how, KeptHow::Recorded);
    assert_eq!(full.kept.messages, 3);
    assert!(full.rule.contains("preservedMessages"), "{}", full.rule);
    // The first prompt, with the constraint, was kept, not dropped: the facts check (of
    // the dropped part) no longer reports it forgotten; the rest was dropped.
    assert_eq!(full.dropped.messages, 8);
    assert!(
        !full
            .facts
            .iter()
            .any(|f| f.kind == FactKind::Constraint && f.not_carried()),
        "{:#?}",
        full.facts
    );
    // What only the dropped tool outputs held is still not carried.
    assert!(!listed(full, "src/filters.rs"));
    let session = ctxlab::session::load_session(&fixture("claude_preserved.jsonl")).unwrap();
    let kept: Vec<Option<usize>> = session.compactions[1]
        .kept
        .as_ref()
        .unwrap()
        .iter()
        .map(|k| k.from)
        .collect();
    assert_eq!(kept, [Some(0), Some(9), Some(10)]);
    assert!(
        session
            .warnings
            .iter()
            .any(|w| w.message.contains("1 of the 5 preserved message uuids")),
        "{:?}",
        session.warnings
    );
}

/// Issue 36: `forgot` analyses each compaction as its input is built and lets it go; the
/// reports (every compaction, and each one asked for alone) are those of the inputs
/// collected first, on every session fixture.
#[test]
fn reports_analysed_one_by_one_are_those_of_the_inputs_collected() {
    use ctxlab::forgot::{analyze, analyze_all, from_session::inputs_of_session};
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut checked = 0;
    for dir in ["sessions", "forgot", "sessions/claude_project"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            let Ok(session) = ctxlab::session::load_session(&path) else {
                continue;
            };
            let inputs = inputs_of_session(&session);
            let all = find_forgotten(&path, &ForgotOptions::default()).unwrap();
            assert_eq!(all.report.compactions, analyze_all(&inputs), "{path:?}");
            for (i, input) in inputs.iter().enumerate() {
                let options = ForgotOptions {
                    compaction: Some(i + 1),
                    replay: None,
                };
                let one = find_forgotten(&path, &options).unwrap();
                assert_eq!(one.report.compactions, vec![analyze(i + 1, input)]);
            }
            checked += inputs.len();
        }
    }
    assert!(checked >= 10, "only {checked} compactions checked");
}

/// A Claude Code session of `stretches` full compactions, the `k`th stretch before one of
/// 1 to 5 turns (a prompt, a tool call, its result, an answer), with a micro compaction now
/// and then, a rewind now and then and preserved messages now and then.
fn long_claude_session(stretches: usize) -> String {
    use serde_json::json;
    let mut lines = Vec::new();
    let mut n = 0;
    let mut parent = Value::Null;
    let mut line = |mut v: Value, parent: &mut Value, rewound_to: Option<Value>| {
        n += 1;
        let uuid = format!("u{n}");
        v["uuid"] = json!(uuid);
        v["parentUuid"] = rewound_to.unwrap_or_else(|| parent.clone());
        v["sessionId"] = json!("s-long");
        lines.push(v.to_string());
        *parent = json!(uuid);
        uuid
    };
    for k in 0..stretches {
        let mut first_prompt = None;
        let mut last_prompt = String::new();
        for t in 0..1 + k % 5 {
            let rewind = (k % 7 == 3 && t == 2)
                .then(|| first_prompt.clone())
                .flatten();
            let text = format!("Step {k}.{t}: never touch vendor/{k}.rs and keep the API");
            let prompt = json!({"type": "user", "message": {"role": "user", "content": text}});
            last_prompt = line(prompt, &mut parent, rewind);
            first_prompt.get_or_insert_with(|| json!(last_prompt.clone()));
            let id = format!("t{k}_{t}");
            let call = json!({"type": "assistant", "message": {"id": format!("m{k}_{t}a"),
                "role": "assistant", "content": [{"type": "tool_use", "id": id, "name": "Read",
                "input": {"file_path": format!("src/f{k}.rs")}}],
                "usage": {"input_tokens": 1000 + k, "output_tokens": 5}}});
            line(call, &mut parent, None);
            let result = json!({"type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": id,
                 "content": format!("fn f{k}() {{}} // src/f{k}.rs line {t}")}]}});
            line(result, &mut parent, None);
            let answer = json!({"type": "assistant", "message": {"id": format!("m{k}_{t}b"),
                "role": "assistant", "content": [{"type": "text", "text": format!("Read f{k}.")}],
                "usage": {"input_tokens": 1100 + k, "output_tokens": 5}}});
            line(answer, &mut parent, None);
            if k % 4 == 1 && t == 0 {
                let micro = json!({"type": "system", "subtype": "microcompact_boundary",
                    "microcompactMetadata": {"trigger": "auto", "compactedToolIds": [id]}});
                line(micro, &mut parent, None);
            }
        }
        let mut meta = json!({"trigger": "auto", "preTokens": 2000 + k});
        if k % 3 == 2 {
            meta["preservedMessages"] = json!({"uuids": [last_prompt]});
        }
        let boundary = json!({"type": "system", "subtype": "compact_boundary",
            "compactMetadata": meta});
        line(boundary, &mut parent, Some(Value::Null));
        let summary = json!({"type": "user", "isCompactSummary": true, "message": {"role": "user",
            "content": format!("Summary {k}: the steps so far; keep the API.")}});
        line(summary, &mut parent, None);
    }
    lines.join("\n") + "\n"
}

/// Issue 36: `forgot` reads a Claude Code session a stretch at a time. It holds at once
/// the messages of two stretches between full compactions at most (the history before
/// one and the messages after it), not the session's; and its reports are a whole read's.
#[test]
fn a_claude_code_session_is_held_two_stretches_at_a_time() {
    use ctxlab::forgot::{analyze_all, from_session::inputs_of_session};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.jsonl");
    std::fs::write(&path, long_claude_session(300)).unwrap();
    let session = ctxlab::session::load_session(&path).unwrap();
    let fulls: Vec<usize> = session
        .compactions
        .iter()
        .filter(|c| c.kind.replaces_history())
        .map(|c| c.at)
        .collect();
    assert_eq!(fulls.len(), 300);
    assert!(session.meta.rewinds > 0 && session.compactions.len() > 350);
    let mut edges = vec![0];
    edges.extend(&fulls);
    edges.push(session.messages.len());
    let longest = edges.windows(2).map(|w| w[1] - w[0]).max().unwrap();
    let found = find_forgotten(&path, &ForgotOptions::default()).unwrap();
    assert_eq!(
        found.report.compactions,
        analyze_all(&inputs_of_session(&session))
    );
    assert!(
        found.most_held <= 2 * longest,
        "held {} messages at once of {}; the longest stretch is {longest}",
        found.most_held,
        session.messages.len()
    );
    assert!(session.messages.len() > 20 * found.most_held);
}
