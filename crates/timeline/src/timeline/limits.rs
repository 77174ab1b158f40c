//! The limits a timeline's calls ran under: a run starts with one strategy and context
//! limit, `/config` can change them from a call on, and a continue from call N runs calls
//! N on under the settings in force then while calls 1 to N-1 keep the ones they ran
//! under. Each call is drawn and described against its own limit (the plot's limit line
//! in segments, the page's header naming each), never against the one in force now.

use std::ops::RangeInclusive;

use super::Timeline;
use crate::compact::{SizeUnit, Strategy};
use crate::util::group_digits;

/// Settings in force from one call on, until the next span starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LimitSpan {
    /// The first call (1-based) they applied to.
    pub from_call: usize,
    /// None when the source did not say (a timeline built from a limit alone).
    pub strategy: Option<Strategy>,
    /// In `unit`.
    pub context_limit: usize,
    pub unit: SizeUnit,
}

impl LimitSpan {
    /// The limit on the calls' scale (`str()` chars), as `Timeline::limit_chars`.
    pub fn limit_chars(&self) -> usize {
        self.context_limit
            .saturating_mul(self.unit.chars_per_unit())
    }

    /// `50,000 tokens = 200,000 chars`, or `50,000 chars`.
    pub fn limit_text(&self) -> String {
        let n = group_digits(self.context_limit);
        if self.unit.chars_per_unit() == 1 {
            format!("{n} {}", self.unit.label())
        } else {
            format!(
                "{n} {} = {} chars",
                self.unit.label(),
                group_digits(self.limit_chars())
            )
        }
    }
}

/// `calls 1-9`, `call 10`.
pub fn calls_text(calls: &RangeInclusive<usize>) -> String {
    if calls.start() == calls.end() {
        format!("call {}", calls.start())
    } else {
        format!("calls {}-{}", calls.start(), calls.end())
    }
}

impl Timeline {
    /// The run applies `strategy` and `context_limit` from the next call on (a start, a
    /// `/config` change, a continue's start): a span that no call ran under yet is replaced.
    pub fn settings_from_next_call(&mut self, strategy: Option<Strategy>, context_limit: usize) {
        let unit = strategy.map_or(self.unit, Strategy::unit);
        self.context_limit = context_limit;
        self.unit = unit;
        let span = LimitSpan {
            from_call: self.calls.len() + 1,
            strategy,
            context_limit,
            unit,
        };
        match self.limits.last_mut() {
            Some(last) if last.from_call == span.from_call => *last = span,
            Some(last)
                if (last.strategy, last.context_limit, last.unit)
                    == (strategy, context_limit, unit) => {}
            _ => self.limits.push(span),
        }
    }

    /// Each span with the calls that ran under it, oldest first; spans no call ran under
    /// are left out (without calls, none).
    pub fn limit_spans(&self) -> Vec<(RangeInclusive<usize>, LimitSpan)> {
        let n = self.calls.len();
        let mut out = Vec::new();
        for (i, span) in self.limits.iter().enumerate() {
            let end = self
                .limits
                .get(i + 1)
                .map_or(n, |next| next.from_call.saturating_sub(1))
                .min(n);
            if span.from_call <= end {
                out.push((span.from_call..=end, *span));
            }
        }
        out
    }

    /// The settings call `number` ran under.
    pub fn limit_of(&self, number: usize) -> Option<LimitSpan> {
        self.limits
            .iter()
            .rev()
            .find(|s| s.from_call <= number)
            .or(self.limits.first())
            .copied()
    }

    /// The strategy and limit of every span as one sentence: `strategy s08, limit 50,000
    /// chars`, or after a change `calls 1-9: s08, limit 50,000 chars; calls 10-37: s08,
    /// limit 30,000 chars`.
    pub fn limits_text(&self) -> String {
        let spans = self.limit_spans();
        let one = |s: &LimitSpan| match s.strategy {
            Some(strategy) => format!("strategy {strategy}, limit {}", s.limit_text()),
            None => format!("limit {}", s.limit_text()),
        };
        match spans.as_slice() {
            [] => one(&self.limit_now()),
            [(_, s)] => one(s),
            _ => spans
                .iter()
                .map(|(calls, s)| format!("{}: {}", calls_text(calls), one(s)))
                .collect::<Vec<_>>()
                .join("; "),
        }
    }

    /// Cuts the spans before call `n` (`branch_before`): a continue adds its own.
    pub(super) fn limits_before(&mut self, n: usize) {
        let keep = self
            .limits
            .iter()
            .position(|s| s.from_call >= n)
            .unwrap_or(self.limits.len())
            .max(1);
        self.limits.truncate(keep);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeline::Source;

    fn with_calls(t: &mut Timeline, n: usize) {
        for _ in 0..n {
            t.appended(crate::message::Message::user_text("x"));
            t.request_sent(None);
        }
    }

    #[test]
    fn a_change_applies_from_the_next_call_and_earlier_calls_keep_theirs() {
        let mut t = Timeline::new(Source::Live, 0);
        t.settings_from_next_call(Some(Strategy::S08), 50_000);
        with_calls(&mut t, 9);
        t.settings_from_next_call(Some(Strategy::S08), 30_000);
        with_calls(&mut t, 3);
        let spans = t.limit_spans();
        assert_eq!(spans.len(), 2);
        assert_eq!(spans[0].0, 1..=9);
        assert_eq!(spans[0].1.context_limit, 50_000);
        assert_eq!(spans[1].0, 10..=12);
        assert_eq!(spans[1].1.context_limit, 30_000);
        assert_eq!(t.limit_of(3).map(|s| s.context_limit), Some(50_000));
        assert_eq!(t.limit_of(10).map(|s| s.context_limit), Some(30_000));
        assert_eq!(
            t.limits_text(),
            "calls 1-9: strategy s08, limit 50,000 chars; calls 10-12: strategy s08, limit 30,000 chars"
        );
    }

    #[test]
    fn a_change_after_the_last_call_does_not_relabel_the_calls_that_ran() {
        let mut t = Timeline::new(Source::Live, 0);
        t.settings_from_next_call(Some(Strategy::S06), 50_000);
        with_calls(&mut t, 4);
        t.settings_from_next_call(Some(Strategy::S08), 30_000);
        assert_eq!(
            t.limits_text(),
            "strategy s06, limit 50,000 tokens = 200,000 chars"
        );
        // The one in force now is the new one.
        assert_eq!(t.context_limit, 30_000);
    }

    /// A continue from call 5 keeps calls 1-4's limit and starts its own at call 5; the
    /// page's header names both.
    #[test]
    fn a_continue_keeps_the_earlier_calls_limit_and_the_page_names_each() {
        let mut t = Timeline::new(Source::Live, 0);
        t.settings_from_next_call(Some(Strategy::S08), 50_000);
        with_calls(&mut t, 12);
        // /config after the run: no call ran under it in this branch.
        t.settings_from_next_call(Some(Strategy::S08), 30_000);
        let Some(point) = t.branch_before(5) else {
            panic!("call 5 exists");
        };
        let mut cut = point.timeline;
        cut.settings_from_next_call(Some(Strategy::S08), 30_000);
        with_calls(&mut cut, 3);
        assert_eq!(
            cut.limits_text(),
            "calls 1-4: strategy s08, limit 50,000 chars; calls 5-7: strategy s08, limit 30,000 chars"
        );
        let page = crate::timeline::html::page(&cut);
        assert!(page.contains("calls 1-4: strategy s08, limit 50,000 chars"));
        // The earlier branch still says what its calls ran under.
        assert_eq!(t.limits_text(), "strategy s08, limit 50,000 chars");
    }
}
