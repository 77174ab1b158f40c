//! Every number of the pipeline, with the lesson's defaults (docs/pipeline.md, "--set"),
//! and the strategy that reads them.
//!
//! Kept as plain data so the agent can swap a config between model calls (a new strategy
//! included) and the CLI's `--set KEY=VALUE`, config.toml's `[pipeline]` table and the TUI's
//! config panel edit the same fields by name. Each strategy reads the numbers in its own unit
//! (docs/strategies.md): `context_limit` is chars for s08 and guarded, JSON chars for
//! s08-latest, tokens for s06. Those three entry points go through the same checks: each key
//! has an allowed range ([`PipelineConfig::range`]) and the snip head must stay below the
//! snip maximum, so a value that would make every call compact, or a stage undo its own
//! work, is refused with the range in the message. Code that builds a config directly (tests, benches) is not checked.

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

/// One settable number: its key, its field, and the values it accepts on its own.
struct Setting {
    key: &'static str,
    field: fn(&mut PipelineConfig) -> &mut usize,
    range: (usize, usize),
    /// Its unit and what it does, as the `/config` panel shows them (docs/pipeline.md, "--set").
    unit: &'static str,
    meaning: &'static str,
}

/// Every settable number: the one table `KEYS`, `get`, `set` and `range` read.
const SETTINGS: [Setting; 11] = [
    // 0: every batch is over budget (the lesson's examples use it to force a persist).
    Setting {
        key: "budget_chars",
        field: |c| &mut c.budget_chars,
        range: (0, MAX_CHARS),
        unit: "chars",
        meaning: "tool_result_budget: the newest batch of tool results may total this much; past it the largest are persisted",
    },
    Setting {
        key: "persist_threshold",
        field: |c| &mut c.persist_threshold,
        range: (1, MAX_CHARS),
        unit: "chars",
        meaning: "tool_result_budget: only a result longer than this is persisted to a file",
    },
    Setting {
        key: "preview_chars",
        field: |c| &mut c.preview_chars,
        range: (0, MAX_CHARS),
        unit: "chars",
        meaning: "tool_result_budget: how much of a persisted result stays in its marker as a preview",
    },
    Setting {
        key: "snip_max_messages",
        field: |c| &mut c.snip_max_messages,
        range: (2, MAX_MESSAGES),
        unit: "messages",
        meaning: "snip_compact: a history longer than this is snipped",
    },
    Setting {
        key: "snip_keep_head",
        field: |c| &mut c.snip_keep_head,
        range: (0, MAX_MESSAGES),
        unit: "messages",
        meaning: "snip_compact: the first messages a snip keeps",
    },
    Setting {
        key: "micro_keep_recent",
        field: |c| &mut c.micro_keep_recent,
        range: (0, MAX_MESSAGES),
        unit: "tool results",
        meaning: "micro_compact: the newest results kept whole",
    },
    Setting {
        key: "micro_min_chars",
        field: |c| &mut c.micro_min_chars,
        range: (0, MAX_CHARS),
        unit: "chars",
        meaning: "micro_compact: only an older result longer than this is replaced",
    },
    Setting {
        key: "context_limit",
        field: |c| &mut c.context_limit,
        range: (MIN_CONTEXT_LIMIT, MAX_CHARS),
        unit: "strategy's unit",
        meaning: "compact_history: runs when the history's size is over this",
    },
    Setting {
        key: "reactive_keep_tail",
        field: |c| &mut c.reactive_keep_tail,
        range: (0, MAX_MESSAGES),
        unit: "messages",
        meaning: "reactive_compact: the newest messages kept after a too-long error",
    },
    Setting {
        key: "summary_input_chars",
        field: |c| &mut c.summary_input_chars,
        range: (100, MAX_CHARS),
        unit: "chars",
        meaning: "both summaries: the history sent to the summary call is cut to this",
    },
    Setting {
        key: "summary_max_tokens",
        field: |c| &mut c.summary_max_tokens,
        range: (1, 1_000_000),
        unit: "tokens",
        meaning: "both summaries: the summary call's max_tokens",
    },
];

/// A `--set` that cannot be applied.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error("unknown setting `{key}`; valid keys: {}", PipelineConfig::KEYS.join(", "))]
    UnknownKey { key: String },
    #[error("`{key}` needs a whole number, got `{value}`; valid keys: {}", PipelineConfig::KEYS.join(", "))]
    NotANumber { key: String, value: String },
    #[error("`{text}` is not KEY=VALUE; valid keys: {}", PipelineConfig::KEYS.join(", "))]
    NotAnAssignment { text: String },
    #[error("`{key}` = {value} is out of range: allowed {min}..={max}")]
    OutOfRange {
        key: String,
        value: usize,
        min: usize,
        max: usize,
    },
    #[error("`{key}` = {value} must be below `{bound_key}` = {bound}{why}")]
    AboveBound {
        key: &'static str,
        value: usize,
        bound_key: &'static str,
        bound: usize,
        why: &'static str,
    },
}

