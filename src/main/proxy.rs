//! `ctxlab proxy`: binds the proxy, says where to point Claude Code and Codex, serves until
//! a signal, and with `--watch` prints each exchange as it completes.

use std::process::ExitCode;

use anyhow::Context;

use ctxlab::process::{TerminationSignals, signal_exit_code};
use ctxlab::proxy::{
    CaptureTarget, ConnectionLimits, Proxy, ProxyConfig, client_lines, watch_line,
};

use super::UsageError;
use super::cli::ProxyArgs;

pub(crate) fn cmd_proxy(args: ProxyArgs) -> anyhow::Result<ExitCode> {
    // Refused before anything is opened or bound.
    ctxlab::proxy::check_listen(args.listen, args.allow_non_loopback)
        .map_err(|e| UsageError(e.to_string()))?;
    let capture = match args.capture {
        Some(path) => CaptureTarget::File(path),
        None => CaptureTarget::NewIn(
            ctxlab::session::discover::ctxlab_captures_dir()
                .context("no data dir for the capture (set CTXLAB_DATA_DIR or --capture)")?,
        ),
    };
    let config = ProxyConfig {
        listen: args.listen,
        upstream: args.upstream,
        allow_non_loopback: args.allow_non_loopback,
        capture,
        limits: ConnectionLimits {
            upstream_deadline: std::time::Duration::from_secs(args.upstream_deadline),
            ..ConnectionLimits::default()
        },
    };
    let rt = super::runtime()?;
    let code = rt.block_on(async move {
        let (watch_tx, mut watch_rx) = tokio::sync::mpsc::channel(256);
        let proxy = Proxy::bind(config.clone(), args.watch.then_some(watch_tx))
            .await
            .map_err(|e| {
                if e.is_usage() {
                    anyhow::Error::new(UsageError(e.to_string()))
                } else {
                    anyhow::Error::new(e)
                }
            })?;
        let addr = proxy.local_addr().unwrap_or(config.listen);
        say!(
            "ctxlab proxy: listening on http://{addr}, forwarding to {}",
            match &config.upstream {
                Some(u) => ctxlab::proxy::public_url(u),
                None => "https://api.anthropic.com (/v1/messages...) and https://api.openai.com (/v1/chat/completions, /v1/responses)".to_string(),
            }
        );
        say!("capture: {}", proxy.capture_path().display());
        say!("point an agent at it:");
        for line in client_lines(addr) {
            say!("  {line}");
        }
        let mut signals = TerminationSignals::install().context("cannot install signal handlers")?;
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<i32>();
        let server = tokio::spawn(proxy.run(async move {
            let _ = stop_rx.await;
        }));
        let printer = tokio::spawn(async move {
            use std::io::Write;
            while let Some(exchange) = watch_rx.recv().await {
                let mut out = std::io::stdout().lock();
                if writeln!(out, "{}", watch_line(&exchange)).is_err() {
                    break;
                }
            }
        });
        // Ctrl-C is how a proxy is stopped: exit 0, not 130; other signals say themselves.
        let signo = signals.recv().await;
        let _ = stop_tx.send(signo);
        let served = server.await.context("the proxy task failed")?;
        printer.abort();
        served?;
        anyhow::Ok(if signo == rustix::process::Signal::INT.as_raw() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(signal_exit_code(signo))
        })
    })?;
    rt.shutdown_timeout(super::RUNTIME_SHUTDOWN_GRACE);
    Ok(code)
}
