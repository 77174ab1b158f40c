//! The pre-call pipeline on generated agent histories of 500, 5,000 and 50,000 messages.
//!
//! `unchanged`: limits so high that no stage fires, on a history whose sizes are already
//! cached: the cost the agent pays before every model call in the steady state.
//! `every_stage_fires`: default limits on a history that crosses all of them (last batch
//! over the budget, over 50 messages, old results over 120 chars, over the context limit),
//! on a fresh clone and a fresh workspace each iteration.

use std::hint::black_box;

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use ctxlab::compact::{Pipeline, PipelineConfig, estimate_size};
use ctxlab::message::{Message, block};
use ctxlab::store::Store;
use serde_json::json;

const NOW: u64 = 1_700_000_000;

/// Tool output: mostly small, some pages, a few over the persist threshold.
fn output_chars(rng: &mut fastrand::Rng) -> usize {
    match rng.u32(0..1000) {
        0..=919 => rng.usize(100..800),
        920..=991 => rng.usize(2_000..8_000),
        _ => rng.usize(30_000..40_000),
    }
}

fn output(rng: &mut fastrand::Rng, chars: usize) -> String {
    const LINES: [&str; 4] = [
        "src/parser.rs:41: let token = lexer.next()?; // it's fine\n",
        "test parser::tests::nested ... FAILED\n",
        "    Compiling ctxlab v0.1.0 (/work/ctxlab) — 解析器 ✅\n",
        "{\"path\": \"a\\\\b\", \"ok\": true}\n",
    ];
    let mut s = String::with_capacity(chars + 64);
    while s.len() < chars {
        s.push_str(LINES[rng.usize(0..LINES.len())]);
    }
    let cut = s.char_indices().nth(chars).map_or(s.len(), |(i, _)| i);
    s.truncate(cut);
    s
}

/// An agent loop's history of about `n` messages, ending with a results message.
fn history(n: usize, seed: u64) -> Vec<Message> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut h = vec![Message::user_text(
        "Fix the failing parser test and keep the public API unchanged.",
    )];
    let mut id = 0;
    while h.len() + 2 <= n {
        let calls = if rng.u8(0..10) == 0 { 3 } else { 1 };
        let ids: Vec<String> = (0..calls)
            .map(|_| {
                id += 1;
                format!("toolu_{id:06}")
            })
            .collect();
        let mut blocks = vec![block::text("Looking at the next file.")];
        blocks.extend(
            ids.iter()
                .map(|i| block::tool_use(i, "bash", json!({"command": "cat src/parser.rs"}))),
        );
        h.push(Message::assistant_blocks(blocks));
        let results = ids
            .iter()
            .map(|i| {
                let chars = output_chars(&mut rng);
                block::tool_result(i, output(&mut rng, chars))
            })
            .collect();
        h.push(Message::user_blocks(results));
    }
    h
}

/// The same history with a last batch over the budget (three results of 90,000 chars).
fn history_over_everything(n: usize) -> Vec<Message> {
    let mut h = history(n - 2, 7);
    let mut rng = fastrand::Rng::with_seed(99);
    let ids = ["toolu_big1", "toolu_big2", "toolu_big3"];
    h.push(Message::assistant_blocks(
        ids.iter()
            .map(|i| block::tool_use(*i, "bash", json!({"command": "cat big.log"})))
            .collect(),
    ));
    h.push(Message::user_blocks(
        ids.iter()
            .map(|i| block::tool_result(*i, output(&mut rng, 90_000)))
            .collect(),
    ));
    h
}

fn nothing_fires() -> PipelineConfig {
    PipelineConfig {
        budget_chars: usize::MAX,
        snip_max_messages: usize::MAX,
        micro_min_chars: usize::MAX,
        context_limit: usize::MAX,
        ..PipelineConfig::default()
    }
}

fn workspace() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("ctxlab-bench-")
        .tempdir_in(if std::path::Path::new("/dev/shm").is_dir() {
            std::path::PathBuf::from("/dev/shm")
        } else {
            std::env::temp_dir()
        })
        .unwrap()
}

fn bench_pipeline(c: &mut Criterion) {
    let mut group = c.benchmark_group("pre_call");
    for n in [500usize, 5_000, 50_000] {
        if n >= 50_000 {
            group.sample_size(10);
        }
        let mut h = history(n, 1);
        eprintln!(
            "history of {} messages: estimate_size {} chars",
            h.len(),
            estimate_size(&h)
        );
        let ws = workspace();
        let store = Store::new(ws.path());
        let steady = Pipeline::new(nothing_fires());
        // Warm the cached sizes, as the previous call would have.
        steady.pre_call(&mut h, &store, NOW).unwrap();
        group.bench_function(BenchmarkId::new("unchanged", n), |b| {
            b.iter(|| {
                let pre = steady.pre_call(&mut h, &store, NOW).unwrap();
                assert!(pre.pending.is_none() && !pre.reports.iter().any(|r| r.changed));
                black_box(pre)
            })
        });

        let full = history_over_everything(n);
        let _ = estimate_size(&full);
        let fires = Pipeline::new(PipelineConfig::default());
        group.bench_function(BenchmarkId::new("every_stage_fires", n), |b| {
            b.iter_batched(
                || (full.clone(), workspace()),
                |(mut h, ws)| {
                    let pre = fires.pre_call(&mut h, &Store::new(ws.path()), NOW).unwrap();
                    assert!(pre.reports.iter().all(|r| r.changed) && pre.pending.is_some());
                    (h, ws, pre)
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

/// The writers a replay spends its time in: each message's size in the lesson's unit
/// (Python `str()` chars) and in s08-latest's (unicode JSON chars), computed fresh as when a
/// session is loaded, and a transcript (lesson JSON lines) written, as each compaction does.
fn bench_sizes(c: &mut Criterion) {
    let mut group = c.benchmark_group("sizes");
    let h = history(2_000, 3);
    let raw: Vec<serde_json::Value> = h.iter().map(|m| serde_json::to_value(m).unwrap()).collect();
    let bytes: usize = raw.iter().map(|v| v.to_string().len()).sum();
    group.throughput(criterion::Throughput::Bytes(bytes as u64));
    let fresh = || {
        raw.iter()
            .map(|v| Message::from_value(v.clone()).unwrap())
            .collect::<Vec<_>>()
    };
    group.bench_function("estimate_size_fresh", |b| {
        b.iter_batched(
            fresh,
            // The history is returned, so its drop is not timed.
            |h| {
                let n = black_box(estimate_size(&h));
                (h, n)
            },
            BatchSize::LargeInput,
        )
    });
    group.bench_function("json_size_fresh", |b| {
        b.iter_batched(
            fresh,
            |h| {
                let n = black_box(ctxlab::message::json_size(&h));
                (h, n)
            },
            BatchSize::LargeInput,
        )
    });
    group.bench_function("transcript_text", |b| {
        b.iter(|| black_box(ctxlab::compact::summarize::transcript_text(&h)))
    });
    group.finish();
}

criterion_group!(benches, bench_pipeline, bench_sizes);
criterion_main!(benches);
