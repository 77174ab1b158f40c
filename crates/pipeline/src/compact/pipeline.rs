//! `Pipeline`: the one interface the agent, the replay and `ctxlab pipeline` run every
//! strategy through (docs/strategies.md). It asks the design of `config.strategy`
//! (`Strategy::design`) for its stages, runs them one at a time or all before a call, and
//! starts the summarizing stages, whose second step (`PendingCompaction::finish`) takes the
//! summary the caller obtained. What every strategy shares is checked here once.
//!
//! Every report it returns is in the strategy's unit. It never calls a model.

use super::config::PipelineConfig;
use super::design::{CompactAsk, Design, DesignContext, StageRun, TranscriptIds};
use super::report::{CompactTrigger, Stage, StageReport};
use super::strategy::Strategy;
use super::summarize::PendingCompaction;
use super::unit::SizeUnit;
use super::window::ContextWindow;
use crate::message::Message;
use crate::store::{Store, StoreError};

/// What the pre-call pipeline did, and the summary it still needs, if any.
#[derive(Debug)]
pub struct PreCall {
    pub reports: Vec<StageReport>,
    /// Some when the history is over the limit after the cheap stages: the caller must get
    /// the summary and call `finish`.
    pub pending: Option<PendingCompaction>,
}

/// A strategy with its numbers: the stages to run before each model call.
#[derive(Debug, Clone, Default)]
pub struct Pipeline {
    pub config: PipelineConfig,
    ids: TranscriptIds,
}

impl Pipeline {
    pub fn new(config: PipelineConfig) -> Pipeline {
        Pipeline {
            config,
            ids: TranscriptIds::Random,
        }
    }

    /// The same pipeline naming s08-latest's transcripts with a counter (1, 2, 3, ...),
    /// shared by its clones, as the recorded cases and reproducible replays want.
    pub fn with_counter_ids(mut self) -> Pipeline {
        self.ids = TranscriptIds::counter();
        self
    }

    pub fn strategy(&self) -> Strategy {
        self.config.strategy
    }

