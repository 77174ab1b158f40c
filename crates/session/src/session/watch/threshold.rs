//! Where the agent itself compacts: the threshold headroom is measured to, by each agent's
//! own rule, with the settings a user can change it with. The rules were measured against
//! the real CLIs in the real-agent harness (docs/real-agents.md, "Thresholds"):
//!
//! - Claude Code compacts when the last call's context reaches the window less 20,000
//!   tokens kept for the answer less a 13,000-token buffer (167,000 of a 200,000 window).
//!   `CLAUDE_CODE_AUTO_COMPACT_WINDOW` lowers the window; `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`
//!   (a percent of the window less the answer's 20,000) lowers the threshold further;
//!   `DISABLE_AUTO_COMPACT` or `autoCompactEnabled: false` turn it off.
//! - Codex compacts at 90% of the model's window (the rollout records the usable 95% of
//!   it as `model_context_window`), or at `model_auto_compact_token_limit` from
//!   `config.toml` when that is lower.
//!
//! An automatic compaction seen in the file below the rule's figure corrects it (the agent
//! compacted there, so that is where it compacts); a manual one never moves it. The
//! settings are read once by the front end (`AgentSettings::read`); the fold stays pure.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::session::model::SessionFormat;
use crate::util::group_digits;

/// Tokens Claude Code keeps free for the answer.
const CLAUDE_ANSWER_RESERVE_TOKENS: u64 = 20_000;
/// Claude Code's buffer below that.
const CLAUDE_AUTOCOMPACT_BUFFER_TOKENS: u64 = 13_000;
/// The share of the model's window Codex reports as usable (`model_context_window`).
const CODEX_EFFECTIVE_WINDOW_PERCENT: u64 = 95;
/// Codex compacts at this share of the model's window by default.
const CODEX_DEFAULT_PERCENT: u64 = 90;
/// A Codex compaction below this share of the rule corrects it.
const CODEX_SLACK_PERCENT: u64 = 85;
/// A settings file larger than this is not read.
const MAX_SETTINGS_BYTES: u64 = 1 << 20;

/// What the user set that moves an agent's threshold, each with where it was read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentSettings {
    /// `CLAUDE_CODE_AUTO_COMPACT_WINDOW`.
    pub claude_window: Option<(u64, String)>,
    /// `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`.
    pub claude_percent: Option<(f64, String)>,
    /// `DISABLE_AUTO_COMPACT` or `autoCompactEnabled: false`.
    pub claude_off: Option<String>,
    /// `model_auto_compact_token_limit`.
    pub codex_limit: Option<(u64, String)>,
}

/// The threshold and, in words, where it comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Threshold {
    pub tokens: u64,
    pub source: String,
}

fn g(n: u64) -> String {
    group_digits(usize::try_from(n).unwrap_or(usize::MAX))
}

/// Claude Code's threshold for a model `window`; None when auto-compact is off.
pub fn claude_code(window: u64, settings: &AgentSettings) -> Option<Threshold> {
    if settings.claude_off.is_some() {
        return None;
    }
    let (window, window_note) = match &settings.claude_window {
        Some((w, from)) if *w < window => (*w, format!(", window {} from {from}", g(*w))),
        _ => (window, String::new()),
    };
    let usable = window.saturating_sub(CLAUDE_ANSWER_RESERVE_TOKENS);
    let rule = usable.saturating_sub(CLAUDE_AUTOCOMPACT_BUFFER_TOKENS);
    if let Some((pct, from)) = &settings.claude_percent
        && *pct > 0.0
        && *pct < 100.0
    {
        let by_pct = (usable as f64 * pct / 100.0) as u64;
        if by_pct < rule {
            return Some(Threshold {
                tokens: by_pct,
                source: format!(
                    "Claude Code: {pct}% of {} (window less 20,000 for the answer), {from}{window_note}",
                    g(usable)
                ),
            });
        }
    }
    Some(Threshold {
        tokens: rule,
        source: format!(
            "Claude Code's rule: window {} less 20,000 for the answer and a 13,000 buffer{window_note}",
            g(window)
        ),
    })
}

