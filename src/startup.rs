//! Turns the command line into a ready agent: resolves the provider (flags, environment,
//! `.env`, config file), builds the model, prepares the workspace (a fresh copy of
//! `assets/demo/` for the scripted tour) and the pipeline thresholds. Shared by the TUI
//! and `ctxlab run` so both start the same way.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::agent::turn::AgentSetup;
use crate::compact::{ConfigError, PipelineConfig, Strategy};
use crate::provider::anthropic::AnthropicModel;
use crate::provider::openai::OpenAiModel;
use crate::provider::scripted::{Scenario, ScenarioError, ScriptedModel};
use crate::provider::{ClientBuildError, Model, RetryPolicy};
use crate::tools::{ToolError, Workspace};
use crate::user_config::{
    FileSettings, FlagSettings, Lookup, ProviderKind, SettingsError, config_file_path, load_dotenv,
    load_file_settings, resolve,
};

/// The scripted model's default pause between streamed deltas: slow enough to watch the
/// tour's stages go by (about fifteen seconds in all), fast enough not to bore.
pub const DEFAULT_PACE_MS: u64 = 30;

/// The flags `ctxlab` and `ctxlab run` share.
#[derive(Debug, Clone, Default)]
pub struct LaunchOptions {
    pub provider: Option<ProviderKind>,
    pub model: Option<String>,
    pub workspace: Option<PathBuf>,
    pub scenario: Option<String>,
    pub pace_ms: Option<u64>,
    /// None: `strategy` in config.toml, then s08.
    pub strategy: Option<Strategy>,
    pub sets: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error(transparent)]
    Settings(#[from] SettingsError),
    #[error("--set {0}")]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    #[error("workspace {path}: {message}")]
    Workspace { path: PathBuf, message: String },
    #[error("workspace: {0}")]
    Tool(#[from] ToolError),
    #[error(transparent)]
    Http(#[from] ClientBuildError),
}

/// What a front end needs to start.
pub struct Launch {
    pub setup: AgentSetup,
    /// "anthropic claude-..." / "scripted tour": for the status bar.
    pub label: String,
    /// Shown once at start (e.g. why the scripted model runs, where the demo workspace is).
    pub notices: Vec<String>,
    /// The request the scripted scenario is written for, submitted at start by the TUI.
    pub scenario_request: Option<String>,
}

/// The folder the repository's assets live in.
pub fn assets_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets")
}

/// Copies a directory tree (files and folders only; links are skipped).
pub fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// A fresh demo workspace: `assets/demo/` copied under the platform data dir.
fn fresh_demo_workspace(scenario: &str) -> Result<PathBuf, LaunchError> {
    let base = directories::ProjectDirs::from("", "", "ctxlab")
        .map(|d| d.data_dir().join("workspaces"))
        .unwrap_or_else(|| std::env::temp_dir().join("ctxlab-workspaces"));
    let now = crate::util::unix_now();
    let mut path = base.join(format!("{scenario}-{now}"));
    let mut n = 2;
    while path.exists() {
        path = base.join(format!("{scenario}-{now}-{n}"));
        n += 1;
    }
    copy_demo_into(&path)?;
    Ok(path)
}

/// Copies `assets/demo/` into `path`, which the scenario's commands expect.
fn copy_demo_into(path: &Path) -> Result<(), LaunchError> {
    let demo = assets_dir().join("demo");
    copy_tree(&demo, path).map_err(|e| LaunchError::Workspace {
        path: path.to_path_buf(),
        message: format!("cannot copy the demo project from {}: {e}", demo.display()),
    })
}

/// Resolves everything from the options and the process environment.
pub fn prepare(options: &LaunchOptions) -> Result<Launch, LaunchError> {
    let dotenv = load_dotenv(Path::new(".env"))?;
    let file = match config_file_path() {
        Some(p) => load_file_settings(&p)?,
        None => FileSettings::default(),
    };
    let env = |k: &str| std::env::var(k).ok();
    prepare_with(
        options,
        &Lookup {
            env: &env,
            dotenv: &dotenv,
        },
        &file,
    )
}

/// `prepare` with the environment and config file given (for tests).
pub fn prepare_with(
    options: &LaunchOptions,
    lookup: &Lookup<'_>,
    file: &FileSettings,
) -> Result<Launch, LaunchError> {
    let strategy = options.strategy.or(file.strategy).unwrap_or_default();
    let mut config = PipelineConfig::for_strategy(strategy);
    for s in &options.sets {
        config.apply_assignment(s)?;
    }
    let flags = FlagSettings {
        provider: options.provider,
        model: options.model.clone(),
    };
    let resolved = resolve(&flags, lookup, file)?;
    let mut notices: Vec<String> = resolved.notice.clone().into_iter().collect();
    let mut scenario_request = None;
    let retry = RetryPolicy {
        max_attempts: resolved.max_attempts,
        ..RetryPolicy::default()
    };
    let (model, label): (Arc<dyn Model>, String) = match resolved.kind {
        ProviderKind::Anthropic => {
            let key = resolved.api_key.clone().ok_or(SettingsError::MissingKey(
                ProviderKind::Anthropic,
                "ANTHROPIC_API_KEY",
            ))?;
            let m = AnthropicModel::new(key, resolved.model.clone())?
                .with_base_url(resolved.base_url.clone())
                .with_retry(retry);
            (Arc::new(m), format!("anthropic {}", resolved.model))
        }
        ProviderKind::Openai => {
            let mut m = OpenAiModel::new(resolved.model.clone())?
                .with_base_url(resolved.base_url.clone())
                .with_retry(retry);
            if let Some(k) = resolved.api_key.clone() {
                m = m.with_api_key(k);
            }
            (
                Arc::new(m),
                format!("openai {} at {}", resolved.model, resolved.base_url),
            )
        }
        ProviderKind::Scripted => {
            let name = options.scenario.clone().unwrap_or_else(|| "tour".into());
            let mut scenario = Scenario::load(&name, Some(&assets_dir()))?;
            // A scenario's simulated window sits where its author put it against s08's
            // limit in chars; a strategy counting tokens (s06: 4 chars each) has a limit as
            // many times longer in chars, and its window moves with it, so the tour plays
            // under every strategy instead of overflowing before s06's first compaction.
            let per_unit = config.strategy.unit().chars_per_unit();
            scenario.context_window_chars = scenario.context_window_chars.saturating_mul(per_unit);
            scenario_request = Some(scenario.request.clone());
            let pace = Duration::from_millis(options.pace_ms.unwrap_or(DEFAULT_PACE_MS));
            (
                Arc::new(ScriptedModel::new(scenario).with_pace(pace)),
                format!("scripted {name}"),
            )
        }
    };
    let workspace_path = match (&options.workspace, resolved.kind) {
        (Some(p), kind) => {
            let empty = std::fs::read_dir(p).map_or(true, |mut d| d.next().is_none());
            if kind == ProviderKind::Scripted && empty {
                // The scenario's commands expect the demo project; an empty folder gets one.
                copy_demo_into(p)?;
                notices.push(format!("Demo project copied into {}", p.display()));
            } else {
                std::fs::create_dir_all(p).map_err(|e| LaunchError::Workspace {
                    path: p.clone(),
                    message: e.to_string(),
                })?;
            }
            p.clone()
        }
        (None, ProviderKind::Scripted) => {
            let p = fresh_demo_workspace(options.scenario.as_deref().unwrap_or("tour"))?;
            notices.push(format!("Demo workspace: {}", p.display()));
            p
        }
        (None, _) => std::env::current_dir().map_err(|e| LaunchError::Workspace {
            path: PathBuf::from("."),
            message: e.to_string(),
        })?,
    };
    let workspace = Workspace::new(&workspace_path)?;
    Ok(Launch {
        setup: AgentSetup::new(model, workspace, config),
        label,
        notices,
        scenario_request,
    })
}
