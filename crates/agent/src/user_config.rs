//! Where the provider, model and keys come from: command-line flags, then the environment,
//! then `.env` in the working directory, then `config.toml` in the platform config dir,
//! then defaults. With no key anywhere the embedded scripted model runs.
//!
//! This module only reads and decides; it never prints a key (keys are `ApiKey`s, whose
//! `Debug` hides them) and never opens a connection.

use std::collections::{BTreeMap, HashMap};
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::provider::{ApiKey, CallLimits};

pub const DEFAULT_ANTHROPIC_BASE: &str = "https://api.anthropic.com";
pub const DEFAULT_OPENAI_BASE: &str = "https://api.openai.com";
pub const DEFAULT_ANTHROPIC_MODEL: &str = "claude-sonnet-4-5";
pub const DEFAULT_OPENAI_MODEL: &str = "gpt-4o-mini";
pub const DEFAULT_MAX_ATTEMPTS: u32 = 5;
/// Attempts per model call a user may ask for: at least the call itself, and few enough
/// that backoff waits (capped per retry) stay within minutes, not hours.
pub const MAX_ATTEMPTS_RANGE: RangeInclusive<u32> = 1..=20;
/// Seconds one model call may take in all, attempts and waits included (default: the
/// provider's `DEFAULT_CALL_DEADLINE`, 600): long enough for any real answer, at most a day.
pub const CALL_DEADLINE_SECS_RANGE: RangeInclusive<u64> = 10..=86_400;
/// Seconds one model call may spend waiting to retry, all waits together (default: the
/// provider's `DEFAULT_RETRY_BUDGET`, 120); 0 means no retry waits at all.
pub const RETRY_BUDGET_SECS_RANGE: RangeInclusive<u64> = 0..=3_600;

/// Which kind of model to talk to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    Anthropic,
    Openai,
    Scripted,
}

/// What the command line said (None: not given).
#[derive(Debug, Clone, Default)]
pub struct FlagSettings {
    pub provider: Option<ProviderKind>,
    pub model: Option<String>,
}

/// `config.toml` in the platform config dir; every field optional.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileSettings {
    pub provider: Option<ProviderKind>,
    pub model: Option<String>,
    pub anthropic_api_key: Option<String>,
    pub anthropic_base_url: Option<String>,
    pub openai_api_key: Option<String>,
    pub openai_base_url: Option<String>,
    /// How many times one model call is attempted before its error is shown (default 5).
    pub max_attempts: Option<u32>,
    /// Seconds one model call may take in all, every attempt and wait included (default 600).
    pub call_deadline_secs: Option<u64>,
    /// Seconds one model call may spend waiting between attempts, in all (default 120).
    pub retry_budget_secs: Option<u64>,
    /// The model's context window in tokens (unknown by default; learned from the first
    /// overflow error). Summary requests are sized to fit it.
    pub context_window_tokens: Option<u64>,
    /// Variables child processes (`bash`) keep although their name ends in `_API_KEY`,
    /// `_TOKEN` or `_SECRET` (never the provider key variables).
    #[serde(default)]
    pub env_passthrough: Vec<String>,
    /// More variables child processes do not get.
    #[serde(default)]
    pub env_deny: Vec<String>,
    /// Pipeline numbers, the `--set` keys (`[pipeline]` table; `--set` wins).
    #[serde(default)]
    pub pipeline: BTreeMap<String, toml::Value>,
    /// The compaction strategy (`s08`, `lesson`, `s08-latest`, `s06`, `guarded`); the
    /// `--strategy` flag wins over it.
    pub strategy: Option<crate::compact::Strategy>,
    /// The cap on one session file read (bytes; default 2 GiB); `CTXLAB_MAX_SESSION_BYTES`
    /// wins over it.
    pub max_session_bytes: Option<u64>,
    /// Ring the terminal bell when a followed session compacts (`ctxlab watch`, the live
    /// view; default true); `--no-bell` wins over it.
    pub bell_on_compaction: Option<bool>,
    /// Where these settings were read from, for error messages (not a key in the file).
    #[serde(skip)]
    pub path: Option<PathBuf>,
}

