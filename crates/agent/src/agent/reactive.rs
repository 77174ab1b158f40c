//! What an overflow error leads to: the reactive compaction of docs/pipeline.md
//! "reactive_compact", run only when it can shrink the request.
//!
//! The strategy says whether its reactive stage could shrink the request
//! (`Pipeline::reactive_can_shrink`: s08's cannot when nothing precedes the tail it keeps)
//! and gets the window the server named as a number (`ContextWindow`), never its words.
//! When the stage cannot help, the agent writes no transcript, sends no summary request and
//! leaves the history as it was; the user is told that the request alone exceeds the
//! window, with the server's own numbers.
//!
//! "As it was" means as before the request: when the user's new text is itself what does
//! not fit (it is the last message, nothing answered it yet), it is taken back out, since
//! a history holding it could never be sent again and every later request would fail the
//! same way. Anything else (tool results of this turn, a compacted summary) stays.

use std::sync::Arc;

use super::events::{AgentEvent, ErrorKind};
use super::model_call::error_kind;
use super::state::{Agent, Stop};
use crate::compact::ContextWindow;
use crate::compact::summary_refit::{begin_no_model, next_no_model_tail};
use crate::message::Message;
use crate::provider::ProviderError;
use crate::util::group_digits;

impl Agent {
    /// After the model said the prompt is too long for the `attempt`-th time in a row (0
    /// for the first): compact reactively as the strategy says, or explain why that cannot
    /// help.
    pub(super) async fn reactive_compact(
        &mut self,
        error: &ProviderError,
        attempt: usize,
    ) -> Result<(), Stop> {
        self.hold_config();
        let message = match error {
            ProviderError::ContextTooLong { message, .. } => Some(message.as_str()),
            _ => None,
        };
        // The refusal is an event whether or not a compaction follows.
        if let Some(message) = message {
            self.prompt_too_long(message);
        }
        let strategy = self.pipeline.strategy();
        if attempt >= strategy.reactive_attempts() {
            // No (further) retry in this strategy: the user sees the error.
            return Err(Stop::Failed(error_kind(error), error.to_string()));
        }
        // Asked before the stage runs, so no transcript is written when it cannot help.
        let cannot_shrink = !self.pipeline.reactive_can_shrink(&self.history);
        let window = refused_window(error);
        if self.setup.step_mode && !cannot_shrink {
            // What it will do, worked out on a dry-run store: nothing is written before
            // the step.
            let preview = self.pipeline.begin_reactive(
                &self.history,
                &self.store.dry_run(),
                (self.setup.clock)(),
                attempt,
                window,
            )?;
            if let Some(p) = preview {
                let api_message = message.unwrap_or_default().to_string();
                self.before_reactive(p.stage(), p.replaced(), api_message)
                    .await?;
            }
        }
        let pending = if cannot_shrink {
            None
        } else {
            self.pipeline.begin_reactive(
                &self.history,
                &self.store,
                (self.setup.clock)(),
                attempt,
                window,
            )?
        };
        // A strategy with a retry left that finds nothing it could summarize (s08 with
        // nothing before the tail, guarded with no tail worth it): the request alone is over.
        let Some(mut pending) = pending else {
            if attempt > 0 {
                // Earlier compactions of this turn ran and the request still does not fit.
                return Err(Stop::Failed(error_kind(error), error.to_string()));
            }
            let request = Message::user_text(self.active_request.clone());
            let earlier_turns = self.history.len() > 1 && self.history.last() == Some(&request);
            if earlier_turns && self.no_model_tail.is_none() {
                // The new request was refused at once, and what is large comes from earlier
                // turns, in the tail the stage keeps: a shorter tail than the stage's,
                // reduced without a model, lets the session go on (the history is in the
                // transcript). Work of this turn is left for `/compact` instead.
                self.no_model_tail = Some(self.pipeline.config.reactive_keep_tail);
                return self.reduce_without_model(error);
            }
            let history = self.history.clone();
            let withdrawn = self.withdraw_unsendable_request();
            return Err(Stop::Failed(
                ErrorKind::ContextTooLong,
                request_exceeds_window(error, &history, withdrawn),
            ));
        };
        if let Some(numbers) = server_numbers(error) {
            pending.add_reason(&format!("the server counted {numbers}"));
        }
        self.summarize(pending).await
    }
}

impl Agent {
    /// The request was refused again after a reduction without a model in this turn: the
    /// next reduction keeps a shorter tail (5, 2, 0); past the last, the error goes to the
    /// user with what is large.
    pub(super) fn reduce_again_without_model(&mut self, error: &ProviderError) -> Result<(), Stop> {
        if let ProviderError::ContextTooLong { message, .. } = error {
            self.prompt_too_long(message);
        }
        self.reduce_without_model(error)
    }

