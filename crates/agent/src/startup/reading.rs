//! The agent behind a workbench that only reads sessions (`ctxlab open`) or follows
//! another agent's (`ctxlab watch`). It never calls a model, so it is the embedded
//! scripted model whatever provider the environment, `.env` or config.toml names: a
//! provider setting that is wrong, or a key that is missing, does not stop a reader from
//! opening. What a reader does use still comes from config.toml and the flags, checked as
//! for a run: the strategy and the `[pipeline]` numbers the opened sessions are replayed
//! with, and the rest of the file (docs/architecture.md, "agent -> events -> UI").

use std::collections::HashMap;
use std::path::Path;

use super::{Launch, LaunchError, LaunchOptions, prepare_with};
use crate::user_config::{
    FileSettings, Lookup, ProviderKind, SettingsError, config_file_path,
    load_file_settings_without, settings_from_text,
};

/// config.toml's keys that only choose and reach a model: a reader ignores them.
const MODEL_KEYS: [&str; 10] = [
    "provider",
    "model",
    "anthropic_api_key",
    "anthropic_base_url",
    "openai_api_key",
    "openai_base_url",
    "max_attempts",
    "call_deadline_secs",
    "retry_budget_secs",
    "context_window_tokens",
];

/// `prepare` for a reader: the scripted model (no provider looked up), in `options`'
/// workspace, with config.toml's settings other than the model's.
pub fn prepare_reader(options: &LaunchOptions) -> Result<Launch, LaunchError> {
    let file = match config_file_path() {
        Some(path) => reader_settings(&path)?,
        None => FileSettings::default(),
    };
    prepare_reader_with(options, &file)
}

/// `prepare_reader` with config.toml's settings given (for tests).
pub fn prepare_reader_with(
    options: &LaunchOptions,
    file: &FileSettings,
) -> Result<Launch, LaunchError> {
    let options = LaunchOptions {
        provider: Some(ProviderKind::Scripted),
        model: None,
        ..options.clone()
    };
    // Neither the environment nor `.env`: they only hold the provider's settings.
    let nothing = |_: &str| None;
    let dotenv = HashMap::new();
    let lookup = Lookup {
        env: &nothing,
        dotenv: &dotenv,
    };
    prepare_with(&options, &lookup, file)
}

/// config.toml at `path` without the model's keys (a missing file is empty settings; a
/// file that is not TOML, or a wrong value of another key, is still an error).
pub fn reader_settings(path: &Path) -> Result<FileSettings, SettingsError> {
    load_file_settings_without(path, &MODEL_KEYS)
}

/// `reader_settings` of a file's text.
pub fn reader_settings_from(text: &str) -> Result<FileSettings, toml::de::Error> {
    settings_from_text(text, &MODEL_KEYS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_provider_setting_is_ignored_and_the_rest_still_counts() {
        let file = reader_settings_from(
            "provider = \"nonsense\"\nmodel = 3\nstrategy = \"s06\"\n[pipeline]\ncontext_limit = 30000\n",
        )
        .unwrap();
        assert!(file.provider.is_none());
        assert_eq!(file.strategy, Some(crate::compact::Strategy::S06));
        assert!(reader_settings_from("strategy = \"nonsense\"\n").is_err());
        assert!(reader_settings_from("not toml").is_err());
    }
}