#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("{path}: {message}")]
    ConfigFile { path: PathBuf, message: String },
    #[error("{}{}: {message}", path.display(), line.map(|n| format!(":{n}")).unwrap_or_default())]
    DotEnv {
        path: PathBuf,
        line: Option<usize>,
        message: String,
    },
    #[error(
        "{origin} is {value:?}: must be a whole number from {} to {}",
        MAX_ATTEMPTS_RANGE.start(),
        MAX_ATTEMPTS_RANGE.end()
    )]
    MaxAttempts { origin: String, value: String },
    #[error("{origin} is {value:?}: must be a whole number of seconds from {min} to {max}")]
    Seconds {
        origin: String,
        value: String,
        min: u64,
        max: u64,
    },
    #[error("CTXLAB_CONTEXT_WINDOW_TOKENS is {0:?}: must be a whole number of tokens (0: unknown)")]
    ContextWindow(String),
    #[error("--provider {0:?} needs {1} (flag, environment, .env or config.toml)")]
    MissingKey(ProviderKind, &'static str),
}

/// The resolved choice.
#[derive(Debug, Clone)]
pub struct ResolvedProvider {
    pub kind: ProviderKind,
    pub model: String,
    pub base_url: String,
    pub api_key: Option<ApiKey>,
    /// A one-line notice for the user (e.g. why the scripted model runs).
    pub notice: Option<String>,
    /// Attempts per model call for retryable failures (429, 529, 5xx, network, cut streams).
    pub max_attempts: u32,
    /// The whole call's deadline and the time it may spend waiting to retry.
    pub call_limits: CallLimits,
    /// `CTXLAB_CONTEXT_WINDOW_TOKENS` or `context_window_tokens`; `None` when unknown.
    pub context_window_tokens: Option<u64>,
}

/// Reads `.env` at `path`: a missing file is no settings, an unreadable or malformed one an
/// error naming the file (and the line).
pub fn load_dotenv(path: &Path) -> Result<HashMap<String, String>, SettingsError> {
    match std::fs::read_to_string(path) {
        Ok(text) => parse_dotenv(path, &text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(HashMap::new()),
        Err(e) => Err(SettingsError::DotEnv {
            path: path.to_path_buf(),
            line: None,
            message: e.to_string(),
        }),
    }
}

/// Parses the text of a `.env` file with `dotenvy` (`KEY=VALUE` lines, `#` comments,
/// optional `export`, single or double quotes, `${VAR}` substitution), without touching the
/// process environment. The first line that is not a setting is an error naming `path` and
/// the line number; the message never repeats the line, which may hold a key.
pub fn parse_dotenv(path: &Path, text: &str) -> Result<HashMap<String, String>, SettingsError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out = HashMap::new();
    for item in dotenvy::from_read_iter(text.as_bytes()) {
        match item {
            Ok((key, value)) => {
                out.insert(key, value);
            }
            Err(dotenvy::Error::LineParse(..)) => {
                return Err(SettingsError::DotEnv {
                    path: path.to_path_buf(),
                    line: error_line(text),
                    message: "not a KEY=VALUE setting (or an unclosed quote)".into(),
                });
            }
            Err(e) => {
                return Err(SettingsError::DotEnv {
                    path: path.to_path_buf(),
                    line: None,
                    message: e.to_string(),
                });
            }
        }
    }
    Ok(out)
}

/// The 1-based line where the first setting that does not parse starts. dotenvy reports the
/// text and position of the bad setting but not its line, so the line is found by parsing
/// ever longer prefixes: the bad setting starts after the shortest prefix that yields every
/// setting before it (blank and comment lines skipped). A `.env` is a few dozen lines.
fn error_line(text: &str) -> Option<usize> {
    let before_error = dotenvy::from_read_iter(text.as_bytes())
        .take_while(Result::is_ok)
        .count();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut first = (0..=lines.len()).find(|&k| {
        let prefix = lines[..k].concat();
        dotenvy::from_read_iter(prefix.as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .is_ok_and(|items| items.len() == before_error)
    })?;
    while lines.get(first).is_some_and(|l| {
        let t = l.trim();
        t.is_empty() || t.starts_with('#')
    }) {
        first += 1;
    }
    Some(first + 1)
}

/// The platform's config file path for ctxlab.
pub fn config_file_path() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "ctxlab").map(|d| d.config_dir().join("config.toml"))
}

/// Reads `config.toml`; a missing file is empty settings, a broken one an error.
pub fn load_file_settings(path: &Path) -> Result<FileSettings, SettingsError> {
    load_file_settings_without(path, &[])
}

