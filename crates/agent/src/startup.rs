//! Turns the command line into a ready agent: resolves the provider (flags, environment,
//! `.env`, config file), builds the model, prepares the workspace (a fresh copy of the demo
//! project compiled into the binary, for the scripted tour), removes the temp files a killed
//! ctxlab left there, sets the pipeline thresholds (config.toml's `[pipeline]`, then `--set`,
//! both checked) and what child processes may see (no provider keys; their values redacted
//! from tool output). Shared by the TUI and `ctxlab run` so both start the same way.

pub mod reading;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::agent::turn::AgentSetup;
use crate::compact::{ConfigError, PipelineConfig, Strategy};
use crate::provider::anthropic::AnthropicModel;
use crate::provider::openai::OpenAiModel;
use crate::provider::scripted::{self, Scenario, ScenarioError, ScriptedModel};
use crate::provider::{ClientBuildError, Model, RetryPolicy};
use crate::store::Store;
use crate::tools::{EnvPolicy, PROVIDER_KEY_VARS, Redactions, ToolError, Workspace};
use crate::user_config::{
    FileSettings, FlagSettings, Lookup, ProviderKind, ResolvedProvider, SettingsError,
    config_file_path, load_dotenv, load_file_settings, resolve,
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
    #[error("config.toml [pipeline]: {0}")]
    FileConfig(ConfigError),
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    #[error("no scenario named {name:?}; the scenarios built into ctxlab are: {}", .known.join(", "))]
    UnknownScenario { name: String, known: Vec<String> },
    #[error("--workspace {}: it exists and is not a folder", .path.display())]
    WorkspaceNotAFolder { path: PathBuf },
    #[error("workspace {}: {message}", .path.display())]
    Workspace { path: PathBuf, message: String },
    #[error("workspace: {0}")]
    Tool(#[from] ToolError),
    #[error(transparent)]
    Http(#[from] ClientBuildError),
}

impl LaunchError {
    /// Whether what the user gave is at fault (a flag, a setting, a path that is a file):
    /// exit code 2. Otherwise the system failed (a copy, a folder that cannot be made): 1.
    pub fn is_usage(&self) -> bool {
        match self {
            LaunchError::Settings(_)
            | LaunchError::Config(_)
            | LaunchError::FileConfig(_)
            | LaunchError::UnknownScenario { .. }
            | LaunchError::WorkspaceNotAFolder { .. } => true,
            LaunchError::Scenario(e) => !matches!(e, ScenarioError::Io { .. }),
            LaunchError::Workspace { .. } | LaunchError::Tool(_) | LaunchError::Http(_) => false,
        }
    }
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

/// A fresh demo workspace under ctxlab's data dir (`CTXLAB_DATA_DIR` when set, like the
/// recordings and captures), from the embedded demo project.
fn fresh_demo_workspace(scenario: &str) -> Result<PathBuf, LaunchError> {
    let base = workspaces_base(crate::session::discover::ctxlab_data_dir());
    fresh_demo_workspace_in(&base, scenario, crate::util::unix_now())
}

/// Where demo workspaces go: `workspaces/` in the data dir, else a temp folder.
fn workspaces_base(data_dir: Option<PathBuf>) -> PathBuf {
    data_dir
        .map(|d| d.join("workspaces"))
        .unwrap_or_else(|| std::env::temp_dir().join("ctxlab-workspaces"))
}

/// `fresh_demo_workspace` under `base`, named for `now`.
fn fresh_demo_workspace_in(base: &Path, scenario: &str, now: u64) -> Result<PathBuf, LaunchError> {
    let io_error = |path: &Path, e: std::io::Error| LaunchError::Workspace {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    std::fs::create_dir_all(base).map_err(|e| io_error(base, e))?;
    // Created exclusively: two runs started in the same second never share a folder.
    for n in 1..10_000u32 {
        let path = match n {
            1 => base.join(format!("{scenario}-{now}")),
            n => base.join(format!("{scenario}-{now}-{n}")),
        };
        match std::fs::create_dir(&path) {
            Ok(()) => {
                copy_demo_into(&path)?;
                return Ok(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io_error(&path, e)),
        }
    }
    Err(io_error(
        base,
        std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            format!("every {scenario}-{now}-N name is taken"),
        ),
    ))
}

/// Writes the demo project (compiled into the binary) into `path`; the scenario's commands
/// expect it.
fn copy_demo_into(path: &Path) -> Result<(), LaunchError> {
    crate::demo::write_demo_project(path).map_err(|e| LaunchError::Workspace {
        path: path.to_path_buf(),
        message: format!("cannot write the demo project: {e}"),
    })
}

/// The `--set` key for the model's context window. It is a setting of the model, not a
/// pipeline threshold, so it is read here (for the workbench and `ctxlab run`) rather than
/// by `PipelineConfig`; `--set` wins over the environment and `config.toml`.
pub const CONTEXT_WINDOW_KEY: &str = "context_window_tokens";

/// `Some(tokens)` for a `context_window_tokens=N` assignment (0 means unknown).
fn context_window_assignment(assignment: &str) -> Result<Option<Option<u64>>, ConfigError> {
    let Some((key, value)) = assignment.split_once('=') else {
        return Ok(None);
    };
    if key.trim() != CONTEXT_WINDOW_KEY {
        return Ok(None);
    }
    let tokens = value
        .trim()
        .parse::<u64>()
        .map_err(|_| ConfigError::NotANumber {
            key: CONTEXT_WINDOW_KEY.to_string(),
            value: value.to_string(),
        })?;
    Ok(Some((tokens > 0).then_some(tokens)))
}

/// The pipeline numbers of config.toml's `[pipeline]` table, each checked like `--set`.
fn file_pipeline_config(
    strategy: crate::compact::Strategy,
    table: &std::collections::BTreeMap<String, toml::Value>,
) -> Result<PipelineConfig, LaunchError> {
    let assignments: Vec<String> = table
        .iter()
        .map(|(key, value)| match value {
            toml::Value::Integer(n) => format!("{key}={n}"),
            other => format!("{key}={other}"),
        })
        .collect();
    let mut config = PipelineConfig::for_strategy(strategy);
    config
        .apply_assignments(assignments.iter().map(String::as_str))
        .map_err(LaunchError::FileConfig)?;
    Ok(config)
}

/// The provider keys ctxlab can see (environment, `.env`, config.toml), whichever provider
/// runs: a key for the other provider must not leak through a tool either.
fn known_keys(lookup: &Lookup<'_>, file: &FileSettings) -> Redactions {
    let from_file = |name: &str| match name {
        "ANTHROPIC_API_KEY" => file.anthropic_api_key.clone(),
        "OPENAI_API_KEY" => file.openai_api_key.clone(),
        _ => None,
    };
    let mut pairs = Vec::new();
    for name in PROVIDER_KEY_VARS {
        let values = [
            (lookup.env)(name),
            lookup.dotenv.get(name).cloned(),
            from_file(name),
        ];
        pairs.extend(values.into_iter().flatten().map(|v| (name.to_string(), v)));
    }
    Redactions::new(pairs)
}

/// Removes the temp files a killed ctxlab left in `root`: in the store's folders and in the
/// rest of the workspace (a scan with a bounded number of entries, so a huge tree cannot
/// hold up the start).
fn remove_stale_temp_files(root: &Path) -> usize {
    Store::new(root).remove_stale_temp_files() + crate::tools::remove_stale_temp_files(root)
}

/// A model and its label for the status bar (`anthropic claude-…`).
pub type LabelledModel = (Arc<dyn Model>, String);

/// The model of a resolved HTTP provider (Anthropic or OpenAI-compatible) and its label;
/// None for the scripted model, which needs a scenario (`prepare_with`).
pub fn http_model(resolved: &ResolvedProvider) -> Result<Option<LabelledModel>, LaunchError> {
    let retry = RetryPolicy {
        max_attempts: resolved.max_attempts,
        ..RetryPolicy::default()
    };
    Ok(Some(match resolved.kind {
        ProviderKind::Anthropic => {
            let key = resolved.api_key.clone().ok_or(SettingsError::MissingKey(
                ProviderKind::Anthropic,
                "ANTHROPIC_API_KEY",
            ))?;
            let m = AnthropicModel::new(key, resolved.model.clone())?
                .with_base_url(resolved.base_url.clone())
                .with_retry(retry)
                .with_call_limits(resolved.call_limits);
            (Arc::new(m), format!("anthropic {}", resolved.model))
        }
        ProviderKind::Openai => {
            let mut m = OpenAiModel::new(resolved.model.clone())?
                .with_base_url(resolved.base_url.clone())
                .with_retry(retry)
                .with_call_limits(resolved.call_limits);
            if let Some(k) = resolved.api_key.clone() {
                m = m.with_api_key(k);
            }
            (
                Arc::new(m),
                format!("openai {} at {}", resolved.model, resolved.base_url),
            )
        }
        ProviderKind::Scripted => return Ok(None),
    }))
}

/// The provider config.toml, `.env` and the environment configure (as `ctxlab run` picks
/// it, no flags): its HTTP model, or None when that is the scripted model.
pub fn configured_model() -> Result<Option<LabelledModel>, LaunchError> {
    let dotenv = load_dotenv(Path::new(".env"))?;
    let file = match config_file_path() {
        Some(p) => load_file_settings(&p)?,
        None => FileSettings::default(),
    };
    let env = |k: &str| std::env::var(k).ok();
    let lookup = Lookup {
        env: &env,
        dotenv: &dotenv,
    };
    http_model(&resolve(&FlagSettings::default(), &lookup, &file)?)
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
    let mut config = file_pipeline_config(strategy, &file.pipeline)?;
    let mut window_set = None;
    for s in &options.sets {
        match context_window_assignment(s)? {
            Some(tokens) => window_set = Some(tokens),
            None => config.apply_assignment(s)?,
        }
    }
    let flags = FlagSettings {
        provider: options.provider,
        model: options.model.clone(),
    };
    let resolved = resolve(&flags, lookup, file)?;
    let mut notices: Vec<String> = resolved.notice.clone().into_iter().collect();
    let mut scenario_request = None;
    let (model, label): LabelledModel = match http_model(&resolved)? {
        Some(http) => http,
        None => {
            let name = options
                .scenario
                .clone()
                .unwrap_or_else(|| scripted::DEFAULT_SCENARIO.into());
            // The embedded scenarios only: nothing at run time reads the build tree.
            let mut scenario = Scenario::load(&name, None).map_err(|e| match e {
                ScenarioError::NotFound { name, .. } => LaunchError::UnknownScenario {
                    name,
                    known: Scenario::embedded_names().map(str::to_string).collect(),
                },
                other => LaunchError::Scenario(other),
            })?;
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
            if std::fs::metadata(p).is_ok_and(|m| !m.is_dir()) {
                return Err(LaunchError::WorkspaceNotAFolder { path: p.clone() });
            }
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
            let p = fresh_demo_workspace(
                options
                    .scenario
                    .as_deref()
                    .unwrap_or(scripted::DEFAULT_SCENARIO),
            )?;
            notices.push(format!("Demo workspace: {}", p.display()));
            p
        }
        (None, _) => std::env::current_dir().map_err(|e| LaunchError::Workspace {
            path: PathBuf::from("."),
            message: e.to_string(),
        })?,
    };
    let workspace = Workspace::new(&workspace_path)?;
    let removed = remove_stale_temp_files(workspace.root());
    if removed > 0 {
        notices.push(format!(
            "Removed {removed} temp files a killed ctxlab left in the workspace"
        ));
    }
    let mut setup = AgentSetup::new(model, workspace, config);
    setup.context_window_tokens = window_set.unwrap_or(resolved.context_window_tokens);
    setup.tool_limits.child_env = EnvPolicy {
        deny: file.env_deny.clone(),
        passthrough: file.env_passthrough.clone(),
    };
    setup.tool_limits.redactions = known_keys(lookup, file);
    Ok(Launch {
        setup,
        label,
        notices,
        scenario_request,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The demo workspace goes under the data dir `CTXLAB_DATA_DIR` names (it went to the
    /// platform's data dir whatever the variable said).
    #[test]
    fn demo_workspaces_go_under_the_data_dir() {
        let data = PathBuf::from("/somewhere/data");
        assert_eq!(workspaces_base(Some(data.clone())), data.join("workspaces"));
        assert_eq!(
            workspaces_base(None),
            std::env::temp_dir().join("ctxlab-workspaces")
        );
    }

    /// Issue 19 §7: runs started together never share a demo workspace.
    #[test]
    fn runs_started_together_get_their_own_demo_workspace() {
        let base = tempfile::tempdir().unwrap();
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(6));
        let handles: Vec<_> = (0..6)
            .map(|_| {
                let base = base.path().to_path_buf();
                let barrier = barrier.clone();
                std::thread::spawn(move || {
                    barrier.wait();
                    fresh_demo_workspace_in(&base, "tour", 1_700_000_000).unwrap()
                })
            })
            .collect();
        let mut paths: Vec<PathBuf> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        paths.sort();
        paths.dedup();
        assert_eq!(paths.len(), 6, "{paths:?}");
        // A folder someone else made at the first name is never reused.
        let taken = base.path().join("tour-1700000001");
        std::fs::create_dir(&taken).unwrap();
        let p = fresh_demo_workspace_in(base.path(), "tour", 1_700_000_001).unwrap();
        assert_ne!(p, taken);
        assert_eq!(std::fs::read_dir(&taken).unwrap().count(), 0);
    }
}
