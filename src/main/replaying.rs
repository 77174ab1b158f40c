//! The commands that run a session file through the pipeline without a model call:
//! `pipeline`, `replay` (and `replay --compare`) and `export`; their settings from the flags
//! and the recording, and the workspace they write their store into.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;

use ctxlab::commands::export::{export_page, write_page};
use ctxlab::commands::pipeline::{HistoryInput, check_history, write_pipeline_report};
use ctxlab::commands::replay::{ReplayCommandError, run_replay, run_replay_stream};
use ctxlab::compact::{PipelineConfig, Strategy};
use ctxlab::pipeline_replay::ReplayOptions;
use ctxlab::session::{HistoryStream, OpenedHistory, open_history};

use crate::cli::{ExportArgs, PipelineArgs, ReplayArgs, Thresholds};
use crate::errors::{UsageError, load_input, print_warnings, session_error};
use crate::{lookups::stdout_for, recording};

pub(crate) fn config_from(
    strategy: Strategy,
    thresholds: &Thresholds,
) -> anyhow::Result<PipelineConfig> {
    let mut config = PipelineConfig::for_strategy(strategy);
    config
        .apply_assignments(thresholds.set.iter().map(String::as_str))
        .map_err(|e| UsageError(format!("--set {e}")))?;
    Ok(config)
}

pub(crate) fn now_secs(now: Option<u64>) -> u64 {
    now.unwrap_or_else(ctxlab::util::unix_now)
}

/// Creates the workspace of `pipeline` / `replay` and removes the temp files a killed run
/// left in its store folders.
pub(crate) fn prepare_workspace(workspace: &Path) -> anyhow::Result<()> {
    if std::fs::metadata(workspace).is_ok_and(|m| !m.is_dir()) {
        return Err(UsageError(format!(
            "--workspace {}: it exists and is not a folder",
            workspace.display()
        ))
        .into());
    }
    std::fs::create_dir_all(workspace)
        .with_context(|| format!("cannot create workspace {}", workspace.display()))?;
    ctxlab::store::Store::new(workspace).remove_stale_temp_files();
    Ok(())
}