    /// The next reduction without a model after `error`, or the error when the tail is
    /// already 0.
    fn reduce_without_model(&mut self, error: &ProviderError) -> Result<(), Stop> {
        if next_no_model_tail(self.no_model_tail).is_none() {
            let history = self.history.clone();
            let withdrawn = self.withdraw_unsendable_request();
            return Err(Stop::Failed(
                ErrorKind::ContextTooLong,
                request_exceeds_window(error, &history, withdrawn),
            ));
        }
        let pending = begin_no_model(
            &self.history,
            &self.store,
            (self.setup.clock)(),
            self.pipeline.unit(),
        )?;
        self.no_model_fallback(
            pending,
            "the request was refused again after a reduction without a model",
        )
    }

    /// Takes the turn's request back out of the history when it is the last message (the
    /// first call of the turn failed on it), restoring the active request before it.
    /// Returns whether it did.
    fn withdraw_unsendable_request(&mut self) -> bool {
        let request = Message::user_text(self.active_request.clone());
        if self.history.last() != Some(&request) {
            return false;
        }
        self.history.pop();
        self.active_request = std::mem::take(&mut self.request_before_turn);
        self.emit(AgentEvent::HistoryReplaced {
            history: Arc::new(self.history.clone()),
            messages: self.history.len(),
        });
        true
    }
}

/// The window a "prompt too long" refusal named, as the provider typed it: the server's
/// tokens, or the scripted model's simulated chars.
fn refused_window(error: &ProviderError) -> Option<ContextWindow> {
    let size = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    match error {
        ProviderError::ContextTooLong {
            window_tokens: Some(w),
            ..
        } => Some(ContextWindow::Tokens(size(*w))),
        ProviderError::ContextTooLong {
            window_chars: Some(c),
            ..
        } => Some(ContextWindow::Chars(size(*c))),
        _ => None,
    }
}

fn tokens(n: u64) -> String {
    group_digits(usize::try_from(n).unwrap_or(usize::MAX))
}

/// `531 tokens > 512`, when the error has both numbers.
fn server_numbers(error: &ProviderError) -> Option<String> {
    match error {
        ProviderError::ContextTooLong {
            prompt_tokens: Some(p),
            window_tokens: Some(w),
            ..
        } => Some(format!("{} tokens > {}", tokens(*p), tokens(*w))),
        _ => None,
    }
}

/// The error a user sees when a request does not fit and no compaction can shrink it: how
/// much over (the server's numbers when it gave them), what is large in `history` (the
/// history as it was sent), what became of the request, and what the user can do.
pub(super) fn request_exceeds_window(
    error: &ProviderError,
    history: &[Message],
    withdrawn: bool,
) -> String {
    let (message, prompt, window) = match error {
        ProviderError::ContextTooLong {
            message,
            prompt_tokens,
            window_tokens,
            ..
        } => (message.as_str(), *prompt_tokens, *window_tokens),
        other => return other.to_string(),
    };
    let numbers = match (prompt, window) {
        (Some(p), Some(w)) => format!("{} tokens > {} (the server's count)", tokens(p), tokens(w)),
        (None, Some(w)) => format!("more than {} tokens (the server's window)", tokens(w)),
        (Some(p), None) => format!("{} tokens (the server's count)", tokens(p)),
        (None, None) => format!("the server said: {message}"),
    };
    let messages = history.len();
    let plural = if messages == 1 { "" } else { "s" };
    // The request is to blame only when it is the largest message sent.
    let largest = largest_messages(history, 3);
    let request_is_largest = largest.first().is_some_and(|&(i, _)| i + 1 == messages);
    let head = if request_is_largest || messages <= 1 {
        "the request exceeds the model's context window on its own".to_string()
    } else {
        format!(
            "the request with the {} message{} before it exceeds the model's context window",
            messages - 1,
            if messages == 2 { "" } else { "s" }
        )
    };
    let what = if messages <= 1 {
        String::new()
    } else {
        let list: Vec<String> = largest
            .iter()
            .map(|&(i, chars)| {
                let who = if i + 1 == messages {
                    " (the request)"
                } else {
                    ""
                };
                format!(
                    "#{} {}{who}, {} chars",
                    i + 1,
                    history[i].role(),
                    group_digits(chars)
                )
            })
            .collect();
        format!(" Largest messages: {}.", list.join("; "))
    };
    let after = if withdrawn {
        "the history is as it was before it (the request was not kept)."
    } else {
        "the history is unchanged."
    };
    format!(
        "{head}: {numbers}. Nothing precedes the last {messages} message{plural}, so a reactive \
         compaction cannot shrink it: none was run, no summary was requested, and {after}{what} \
         /compact summarizes the history, a smaller summary_input_chars (--set \
         summary_input_chars=N) keeps summary requests inside a small window, or use a model \
         with a larger window."
    )
}

