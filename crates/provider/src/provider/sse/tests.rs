//! The SSE decoder against the framing rules, its limits, and a fuzz corpus: deterministic
//! mutations of real-shaped streams, fed in random chunk splits, must decode exactly as a
//! plain whole-input reference decoder says.

use super::*;

fn limits(event: usize, answer: usize) -> StreamLimits {
    StreamLimits {
        max_event_bytes: event,
        max_answer_bytes: answer,
    }
}

/// Feeds `chunks` one by one, then ends the body; the events seen up to the first error.
fn decode_chunks(chunks: &[&[u8]], limits: StreamLimits) -> (Vec<SseEvent>, Option<SseError>) {
    let mut decoder = SseDecoder::new(limits);
    let mut out = Vec::new();
    for chunk in chunks {
        if let Err(e) = decoder.feed(chunk, &mut out) {
            return (out, Some(e));
        }
    }
    let err = decoder.finish(&mut out).err();
    (out, err)
}

fn decode(text: &[u8]) -> (Vec<SseEvent>, Option<SseError>) {
    decode_chunks(&[text], StreamLimits::default())
}

fn ev(event: &str, data: &str) -> SseEvent {
    SseEvent {
        event: event.into(),
        data: data.into(),
    }
}

#[test]
fn fields_comments_and_line_ends() {
    let (events, err) = decode(
        b": hello\r\nevent: a\r\ndata: 1\r\ndata:2\r\n\r\nid: 7\rretry: 5\rdata:  x\r\rdata\n\n",
    );
    assert_eq!(err, None);
    assert_eq!(
        events,
        vec![ev("a", "1\n2"), ev("message", " x"), ev("message", "")]
    );
}

#[test]
fn an_event_without_data_is_dropped_with_its_name() {
    let (events, err) = decode(b"event: ping\n\ndata: x\n\n");
    assert_eq!(err, None);
    assert_eq!(events, vec![ev("message", "x")]);
}

#[test]
fn a_comment_with_invalid_utf8_is_ignored() {
    let (events, err) = decode(b": \xff\xfe keepalive\n\ndata: {}\n\n");
    assert_eq!(err, None);
    assert_eq!(events, vec![ev("message", "{}")]);
}

#[test]
fn invalid_utf8_in_data_or_a_name_is_an_error_that_says_so() {
    let (events, err) = decode(b"data: ok\n\ndata: \xff\n\n");
    assert_eq!(events, vec![ev("message", "ok")]);
    assert_eq!(err, Some(SseError::InvalidUtf8 { field: "data" }));
    assert!(
        err.unwrap().to_string().contains("not valid UTF-8"),
        "the message names the cause"
    );
    let (_, err) = decode(b"event: \xc3\ndata: x\n\n");
    assert_eq!(err, Some(SseError::InvalidUtf8 { field: "name" }));
}

#[test]
fn a_byte_order_mark_is_dropped_even_split_over_chunks() {
    let chunks: [&[u8]; 3] = [b"\xEF", b"\xBB", b"\xBFdata: x\n\n"];
    let (events, err) = decode_chunks(&chunks, StreamLimits::default());
    assert_eq!((events, err), (vec![ev("message", "x")], None));
    // Bytes that only start like one are kept: here they start an unknown field's name.
    let chunks: [&[u8]; 2] = [b"\xEF\xBB", b"data: x\n\n"];
    assert_eq!(
        decode_chunks(&chunks, StreamLimits::default()),
        (vec![], None)
    );
}

#[test]
fn a_cr_at_a_chunk_end_and_an_lf_after_it_are_one_line_end() {
    let chunks: [&[u8]; 3] = [b"data: a\r", b"\ndata: b\r", b"\n\r\n"];
    let (events, err) = decode_chunks(&chunks, StreamLimits::default());
    assert_eq!((events, err), (vec![ev("message", "a\nb")], None));
}

#[test]
fn the_last_event_goes_out_when_the_body_ends_without_a_blank_line() {
    assert_eq!(decode(b"data: x").0, vec![ev("message", "x")]);
    assert_eq!(decode(b"data: x\n").0, vec![ev("message", "x")]);
}

