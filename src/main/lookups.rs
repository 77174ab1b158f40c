//! The commands that read session files and print what they find: `inspect` (with
//! `--calls`), `forgot` and `sessions`. Flags in, library call, exit code out; the work is
//! in `ctxlab::commands`.

use anyhow::Context;
use ctxlab::pipeline_replay::ReplayOptions;

use super::cli::{ForgotArgs, InspectArgs, SessionsArgs};
use super::{UsageError, config_from, now_secs, session_error};

/// Stdout for a command's output: exact for JSON, through the sanitizer for people.
pub(crate) fn stdout_for(json: bool) -> std::io::BufWriter<Box<dyn std::io::Write>> {
    let lock = std::io::stdout().lock();
    if json {
        std::io::BufWriter::new(Box::new(lock))
    } else {
        std::io::BufWriter::new(Box::new(ctxlab::sanitize::SanitizingWriter::new(lock)))
    }
}

pub(crate) fn cmd_inspect(args: InspectArgs) -> anyhow::Result<()> {
    if args.requests {
        return inspect_requests(&args);
    }
    if args.calls {
        use ctxlab::commands::inspect_calls::{CallsError, inspect_calls};
        let mut out = stdout_for(args.json);
        return match inspect_calls(&args.file, &mut out, args.json) {
            Ok(()) => Ok(()),
            Err(CallsError::Session(e)) => Err(session_error(&args.file, e)),
            Err(CallsError::Write(e)) => Err(e).context("cannot write to stdout"),
        };
    }
    // The summary is figures only: a Codex compaction's new history is counted, not held.
    let session = ctxlab::session::load_session_numbers(&args.file)
        .map_err(|e| session_error(&args.file, e))?;
    let summary = ctxlab::session::summary::SessionSummary::of(&session);
    drop(session);
    let mut out = stdout_for(args.json);
    ctxlab::commands::inspect::write_inspect(&mut out, &summary, args.json)
        .context("cannot write to stdout")
}

/// `inspect --requests`: only a capture has requests; any other session is a usage error.
fn inspect_requests(args: &InspectArgs) -> anyhow::Result<()> {
    use ctxlab::capture_view::{NotACapture, of_capture_file};
    let reqs = match of_capture_file(&args.file) {
        Ok(r) => r,
        Err(NotACapture::Read(e)) => return Err(session_error(&args.file, e)),
        Err(e @ NotACapture::Format(_)) => {
            return Err(UsageError(format!("--requests: {}: {e}", args.file.display())).into());
        }
    };
    let mut out = stdout_for(args.json);
    ctxlab::capture_view::text::write_requests(&mut out, &reqs, args.json)
        .context("cannot write to stdout")
}

pub(crate) fn cmd_forgot(args: ForgotArgs) -> anyhow::Result<()> {
    use ctxlab::commands::forgot::{ForgotError, ForgotOptions, find_forgotten, write_forgot};
    if let Some(fork) = &args.against {
        return crate::fork::cmd_forgot_against(&args.session, fork, args.compaction, args.json);
    }
    let replay = match args.replay {
        Some(strategy) => Some(ReplayOptions {
            config: config_from(strategy, &args.thresholds)?,
            summary_text: args.summary_text,
            summarizer: None,
            now_secs: now_secs(None),
            recorded: Vec::new(),
        }),
        None => None,
    };
    let options = ForgotOptions {
        compaction: args.compaction,
        replay,
    };
    let found = match find_forgotten(&args.session, &options) {
        Ok(found) => found,
        Err(ForgotError::Session(e)) => return Err(session_error(&args.session, e)),
        Err(e @ ForgotError::NoSuchCompaction { .. }) => {
            return Err(UsageError(e.to_string()).into());
        }
        Err(e) => return Err(e.into()),
    };
    let width = args
        .width
        .map(usize::from)
        .or_else(|| std::env::var("COLUMNS").ok()?.trim().parse().ok())
        .filter(|w| *w > 0)
        .unwrap_or(80);
    let layout = ctxlab::forgot::text::Layout {
        width,
        all: args.all,
        summary: true,
    };
    let mut out = stdout_for(args.json);
    write_forgot(&mut out, &found, args.json, &layout).context("cannot write to stdout")
}

pub(crate) fn cmd_sessions(args: SessionsArgs) -> anyhow::Result<()> {
    // A listing works without its cache: one that cannot be read is empty, one that cannot
    // be written is left as it was.
    let mut cache = match ctxlab::session::discover::ctxlab_data_dir() {
        Some(dir) => ctxlab::listing_cache::ListingCache::load(&dir),
        None => ctxlab::listing_cache::ListingCache::disabled(),
    };
    let (listing, skipped) =
        ctxlab::commands::sessions::list_sessions_cached(&args.paths, &mut cache)
            .map_err(|(path, e)| session_error(&path, e))?;
    let _ = cache.save();
    for s in &skipped {
        say!("ctxlab: {}: {}", s.path.display(), s.message);
    }
    let mut out = stdout_for(args.json);
    ctxlab::commands::sessions::write_listing(&mut out, &listing, args.json)
        .context("cannot write to stdout")
}