/// `load_file_settings` with `keys` taken out of the file first: a workbench that only
/// reads sessions ignores the model's keys, whatever they hold (`startup::reading`).
pub fn load_file_settings_without(
    path: &Path,
    keys: &[&str],
) -> Result<FileSettings, SettingsError> {
    let error = |message: String| SettingsError::ConfigFile {
        path: path.to_path_buf(),
        message,
    };
    match std::fs::read_to_string(path) {
        Ok(text) => settings_from_text(&text, keys)
            .map(|settings| FileSettings {
                path: Some(path.to_path_buf()),
                ..settings
            })
            .map_err(|e| error(e.to_string())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(FileSettings::default()),
        Err(e) => Err(error(e.to_string())),
    }
}

/// The settings of config.toml's `text` without `keys`.
pub fn settings_from_text(text: &str, keys: &[&str]) -> Result<FileSettings, toml::de::Error> {
    if keys.is_empty() {
        return toml::from_str(text);
    }
    let mut table: toml::Table = toml::from_str(text)?;
    for key in keys {
        table.remove(*key);
    }
    toml::Value::Table(table).try_into()
}

/// Whether a compaction written while a session is followed rings the terminal bell:
/// not with `--no-bell` (`no_bell`), else `bell_on_compaction` in config.toml, else yes.
pub fn bell_on_compaction(settings: Option<&FileSettings>, no_bell: bool) -> bool {
    !no_bell && settings.and_then(|s| s.bell_on_compaction).unwrap_or(true)
}

/// Looks a variable up in the environment, then in `.env`.
pub struct Lookup<'a> {
    pub env: &'a dyn Fn(&str) -> Option<String>,
    pub dotenv: &'a HashMap<String, String>,
}

impl Lookup<'_> {
    fn get(&self, key: &str) -> Option<String> {
        (self.env)(key)
            .or_else(|| self.dotenv.get(key).cloned())
            .filter(|v| !v.trim().is_empty())
    }
}

/// `CTXLAB_MAX_ATTEMPTS` (environment or `.env`), else `max_attempts` in config.toml, else
/// the default. A value that is not a number in `MAX_ATTEMPTS_RANGE` is an error naming where
/// it came from, rather than silently replaced.
fn max_attempts(lookup: &Lookup<'_>, file: &FileSettings) -> Result<u32, SettingsError> {
    let (origin, value) = match (lookup.get("CTXLAB_MAX_ATTEMPTS"), file.max_attempts) {
        (Some(text), _) => ("CTXLAB_MAX_ATTEMPTS".to_string(), text),
        (None, Some(n)) => {
            let origin = match &file.path {
                Some(p) => format!("max_attempts in {}", p.display()),
                None => "max_attempts in config.toml".to_string(),
            };
            (origin, n.to_string())
        }
        (None, None) => return Ok(DEFAULT_MAX_ATTEMPTS),
    };
    value
        .trim()
        .parse::<u32>()
        .ok()
        .filter(|n| MAX_ATTEMPTS_RANGE.contains(n))
        .ok_or(SettingsError::MaxAttempts { origin, value })
}

/// A number of seconds: `env_name` (environment or `.env`), else `file_key` in config.toml,
/// else `default`; outside `range` it is an error naming where it came from.
fn seconds(
    lookup: &Lookup<'_>,
    file: &FileSettings,
    (env_name, file_key, file_value): (&str, &str, Option<u64>),
    range: RangeInclusive<u64>,
    default: std::time::Duration,
) -> Result<std::time::Duration, SettingsError> {
    let (origin, value) = match (lookup.get(env_name), file_value) {
        (Some(text), _) => (env_name.to_string(), text),
        (None, Some(n)) => {
            let origin = match &file.path {
                Some(p) => format!("{file_key} in {}", p.display()),
                None => format!("{file_key} in config.toml"),
            };
            (origin, n.to_string())
        }
        (None, None) => return Ok(default),
    };
    value
        .trim()
        .parse::<u64>()
        .ok()
        .filter(|n| range.contains(n))
        .map(std::time::Duration::from_secs)
        .ok_or(SettingsError::Seconds {
            origin,
            value,
            min: *range.start(),
            max: *range.end(),
        })
}

