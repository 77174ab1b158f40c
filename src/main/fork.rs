//! `ctxlab fork`: the flags turned into `fork::ForkOptions`, the editor for `--edit`, the
//! configured model's summary call for `--summary STRATEGY`, the fork written, and the
//! command that resumes it printed.

use std::path::Path;
use std::sync::Arc;

use anyhow::Context;

use ctxlab::compact::summarize::SummaryRequest;
use ctxlab::fork::strategy::{ModelSummary, SummaryFailure};
use ctxlab::fork::{ForkError, ForkOptions, SummaryChoice};
use ctxlab::provider::{ModelRequest, RequestKind};

use crate::cli::ForkArgs;
use crate::{UsageError, config_from, session_error};

/// `none`, a strategy's name, or a file holding the summary.
fn summary_choice(given: &str) -> anyhow::Result<SummaryChoice> {
    if given == "none" {
        return Ok(SummaryChoice::None);
    }
    if let Ok(strategy) = given.parse() {
        return Ok(SummaryChoice::Strategy(strategy));
    }
    let path = Path::new(given);
    let text = read_summary_file(path)?;
    Ok(SummaryChoice::Text(text))
}

/// A summary file: a regular file of at most 1 MiB of text.
fn read_summary_file(path: &Path) -> anyhow::Result<String> {
    const MAX: u64 = 1 << 20;
    let file = ctxlab::safe_fs::open_regular_path(path)
        .with_context(|| format!("--summary {}: cannot read", path.display()))?
        .map_err(|_| UsageError(format!("--summary {}: not a regular file", path.display())))?;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    if len > MAX {
        return Err(UsageError(format!(
            "--summary {}: {len} bytes, more than a summary's {MAX}",
            path.display()
        ))
        .into());
    }
    let mut text = String::new();
    use std::io::Read;
    file.take(MAX)
        .read_to_string(&mut text)
        .with_context(|| format!("--summary {}: not UTF-8 text", path.display()))?;
    Ok(text)
}

/// Opens `$VISUAL` / `$EDITOR` (else `vi`) on the seed and returns what it was left as.
fn edit(seed: &str) -> anyhow::Result<String> {
    let dir = tempfile::tempdir().context("cannot create a folder for the summary to edit")?;
    let path = dir.path().join("fork-summary.md");
    std::fs::write(&path, seed).context("cannot write the summary to edit")?;
    let editor = std::env::var("VISUAL")
        .or_else(|_| std::env::var("EDITOR"))
        .unwrap_or_else(|_| "vi".to_string());
    // The editor may carry arguments (`code -w`): run it through the shell, the file as $1.
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(&path)
        .status()
        .with_context(|| format!("cannot run the editor {editor}"))?;
    if !status.success() {
        return Err(UsageError(format!(
            "the editor {editor} failed ({status}); no fork written"
        ))
        .into());
    }
    let text = std::fs::read_to_string(&path).context("cannot read the edited summary")?;
    Ok(ctxlab::fork::seed::read_edited(&text))
}