/// Codex's threshold from the usable window the rollout records (`model_context_window`).
pub fn codex(effective_window: Option<u64>, settings: &AgentSettings) -> Option<Threshold> {
    let default = effective_window
        .map(|w| w * 100 / CODEX_EFFECTIVE_WINDOW_PERCENT * CODEX_DEFAULT_PERCENT / 100);
    match (default, &settings.codex_limit) {
        (Some(d), Some((limit, from))) if *limit < d => Some(Threshold {
            tokens: *limit,
            source: format!("Codex: model_auto_compact_token_limit in {from}"),
        }),
        (Some(d), _) => Some(Threshold {
            tokens: d,
            source: format!(
                "Codex's rule: 90% of the model's window ({} recorded as its usable 95%)",
                g(effective_window.unwrap_or(0))
            ),
        }),
        (None, Some((limit, from))) => Some(Threshold {
            tokens: *limit,
            source: format!("Codex: model_auto_compact_token_limit in {from}"),
        }),
        (None, None) => None,
    }
}

/// The agent's threshold for a session of `format`: its rule, corrected by where it was
/// seen to compact by itself (`auto_at`: the context of the last call before its last
/// automatic compaction).
pub fn of_session(
    format: Option<SessionFormat>,
    window: Option<u64>,
    recorded_window: Option<u64>,
    auto_at: Option<u64>,
    settings: &AgentSettings,
) -> Option<Threshold> {
    let format = format?;
    let rule = match format {
        SessionFormat::ClaudeCode => claude_code(window?, settings),
        SessionFormat::Codex | SessionFormat::CodexLegacy => codex(recorded_window, settings),
        _ => None,
    }?;
    // Claude Code checks the last call's context, so it never compacts below its threshold.
    // Codex adds its estimate of what came after the last answer (a long tool output), so a
    // compaction a little below the rule confirms it; only one far below corrects it.
    let below = |at: u64| match format {
        SessionFormat::ClaudeCode => at < rule.tokens,
        _ => at.saturating_mul(100) < rule.tokens.saturating_mul(CODEX_SLACK_PERCENT),
    };
    match auto_at {
        Some(at) if below(at) => Some(Threshold {
            tokens: at,
            source: format!(
                "where this session compacted by itself ({} by {})",
                g(at),
                rule.source
            ),
        }),
        _ => Some(rule),
    }
}

