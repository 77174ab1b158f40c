//! `guarded` judged by the reachability accounting of `ctxlab replay --compare` (an
//! implementation independent of `guarded_props`' own checks): the generated sessions of
//! `guarded_props`, replayed, lose nothing and send no broken pair; the same accounting sees
//! s08's micro lose.

use ctxlab::compact::{PipelineConfig, Strategy as CompactStrategy};
use ctxlab::compare::{Amount, RunOptions, run_strategy};
use ctxlab::message::{Message, block};
use ctxlab::store::Store;
use proptest::prelude::*;
use serde_json::{Value, json};

use crate::guarded_props::{Content, Event, cases, config, event, unique_text};

/// The events as a recorded session (the compact tool as an ordinary tool round, overflows
/// dropped: a replay has no model to fail).
fn recorded(events: &[Event]) -> Vec<Message> {
    let mut out = Vec::new();
    for (n, ev) in events.iter().enumerate() {
        match ev {
            Event::Request => {
                out.push(Message::user_text(unique_text(&format!("request {n}"), 40)))
            }
            Event::Answer => out.push(Message::assistant_blocks(vec![block::text(unique_text(
                &format!("answer {n}"),
                30,
            ))])),
            Event::Tools(calls) => {
                let ids: Vec<String> = (0..calls.len()).map(|i| format!("t{n}_{i}")).collect();
                out.push(Message::assistant_blocks(
                    ids.iter()
                        .map(|id| block::tool_use(id, "bash", json!({"n": n})))
                        .collect(),
                ));
                out.push(Message::user_blocks(
                    calls
                        .iter()
                        .zip(&ids)
                        .map(|((_, c), id)| {
                            let content = match c {
                                Content::Text(len) => json!(unique_text(&format!("result {id}"), *len)),
                                Content::List(items) => Value::Array(
                                    (0..*items)
                                        .map(|k| json!({"type": "text", "text": format!("{id}part{k}{}", "w".repeat(200))}))
                                        .collect(),
                                ),
                                Content::Null => Value::Null,
                            };
                            json!({"type": "tool_result", "tool_use_id": id, "content": content})
                        })
                        .collect(),
                ));
            }
            Event::CompactTool => {
                let id = format!("c{n}");
                out.push(Message::assistant_blocks(vec![block::tool_use(
                    &id,
                    "compact",
                    json!({}),
                )]));
                out.push(Message::user_blocks(vec![block::tool_result(
                    &id,
                    CompactStrategy::Guarded.compact_tool_result(),
                )]));
            }
            Event::Overflow(_) => {}
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    /// The same sessions replayed and judged by the reachability accounting of
    /// `ctxlab replay --compare` (an implementation independent of the checks above):
    /// nothing `lost` or unreachable at any call, no broken pair sent, and every result
    /// the model had not seen either sent whole or behind a marker naming its full copy.
    #[test]
    fn guarded_loses_nothing_by_the_reachability_accounting(
        events in prop::collection::vec(event(), 1..60)
    ) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let mut lost_at = Vec::new();
        let run = run_strategy(recorded(&events), config(), &store, &RunOptions::default(), |c| {
            if c.reach.lost.chars > 0 || c.reach.on_disk.chars > 0 {
                lost_at.push((c.call, c.reach));
            }
        })
        .unwrap();
        prop_assert!(lost_at.is_empty(), "lost or unreachable at {lost_at:?}");
        prop_assert_eq!(run.totals.reach_end.lost, Amount::default());
        prop_assert_eq!(run.totals.reach_end.on_disk, Amount::default());
        prop_assert_eq!(run.totals.unseen_unreachable, Amount::default());
        prop_assert_eq!(run.totals.orphans_sent, 0);
    }
}

/// The accounting is not blind: the same kind of session under s08 loses what its micro
/// replaced.
#[test]
fn the_reachability_accounting_sees_s08_lose_what_guarded_keeps() {
    let events = [
        Event::Request,
        Event::Tools(vec![(false, Content::Text(300)); 5]),
        Event::Answer,
    ];
    let s08 = PipelineConfig {
        strategy: CompactStrategy::S08,
        ..config()
    };
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path());
    let run = run_strategy(
        recorded(&events),
        s08,
        &store,
        &RunOptions::default(),
        |_| {},
    )
    .unwrap();
    assert!(run.totals.reach_end.lost.chars > 0, "{:?}", run.totals);
    assert!(run.totals.unseen_unreachable.pieces > 0, "{:?}", run.totals);
}
