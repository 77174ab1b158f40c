//! ctxlab's integration tests, gathered into one binary so that a cold build links the crate
//! (and tokio, reqwest, ratatui) once instead of once per file. Each module is one area;
//! `common` holds what several of them share.

mod common;
mod support;

mod agent_control;
mod agent_strategies;
mod agent_tour;
mod architecture;
mod cli;
mod cli_run;
mod cli_run_session;
mod cli_strategies;
mod compare_cli;
mod compare_view;
mod conformance;
mod conformance_strategies;
mod export;
mod guarded_props;
mod guarded_reach;
mod harden;
mod pipeline_props;
mod pipeline_spec;
mod provider_anthropic;
mod provider_openai;
mod provider_reactive;
mod provider_real_shapes;
mod provider_scripted;
mod provider_streams;
mod sessions_cli;
mod sessions_numbers;
mod sessions_pairing;
mod store_safety;
mod summary_refusals;
mod timeline;
mod tools;
mod tui_answer_cut;
mod tui_help;
mod tui_issue25_small;
mod tui_loop;
mod tui_pty;
mod tui_sessions;
mod tui_snapshots;
mod tui_teach;
mod tui_timeline;
mod tui_update;
mod tui_viewer;