impl AgentSettings {
    /// The settings of this environment and of the agents' own files (only read):
    /// Claude Code's variables from the environment or `env` in `~/.claude/settings.json`,
    /// `autoCompactEnabled` from `~/.claude.json`, and `model_auto_compact_token_limit` from
    /// `$CODEX_HOME/config.toml` (default `~/.codex`).
    pub fn read() -> AgentSettings {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let claude_settings = home
            .as_ref()
            .and_then(|h| read_json(&h.join(".claude/settings.json")));
        let from_settings = |key: &str| -> Option<(String, String)> {
            let v = claude_settings.as_ref()?.get("env")?.get(key)?;
            let text = v
                .as_str()
                .map(str::to_string)
                .or_else(|| v.as_u64().map(|n| n.to_string()))?;
            Some((text, "~/.claude/settings.json".to_string()))
        };
        let var = |key: &str| -> Option<(String, String)> {
            std::env::var(key)
                .ok()
                .filter(|v| !v.trim().is_empty())
                .map(|v| (v, format!("${key}")))
                .or_else(|| from_settings(key))
        };
        let mut s = AgentSettings {
            claude_window: var("CLAUDE_CODE_AUTO_COMPACT_WINDOW")
                .and_then(|(v, from)| Some((parse_tokens(&v)?, from))),
            claude_percent: var("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE")
                .and_then(|(v, from)| Some((v.trim().parse::<f64>().ok()?, from))),
            claude_off: var("DISABLE_AUTO_COMPACT")
                .filter(|(v, _)| !matches!(v.trim(), "0" | "false"))
                .map(|(_, from)| from),
            codex_limit: None,
        };
        if s.claude_off.is_none()
            && home
                .as_ref()
                .and_then(|h| read_text(&h.join(".claude.json")))
                .is_some_and(|t| auto_compact_off(&t))
        {
            s.claude_off = Some("autoCompactEnabled in ~/.claude.json".into());
        }
        let codex_home = std::env::var_os("CODEX_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| home.map(|h| h.join(".codex")));
        if let Some(dir) = codex_home {
            let path = dir.join("config.toml");
            if let Some(limit) = read_text(&path)
                .and_then(|t| toml::from_str::<toml::Table>(&t).ok())
                .and_then(|t| t.get("model_auto_compact_token_limit")?.as_integer())
                .and_then(|n| u64::try_from(n).ok())
                .filter(|n| *n > 0)
            {
                s.codex_limit = Some((limit, path.display().to_string()));
            }
        }
        s
    }
}

/// "200k", "200000", "1m" as tokens.
fn parse_tokens(text: &str) -> Option<u64> {
    let t = text.trim().to_ascii_lowercase().replace([',', '_'], "");
    let (digits, times) = match t.strip_suffix('k') {
        Some(d) => (d.to_string(), 1_000),
        None => match t.strip_suffix('m') {
            Some(d) => (d.to_string(), 1_000_000),
            None => (t, 1),
        },
    };
    let n: f64 = digits.parse().ok()?;
    (n > 0.0).then_some((n * times as f64) as u64)
}

fn read_text(path: &Path) -> Option<String> {
    use std::io::Read;
    let opened = crate::session::open::open_regular(path).ok()?;
    if opened.len > MAX_SETTINGS_BYTES {
        return None;
    }
    let mut text = String::new();
    opened
        .file
        .take(MAX_SETTINGS_BYTES)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

/// Whether Claude Code's state file (`~/.claude.json`) says `autoCompactEnabled: false`.
/// The file also holds every project's history (up to the 1 MiB read): only that one key
/// is built, the rest skipped unbuilt, since the status line reads it on every run.
fn auto_compact_off(text: &str) -> bool {
    struct Off;
    impl<'de> serde::de::Visitor<'de> for Off {
        type Value = Option<bool>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(
            self,
            mut m: A,
        ) -> Result<Option<bool>, A::Error> {
            // The last of repeated keys wins, as in a parsed map.
            let mut off = None;
            while let Some(k) = m.next_key::<std::borrow::Cow<'de, str>>()? {
                if k == "autoCompactEnabled" {
                    off = m.next_value::<serde_json::Value>()?.as_bool();
                } else {
                    m.next_value::<serde::de::IgnoredAny>()?;
                }
            }
            Ok(off)
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let read =
        serde::Deserializer::deserialize_map(&mut de, Off).and_then(|v| de.end().map(|()| v));
    read.ok().flatten() == Some(false)
}

fn read_json(path: &Path) -> Option<serde_json::Value> {
    serde_json::from_str(&read_text(path)?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_file_is_read_for_its_one_key_as_a_full_parse_reads_it() {
        let full = |t: &str| {
            serde_json::from_str::<serde_json::Value>(t)
                .ok()
                .and_then(|v| v.get("autoCompactEnabled")?.as_bool())
                == Some(false)
        };
        for text in [
            r#"{"autoCompactEnabled":false,"projects":{"/p":{"history":[1,2]}}}"#,
            r#"{"projects":{"/p":{"autoCompactEnabled":false}},"autoCompactEnabled":true}"#,
            r#"{"autoCompactEnabled":"false"}"#,
            r#"{"autoCompactEnabled":null}"#,
            r#"{"numStartups":3}"#,
            r#"{"autoCompactEnabled":true,"autoCompactEnabled":false}"#,
            r#"{"autoCompactEnabled":false,"autoCompactEnabled":1}"#,
            r#"{"autoCompactEnabled":false} x"#,
            r#"[false]"#,
            r#"{"autoCompactEnabled":false"#,
            "",
        ] {
            assert_eq!(auto_compact_off(text), full(text), "{text}");
        }
        assert!(auto_compact_off(
            r#"{"x":[{"y":{}}],"autoCompactEnabled":false}"#
        ));
    }

    #[test]
    fn claude_codes_rule_matches_what_the_real_cli_did() {
        // Measured with Claude Code 2.1.332 (docs/real-agents.md): with a 200,000 window
        // it compacted after a call at 167,112 and not after one at 163,376.
        let none = AgentSettings::default();
        assert_eq!(claude_code(200_000, &none).unwrap().tokens, 167_000);
        // CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=50: compacted after 92,513, not after 89,396.
        let pct = AgentSettings {
            claude_percent: Some((50.0, "$CLAUDE_AUTOCOMPACT_PCT_OVERRIDE".into())),
            ..AgentSettings::default()
        };
        assert_eq!(claude_code(200_000, &pct).unwrap().tokens, 90_000);
        // CLAUDE_CODE_AUTO_COMPACT_WINDOW=100000: compacted after 69,209, not after 65,979.
        let win = AgentSettings {
            claude_window: Some((100_000, "$CLAUDE_CODE_AUTO_COMPACT_WINDOW".into())),
            ..AgentSettings::default()
        };
        assert_eq!(claude_code(200_000, &win).unwrap().tokens, 67_000);
        let off = AgentSettings {
            claude_off: Some("$DISABLE_AUTO_COMPACT".into()),
            ..AgentSettings::default()
        };
        assert_eq!(claude_code(200_000, &off), None);
    }

    #[test]
    fn codexs_rule_is_90_percent_of_the_model_window_or_the_lower_configured_limit() {
        // gpt-5.1-codex: a 272,000 window, recorded as 258,400 usable.
        let none = AgentSettings::default();
        assert_eq!(codex(Some(258_400), &none).unwrap().tokens, 244_800);
        let set = AgentSettings {
            codex_limit: Some((30_000, "config.toml".into())),
            ..AgentSettings::default()
        };
        assert_eq!(codex(Some(258_400), &set).unwrap().tokens, 30_000);
        // A configured limit above the default does not raise it.
        let high = AgentSettings {
            codex_limit: Some((900_000, "config.toml".into())),
            ..AgentSettings::default()
        };
        assert_eq!(codex(Some(258_400), &high).unwrap().tokens, 244_800);
    }

    #[test]
    fn an_automatic_compaction_below_the_rule_corrects_it_and_a_higher_one_does_not() {
        let none = AgentSettings::default();
        let f = Some(SessionFormat::ClaudeCode);
        let t = of_session(f, Some(200_000), None, Some(155_116), &none).unwrap();
        assert_eq!(t.tokens, 155_116);
        assert!(t.source.contains("compacted by itself"), "{}", t.source);
        let t = of_session(f, Some(200_000), None, Some(170_251), &none).unwrap();
        assert_eq!(t.tokens, 167_000);
        // Codex compacted after a call at 243,707 whose long output it counted on top: the
        // rule's 244,800 stands.
        let c = Some(SessionFormat::Codex);
        let t = of_session(c, None, Some(258_400), Some(243_707), &none).unwrap();
        assert_eq!(t.tokens, 244_800);
        let t = of_session(c, None, Some(258_400), Some(100_000), &none).unwrap();
        assert_eq!(t.tokens, 100_000);
    }

    #[test]
    fn window_sizes_read_as_people_write_them() {
        assert_eq!(parse_tokens("200k"), Some(200_000));
        assert_eq!(parse_tokens("200000"), Some(200_000));
        assert_eq!(parse_tokens("1m"), Some(1_000_000));
        assert_eq!(parse_tokens("lots"), None);
    }
}