/// `CTXLAB_CALL_DEADLINE_SECS` / `call_deadline_secs` and `CTXLAB_RETRY_BUDGET_SECS` /
/// `retry_budget_secs`, each with the provider's default.
fn call_limits(lookup: &Lookup<'_>, file: &FileSettings) -> Result<CallLimits, SettingsError> {
    let defaults = CallLimits::default();
    Ok(CallLimits {
        deadline: seconds(
            lookup,
            file,
            (
                "CTXLAB_CALL_DEADLINE_SECS",
                "call_deadline_secs",
                file.call_deadline_secs,
            ),
            CALL_DEADLINE_SECS_RANGE,
            defaults.deadline,
        )?,
        retry_budget: seconds(
            lookup,
            file,
            (
                "CTXLAB_RETRY_BUDGET_SECS",
                "retry_budget_secs",
                file.retry_budget_secs,
            ),
            RETRY_BUDGET_SECS_RANGE,
            defaults.retry_budget,
        )?,
    })
}

/// `CTXLAB_CONTEXT_WINDOW_TOKENS` (environment or `.env`) over `context_window_tokens` in
/// `config.toml`; 0 or nothing means unknown, anything else that is not a number is an error.
fn context_window_tokens(
    lookup: &Lookup<'_>,
    file: &FileSettings,
) -> Result<Option<u64>, SettingsError> {
    let tokens = match lookup.get("CTXLAB_CONTEXT_WINDOW_TOKENS") {
        Some(text) => Some(
            text.trim()
                .parse::<u64>()
                .map_err(|_| SettingsError::ContextWindow(text.clone()))?,
        ),
        None => file.context_window_tokens,
    };
    Ok(tokens.filter(|&w| w > 0))
}

/// Decides provider, model, base URL and key by precedence.
pub fn resolve(
    flags: &FlagSettings,
    lookup: &Lookup<'_>,
    file: &FileSettings,
) -> Result<ResolvedProvider, SettingsError> {
    let anthropic_key = lookup
        .get("ANTHROPIC_API_KEY")
        .or_else(|| file.anthropic_api_key.clone());
    let openai_key = lookup
        .get("OPENAI_API_KEY")
        .or_else(|| file.openai_api_key.clone());
    let openai_base = lookup
        .get("OPENAI_BASE_URL")
        .or_else(|| file.openai_base_url.clone());
    let model = flags
        .model
        .clone()
        .or_else(|| lookup.get("MODEL_ID"))
        .or_else(|| file.model.clone());
    let max_attempts = max_attempts(lookup, file)?;
    let call_limits = call_limits(lookup, file)?;
    let context_window_tokens = context_window_tokens(lookup, file)?;
    let kind = flags.provider.or(file.provider).unwrap_or_else(|| {
        if anthropic_key.is_some() {
            ProviderKind::Anthropic
        } else if openai_key.is_some() || openai_base.is_some() {
            ProviderKind::Openai
        } else {
            ProviderKind::Scripted
        }
    });
    let resolved = match kind {
        ProviderKind::Anthropic => {
            let key = anthropic_key
                .ok_or(SettingsError::MissingKey(kind, "ANTHROPIC_API_KEY"))?;
            ResolvedProvider {
                kind,
                model: model.unwrap_or_else(|| DEFAULT_ANTHROPIC_MODEL.into()),
                base_url: lookup
                    .get("ANTHROPIC_BASE_URL")
                    .or_else(|| file.anthropic_base_url.clone())
                    .unwrap_or_else(|| DEFAULT_ANTHROPIC_BASE.into()),
                api_key: Some(ApiKey::new(key)),
                notice: None,
                max_attempts,
                call_limits,
                context_window_tokens,
            }
        }
        ProviderKind::Openai => ResolvedProvider {
            kind,
            model: model.unwrap_or_else(|| DEFAULT_OPENAI_MODEL.into()),
            base_url: openai_base.unwrap_or_else(|| DEFAULT_OPENAI_BASE.into()),
            api_key: openai_key.map(ApiKey::new),
            notice: None,
            max_attempts,
            call_limits,
            context_window_tokens,
        },
        ProviderKind::Scripted => ResolvedProvider {
            kind,
            model: "tour".into(),
            base_url: String::new(),
            api_key: None,
            notice: flags.provider.is_none().then(|| {
                "No API key found: running the embedded scripted model. Set ANTHROPIC_API_KEY (or OPENAI_BASE_URL for a local server) to use a real one.".to_string()
            }),
            max_attempts,
            call_limits,
            context_window_tokens,
        },
    };
    Ok(resolved)
}

#[cfg(test)]
mod tests;
