//! The two bodies in flight: the response body handed to hyper (`ChannelBody`, fed chunk by
//! chunk by the task that reads the upstream, so each chunk goes out as it arrives and a
//! client that leaves closes the channel), and the request body on its way upstream
//! (`spool_request`: every chunk goes on to the upstream and to an unnamed spool file on
//! disk, never into memory, so a 100 MB body costs a few chunks of memory).

use std::io::{Read, Seek, SeekFrom, Write};
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Body, Frame, Incoming};
use sha2::{Digest, Sha256};
use tokio::sync::mpsc;

/// One chunk for the client, or the upstream's body breaking off: an error makes hyper
/// abort the response, so a cut answer never looks complete to the client.
pub type Chunk = Result<Bytes, std::io::Error>;

/// A response body whose chunks come over a channel.
pub struct ChannelBody {
    rx: mpsc::Receiver<Chunk>,
}

impl ChannelBody {
    /// A body and the sender that feeds it; `depth` chunks may wait in between.
    pub fn channel(depth: usize) -> (mpsc::Sender<Chunk>, ChannelBody) {
        let (tx, rx) = mpsc::channel(depth);
        (tx, ChannelBody { rx })
    }

    /// A body of one chunk, for the proxy's own answers.
    pub fn full(bytes: impl Into<Bytes>) -> ChannelBody {
        let (tx, body) = ChannelBody::channel(1);
        // A fresh channel with room for one: this send cannot fail.
        let _ = tx.try_send(Ok(bytes.into()));
        body
    }
}

impl Body for ChannelBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        self.rx.poll_recv(cx).map(|c| c.map(|b| b.map(Frame::data)))
    }
}

/// The request body as it went: its length, digest, and the spool holding it.
pub struct SpooledBody {
    pub bytes: u64,
    pub sha256: String,
    spool: Option<std::fs::File>,
    /// The body broke off before its end (the client went away mid-upload).
    pub broken: Option<String>,
}

/// Why a spooled body is not in a capture as JSON.
pub enum BodyRead {
    /// The body's own bytes, checked to be UTF-8 JSON, never parsed into a tree (a 32 MiB
    /// body of small values was 1.7 GB as one), with its line breaks made spaces: in JSON
    /// text they can only be whitespace between tokens, so the value is unchanged and sits
    /// on one capture line.
    Json(Vec<u8>),
    Omitted(String),
}

impl SpooledBody {
    /// The body, read back from the spool when it is at most `max` bytes and is JSON.
    pub fn read_json(&mut self, max: u64) -> BodyRead {
        if self.bytes == 0 {
            return BodyRead::Omitted("empty".to_string());
        }
        if self.bytes > max {
            return BodyRead::Omitted(format!(
                "{} bytes, over the capture's cap of {max} bytes on a body (its sha256 is kept)",
                self.bytes
            ));
        }
        let Some(file) = self.spool.as_mut() else {
            return BodyRead::Omitted("the spool file could not be written".to_string());
        };
        let mut buf = Vec::new();
        let read = file
            .seek(SeekFrom::Start(0))
            .and_then(|_| file.take(max).read_to_end(&mut buf));
        if let Err(e) = read {
            return BodyRead::Omitted(format!("the spool file cannot be read: {e}"));
        }
        if is_json_text(&buf) {
            for b in &mut buf {
                if *b == b'\n' || *b == b'\r' {
                    *b = b' ';
                }
            }
            BodyRead::Json(buf)
        } else {
            BodyRead::Omitted(format!("{} bytes, not JSON", self.bytes))
        }
    }
}

/// Whether `bytes` are one JSON value in UTF-8, checked without building it (serde's
/// `IgnoredAny` skips strings without checking their UTF-8, hence the first test).
pub fn is_json_text(bytes: &[u8]) -> bool {
    std::str::from_utf8(bytes).is_ok()
        && serde_json::from_slice::<serde::de::IgnoredAny>(bytes).is_ok()
}

/// How many messages a request body's conversation holds (`messages`, or the Responses
/// API's `input` list), counted without building the body: 0 when there is no list.
pub fn message_count(json: &[u8]) -> usize {
    #[derive(serde::Deserialize)]
    struct Conversation {
        #[serde(default)]
        messages: Counted,
        #[serde(default)]
        input: Counted,
    }
    // Only an object has named fields (serde would read a list as the struct's fields).
    if json.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return 0;
    }
    serde_json::from_slice::<Conversation>(json).map_or(0, |c| {
        if c.messages.0 > 0 {
            c.messages.0
        } else {
            c.input.0
        }
    })
}

