//! Server-sent events: the line decoder both HTTP providers read their streamed answers with.
//!
//! It owns the text/event-stream framing (lines ended by LF, CRLF or CR; `field: value`
//! lines; a blank line dispatches; `:` starts a comment) and the limits on what a server may
//! make the client hold: one event's size and one answer's total size. Every byte is looked
//! at once, and the only buffer is the current line's start, so a `data:` line of any length
//! costs linear time (docs/architecture.md, "Bounds on what servers and tools can cost"). It knows nothing of either wire
//! format's JSON: the assemblers get `SseEvent`s.
//!
//! Invalid UTF-8 in an event's name or data is an error that says so (it would fail the same
//! way on a retry); a comment line is never decoded, so a keepalive can hold any bytes.

/// One dispatched event: its name (`message` when the server gave none) and its data lines
/// joined by `\n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    pub event: String,
    pub data: String,
}

/// What one answer may make the client hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamLimits {
    /// Most bytes of one event (its lines together, names and data).
    pub max_event_bytes: usize,
    /// Most bytes of one whole answer body.
    pub max_answer_bytes: usize,
}

/// 16 MiB per event: a real event is one JSON delta of a few hundred bytes; the largest real
/// ones (a whole tool input some servers send at once) stay far below this.
pub const DEFAULT_MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;
/// 256 MiB per answer: a long answer at the largest output limits is a few MiB of events.
pub const DEFAULT_MAX_ANSWER_BYTES: usize = 256 * 1024 * 1024;

impl Default for StreamLimits {
    fn default() -> Self {
        StreamLimits {
            max_event_bytes: DEFAULT_MAX_EVENT_BYTES,
            max_answer_bytes: DEFAULT_MAX_ANSWER_BYTES,
        }
    }
}

/// Why a stream cannot be decoded. None of these is cured by sending the request again.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    #[error("one event is larger than {limit} bytes")]
    EventTooLarge { limit: usize },
    #[error("the answer is larger than {limit} bytes")]
    AnswerTooLarge { limit: usize },
    #[error("an event's {field} is not valid UTF-8")]
    InvalidUtf8 { field: &'static str },
}

/// Feeds on body chunks as they come and hands out whole events.
#[derive(Debug)]
pub struct SseDecoder {
    limits: StreamLimits,
    /// The current line's bytes that came in earlier chunks (no terminator in them).
    line: Vec<u8>,
    /// The last chunk ended on a CR: an LF starting the next chunk belongs to it.
    after_cr: bool,
    /// A byte order mark may start the stream; only the very first bytes are checked.
    at_start: bool,
    event: String,
    data: String,
    has_data: bool,
    /// Bytes of the event being built (its finished lines), for the per-event cap.
    event_bytes: usize,
    body_bytes: usize,
}

impl SseDecoder {
    pub fn new(limits: StreamLimits) -> SseDecoder {
        SseDecoder {
            limits,
            line: Vec::new(),
            after_cr: false,
            at_start: true,
            event: String::new(),
            data: String::new(),
            has_data: false,
            event_bytes: 0,
            body_bytes: 0,
        }
    }

    /// Decodes `chunk`, pushing every event it completes onto `out`.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        self.body_bytes = self.body_bytes.saturating_add(chunk.len());
        if self.body_bytes > self.limits.max_answer_bytes {
            return Err(SseError::AnswerTooLarge {
                limit: self.limits.max_answer_bytes,
            });
        }
        let mut rest = chunk;
        if self.after_cr {
            self.after_cr = false;
            if let Some(tail) = rest.strip_prefix(b"\n") {
                rest = tail;
            }
        }
        if self.at_start && !rest.is_empty() {
            self.strip_bom(&mut rest);
        }
        while let Some(end) = rest.iter().position(|b| *b == b'\n' || *b == b'\r') {
            let (head, tail) = rest.split_at(end);
            let crlf = tail.starts_with(b"\r\n");
            if tail[0] == b'\r' && tail.len() == 1 {
                self.after_cr = true;
            }
            rest = &tail[if crlf { 2 } else { 1 }..];
            if self.line.is_empty() {
                self.take_line(head, out)?;
            } else {
                self.check_line_room(head.len())?;
                let mut line = std::mem::take(&mut self.line);
                line.extend_from_slice(head);
                let result = self.take_line(&line, out);
                // The buffer is kept for the next long line.
                line.clear();
                self.line = line;
                result?;
            }
        }
        self.check_line_room(rest.len())?;
        self.line.extend_from_slice(rest);
        Ok(())
    }

    /// The body ended cleanly: a last line without its terminator counts, and the last
    /// event is dispatched even without the blank line that should close it, as the
    /// official SDKs do (recorded Anthropic streams end right after `message_stop`'s data).
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.take_line(&line, out)?;
        }
        self.dispatch(out);
        Ok(())
    }

    /// A BOM can arrive split over chunks; a stream's first chunk is nearly always longer.
    fn strip_bom(&mut self, rest: &mut &[u8]) {
        const BOM: &[u8] = b"\xEF\xBB\xBF";
        let seen = self.line.len();
        let want = &BOM[seen.min(BOM.len())..];
        let n = want.len().min(rest.len());
        if seen < BOM.len() && rest[..n] == want[..n] {
            if seen + n == BOM.len() {
                *rest = &rest[n..];
                self.line.clear();
                self.at_start = false;
            } else {
                // Held as the line's start until the mark is whole (or turns out not to be).
                self.line.extend_from_slice(&rest[..n]);
                *rest = &rest[n..];
            }
        } else {
            self.at_start = false;
        }
    }

    fn check_line_room(&self, more: usize) -> Result<(), SseError> {
        let held = self
            .event_bytes
            .saturating_add(self.line.len())
            .saturating_add(more);
        if held > self.limits.max_event_bytes {
            return Err(SseError::EventTooLarge {
                limit: self.limits.max_event_bytes,
            });
        }
        Ok(())
    }

    /// One whole line, without its terminator.
    fn take_line(&mut self, line: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        self.at_start = false;
        if line.is_empty() {
            self.dispatch(out);
            return Ok(());
        }
        // The same test a line still arriving gets (`check_line_room`), comments included:
        // a server must not make the client hold an endless line of any kind.
        if self.event_bytes.saturating_add(line.len()) > self.limits.max_event_bytes {
            return Err(SseError::EventTooLarge {
                limit: self.limits.max_event_bytes,
            });
        }
        if line[0] == b':' {
            return Ok(());
        }
        self.event_bytes += line.len();
        let (name, value) = match line.iter().position(|b| *b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &[][..]),
        };
        match name {
            b"data" => {
                let text = std::str::from_utf8(value)
                    .map_err(|_| SseError::InvalidUtf8 { field: "data" })?;
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(text);
                self.has_data = true;
            }
            b"event" => {
                let text = std::str::from_utf8(value)
                    .map_err(|_| SseError::InvalidUtf8 { field: "name" })?;
                self.event.clear();
                self.event.push_str(text);
            }
            // `id`, `retry` and unknown fields change nothing a one-shot POST stream uses.
            _ => {}
        }
        Ok(())
    }

    /// A blank line: an event with data goes out; one without is dropped, name and all.
    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        self.event_bytes = 0;
        if !self.has_data {
            self.event.clear();
            return;
        }
        self.has_data = false;
        let event = if self.event.is_empty() {
            "message".to_string()
        } else {
            std::mem::take(&mut self.event)
        };
        out.push(SseEvent {
            event,
            data: std::mem::take(&mut self.data),
        });
    }
}

#[cfg(test)]
mod tests;
