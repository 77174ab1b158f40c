//! The exact request of each call: the body the provider encoded and sent
//! (`provider::SentRequest`), kept within a memory budget, and read back for a view.
//!
//! Every call's body repeats the whole history, so keeping each one whole would cost the
//! square of a session's length. The newest bodies are kept, within `KEPT_BODIES_BYTES`
//! together and `KEPT_BODY_BYTES` each; an older or larger one keeps only its length and
//! SHA-256, and is encoded again from the call's own rows (shared with the other calls)
//! when asked for, then checked against them (docs/architecture.md, "The exact request").

use std::sync::Arc;

use bytes::Bytes;

use super::{ModelCall, Timeline};
use crate::provider::wire::{RebuildMismatch, WireFormat, pretty};
use crate::provider::{ModelRequest, SentRequest};

/// Most bytes of one body kept as sent (4 MiB); a larger one is rebuilt when viewed.
pub const KEPT_BODY_BYTES: usize = 4 * 1024 * 1024;
/// Most bytes of all kept bodies together (32 MiB): the oldest give theirs up first.
pub const KEPT_BODIES_BYTES: usize = 32 * 1024 * 1024;

/// A call's request as the model received it.
#[derive(Debug, Clone)]
pub struct RequestBody {
    pub format: WireFormat,
    /// The body sent, or why it cannot be shown.
    pub body: Result<Bytes, RebuildMismatch>,
    /// The body was not kept and was encoded again (and matched the sent one's digest).
    pub rebuilt: bool,
    pub len: usize,
    pub sha256: String,
}

impl RequestBody {
    /// The body pretty-printed for a viewer (keys in the order sent).
    pub fn pretty(&self) -> Option<String> {
        self.body.as_ref().ok().map(|b| pretty(b))
    }

    /// A title's words: `exact request: OpenAI chat body as sent, 12,345 bytes`.
    pub fn short(&self) -> String {
        let how = match (&self.body, self.rebuilt) {
            (Err(_), _) => ", not kept and not rebuilt",
            (Ok(_), true) => ", rebuilt and checked",
            (Ok(_), false) => "",
        };
        if !self.format.is_wire() {
            // No bytes went anywhere: their count would say nothing.
            return format!("{}{how}", self.format.label());
        }
        format!(
            "{}, {} bytes{how}",
            self.format.label(),
            crate::util::group_digits(self.len)
        )
    }

    /// One line saying what the body is and how it was had.
    pub fn describe(&self) -> String {
        let how = match (&self.body, self.rebuilt) {
            (Err(e), _) => format!("; {e}"),
            (Ok(_), true) => format!(
                "; encoded again from the kept messages (the body is kept only within {} MiB) \
                 and checked against the SHA-256 of the one sent",
                KEPT_BODIES_BYTES / (1024 * 1024)
            ),
            (Ok(_), false) => String::new(),
        };
        format!(
            "{}; {} bytes, sha256 {}{how}",
            self.format.describe(),
            crate::util::group_digits(self.len),
            self.sha256
        )
    }
}

impl ModelCall {
    /// The request as the model received it; None when the source did not record it (a
    /// replay). The JSON of `request_json` is ctxlab's record, not necessarily this.
    pub fn exact_request(&self) -> Option<RequestBody> {
        let sent = self.body.as_ref()?;
        // A record of an in-process model is not bytes that were sent: encoding it again
        // is all there is to it, so it does not count as rebuilt.
        let rebuilt = sent.bytes().is_none() && sent.format().is_wire();
        let body = sent.body_or_rebuild(|| ModelRequest {
            system: self.system.as_deref().unwrap_or("").to_string(),
            messages: self.messages().cloned().collect(),
            tools: self.tools.to_vec(),
            max_tokens: self.max_tokens.unwrap_or(0),
            // The kind is never sent, so the rebuilt bytes do not depend on it.
            ..ModelRequest::default()
        });
        Some(RequestBody {
            format: sent.format().clone(),
            body,
            rebuilt,
            len: sent.len(),
            sha256: sent.sha256_hex(),
        })
    }
}

impl Timeline {
    /// The same timeline keeping at most `each` bytes of one body and `total` of all.
    pub fn with_body_budget(mut self, each: usize, total: usize) -> Timeline {
        self.body_budget = (each, total);
        self
    }

    /// The last call's request went out as `body`. A wire body is kept as sent while the
    /// budget allows; the oldest kept bodies give up their bytes to make room.
    pub fn body_sent(&mut self, body: Arc<SentRequest>) {
        let Some(call) = self.calls.last_mut() else {
            return;
        };
        let len = body.bytes().map_or(0, Bytes::len);
        let (each, total) = self.body_budget;
        // An in-process model's record is ctxlab's own shape of the call's messages, which
        // the call holds anyway: only its length and digest are kept.
        if len > each || !body.format().is_wire() {
            call.body = Some(Arc::new(body.without_bytes()));
            return;
        }
        call.body = Some(body);
        self.kept_body_bytes += len;
        let last = self.calls.len() - 1;
        while self.kept_body_bytes > total && self.oldest_kept_body < last {
            let c = &mut self.calls[self.oldest_kept_body];
            if let Some(b) = &c.body
                && let Some(bytes) = b.bytes()
            {
                self.kept_body_bytes -= bytes.len();
                c.body = Some(Arc::new(b.without_bytes()));
            }
            self.oldest_kept_body += 1;
        }
    }

    /// Bytes of request bodies held as sent, all calls together.
    pub fn kept_body_bytes(&self) -> usize {
        self.kept_body_bytes
    }
}