/// The largest char count any setting accepts: far above any real context, far below
/// arithmetic trouble.
const MAX_CHARS: usize = 1_000_000_000;
/// The largest message count any setting accepts.
const MAX_MESSAGES: usize = 1_000_000;
/// The smallest `context_limit`: 0 (or a few chars) would make every call compact. Small
/// limits stay allowed: they show every stage at work on a small history.
pub const MIN_CONTEXT_LIMIT: usize = 100;

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
    pub const KEYS: [&'static str; SETTINGS.len()] = {
        let mut keys = [""; SETTINGS.len()];
        let mut i = 0;
        while i < keys.len() {
            keys[i] = SETTINGS[i].key;
            i += 1;
        }
        keys
    };

    fn setting(key: &str) -> Option<&'static Setting> {
        SETTINGS.iter().find(|s| s.key == key)
    }

    fn field_mut(&mut self, key: &str) -> Option<&mut usize> {
        PipelineConfig::setting(key).map(|s| (s.field)(self))
    }

    /// The value of a key, for display.
    pub fn get(&self, key: &str) -> Option<usize> {
        let mut copy = *self;
        copy.field_mut(key).map(|v| *v)
    }

    /// The values a key accepts on its own (`min..=max`); None for an unknown key. Some keys
    /// are bounded by others as well (see [`PipelineConfig::validate`]).
    pub fn range(key: &str) -> Option<(usize, usize)> {
        PipelineConfig::setting(key).map(|s| s.range)
    }

    /// A key's unit and what it does (None for an unknown key): the `/config` panel's text.
    /// `context_limit`'s unit is the strategy's ([`Strategy::unit`]).
    pub fn meaning(key: &str) -> Option<(&'static str, &'static str)> {
        PipelineConfig::setting(key).map(|s| (s.unit, s.meaning))
    }

    /// Sets one key from its text value, checking its own range only: [`set`] and
    /// [`apply_assignments`] check the whole config afterwards.
    ///
    /// [`set`]: PipelineConfig::set
    /// [`apply_assignments`]: PipelineConfig::apply_assignments
    fn set_in_range(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let (min, max) = PipelineConfig::range(key).ok_or_else(|| ConfigError::UnknownKey {
            key: key.to_string(),
        })?;
        let parsed = value
            .trim()
            .parse::<usize>()
            .map_err(|_| ConfigError::NotANumber {
                key: key.to_string(),
                value: value.to_string(),
            })?;
        if !(min..=max).contains(&parsed) {
            return Err(ConfigError::OutOfRange {
                key: key.to_string(),
                value: parsed,
                min,
                max,
            });
        }
        if let Some(slot) = self.field_mut(key) {
            *slot = parsed;
        }
        Ok(())
    }

    /// Sets one key from its text value; the result must be a valid config as a whole (the
    /// `/config` panel's check). On an error nothing changes.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let mut next = *self;
        next.set_in_range(key, value)?;
        next.validate()?;
        *self = next;
        Ok(())
    }

    /// Applies one `KEY=VALUE` assignment (see [`PipelineConfig::set`]).
    pub fn apply_assignment(&mut self, assignment: &str) -> Result<(), ConfigError> {
        self.apply_assignments([assignment])
    }

    /// Applies `KEY=VALUE` assignments in order, then checks the whole config once, so that
    /// `--set snip_keep_head=60 --set snip_max_messages=100` works in either order. On an
    /// error nothing changes.
    pub fn apply_assignments<'a>(
        &mut self,
        assignments: impl IntoIterator<Item = &'a str>,
    ) -> Result<(), ConfigError> {
        let mut next = *self;
        for assignment in assignments {
            let (key, value) =
                assignment
                    .split_once('=')
                    .ok_or_else(|| ConfigError::NotAnAssignment {
                        text: assignment.to_string(),
                    })?;
            next.set_in_range(key.trim(), value)?;
        }
        next.validate()?;
        *self = next;
        Ok(())
    }

    /// Checks every key's range and the bounds between keys.
    pub fn validate(&self) -> Result<(), ConfigError> {
        for key in PipelineConfig::KEYS {
            let (Some((min, max)), Some(value)) = (PipelineConfig::range(key), self.get(key))
            else {
                continue;
            };
            if !(min..=max).contains(&value) {
                return Err(ConfigError::OutOfRange {
                    key: key.to_string(),
                    value,
                    min,
                    max,
                });
            }
        }
        if self.snip_keep_head >= self.snip_max_messages {
            return Err(ConfigError::AboveBound {
                key: "snip_keep_head",
                value: self.snip_keep_head,
                bound_key: "snip_max_messages",
                bound: self.snip_max_messages,
                why: " (the kept head must leave room for a tail)",
            });
        }
        Ok(())
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

    #[test]
    fn out_of_range_values_are_refused_with_the_range() {
        let mut c = PipelineConfig::default();
        let e = c.apply_assignment("context_limit=0").unwrap_err();
        assert!(
            e.to_string().contains("100..=1000000000"),
            "the range is in the message: {e}"
        );
        let e = c.apply_assignment("snip_keep_head=60").unwrap_err();
        assert!(
            e.to_string().contains("snip_keep_head")
                && e.to_string().contains("`snip_max_messages` = 50"),
            "{e}"
        );
        assert!(c.set("summary_max_tokens", "0").is_err());
        assert_eq!(
            c,
            PipelineConfig::default(),
            "a refused value changes nothing"
        );
        // Bounds between keys are checked once all assignments are in.
        c.apply_assignments(["snip_keep_head=60", "snip_max_messages=100"])
            .unwrap();
        assert_eq!((c.snip_keep_head, c.snip_max_messages), (60, 100));
        assert!(PipelineConfig::default().validate().is_ok());
        for key in PipelineConfig::KEYS {
            assert!(PipelineConfig::range(key).is_some(), "{key}");
        }
    }
}
