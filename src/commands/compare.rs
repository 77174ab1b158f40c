//! `ctxlab replay --compare A,B,...`: the same session replayed once per strategy, each on
//! its own store, written as one table of the strategies side by side, or as JSON lines
//! (one object per strategy per call, then one totals object per strategy). The replays
//! and the accounting are `crate::compare`'s; this file only lays them out.

use std::collections::BTreeSet;
use std::io::Write;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::compact::PipelineConfig;
use crate::compare::{Amount, RunOptions, RunTotals, StrategyRun, run_strategy};
use crate::message::Message;
use crate::store::{Store, StoreError};
use crate::util::group_digits;

/// Why `ctxlab replay --compare` stopped.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    #[error("the {strategy} replay could not use its workspace: {source}")]
    Store {
        strategy: &'static str,
        source: StoreError,
    },
    #[error("cannot write the output: {0}")]
    Output(#[from] std::io::Error),
}

/// One JSON line: `{"strategy": NAME, ...fields of value}`.
fn json_line(out: &mut dyn Write, strategy: &str, value: &impl Serialize) -> std::io::Result<()> {
    let mut map = Map::new();
    map.insert("strategy".into(), Value::from(strategy));
    match serde_json::to_value(value).map_err(std::io::Error::other)? {
        Value::Object(fields) => map.extend(fields),
        other => {
            map.insert("value".into(), other);
        }
    }
    let line = serde_json::to_string(&Value::Object(map)).map_err(std::io::Error::other)?;
    writeln!(out, "{line}")
}

#[derive(Serialize)]
struct Last<'a> {
    totals: &'a RunTotals,
}

/// Replays `session` under each `(config, store)` in turn and writes the comparison.
pub fn run_compare(
    session: &[Message],
    runs: &[(PipelineConfig, Store)],
    options: &RunOptions,
    json: bool,
    out: &mut dyn Write,
) -> Result<Vec<StrategyRun>, CompareError> {
    let mut done = Vec::new();
    for (config, store) in runs {
        let name = config.strategy.name();
        let mut write_err: Option<std::io::Error> = None;
        let run = run_strategy(session.to_vec(), *config, store, options, |call| {
            if json
                && write_err.is_none()
                && let Err(e) = json_line(out, name, call)
            {
                write_err = Some(e);
            }
        })
        .map_err(|source| CompareError::Store {
            strategy: name,
            source,
        })?;
        if let Some(e) = write_err {
            return Err(e.into());
        }
        if json {
            json_line(
                out,
                name,
                &Last {
                    totals: &run.totals,
                },
            )?;
        }
        done.push(run);
    }
    if !json {
        write_table(out, &done)?;
    }
    out.flush()?;
    Ok(done)
}

fn amount(a: Amount) -> String {
    format!("{} ({})", group_digits(a.chars), group_digits(a.pieces))
}

/// The rows of the table: a label and one cell per strategy.
fn rows(runs: &[StrategyRun]) -> Vec<(String, Vec<String>)> {
    let mut rows: Vec<(String, Vec<String>)> = Vec::new();
    let mut row = |label: &str, cell: &dyn Fn(&StrategyRun) -> String| {
        rows.push((label.to_string(), runs.iter().map(cell).collect()));
    };
    row("model calls", &|r| group_digits(r.totals.calls));
    let stages: BTreeSet<&str> = runs
        .iter()
        .flat_map(|r| r.totals.fired.keys().copied())
        .collect();
    for stage in stages {
        row(&format!("fired {stage}"), &|r| {
            group_digits(r.totals.fired.get(stage).copied().unwrap_or(0))
        });
    }
    row("peak request (str chars)", &|r| {
        group_digits(r.totals.peak_size)
    });
    row("final history (str chars)", &|r| {
        group_digits(r.totals.final_size)
    });
    row("final messages", &|r| group_digits(r.totals.final_messages));
    row("summary calls", &|r| group_digits(r.totals.summary_calls));
    row("summary input chars", &|r| {
        group_digits(r.totals.summary_input_chars)
    });
    row("end in_context chars (pieces)", &|r| {
        amount(r.totals.reach_end.in_context)
    });
    row("end referenced chars (pieces)", &|r| {
        amount(r.totals.reach_end.referenced)
    });
    row("end on_disk chars (pieces)", &|r| {
        amount(r.totals.reach_end.on_disk)
    });
    row("end lost chars (pieces)", &|r| {
        amount(r.totals.reach_end.lost)
    });
    row("unseen_replaced chars (results)", &|r| {
        amount(r.totals.unseen_replaced)
    });
    row("  of which unreachable", &|r| {
        amount(r.totals.unseen_unreachable)
    });
    row("orphans_sent (requests)", &|r| {
        group_digits(r.totals.orphans_sent)
    });
    row("files written", &|r| group_digits(r.totals.files_written));
    rows
}

/// The strategies side by side, one column each.
fn write_table(out: &mut dyn Write, runs: &[StrategyRun]) -> std::io::Result<()> {
    let rows = rows(runs);
    let label_w = rows.iter().map(|(l, _)| l.len()).max().unwrap_or(0);
    let widths: Vec<usize> = runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            rows.iter()
                .map(|(_, cells)| cells[i].len())
                .chain([r.strategy.name().len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut line = format!("{:label_w$}", "");
    for (r, w) in runs.iter().zip(&widths) {
        line.push_str(&format!("  {:>w$}", r.strategy.name()));
    }
    writeln!(out, "{}", line.trim_end())?;
    for (label, cells) in &rows {
        let mut line = format!("{label:label_w$}");
        for (c, w) in cells.iter().zip(&widths) {
            line.push_str(&format!("  {c:>w$}"));
        }
        writeln!(out, "{line}")?;
    }
    Ok(())
}
