//! The exported page of a long session stays a page a browser opens (issue 36): each section
//! with a row per call, stage event, summary, compaction or message keeps its two ends and
//! says how many rows it left out and where to see them; the plots draw at most a few
//! hundred bars. Doubling the session leaves the page's size about where it was, and no
//! link on the page leads to a row it left out.

use std::collections::HashSet;

use ctxlab::compact::PipelineConfig;
use ctxlab::message::Message;
use ctxlab::pipeline_replay::ReplayOptions;
use ctxlab::store::Store;
use ctxlab::timeline::Timeline;
use ctxlab::timeline::html::page;
use serde_json::json;

/// A session of `rounds` tool calls, each reading a 3,000-char file: under a 20,000-char
/// limit it compacts every few calls.
fn session(rounds: usize) -> Vec<Message> {
    let mut out =
        vec![Message::from_value(json!({"role": "user", "content": "Read every file."})).unwrap()];
    for i in 0..rounds {
        let id = format!("toolu_{i:06}");
        out.push(
            Message::from_value(json!({"role": "assistant", "content": [
                {"type": "text", "text": format!("Reading part {i}.")},
                {"type": "tool_use", "id": id, "name": "Read", "input": {"file_path": format!("src/part_{i}.rs")}}
            ]}))
            .unwrap(),
        );
        out.push(
            Message::from_value(json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": id, "content": format!("fn part_{i}() {{}}\n").repeat(150)}
            ]}))
            .unwrap(),
        );
    }
    out
}

fn page_of(rounds: usize) -> (Timeline, String) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path()).dry_run();
    let config = PipelineConfig {
        context_limit: 20_000,
        ..PipelineConfig::default()
    };
    let options = ReplayOptions {
        config,
        summary_text: Some("Read the parts so far.".into()),
        summarizer: None,
        now_secs: 1,
        recorded: Vec::new(),
    };
    let (t, _) = Timeline::from_replay("long", session(rounds), &store, &options).unwrap();
    let html = page(&t);
    (t, html)
}

/// Every `href="#x"` on the page, and every `id="x"`.
fn links_and_ids(html: &str) -> (Vec<String>, HashSet<String>) {
    let pick = |marker: &str| -> Vec<String> {
        html.split(marker)
            .skip(1)
            .filter_map(|s| s.split('"').next())
            .map(str::to_string)
            .collect()
    };
    (pick("href=\"#"), pick(" id=\"").into_iter().collect())
}

#[test]
fn a_long_sessions_page_keeps_its_ends_and_does_not_grow_with_the_session() {
    let (short_t, short) = page_of(600);
    let (long_t, long) = page_of(1_200);
    assert!(long_t.calls.len() >= 2 * short_t.calls.len() - 2);
    let changed = long_t.steps.iter().filter(|s| s.report.changed).count();
    assert!(
        changed > 400,
        "the session must have many stage events: {changed}"
    );
    // Both pages leave rows out, and say so with the command that shows them.
    for html in [&short, &long] {
        assert!(html.contains("calls 101 to"), "calls left out");
        assert!(html.contains("ctxlab replay --json, with the same options, prints every one"));
        assert!(
            html.contains("stage events 101 to"),
            "stage events left out"
        );
    }
    // The first and the last calls are on the page.
    let last = long_t.calls.len();
    assert!(long.contains("id=\"call-1\""));
    assert!(long.contains(&format!("id=\"call-{last}\"")));
    assert!(!long.contains(&format!("id=\"call-{}\"", last / 2)));
    // Twice the session, about the same page.
    let ratio = long.len() as f64 / short.len() as f64;
    assert!(
        ratio < 1.2,
        "{} bytes for 600 rounds, {} for 1,200 ({ratio:.2}x)",
        short.len(),
        long.len()
    );
    // The plots draw at most the bar budget.
    let bars = long.matches("<g><title>").count();
    assert!(bars <= ctxlab::timeline::html::PLOT_BARS, "{bars} bars");
    let stacks = long.matches("<g class=\"stack\">").count();
    assert!(
        stacks <= ctxlab::timeline::html::PLOT_BARS,
        "{stacks} stacked bars"
    );
}

#[test]
fn no_link_on_a_long_page_leads_to_a_row_it_left_out() {
    let (_, html) = page_of(1_200);
    let (links, ids) = links_and_ids(&html);
    assert!(links.len() > 50, "{} links", links.len());
    let dead: Vec<&String> = links.iter().filter(|l| !ids.contains(*l)).collect();
    assert!(
        dead.is_empty(),
        "links to nothing: {:?}",
        &dead[..dead.len().min(10)]
    );
}

#[test]
fn a_short_sessions_page_leaves_nothing_out() {
    let (t, html) = page_of(30);
    assert!(!html.contains("left out here"));
    for c in &t.calls {
        assert!(html.contains(&format!("id=\"call-{}\"", c.number)));
    }
}

#[test]
fn a_stage_forgets_exactly_when_it_has_an_input_and_the_inputs_left_out_change_none_shown() {
    use ctxlab::forgot::from_replay::{forgets, input_of_stage};
    use ctxlab::timeline::forgot_inputs::{
        forgetting_steps, timeline_reports, timeline_reports_of,
    };
    let (t, _) = page_of(400);
    let mut forgetting = 0;
    for st in &t.steps {
        let Some(change) = &st.change else {
            continue;
        };
        let before: Vec<Message> = change.before.iter().map(|m| (**m).clone()).collect();
        let after: Vec<Message> = change.after.iter().map(|m| (**m).clone()).collect();
        let input = input_of_stage("ctxlab", &st.report, &before, &after);
        assert_eq!(
            forgets(&st.report),
            input.as_ref().map(|i| i.micro),
            "call {}: {}",
            st.call,
            st.report.summary()
        );
        forgetting += usize::from(input.is_some());
    }
    assert_eq!(forgetting_steps(&t), forgetting);
    // Both kinds are among them.
    assert!(t.steps.iter().any(|s| forgets(&s.report) == Some(true)));
    assert!(t.steps.iter().any(|s| forgets(&s.report) == Some(false)));
    // The reports made for the page's two ends are those of the whole analysis.
    let all = timeline_reports(&t);
    assert!(all.len() > 250, "{}", all.len());
    let wanted = |k: usize| k < 100 || k >= all.len() - 100;
    let some = timeline_reports_of(&t, wanted);
    let same: Vec<_> = all
        .iter()
        .enumerate()
        .filter(|(k, _)| wanted(*k))
        .map(|(_, r)| format!("{r:?}"))
        .collect();
    let made: Vec<_> = some.iter().map(|r| format!("{r:?}")).collect();
    assert_eq!(made, same);
}
