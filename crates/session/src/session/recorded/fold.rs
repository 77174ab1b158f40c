//! Folding a recording's lines, in order, into the session model and the events a replay
//! must honour (`RecordedEvent`). The file reader and the workbench's live session use this
//! one fold, so a replay of the file and the compare view of the live run see the same
//! events at the same places.

use super::format::{Header, RecordLine, RecordedStageLine};
use super::{CompactBy, RecordedEvent, RecordedKind, RecordedStage};
use crate::compact::{PipelineConfig, Stage};
use crate::message::{Message, Role};
use crate::session::model::{
    Compaction, CompactionKind, KeptMessage, MessageKind, MessageOrigin, RecordedCall,
    RecordedUsage, Session, SessionFormat, Summary, Trigger,
};

/// The fold's state; `session` is only filled when the messages are kept.
#[derive(Debug, Clone)]
pub struct RecordFold {
    keep_messages: bool,
    session: Session,
    /// Messages of the conversation so far (summaries not counted).
    conversation: usize,
    /// The compact tool was called; its compaction follows the tool results.
    tool_compact: Option<Option<String>>,
    /// The conversation count at which a compact-tool event was last noted.
    tool_compact_at: Option<usize>,
    /// The turn's model call the next stage runs before (the timeline's count).
    next_call: usize,
    /// The call the last usage line was for.
    usage_call: Option<usize>,
    events: Vec<RecordedEvent>,
    stages: Vec<RecordedStage>,
    config: Option<PipelineConfig>,
    header: Option<Header>,
}

impl RecordFold {
    /// A fold that keeps the messages (the file reader) or only counts them (the live view).
    pub fn new(keep_messages: bool) -> RecordFold {
        RecordFold {
            keep_messages,
            session: Session::empty(SessionFormat::CtxlabSession),
            conversation: 0,
            tool_compact: None,
            tool_compact_at: None,
            next_call: 1,
            usage_call: None,
            events: Vec::new(),
            stages: Vec::new(),
            config: None,
            header: None,
        }
    }

    /// The events a replay honours, in order.
    pub fn events(&self) -> &[RecordedEvent] {
        &self.events
    }

    /// Every stage that changed the history, in order, with its call.
    pub fn stages(&self) -> &[RecordedStage] {
        &self.stages
    }

    /// The strategy and numbers the recording started with.
    pub fn config(&self) -> Option<PipelineConfig> {
        self.header.as_ref().map(|h| h.config)
    }

    /// Takes line `number` (1-based) of the recording.
    pub fn line(&mut self, number: usize, line: RecordLine) {
        self.session.lines += 1;
        match line {
            RecordLine::Header(h) => {
                let meta = &mut self.session.meta;
                meta.version = Some(h.ctxlab.clone());
                meta.cwd = Some(h.workspace.clone());
                meta.saw_model(&h.provider);
                meta.saw_timestamp(&h.started);
                self.config = Some(h.config);
                self.header = Some(h);
            }
            RecordLine::Appended { message } => self.appended(number, message),
            RecordLine::Stage(stage) => self.stage(number, stage),
            RecordLine::Usage {
                call,
                summary: false,
                input_tokens,
                output_tokens,
                cached_input_tokens,
            } => {
                let cached = cached_input_tokens.unwrap_or(0);
                let usage = RecordedUsage {
                    input_tokens: input_tokens.unwrap_or(0).saturating_sub(cached),
                    cache_read_tokens: cached,
                    cache_creation_tokens: 0,
                    output_tokens: output_tokens.unwrap_or(0),
                };
                self.usage(number, call, usage);
            }
            RecordLine::Request {
                call,
                summary: false,
                ..
            } => self.next_call = call + 1,
            RecordLine::CompactTool { focus, .. } => self.tool_compact = Some(focus),
            RecordLine::PromptTooLong {
                call,
                summary: false,
                message,
                ..
            } => self.events.push(RecordedEvent {
                at: self.conversation,
                call,
                kind: RecordedKind::Refusal { message },
            }),
            RecordLine::Config { config } => {
                if self.config != Some(config) {
                    let from = self.config.map_or(config.strategy, |c| c.strategy);
                    self.events.push(RecordedEvent {
                        at: self.conversation,
                        call: self.next_call,
                        kind: RecordedKind::Config { config, from },
                    });
                }
                self.config = Some(config);
            }
            _ => {}
        }
    }