#[test]
fn an_event_past_the_cap_is_an_error_even_while_its_line_is_still_coming() {
    // 10 bytes of lines per event at most: two lines of 5 fit, a third byte does not.
    let caps = limits(10, 1000);
    let chunks: [&[u8]; 1] = [b"data:\ndata:\n\n"];
    assert_eq!(decode_chunks(&chunks, caps).1, None);
    let chunks: [&[u8]; 1] = [b"data:\ndata:x\n\n"];
    assert_eq!(
        decode_chunks(&chunks, caps).1,
        Some(SseError::EventTooLarge { limit: 10 })
    );
    // A line with no end yet: refused as soon as it is too long, not when it ends.
    let mut decoder = SseDecoder::new(caps);
    let mut out = Vec::new();
    assert_eq!(decoder.feed(b"data:12345", &mut out), Ok(()));
    assert_eq!(
        decoder.feed(b"6", &mut out),
        Err(SseError::EventTooLarge { limit: 10 })
    );
    // A comment counts as much as a field while it arrives.
    let chunks: [&[u8]; 1] = [b": 1234567890\n"];
    assert_eq!(
        decode_chunks(&chunks, caps).1,
        Some(SseError::EventTooLarge { limit: 10 })
    );
}

#[test]
fn an_answer_past_the_cap_is_an_error() {
    let caps = limits(100, 20);
    let chunks: [&[u8]; 2] = [b"data: 1\n\n", b"data: 2\n\n"];
    assert_eq!(decode_chunks(&chunks, caps).1, None);
    let chunks: [&[u8]; 3] = [b"data: 1\n\n", b"data: 2\n\n", b": ka\n"];
    assert_eq!(
        decode_chunks(&chunks, caps),
        (
            vec![ev("message", "1"), ev("message", "2")],
            Some(SseError::AnswerTooLarge { limit: 20 })
        )
    );
}

/// A long data line in many small chunks holds one line buffer and is looked at once: a
/// quadratic decoder (the one this replaced) took seconds for a few MiB; this must decode
/// 8 MiB in 8 KiB chunks, which a test build does in well under a second. The bound that
/// matters is the count: every chunk is scanned once, checked by the buffer growing by
/// exactly the chunk each time.
#[test]
fn a_long_line_in_small_chunks_is_buffered_once() {
    let mut decoder = SseDecoder::new(StreamLimits::default());
    let mut out = Vec::new();
    decoder.feed(b"data: ", &mut out).unwrap();
    let chunk = vec![b'x'; 8 * 1024];
    for i in 1..=1024usize {
        decoder.feed(&chunk, &mut out).unwrap();
        assert_eq!(decoder.line.len(), 6 + i * chunk.len());
    }
    decoder.feed(b"\n\n", &mut out).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].data.len(), 8 * 1024 * 1024);
}