/// The indices and sizes (chars) of the `n` largest messages, largest first.
fn largest_messages(history: &[Message], n: usize) -> Vec<(usize, usize)> {
    let mut sized: Vec<(usize, usize)> = history
        .iter()
        .enumerate()
        .map(|(i, m)| (i, m.joined_text().chars().count()))
        .collect();
    sized.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    sized.truncate(n);
    sized
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::block;

    fn too_long(p: Option<u64>, w: Option<u64>) -> ProviderError {
        ProviderError::ContextTooLong {
            message: "request (831 tokens) exceeds the available context size (512 tokens)".into(),
            prompt_tokens: p,
            window_tokens: w,
            window_chars: None,
        }
    }

    #[test]
    fn the_window_comes_from_the_typed_error_not_its_words() {
        // The words name no window the old parser could read; the numbers are typed.
        let openai = too_long(Some(130_512), Some(128_000));
        assert_eq!(
            refused_window(&openai),
            Some(ContextWindow::Tokens(128_000))
        );
        let scripted = ProviderError::ContextTooLong {
            message: "prompt is too long".into(),
            prompt_tokens: None,
            window_tokens: None,
            window_chars: Some(42_500),
        };
        assert_eq!(
            refused_window(&scripted),
            Some(ContextWindow::Chars(42_500))
        );
        let words_only = ProviderError::ContextTooLong {
            message: "prompt is too long: 215000 tokens > 200000 maximum".into(),
            prompt_tokens: None,
            window_tokens: None,
            window_chars: None,
        };
        assert_eq!(refused_window(&words_only), None);
        assert_eq!(refused_window(&ProviderError::Overloaded), None);
    }

    #[test]
    fn the_message_gives_the_servers_numbers() {
        let one = [Message::user_text("long ".repeat(400))];
        let three = [
            Message::user_text("list the files"),
            Message::assistant_blocks(vec![block::text("src/a.rs\n".repeat(230))]),
            Message::user_text("hi"),
        ];
        let m = request_exceeds_window(&too_long(Some(1_831), Some(512)), &one, true);
        assert!(m.contains("1,831 tokens > 512 (the server's count)"), "{m}");
        assert!(m.contains("the last 1 message,"), "{m}");
        assert!(m.contains("the request was not kept"), "{m}");
        let m = request_exceeds_window(&too_long(None, Some(512)), &three, false);
        assert!(m.contains("more than 512 tokens"), "{m}");
        assert!(m.contains("the last 3 messages,"), "{m}");
        assert!(m.contains("the history is unchanged"), "{m}");
        let m = request_exceeds_window(&too_long(None, None), &three[1..], false);
        assert!(m.contains("the server said: request (831 tokens)"), "{m}");
        let m = request_exceeds_window(&too_long(Some(u64::MAX), Some(u64::MAX)), &one, true);
        assert!(m.contains("tokens >"), "{m}");
    }

    #[test]
    fn the_message_names_what_is_large_instead_of_blaming_a_short_request() {
        let history = [
            Message::user_text("list the files"),
            Message::assistant_blocks(vec![block::text("src/a.rs\n".repeat(230))]),
            Message::user_text("what next"),
            Message::user_text("hi"),
        ];
        let m = request_exceeds_window(&too_long(Some(2_060), Some(2_048)), &history, true);
        assert!(!m.contains("on its own"), "{m}");
        assert!(!m.contains("Send a shorter request"), "{m}");
        assert!(
            m.starts_with("the request with the 3 messages before it exceeds"),
            "{m}"
        );
        assert!(
            m.contains("Largest messages: #2 assistant, 2,070 chars; #1 user, 14 chars"),
            "{m}"
        );
        assert!(m.contains("/compact summarizes the history"), "{m}");
        assert!(m.contains("summary_input_chars"), "{m}");
        // A long request alone is still the request's fault.
        let alone = [Message::user_text("x".repeat(3_000))];
        let m = request_exceeds_window(&too_long(Some(2_060), Some(2_048)), &alone, true);
        assert!(
            m.starts_with("the request exceeds the model's context window on its own"),
            "{m}"
        );
    }
}