/// `--summary STRATEGY` without `--summary-text`: the strategy's summary request sent to
/// the configured provider (config.toml, `.env`, the environment, as `ctxlab run` picks
/// it), blocking on its answer. None: the scripted model is configured, whose summary is
/// the extractive one the replay makes anyway (said on stderr).
fn model_summary(summary: &SummaryChoice, given: bool) -> anyhow::Result<Option<ModelSummary>> {
    if given || !matches!(summary, SummaryChoice::Strategy(_)) {
        return Ok(None);
    }
    let Some((model, label)) = ctxlab::startup::configured_model()? else {
        eprintln!(
            "ctxlab fork: no model is configured (no provider key): the strategy's summary is the extractive one"
        );
        return Ok(None);
    };
    eprintln!(
        "ctxlab fork: the strategy's summary is asked of {}",
        ctxlab::sanitize::sanitize_line(&label)
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let call = move |req: &SummaryRequest| -> Result<String, SummaryFailure> {
        let request = ModelRequest {
            system: req.system.clone(),
            messages: vec![ctxlab::message::Message::user_text(req.user_text.clone())],
            tools: Vec::new(),
            max_tokens: u32::try_from(req.max_tokens).unwrap_or(u32::MAX),
            kind: RequestKind::Summary,
        };
        // Nobody watches the stream: the answer is taken whole.
        let (events, _) = tokio::sync::mpsc::unbounded_channel();
        let response = runtime
            .block_on(model.stream(&request, &events))
            .map_err(|e| SummaryFailure::Call(Box::new(e)))?;
        let text: Vec<&str> = response
            .content
            .iter()
            .filter(|b| b.get("type").and_then(|t| t.as_str()) == Some("text"))
            .filter_map(|b| b.get("text").and_then(|t| t.as_str()))
            .collect();
        let text = text.join("\n");
        if text.trim().is_empty() {
            return Err(SummaryFailure::NoText);
        }
        Ok(text)
    };
    Ok(Some(ModelSummary(Arc::new(call))))
}

pub(crate) fn cmd_fork(args: ForkArgs) -> anyhow::Result<()> {
    let mut summary = summary_choice(&args.summary)?;
    let config = match &summary {
        SummaryChoice::Strategy(s) => Some(config_from(*s, &args.thresholds)?),
        _ => None,
    };
    if args.edit {
        let session = ctxlab::session::load_session(&args.session)
            .map_err(|e| session_error(&args.session, e))?;
        let seed = match &summary {
            SummaryChoice::Text(t) => Some(t.clone()),
            _ => ctxlab::fork::seed::edit_seed(&session, args.before),
        }
        .ok_or_else(|| UsageError(format!("the session has no compaction {}", args.before)))?;
        summary = SummaryChoice::Text(edit(&seed)?);
    }
    let model = model_summary(&summary, args.summary_text.is_some())?;
    let options = ForkOptions {
        before: args.before,
        summary,
        focus: args.focus,
        summary_text: args.summary_text,
        model,
        config,
        out: args.out,
        homes: ctxlab::fork::place::homes_from_env(),
        now_ms: ctxlab::fork::ids::now_ms(),
    };
    let fork = match ctxlab::fork::make_fork(&args.session, &options) {
        Ok(fork) => fork,
        Err(ForkError::Session(e)) => return Err(session_error(&args.session, e)),
        Err(e @ ForkError::Write { .. }) => return Err(e.into()),
        Err(e) => return Err(UsageError(e.to_string()).into()),
    };
    let path = ctxlab::fork::place::write_fork(&fork).map_err(|e| match e {
        e @ ForkError::Exists(_) => anyhow::Error::from(UsageError(e.to_string())),
        e => e.into(),
    })?;
    let resume = fork.resume_command();
    if args.json {
        let out = serde_json::json!({
            "path": path.display().to_string(),
            "session_id": fork.session_id,
            "agent": fork.tool.name(),
            "cwd": fork.cwd,
            "holds": fork.holds,
            "subagents_left_out": fork.subagents_left_out,
            "resume": resume,
        });
        println!("{out}");
    } else {
        let left_out = fork
            .left_out()
            .map(|l| format!("\n{l}"))
            .unwrap_or_default();
        let text = format!(
            "wrote {} ({}: {}){left_out}\nresume it with:\n  {resume}",
            path.display(),
            fork.tool.name(),
            fork.holds
        );
        println!("{}", ctxlab::sanitize::sanitize(&text));
    }
    Ok(())
}

/// `ctxlab forgot ORIGINAL --against FORK [--compaction N] [--json]`.
pub(crate) fn cmd_forgot_against(
    original: &Path,
    fork: &Path,
    compaction: Option<usize>,
    json: bool,
) -> anyhow::Result<()> {
    let a = ctxlab::session::load_session(original).map_err(|e| session_error(original, e))?;
    let b = ctxlab::session::load_session(fork).map_err(|e| session_error(fork, e))?;
    let found = ctxlab::fork::against::against(&a, &b, compaction).ok_or_else(|| {
        UsageError(format!(
            "there is no compaction {}: the session has {}",
            compaction.unwrap_or(0),
            a.compactions.len()
        ))
    })?;
    let mut out = crate::stdout_for(json);
    use std::io::Write;
    if json {
        let text = serde_json::json!({
            "against": fork.display().to_string(),
            "compactions": found,
        });
        writeln!(out, "{text}")?;
    } else {
        for line in ctxlab::fork::against::lines(&found) {
            writeln!(out, "{line}")?;
        }
    }
    out.flush().context("cannot write to stdout")
}