pub(crate) fn cmd_pipeline(args: PipelineArgs) -> anyhow::Result<ExitCode> {
    let config = config_from(args.strategy, &args.thresholds)?;
    let loaded = load_input(&args.input)?;
    let warnings = check_history(&loaded.messages)
        .map_err(|e| UsageError(format!("{}: {e}", args.input.display())))?;
    for warning in warnings {
        say!("ctxlab: warning: {}: {warning}", args.input.display());
    }
    let input = HistoryInput {
        messages: loaded.messages,
        active_request: loaded.active_request,
    };
    prepare_workspace(&args.workspace)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    write_pipeline_report(
        input,
        &args.workspace,
        config,
        args.now,
        args.summary_text.as_deref(),
        &mut out,
    )
    .and_then(|()| {
        out.write_all(b"\n")?;
        out.flush()?;
        Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn cmd_replay(args: ReplayArgs) -> anyhow::Result<ExitCode> {
    if !args.compare.is_empty() {
        return cmd_compare(args).map(|()| ExitCode::SUCCESS);
    }
    let mut config = config_from(args.strategy, &args.thresholds)?;
    let mut recorded = Vec::new();
    // A message array is replayed while it is parsed; other formats are read whole.
    let session = match open_history(&args.file).map_err(|e| session_error(&args.file, e))? {
        OpenedHistory::Streamed(stream) => ReplaySource::Streamed(stream),
        OpenedHistory::Loaded(loaded) => {
            print_warnings(&args.file, &loaded.warnings);
            let loaded = loaded
                .require_conversation()
                .map_err(|e| session_error(&args.file, e))?;
            config = recording::recorded_config(config, loaded.recorded_config, &args.thresholds);
            recorded = loaded.recorded;
            ReplaySource::Whole(loaded.messages)
        }
    };
    let workspace = args
        .workspace
        .ok_or_else(|| UsageError("replay needs --workspace DIR".into()))?;
    prepare_workspace(&workspace)?;
    // The source still exists: no sync per file, one at the end (docs/pipeline.md).
    let store = ctxlab::store::Store::new(&workspace).without_sync();
    let options = ReplayOptions {
        config,
        summary_text: args.summary_text,
        summarizer: None,
        now_secs: now_secs(args.now),
        recorded,
    };
    let mut out = stdout_for(args.json);
    let replayed = match session {
        ReplaySource::Whole(messages) => {
            run_replay(messages, &store, &options, args.json, &mut out).map(|_| ())
        }
        ReplaySource::Streamed(stream) => {
            run_replay_stream(stream, &store, &options, args.json, &mut out)
                .map(|(_, warnings)| print_warnings(&args.file, &warnings))
        }
    };
    // No sync at all: the source still exists and a sync of the file system waits for
    // every other writer's data too (docs/pipeline.md, "Replay").
    match replayed {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(ReplayCommandError::Output(e)) => Err(e).context("cannot write to stdout"),
        Err(ReplayCommandError::Input(e)) => Err(session_error(&args.file, e)),
        Err(e) => Err(e.into()),
    }
}

/// What `ctxlab replay` replays: a file read whole, or a message array as it is parsed.
pub(crate) enum ReplaySource {
    Whole(Vec<ctxlab::message::Message>),
    Streamed(HistoryStream),
}

pub(crate) fn cmd_export(args: ExportArgs) -> anyhow::Result<()> {
    let config = config_from(args.strategy, &args.thresholds)?;
    // The session loader: the one `ctxlab replay` uses.
    let loaded = load_input(&args.session)?
        .require_conversation()
        .map_err(|e| session_error(&args.session, e))?;
    let config = recording::recorded_config(config, loaded.recorded_config, &args.thresholds);
    let recorded = loaded.recorded;
    let recorded_run = loaded.recorded_run;
    let session = loaded.messages;
    let name = args
        .session
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| args.session.display().to_string());
    let root = args
        .session
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let options = ReplayOptions {
        config,
        summary_text: args.summary_text,
        summarizer: None,
        now_secs: now_secs(args.now),
        recorded,
    };
    let (page, totals) = export_page(&name, session, Some(recorded_run.as_ref()), root, &options)?;
    write_page(&args.out, &page, &[&args.session])?;
    say!(
        "wrote {} ({} model calls, {} bytes)",
        args.out.display(),
        totals.calls,
        page.len()
    );
    Ok(())
}

/// `replay --compare`: one empty workspace per strategy (DIR/NAME, or a temporary folder
/// removed afterwards), then the comparison.
pub(crate) fn cmd_compare(args: ReplayArgs) -> anyhow::Result<()> {
    let mut runs = Vec::new();
    let temp = match &args.workspace {
        Some(_) => None,
        None => Some(tempfile::tempdir().context("cannot create a temporary workspace")?),
    };
    let base = match (&args.workspace, &temp) {
        (Some(dir), _) => dir.clone(),
        (None, Some(t)) => t.path().to_path_buf(),
        (None, None) => return Err(UsageError("replay needs --workspace DIR".into()).into()),
    };
    for (i, &strategy) in args.compare.iter().enumerate() {
        if args.compare[..i].contains(&strategy) {
            return Err(UsageError(format!("--compare names {strategy} twice")).into());
        }
        let config = config_from(strategy, &args.thresholds)?;
        let dir = base.join(strategy.name());
        if std::fs::read_dir(&dir).is_ok_and(|mut d| d.next().is_some()) {
            return Err(UsageError(format!(
                "{} is not empty; --compare replays each strategy on an empty workspace",
                dir.display()
            ))
            .into());
        }
        prepare_workspace(&dir)?;
        runs.push((config, ctxlab::store::Store::new(&dir).without_sync()));
    }
    let loaded = load_input(&args.file)?;
    for (config, _) in &mut runs {
        *config = recording::recorded_config(*config, loaded.recorded_config, &args.thresholds);
    }
    let session = loaded.messages;
    let options = ctxlab::compare::RunOptions {
        summary_text: args.summary_text,
        now_secs: now_secs(args.now),
        detail: false,
        recorded: loaded.recorded,
    };
    let mut out = stdout_for(args.json);
    let compared =
        ctxlab::commands::compare::run_compare(&session, &runs, &options, args.json, &mut out);
    match compared {
        Ok(_) => Ok(()),
        Err(ctxlab::commands::compare::CompareError::Output(e)) => {
            Err(e).context("cannot write to stdout")
        }
        Err(e) => Err(e.into()),
    }
}