    fn design(&self) -> &'static dyn Design {
        self.strategy().design()
    }

    fn context(&self) -> DesignContext<'_> {
        DesignContext {
            config: &self.config,
            ids: &self.ids,
        }
    }

    fn ask<'a>(
        &'a self,
        messages: &'a [Message],
        store: &'a Store,
        now_secs: u64,
    ) -> CompactAsk<'a> {
        CompactAsk {
            messages,
            store,
            cx: self.context(),
            now_secs,
        }
    }

    /// The unit of every size this pipeline reports and compares with `context_limit`.
    pub fn unit(&self) -> SizeUnit {
        self.strategy().unit()
    }

    /// The size of a history in the strategy's unit.
    pub fn size(&self, messages: &[Message]) -> usize {
        self.unit().measure(messages)
    }

    /// The stages that run before every call (some only over the limit), in order; the
    /// summarizing stage comes after them when `over_limit`.
    pub fn stages(&self) -> &'static [Stage] {
        self.design().stages()
    }

    /// The stage that summarizes when over the limit or asked to.
    pub fn summarizing_stage(&self) -> Stage {
        self.design().summarizing_stage()
    }

    /// Whether the history is over the limit (the summarizing stage runs).
    pub fn over_limit(&self, messages: &[Message]) -> bool {
        self.size(messages) > self.config.context_limit
    }

    /// Runs one of `stages()` on the history. A stage the strategy does not have, or one
    /// its gate keeps closed, changes nothing and says why.
    pub fn run_stage(
        &self,
        stage: Stage,
        messages: &mut Vec<Message>,
        store: &Store,
    ) -> Result<StageReport, StoreError> {
        let unit = self.unit();
        let size_before = self.size(messages);
        let n = messages.len();
        if stage.summarizes() {
            let mut r = StageReport::unchanged(stage, size_before, n);
            r.unit = unit;
            r.reason = format!("{} runs in two steps: begin, then finish", stage.name());
            return Ok(r);
        }
        if !self.stages().contains(&stage) {
            let reason = format!("not a stage of {}", self.strategy());
            return Ok(StageReport::not_run(stage, size_before, n, reason, unit));
        }
        let mut report = match self
            .design()
            .run_stage(stage, messages, store, self.context())?
        {
            StageRun::Ran(report) => report,
            StageRun::NotRun(reason) => {
                return Ok(StageReport::not_run(stage, size_before, n, reason, unit));
            }
        };
        // Shared stages measure in s08's unit; every report is in the strategy's.
        report.unit = unit;
        report.size_before = size_before;
        report.size_after = self.size(messages);
        Ok(report)
    }

    /// What a stage would do, computed on a copy with a dry-run store.
    pub fn preview_stage(
        &self,
        stage: Stage,
        messages: &[Message],
        store: &Store,
    ) -> Result<StageReport, StoreError> {
        let mut copy = messages.to_vec();
        self.run_stage(stage, &mut copy, &store.dry_run())
    }

    /// The whole pre-call pipeline: the strategy's stages, then the summarizing stage's
    /// first step when the history is still over the limit.
    pub fn pre_call(
        &self,
        messages: &mut Vec<Message>,
        store: &Store,
        now_secs: u64,
    ) -> Result<PreCall, StoreError> {
        self.pre_call_observed(messages, store, now_secs, &mut |_, _| {})
    }

    /// `pre_call`, with `on_stage` shown each stage's report and the history right after
    /// it (the replay's observers draw the history stage by stage).
    pub fn pre_call_observed(
        &self,
        messages: &mut Vec<Message>,
        store: &Store,
        now_secs: u64,
        on_stage: &mut dyn FnMut(&StageReport, &[Message]),
    ) -> Result<PreCall, StoreError> {
        let mut reports = Vec::with_capacity(4);
        for &stage in self.stages() {
            let report = self.run_stage(stage, messages, store)?;
            on_stage(&report, messages);
            reports.push(report);
        }
        let pending = if self.over_limit(messages) {
            self.begin_compact(messages, store, None, CompactTrigger::OverLimit, now_secs)?
        } else {
            None
        };
        Ok(PreCall { reports, pending })
    }

    /// Step 1 of the summarizing stage (over the limit, the compact tool or `/compact`).
    /// None when the strategy finds nothing it may summarize (guarded, when only unseen
    /// results are left).
    pub fn begin_compact(
        &self,
        messages: &[Message],
        store: &Store,
        focus: Option<&str>,
        trigger: CompactTrigger,
        now_secs: u64,
    ) -> Result<Option<PendingCompaction>, StoreError> {
        self.design()
            .begin_compact(self.ask(messages, store, now_secs), focus, trigger)
    }

    /// Step 1 of reactive compaction after the `attempt`-th "prompt too long" in a row
    /// (0 for the first). `window` is the one the server's refusal named, if it did.
    /// None when the strategy has no (further) retry: the error goes to the user.
    pub fn begin_reactive(
        &self,
        messages: &[Message],
        store: &Store,
        now_secs: u64,
        attempt: usize,
        window: Option<ContextWindow>,
    ) -> Result<Option<PendingCompaction>, StoreError> {
        if attempt >= self.strategy().reactive_attempts() {
            return Ok(None);
        }
        self.design()
            .begin_reactive(self.ask(messages, store, now_secs), attempt, window)
    }

    /// Whether the strategy's reactive compaction could shrink a request of `messages`
    /// (s08's cannot when nothing precedes the tail it keeps).
    pub fn reactive_can_shrink(&self, messages: &[Message]) -> bool {
        self.design().reactive_can_shrink(messages, self.context())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counter_ids_are_32_hex_digits_shared_by_clones() {
        let p = Pipeline::new(PipelineConfig::for_strategy(Strategy::S08Latest)).with_counter_ids();
        let q = p.clone();
        assert_eq!(p.ids.next(), format!("{:032x}", 1));
        assert_eq!(q.ids.next(), format!("{:032x}", 2));
        let r = TranscriptIds::Random.next();
        assert_eq!(r.len(), 32);
        assert_eq!(&r[12..13], "4");
        assert_ne!(r, TranscriptIds::Random.next());
    }

    #[test]
    fn each_strategy_lists_its_stages() {
        let stages = |s| {
            Pipeline::new(PipelineConfig::for_strategy(s))
                .stages()
                .to_vec()
        };
        assert_eq!(stages(Strategy::S06), vec![Stage::MicroCompact]);
        assert_eq!(stages(Strategy::S08Latest).len(), 4);
        assert_eq!(stages(Strategy::Guarded), stages(Strategy::S08));
    }

    #[test]
    fn latest_micro_and_fit_do_not_run_under_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let p = Pipeline::new(PipelineConfig::for_strategy(Strategy::S08Latest));
        let mut h = vec![Message::user_text("small")];
        for stage in [Stage::MicroCompact, Stage::FitToolResults] {
            let r = p.run_stage(stage, &mut h, &store).unwrap();
            assert!(!r.ran);
            let size = crate::message::json_size(&h);
            assert_eq!(
                r.reason,
                format!("{size} <= 50,000: runs only over the limit")
            );
            assert_eq!(r.unit, SizeUnit::JsonChars);
        }
    }

    #[test]
    fn s06_compacts_only_over_the_limit_in_tokens() {
        let p = Pipeline::new(PipelineConfig::for_strategy(Strategy::S06));
        // [{'role': 'user', 'content': '...'}] is 33 chars around the text.
        let at = |chars: usize| vec![Message::user_text("x".repeat(chars))];
        let limit_chars = 50_000 * 4;
        assert_eq!(p.size(&at(limit_chars + 3 - 33)), 50_000);
        assert!(!p.over_limit(&at(limit_chars + 3 - 33)));
        assert_eq!(p.size(&at(limit_chars + 4 - 33)), 50_001);
        assert!(p.over_limit(&at(limit_chars + 4 - 33)));
    }

    #[test]
    fn only_s08_says_its_reactive_stage_cannot_shrink_a_lone_tail() {
        let h = |n: usize| -> Vec<Message> {
            (0..n)
                .map(|i| Message::user_text(format!("m{i}")))
                .collect()
        };
        let can = |s: Strategy, n: usize| {
            Pipeline::new(PipelineConfig::for_strategy(s)).reactive_can_shrink(&h(n))
        };
        // s08 keeps the last 5: with 5 or fewer nothing precedes its tail.
        assert!(!can(Strategy::S08, 1));
        assert!(!can(Strategy::S08, 5));
        assert!(can(Strategy::S08, 6));
        // The others decide inside their stage (guarded) or have none to shrink (s06).
        for s in [Strategy::S08Latest, Strategy::S06, Strategy::Guarded] {
            assert!(can(s, 1), "{s}");
        }
    }

    #[test]
    fn reactive_retries_per_strategy() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let h: Vec<Message> = (0..8)
            .map(|i| Message::user_text(format!("m{i}")))
            .collect();
        let tries = |s: Strategy| {
            let p = Pipeline::new(PipelineConfig::for_strategy(s));
            (0..5)
                .take_while(|&a| p.begin_reactive(&h, &store, 1, a, None).unwrap().is_some())
                .count()
        };
        assert_eq!(tries(Strategy::S06), 0);
        assert_eq!(tries(Strategy::S08), 1);
        assert_eq!(tries(Strategy::S08Latest), 1);
        assert_eq!(tries(Strategy::Guarded), 3);
    }
}