/// The reference: the whole input at once, split into lines first, each line applied in
/// turn; written for plainness, not speed.
fn reference(input: &[u8], limits: StreamLimits) -> (Vec<SseEvent>, Option<SseError>) {
    let input = input.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(input);
    if input.len() > limits.max_answer_bytes {
        unreachable!("the fuzz test keeps answers under the cap");
    }
    let mut lines: Vec<&[u8]> = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < input.len() {
        match input[i] {
            b'\n' => {
                lines.push(&input[start..i]);
                start = i + 1;
            }
            b'\r' => {
                lines.push(&input[start..i]);
                if input.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if start < input.len() {
        lines.push(&input[start..]);
    }
    lines.push(b"");
    let (mut events, mut name, mut data, mut has_data, mut size) =
        (Vec::new(), String::new(), String::new(), false, 0usize);
    for line in lines {
        if line.is_empty() {
            if has_data {
                let event = if name.is_empty() { "message" } else { &name };
                events.push(ev(event, &data));
            }
            (name, data, has_data, size) = (String::new(), String::new(), false, 0);
            continue;
        }
        if size + line.len() > limits.max_event_bytes {
            return (
                events,
                Some(SseError::EventTooLarge {
                    limit: limits.max_event_bytes,
                }),
            );
        }
        if line[0] == b':' {
            continue;
        }
        size += line.len();
        let (field, value) = match line.iter().position(|b| *b == b':') {
            Some(c) => (
                &line[..c],
                line[c + 1..].strip_prefix(b" ").unwrap_or(&line[c + 1..]),
            ),
            None => (line, &b""[..]),
        };
        let text = || String::from_utf8(value.to_vec());
        match field {
            b"data" => match text() {
                Ok(t) => {
                    if has_data {
                        data.push('\n');
                    }
                    data.push_str(&t);
                    has_data = true;
                }
                Err(_) => return (events, Some(SseError::InvalidUtf8 { field: "data" })),
            },
            b"event" => match text() {
                Ok(t) => name = t,
                Err(_) => return (events, Some(SseError::InvalidUtf8 { field: "name" })),
            },
            _ => {}
        }
    }
    (events, None)
}

const SEEDS: [&[u8]; 7] = [
    b"event: message_start\ndata: {\"type\":\"message_start\"}\n\nevent: ping\ndata: {\"type\": \"ping\"}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}",
    b"data: {\"choices\":[{\"delta\":{\"content\":\"h\xc3\xa9\"}}]}\r\n\r\n: keepalive\r\n\r\ndata: [DONE]\r\n\r\n",
    b"\xEF\xBB\xBFdata: a\rdata: b\r\rid: 1\nretry: 10\ndata\n\n",
    b": \xff\xfe\n\nevent: error\ndata: {\"error\":{\"message\":\"x\"}}\n\n",
    b"data:no space\n\ndata:  two spaces\n\nevent:\ndata: plain\n\n",
    b"data: \xe2\x82\n\ndata: \xe2\x82\xac\n\n",
    b"event: a\nevent: b\ndata: multi\ndata: line\ndata:\n\n",
];

/// Bytes a mutation inserts: the framing's own and the ones that break UTF-8.
const SPICE: [u8; 9] = [b'\n', b'\r', b':', b' ', 0xff, 0xc3, 0xe2, b'd', 0];

fn mutate(rng: &mut fastrand::Rng, seed: &[u8]) -> Vec<u8> {
    let mut bytes = seed.to_vec();
    for _ in 0..rng.usize(0..6) {
        let at = rng.usize(0..=bytes.len());
        match rng.u8(0..5) {
            0 => bytes.insert(at, SPICE[rng.usize(0..SPICE.len())]),
            1 if at < bytes.len() => {
                let end = (at + rng.usize(1..8)).min(bytes.len());
                bytes.drain(at..end);
            }
            2 if at < bytes.len() => bytes[at] ^= 1 << rng.u8(0..8),
            3 => {
                let end = (at + rng.usize(1..40)).min(bytes.len());
                let copy = bytes[at..end].to_vec();
                bytes.splice(at..at, copy);
            }
            _ => bytes.extend_from_slice(SEEDS[rng.usize(0..SEEDS.len())]),
        }
    }
    bytes
}

fn random_split<'a>(rng: &mut fastrand::Rng, bytes: &'a [u8]) -> Vec<&'a [u8]> {
    let mut chunks = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        let n = if rng.bool() {
            1
        } else {
            rng.usize(1..=rest.len())
        };
        let (head, tail) = rest.split_at(n.min(rest.len()));
        chunks.push(head);
        rest = tail;
    }
    chunks
}

/// 20,000 mutated streams, each in a random chunk split, under an event cap small enough
/// to be hit: the same events and the same error as the reference, every time. Runs in a
/// few hundred milliseconds; a failure names the seed to replay it.
#[test]
fn fuzz_corpus_matches_the_reference_decoder() {
    // How many cases ended each way: the corpus must reach every outcome.
    let (mut whole, mut too_large, mut bad_utf8) = (0, 0, 0);
    for case in 0..20_000u64 {
        let mut rng = fastrand::Rng::with_seed(case);
        let seed = SEEDS[rng.usize(0..SEEDS.len())];
        let input = mutate(&mut rng, seed);
        let caps = limits(rng.usize(20..400), usize::MAX);
        let want = reference(&input, caps);
        let chunks = random_split(&mut rng, &input);
        let got = decode_chunks(&chunks, caps);
        assert_eq!(
            got,
            want,
            "case {case}: input {:?}",
            String::from_utf8_lossy(&input)
        );
        match want.1 {
            None if !want.0.is_empty() => whole += 1,
            None => {}
            Some(SseError::EventTooLarge { .. }) => too_large += 1,
            Some(SseError::InvalidUtf8 { .. }) => bad_utf8 += 1,
            Some(SseError::AnswerTooLarge { .. }) => {}
        }
    }
    assert!(
        whole > 1000 && too_large > 1000 && bad_utf8 > 1000,
        "{whole} whole, {too_large} too large, {bad_utf8} bad UTF-8"
    );
}
