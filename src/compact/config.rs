//! Every number of the pipeline, with the lesson's defaults (docs/pipeline.md, "--set"),
//! and the strategy that reads them.
//!
//! Kept as plain data so the agent can swap a config between model calls (a new strategy
//! included) and the CLI's `--set KEY=VALUE` and the TUI's config panel edit the same
//! fields by name. Each strategy reads the numbers in its own unit (docs/strategies.md):
//! `context_limit` is chars for s08 and guarded, JSON chars for s08-latest, tokens for s06.

use serde::{Deserialize, Serialize};

use super::strategy::Strategy;

/// The strategy and its thresholds. Sizes are in code points (docs/pipeline.md, "Units")
/// unless the strategy counts in another unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PipelineConfig {
    /// Which strategy runs; not one of `KEYS` (it is not a number).
    #[serde(default)]
    pub strategy: Strategy,
    pub budget_chars: usize,
    pub persist_threshold: usize,
    pub preview_chars: usize,
    pub snip_max_messages: usize,
    pub snip_keep_head: usize,
    pub micro_keep_recent: usize,
    pub micro_min_chars: usize,
    pub context_limit: usize,
    pub reactive_keep_tail: usize,
    pub summary_input_chars: usize,
    pub summary_max_tokens: usize,
}

impl Default for PipelineConfig {
    fn default() -> Self {
        PipelineConfig {
            strategy: Strategy::S08,
            budget_chars: 200_000,
            persist_threshold: 30_000,
            preview_chars: 2_000,
            snip_max_messages: 50,
            snip_keep_head: 3,
            micro_keep_recent: 3,
            micro_min_chars: 120,
            context_limit: 50_000,
            reactive_keep_tail: 5,
            summary_input_chars: 80_000,
            summary_max_tokens: 2_000,
        }
    }
}

/// A `--set` that cannot be applied.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error("unknown setting `{key}`; valid keys: {}", PipelineConfig::KEYS.join(", "))]
    UnknownKey { key: String },
    #[error("`{key}` needs a whole number, got `{value}`; valid keys: {}", PipelineConfig::KEYS.join(", "))]
    NotANumber { key: String, value: String },
    #[error("`{text}` is not KEY=VALUE; valid keys: {}", PipelineConfig::KEYS.join(", "))]
    NotAnAssignment { text: String },
}

impl PipelineConfig {
    /// A strategy's own defaults: the lesson's numbers, except s06's micro, which leaves
    /// results of up to 100 chars alone (s08's gate is 120).
    pub fn for_strategy(strategy: Strategy) -> PipelineConfig {
        let base = PipelineConfig {
            strategy,
            ..PipelineConfig::default()
        };
        match strategy {
            Strategy::S06 => PipelineConfig {
                micro_min_chars: 100,
                ..base
            },
            Strategy::S08 | Strategy::S08Latest | Strategy::Guarded => base,
        }
    }

    /// The same settings under another strategy: a number still at the old strategy's
    /// default takes the new one's, a number the user changed stays. What `/config` uses.
    pub fn with_strategy(self, strategy: Strategy) -> PipelineConfig {
        let old = PipelineConfig::for_strategy(self.strategy);
        let new = PipelineConfig::for_strategy(strategy);
        let mut out = PipelineConfig { strategy, ..self };
        for key in PipelineConfig::KEYS {
            if self.get(key) == old.get(key)
                && let (Some(slot), Some(v)) = (out.field_mut(key), new.get(key))
            {
                *slot = v;
            }
        }
        out
    }

    /// The settable keys, in the order docs/pipeline.md "--set" lists them.
    pub const KEYS: [&'static str; 11] = [
        "budget_chars",
        "persist_threshold",
        "preview_chars",
        "snip_max_messages",
        "snip_keep_head",
        "micro_keep_recent",
        "micro_min_chars",
        "context_limit",
        "reactive_keep_tail",
        "summary_input_chars",
        "summary_max_tokens",
    ];

    fn field_mut(&mut self, key: &str) -> Option<&mut usize> {
        Some(match key {
            "budget_chars" => &mut self.budget_chars,
            "persist_threshold" => &mut self.persist_threshold,
            "preview_chars" => &mut self.preview_chars,
            "snip_max_messages" => &mut self.snip_max_messages,
            "snip_keep_head" => &mut self.snip_keep_head,
            "micro_keep_recent" => &mut self.micro_keep_recent,
            "micro_min_chars" => &mut self.micro_min_chars,
            "context_limit" => &mut self.context_limit,
            "reactive_keep_tail" => &mut self.reactive_keep_tail,
            "summary_input_chars" => &mut self.summary_input_chars,
            "summary_max_tokens" => &mut self.summary_max_tokens,
            _ => return None,
        })
    }

    /// The value of a key, for display.
    pub fn get(&self, key: &str) -> Option<usize> {
        let mut copy = *self;
        copy.field_mut(key).map(|v| *v)
    }

    /// Sets one key from its text value.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let parsed = value.trim().parse::<usize>();
        let slot = self.field_mut(key).ok_or_else(|| ConfigError::UnknownKey {
            key: key.to_string(),
        })?;
        *slot = parsed.map_err(|_| ConfigError::NotANumber {
            key: key.to_string(),
            value: value.to_string(),
        })?;
        Ok(())
    }

    /// Applies one `KEY=VALUE` assignment.
    pub fn apply_assignment(&mut self, assignment: &str) -> Result<(), ConfigError> {
        let (key, value) =
            assignment
                .split_once('=')
                .ok_or_else(|| ConfigError::NotAnAssignment {
                    text: assignment.to_string(),
                })?;
        self.set(key.trim(), value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_changes_exactly_one_field() {
        let mut c = PipelineConfig::default();
        c.apply_assignment("context_limit=800000").unwrap();
        assert_eq!(c.context_limit, 800_000);
        assert_eq!(
            PipelineConfig {
                context_limit: 50_000,
                ..c
            },
            PipelineConfig::default()
        );
        for key in PipelineConfig::KEYS {
            assert!(c.get(key).is_some(), "{key}");
        }
    }

    #[test]
    fn switching_strategy_moves_defaults_and_keeps_user_numbers() {
        let s06 = PipelineConfig::for_strategy(Strategy::S06);
        assert_eq!((s06.strategy, s06.micro_min_chars), (Strategy::S06, 100));
        let mine = PipelineConfig {
            context_limit: 9_000,
            ..PipelineConfig::default()
        };
        let switched = mine.with_strategy(Strategy::S06);
        assert_eq!(switched.micro_min_chars, 100);
        assert_eq!(switched.context_limit, 9_000);
        let back = switched.with_strategy(Strategy::S08);
        assert_eq!(back, mine);
        assert_eq!(
            PipelineConfig::for_strategy(Strategy::Guarded),
            PipelineConfig {
                strategy: Strategy::Guarded,
                ..PipelineConfig::default()
            }
        );
    }

    #[test]
    fn bad_assignments_list_the_valid_keys() {
        let mut c = PipelineConfig::default();
        let e = c.apply_assignment("nope=1").unwrap_err();
        assert!(e.to_string().contains("snip_max_messages"));
        assert!(matches!(
            c.apply_assignment("context_limit=1.5"),
            Err(ConfigError::NotANumber { .. })
        ));
        assert!(matches!(
            c.apply_assignment("context_limit=-3"),
            Err(ConfigError::NotANumber { .. })
        ));
        assert!(matches!(
            c.apply_assignment("context_limit"),
            Err(ConfigError::NotAnAssignment { .. })
        ));
        assert_eq!(c, PipelineConfig::default());
    }
}