/// The length of a JSON list, any other value 0, nothing kept.
#[derive(Default)]
struct Counted(usize);

impl<'de> serde::Deserialize<'de> for Counted {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Counted, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Counted;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Counted, A::Error> {
                let mut n = 0;
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {
                    n += 1;
                }
                Ok(Counted(n))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Counted, A::Error> {
                while map
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(Counted(0))
            }
            fn visit_str<E>(self, _: &str) -> Result<Counted, E> {
                Ok(Counted(0))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Counted, E> {
                Ok(Counted(0))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Counted, E> {
                Ok(Counted(0))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Counted, E> {
                Ok(Counted(0))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Counted, E> {
                Ok(Counted(0))
            }
            fn visit_unit<E>(self) -> Result<Counted, E> {
                Ok(Counted(0))
            }
        }
        d.deserialize_any(Visit)
    }
}

/// Streams `body` to the returned channel (the upstream request's body) and to a spool file
/// in `spool_dir` (unnamed: it disappears with the process). The task ends with the whole
/// body spooled, or broken off.
pub fn spool_request(
    mut body: Incoming,
    spool_dir: std::path::PathBuf,
    limits: super::ConnectionLimits,
) -> (
    mpsc::Receiver<Result<Bytes, std::io::Error>>,
    tokio::task::JoinHandle<SpooledBody>,
) {
    // Two chunks in flight: the upstream's pace holds the client back, not our memory.
    let (tx, rx) = mpsc::channel(2);
    let task = tokio::spawn(async move {
        let whole = tokio::time::Instant::now() + limits.body_deadline;
        let mut spool = tempfile::tempfile_in(&spool_dir).ok();
        let mut hash = Sha256::new();
        let mut bytes = 0u64;
        let mut broken = None;
        let mut upstream_open = true;
        loop {
            let idle = tokio::time::Instant::now() + limits.body_idle;
            let frame = match tokio::time::timeout_at(idle.min(whole), body.frame()).await {
                Ok(frame) => frame,
                Err(_) => {
                    let text = if idle < whole {
                        format!(
                            "the request body stalled: nothing came for {} s",
                            limits.body_idle.as_secs()
                        )
                    } else {
                        format!(
                            "the request body took longer than {} s",
                            limits.body_deadline.as_secs()
                        )
                    };
                    let _ = tx
                        .send(Err(std::io::Error::new(
                            std::io::ErrorKind::TimedOut,
                            text.clone(),
                        )))
                        .await;
                    broken = Some(text);
                    break;
                }
            };
            match frame {
                None => break,
                Some(Ok(frame)) => {
                    let Ok(data) = frame.into_data() else {
                        continue;
                    };
                    bytes += data.len() as u64;
                    hash.update(&data);
                    if let Some(f) = spool.as_mut()
                        && f.write_all(&data).is_err()
                    {
                        spool = None;
                    }
                    if upstream_open && tx.send(Ok(data)).await.is_err() {
                        // The upstream stopped reading (it answered early, or failed): the
                        // rest is still read, so the capture says what the client sent.
                        upstream_open = false;
                    }
                }
                Some(Err(e)) => {
                    let text = format!("the request body broke off: {e}");
                    let _ = tx
                        .send(Err(std::io::Error::new(
                            std::io::ErrorKind::UnexpectedEof,
                            text.clone(),
                        )))
                        .await;
                    broken = Some(text);
                    break;
                }
            }
        }
        SpooledBody {
            bytes,
            sha256: hex(&hash.finalize()),
            spool,
            broken,
        }
    });
    (rx, task)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_is_checked_and_counted_without_a_tree() {
        assert!(is_json_text(b"{\"a\": [1, 2.50, 1e400]}"));
        assert!(!is_json_text(b"{\"a\": 1"));
        assert!(!is_json_text(b"\"\xff\""), "not UTF-8 inside a string");
        assert_eq!(
            message_count(br#"{"model":"m","messages":[{"a":1},2,"x"]}"#),
            3
        );
        assert_eq!(message_count(br#"{"input":[{"role":"user"}],"n":1.5}"#), 1);
        assert_eq!(message_count(br#"{"input":"just text"}"#), 0);
        assert_eq!(message_count(b"[1,2]"), 0);
        assert_eq!(message_count(b"[[1,2],[3]]"), 0);
    }
}