    fn appended(&mut self, number: usize, message: Message) {
        let assistant = message.role_kind() == Role::Assistant;
        if self.keep_messages {
            let index = self.session.messages.len();
            if assistant
                && let Some(call) = self
                    .session
                    .calls
                    .iter_mut()
                    .rev()
                    .find(|c| c.message.is_none())
            {
                call.message = Some(index);
            }
            self.session.messages.push(message);
            self.session
                .info
                .push(origin(number, MessageKind::Conversation));
        }
        self.conversation += 1;
        // The compact tool's compaction runs once its batch's results are in.
        if !assistant && let Some(focus) = self.tool_compact.take() {
            self.tool_compact_at = Some(self.conversation);
            self.events.push(RecordedEvent {
                at: self.conversation,
                call: self.next_call,
                kind: RecordedKind::Compact {
                    focus,
                    by: CompactBy::Tool,
                },
            });
        }
    }

    fn usage(&mut self, number: usize, call: usize, usage: RecordedUsage) {
        if !self.keep_messages {
            return;
        }
        // A call reports usage more than once while it streams: the last count stands.
        if self.usage_call == Some(call)
            && let Some(last) = self.session.calls.last_mut()
        {
            last.usage = usage;
            return;
        }
        self.usage_call = Some(call);
        // The usage is written before the answer is appended: the answer is the next message.
        self.session.calls.push(RecordedCall {
            message: Some(self.session.messages.len()),
            line: number,
            timestamp: None,
            model: None,
            usage,
            context_window: None,
        });
    }

    fn stage(&mut self, number: usize, line: RecordedStageLine) {
        let Some(stage) = Stage::ALL.into_iter().find(|s| s.name() == line.stage) else {
            return;
        };
        if line.changed {
            self.stages.push(RecordedStage {
                call: line.call,
                stage,
            });
        }
        if !(stage.summarizes() && line.changed) {
            return;
        }
        let requested = line.trigger.as_deref() == Some("requested");
        if requested && self.tool_compact_at != Some(self.conversation) {
            // `/compact`: asked by the user between turns.
            self.events.push(RecordedEvent {
                at: self.conversation,
                call: line.call,
                kind: RecordedKind::Compact {
                    focus: line.focus.clone(),
                    by: CompactBy::User,
                },
            });
        }
        if requested {
            // Noted once: a second compaction at the same place is the user's.
            self.tool_compact_at = None;
        }
        if self.keep_messages {
            self.compaction(number, stage, line);
        }
    }

    /// A summary as the session model keeps it: the summary message in the full session
    /// (not part of the conversation), what it kept, why it ran.
    fn compaction(&mut self, number: usize, stage: Stage, line: RecordedStageLine) {
        let at = self.session.messages.len();
        let mut c = Compaction::new(CompactionKind::Full, at, number);
        c.trigger = Some(match line.trigger.as_deref() {
            Some("over_limit") => Trigger::Auto,
            Some("requested") => Trigger::Manual,
            Some(other) => Trigger::Other(other.to_string()),
            None => Trigger::Other(stage.name().to_string()),
        });
        let mut history = line.history.unwrap_or_default().into_iter();
        if let Some(summary) = history.next() {
            c.summary = Summary::Text(summary.text().unwrap_or_default().to_string());
            c.summary_message = Some(at);
            self.session.messages.push(summary);
            self.session
                .info
                .push(origin(number, MessageKind::CompactSummary));
        }
        c.kept = Some(
            history
                .map(|message| KeptMessage {
                    message,
                    from: None,
                })
                .collect(),
        );
        self.session.compactions.push(c);
    }

    /// The session read, with its recorded events.
    pub fn finish(mut self) -> Session {
        // A recording writes no token count on its compactions, but every call's usage: the
        // calls on either side give them, marked as such (`~`), as for the other formats.
        crate::session::assemble::fill_tokens_from_calls(&mut self.session);
        self.session.recorded = self.events;
        self.session.recorded_config = self.header.map(|h| h.config);
        self.session.recorded_stages = self.stages;
        self.session
    }
}

fn origin(line: usize, kind: MessageKind) -> MessageOrigin {
    MessageOrigin {
        line,
        timestamp: None,
        uuid: None,
        kind,
    }
}
