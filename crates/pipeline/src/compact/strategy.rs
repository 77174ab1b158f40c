//! Which compaction strategy runs, as plain data: its name (`s08`, with `lesson` accepted
//! as an alias on input), its one-line description, its size unit, and the per-strategy
//! numbers the agent asks for (docs/strategies.md).
//!
//! What each strategy *does* lives in its folder (`s08/`, `s08_latest/`, `s06/`,
//! `guarded/`), behind the `Design` trait (`design.rs`); `registry.rs` maps a `Strategy` to
//! its design and `Pipeline` (`pipeline.rs`) runs it. This file knows none of them, so the
//! config and every stage can name a strategy without a circle.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::unit::SizeUnit;

/// One of the four strategies ctxlab can run, replay and compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Strategy {
    /// The lesson's plain-function s08 (docs/pipeline.md); `lesson` is accepted on input.
    #[default]
    S08,
    /// The lesson's newest s08: snip archives, micro saves, a fit step, JSON size.
    S08Latest,
    /// The older three-layer lesson: micro placeholders, auto-compact on tokens, compact tool.
    S06,
    /// ctxlab's own: the s08 stages with every documented loss removed.
    Guarded,
}

/// A strategy name that is not one of the four.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown strategy `{0}`; valid: s08 (or lesson), s08-latest, s06, guarded")]
pub struct UnknownStrategy(pub String);

impl Strategy {
    pub const ALL: [Strategy; 4] = [
        Strategy::S08,
        Strategy::S08Latest,
        Strategy::S06,
        Strategy::Guarded,
    ];

    /// The name used on the command line, in config.toml and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::S08 => "s08",
            Strategy::S08Latest => "s08-latest",
            Strategy::S06 => "s06",
            Strategy::Guarded => "guarded",
        }
    }

    /// One line for help texts and pane titles.
    pub fn describe(self) -> &'static str {
        match self {
            Strategy::S08 => "the lesson's s08: budget, snip, micro, compact_history",
            Strategy::S08Latest => "the lesson's newest s08: snip archives, micro saves, fit",
            Strategy::S06 => "the lesson's s06: micro placeholders, auto_compact on tokens",
            Strategy::Guarded => "ctxlab's own: s08 with every documented loss removed",
        }
    }

    /// The unit its sizes and its `context_limit` are counted in.
    pub fn unit(self) -> SizeUnit {
        match self {
            Strategy::S08 | Strategy::Guarded => SizeUnit::Chars,
            Strategy::S08Latest => SizeUnit::JsonChars,
            Strategy::S06 => SizeUnit::Tokens,
        }
    }

    /// Whether the turn ends once the history was compacted for a `compact` call (s06);
    /// the others go on with the next model call.
    pub fn compact_ends_turn(self) -> bool {
        self == Strategy::S06
    }

    /// How many reactive retries may follow one failed call before the error goes to the
    /// user: s06 has no reactive stage, the lessons' s08 retry once, guarded shrinks its
    /// tail (5, 2, 0) and so may retry three times.
    pub fn reactive_attempts(self) -> usize {
        match self {
            Strategy::S06 => 0,
            Strategy::S08 | Strategy::S08Latest => 1,
            Strategy::Guarded => 3,
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Strategy {
    type Err = UnknownStrategy;

    fn from_str(s: &str) -> Result<Strategy, UnknownStrategy> {
        match s.trim() {
            "s08" | "lesson" => Ok(Strategy::S08),
            "s08-latest" => Ok(Strategy::S08Latest),
            "s06" => Ok(Strategy::S06),
            "guarded" => Ok(Strategy::Guarded),
            other => Err(UnknownStrategy(other.to_string())),
        }
    }
}

impl Serialize for Strategy {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Strategy {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_and_lesson_is_s08() {
        for s in Strategy::ALL {
            assert_eq!(s.name().parse::<Strategy>(), Ok(s));
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(serde_json::from_str::<Strategy>(&json).unwrap(), s);
        }
        assert_eq!("lesson".parse::<Strategy>(), Ok(Strategy::S08));
        let e = "s07".parse::<Strategy>().unwrap_err();
        assert!(e.to_string().contains("s08-latest"), "{e}");
        assert_eq!(Strategy::default(), Strategy::S08);
    }
}
