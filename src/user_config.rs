//! Where the provider, model and keys come from: command-line flags, then the environment,
//! then `.env` in the working directory, then `config.toml` in the platform config dir,
//! then defaults. With no key anywhere the embedded scripted model runs.
//!
//! This module only reads and decides; it never prints a key (keys are `ApiKey`s, whose
//! `Debug` hides them) and never opens a connection.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::provider::ApiKey;

pub const DEFAULT_ANTHROPIC_BASE: &str = "https://api.anthropic.com";
pub const DEFAULT_OPENAI_BASE: &str = "https://api.openai.com";
pub const DEFAULT_ANTHROPIC_MODEL: &str = "claude-sonnet-4-5";
pub const DEFAULT_OPENAI_MODEL: &str = "gpt-4o-mini";
pub const DEFAULT_MAX_ATTEMPTS: u32 = 5;

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
}

#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("{path}: {message}")]
    ConfigFile { path: PathBuf, message: String },
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
}

/// Parses a `.env` file: `KEY=VALUE` lines, `#` comments, optional `export`, quotes stripped.
pub fn parse_dotenv(text: &str) -> HashMap<String, String> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                return None;
            }
            let line = line.strip_prefix("export ").unwrap_or(line);
            let (k, v) = line.split_once('=')?;
            let v = v.trim();
            let v = v
                .strip_prefix('"')
                .and_then(|s| s.strip_suffix('"'))
                .or_else(|| v.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')))
                .unwrap_or(v);
            Some((k.trim().to_string(), v.to_string()))
        })
        .collect()
}

/// The platform's config file path for ctxlab.
pub fn config_file_path() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "ctxlab").map(|d| d.config_dir().join("config.toml"))
}

/// Reads `config.toml`; a missing file is empty settings, a broken one an error.
pub fn load_file_settings(path: &Path) -> Result<FileSettings, SettingsError> {
    match std::fs::read_to_string(path) {
        Ok(text) => toml::from_str(&text).map_err(|e| SettingsError::ConfigFile {
            path: path.to_path_buf(),
            message: e.to_string(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(FileSettings::default()),
        Err(e) => Err(SettingsError::ConfigFile {
            path: path.to_path_buf(),
            message: e.to_string(),
        }),
    }
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
    let max_attempts = lookup
        .get("CTXLAB_MAX_ATTEMPTS")
        .and_then(|v| v.trim().parse::<u32>().ok())
        .or(file.max_attempts)
        .unwrap_or(DEFAULT_MAX_ATTEMPTS)
        .max(1);
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
            }
        }
        ProviderKind::Openai => ResolvedProvider {
            kind,
            model: model.unwrap_or_else(|| DEFAULT_OPENAI_MODEL.into()),
            base_url: openai_base.unwrap_or_else(|| DEFAULT_OPENAI_BASE.into()),
            api_key: openai_key.map(ApiKey::new),
            notice: None,
            max_attempts,
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
        },
    };
    Ok(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn no_key_anywhere_runs_the_scripted_model_with_a_notice() {
        let env = env_of(&[]);
        let dotenv = HashMap::new();
        let r = resolve(
            &FlagSettings::default(),
            &Lookup {
                env: &env,
                dotenv: &dotenv,
            },
            &FileSettings::default(),
        )
        .unwrap();
        assert_eq!(r.kind, ProviderKind::Scripted);
        assert!(r.notice.unwrap().contains("ANTHROPIC_API_KEY"));
    }

    #[test]
    fn flags_beat_environment_beat_dotenv_beat_file() {
        let env = env_of(&[("MODEL_ID", "from-env"), ("ANTHROPIC_API_KEY", "sk-env")]);
        let dotenv =
            parse_dotenv("MODEL_ID=from-dotenv\nANTHROPIC_BASE_URL='http://127.0.0.1:9'\n");
        let file = FileSettings {
            model: Some("from-file".into()),
            anthropic_base_url: Some("http://file".into()),
            ..Default::default()
        };
        let lookup = Lookup {
            env: &env,
            dotenv: &dotenv,
        };
        let r = resolve(&FlagSettings::default(), &lookup, &file).unwrap();
        assert_eq!(r.kind, ProviderKind::Anthropic);
        assert_eq!(r.model, "from-env");
        assert_eq!(r.base_url, "http://127.0.0.1:9");
        let flags = FlagSettings {
            provider: Some(ProviderKind::Openai),
            model: Some("from-flag".into()),
        };
        let r = resolve(&flags, &lookup, &file).unwrap();
        assert_eq!(
            (r.kind, r.model.as_str()),
            (ProviderKind::Openai, "from-flag")
        );
        let empty_env = env_of(&[]);
        let r = resolve(
            &FlagSettings::default(),
            &Lookup {
                env: &empty_env,
                dotenv: &HashMap::new(),
            },
            &FileSettings {
                model: Some("from-file".into()),
                openai_base_url: Some("http://127.0.0.1:8080".into()),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(
            (r.kind, r.model.as_str()),
            (ProviderKind::Openai, "from-file")
        );
        assert_eq!(r.max_attempts, DEFAULT_MAX_ATTEMPTS);
    }

    #[test]
    fn retry_attempts_come_from_the_environment_or_the_file() {
        let dotenv = HashMap::new();
        let file = FileSettings {
            max_attempts: Some(2),
            ..Default::default()
        };
        let none = env_of(&[]);
        let lookup = Lookup {
            env: &none,
            dotenv: &dotenv,
        };
        let r = resolve(&FlagSettings::default(), &lookup, &file).unwrap();
        assert_eq!(r.max_attempts, 2);
        let env = env_of(&[("CTXLAB_MAX_ATTEMPTS", "9")]);
        let lookup = Lookup {
            env: &env,
            dotenv: &dotenv,
        };
        let r = resolve(&FlagSettings::default(), &lookup, &file).unwrap();
        assert_eq!(r.max_attempts, 9);
        let zero = env_of(&[("CTXLAB_MAX_ATTEMPTS", "0")]);
        let lookup = Lookup {
            env: &zero,
            dotenv: &dotenv,
        };
        let r = resolve(&FlagSettings::default(), &lookup, &FileSettings::default()).unwrap();
        assert_eq!(r.max_attempts, 1, "at least the call itself");
    }

    #[test]
    fn keys_never_show_in_debug_output() {
        let env = env_of(&[("ANTHROPIC_API_KEY", "sk-ant-secret-123")]);
        let dotenv = HashMap::new();
        let r = resolve(
            &FlagSettings::default(),
            &Lookup {
                env: &env,
                dotenv: &dotenv,
            },
            &FileSettings::default(),
        )
        .unwrap();
        assert!(!format!("{r:?}").contains("secret"));
    }

    #[test]
    fn asking_for_anthropic_without_a_key_is_a_clear_error() {
        let env = env_of(&[]);
        let dotenv = HashMap::new();
        let flags = FlagSettings {
            provider: Some(ProviderKind::Anthropic),
            model: None,
        };
        let e = resolve(
            &flags,
            &Lookup {
                env: &env,
                dotenv: &dotenv,
            },
            &FileSettings::default(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("ANTHROPIC_API_KEY"));
    }

    #[test]
    fn dotenv_lines_are_parsed_like_a_shell_would() {
        let d = parse_dotenv("# c\nexport A=1\nB=\"two words\"\n\nbad line\nC = x \n");
        assert_eq!(d.get("A").map(String::as_str), Some("1"));
        assert_eq!(d.get("B").map(String::as_str), Some("two words"));
        assert_eq!(d.get("C").map(String::as_str), Some("x"));
        assert_eq!(d.len(), 3);
    }
}
