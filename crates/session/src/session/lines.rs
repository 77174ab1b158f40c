//! Fast parsing of large session files: JSON lines, and the elements of one big JSON
//! array, parsed on every core. Real sessions reach tens of megabytes and parsing is most of
//! the time it takes to open one, so the work is split into contiguous chunks that scoped
//! threads parse independently; results come back in file order. Nothing here knows what
//! the values mean.

use serde_json::Value;

/// Below this many bytes one thread is quicker than starting others.
const PARALLEL_MIN_BYTES: usize = 1 << 20;

/// One non-empty line of a JSON-lines file.
#[derive(Debug)]
pub(crate) struct ParsedLine {
    /// 1-based line number.
    pub number: usize,
    pub value: Result<Value, serde_json::Error>,
}

fn threads_for(bytes: usize) -> usize {
    if bytes < PARALLEL_MIN_BYTES {
        return 1;
    }
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 8)
}

/// Splits `items` into `parts` contiguous runs of about equal total weight.
fn chunk_bounds<T>(items: &[T], parts: usize, weight: impl Fn(&T) -> usize) -> Vec<usize> {
    let total: usize = items.iter().map(&weight).sum();
    let per = total / parts.max(1) + 1;
    let mut bounds = vec![0];
    let mut acc = 0;
    for (i, item) in items.iter().enumerate() {
        acc += weight(item);
        if acc >= per && bounds.len() < parts {
            bounds.push(i + 1);
            acc = 0;
        }
    }
    if bounds.last() != Some(&items.len()) {
        bounds.push(items.len());
    }
    bounds
}

/// Maps `f` over `items` on up to `threads` threads, keeping the order.
fn parallel_map<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    weight: impl Fn(&T) -> usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    if threads <= 1 || items.len() < 2 {
        return items.iter().map(f).collect();
    }
    let bounds = chunk_bounds(items, threads, weight);
    let f = &f;
    std::thread::scope(|scope| {
        let handles: Vec<_> = bounds
            .windows(2)
            .map(|w| {
                let chunk = &items[w[0]..w[1]];
                scope.spawn(move || chunk.iter().map(f).collect::<Vec<R>>())
            })
            .collect();
        let mut out = Vec::with_capacity(items.len());
        for h in handles {
            match h.join() {
                Ok(part) => out.extend(part),
                // A parser thread cannot panic on input; if one did, surface it here.
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        out
    })
}

/// Every non-empty line of `text`, parsed as JSON; `text`'s first line is line `first`.
pub(crate) fn parse_json_lines(text: &str, first: usize) -> Vec<ParsedLine> {
    parse_lines_with(text, first, |line| serde_json::from_str(line))
}

fn parse_lines_with(
    text: &str,
    first: usize,
    parse: impl Fn(&str) -> Result<Value, serde_json::Error> + Sync,
) -> Vec<ParsedLine> {
    parse_lines_on(text, first, threads_for(text.len()), parse)
}

/// `parse_json_lines` on the calling thread only: the chunked reader's values then all
/// come from, and go back to, one allocator arena (threads started per chunk each take an
/// arena, and what the session keeps from theirs pins their free space: a peak several
/// times the file's size under load).
pub(crate) fn parse_json_lines_here(text: &str, first: usize) -> Vec<ParsedLine> {
    parse_lines_on(text, first, 1, |line| serde_json::from_str(line))
}

fn parse_lines_on(
    text: &str,
    first: usize,
    threads: usize,
    parse: impl Fn(&str) -> Result<Value, serde_json::Error> + Sync,
) -> Vec<ParsedLine> {
    let lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| (i + first, l))
        .collect();
    parallel_map(
        &lines,
        threads,
        |(_, l)| l.len(),
        |(number, line)| ParsedLine {
            number: *number,
            value: parse(line),
        },
    )
}

/// Where the elements of a JSON array may be cut into `parts` runs: after a comma, at a
/// `{"` that opens an object. A `"` inside a JSON string is always escaped, so `{"` never
/// lies inside a string; it may still open a nested object, which `parse_run` then rejects.
fn cut_points(text: &str, inner: std::ops::Range<usize>, parts: usize) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut cuts = vec![inner.start];
    for k in 1..parts {
        let target = inner.start + (inner.end - inner.start) * k / parts;
        let from = target.max(cuts.last().copied().unwrap_or(0) + 1);
        let mut at = from;
        while at < inner.end && !text.is_char_boundary(at) {
            at += 1;
        }
        while let Some(p) = text.get(at..inner.end).and_then(|t| t.find("{\"")) {
            let pos = at + p;
            let before = bytes[..pos]
                .iter()
                .rposition(|b| !b.is_ascii_whitespace())
                .map(|i| bytes[i]);
            if before == Some(b',') {
                cuts.push(pos);
                break;
            }
            at = pos + 1;
        }
    }
    cuts.push(inner.end);
    cuts
}

/// Parses a run of comma-separated JSON values (a trailing comma allowed when `more`
/// follows); None unless the run is exactly that.
fn parse_run<T>(
    run: &str,
    more: bool,
    convert: &(impl Fn(Value) -> Option<T> + Sync),
) -> Option<Vec<T>> {
    let mut out = Vec::new();
    let mut rest = run.trim_start();
    while !rest.is_empty() {
        let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
        let value = stream.next()?.ok()?;
        let used = stream.byte_offset();
        out.push(convert(value)?);
        rest = rest[used..].trim_start();
        match rest.strip_prefix(',') {
            Some(after) => {
                rest = after.trim_start();
                if rest.is_empty() && !more {
                    return None;
                }
            }
            None if rest.is_empty() => {}
            None => return None,
        }
    }
    Some(out)
}

/// The elements of a JSON array, parsed on every core and converted by `convert`; None
/// when the text is not an array of values `convert` accepts (the caller then parses it
/// the slow way, which also reports the error precisely).
pub(crate) fn parse_json_array<T: Send>(
    text: &str,
    convert: impl Fn(Value) -> Option<T> + Sync,
) -> Option<Vec<T>> {
    let start = text.len() - text.trim_start().len();
    let end = text.trim_end().len();
    if text.as_bytes().get(start) != Some(&b'[') || end == 0 || text.as_bytes()[end - 1] != b']' {
        return None;
    }
    let inner = start + 1..end - 1;
    if inner.start > inner.end {
        return None;
    }
    let cuts = cut_points(text, inner.clone(), threads_for(text.len()));
    let runs: Vec<(usize, usize, bool)> = cuts
        .windows(2)
        .enumerate()
        .map(|(i, w)| (w[0], w[1], i + 2 < cuts.len()))
        .collect();
    let convert = &convert;
    let parsed = parallel_map(
        &runs,
        runs.len(),
        |_| 1,
        |&(a, b, more)| parse_run(&text[a..b], more, convert),
    );
    if let Some(parts) = parsed.into_iter().collect::<Option<Vec<Vec<T>>>>() {
        return Some(parts.into_iter().flatten().collect());
    }
    // A cut fell inside a nested object: one run over the whole array.
    (runs.len() > 1)
        .then(|| parse_run(&text[inner], false, convert))
        .flatten()
}

/// Computes each message's cached sizes on every core, so the pipeline finds them ready.
pub(crate) fn warm_caches(messages: &[crate::message::Message]) {
    let threads = if messages.len() < 64 {
        1
    } else {
        threads_for(PARALLEL_MIN_BYTES)
    };
    parallel_map(
        messages,
        threads,
        |m| m.blocks().len() + 1,
        |m| {
            m.estimate_size();
            m.tool_result_lens().len()
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_parse_in_runs_and_a_bad_cut_falls_back_to_one_run() {
        let id = |v: Value| Some(v);
        let text = r#" [ {"a": "x,]\"}"}, {"b": [{"c": 1}, {"d": 2}]}, {"e": 3} ] "#;
        let want: Vec<Value> = serde_json::from_str(text).unwrap();
        assert_eq!(parse_json_array(text, id).unwrap(), want);
        let inner = 2..text.trim_end().len() - 1;
        for parts in 1..6 {
            let cuts = cut_points(text, inner.clone(), parts);
            let runs: Vec<_> = cuts.windows(2).collect();
            // Cuts inside the nested list are rejected by parse_run; good ones parse.
            let ok = runs
                .iter()
                .enumerate()
                .all(|(i, w)| parse_run(&text[w[0]..w[1]], i + 1 < runs.len(), &id).is_some());
            if ok {
                let all: Vec<Value> = runs
                    .iter()
                    .enumerate()
                    .flat_map(|(i, w)| {
                        parse_run(&text[w[0]..w[1]], i + 1 < runs.len(), &id).unwrap()
                    })
                    .collect();
                assert_eq!(all, want, "{parts} parts");
            }
        }
        assert!(parse_run(r#"{"x": 1}, {"y": [2"#, false, &id).is_none());
        assert!(parse_run(r#"1, 2,"#, false, &id).is_none());
        assert_eq!(parse_run(r#"1, 2,"#, true, &id).unwrap().len(), 2);
        assert_eq!(parse_json_array("[]", id).unwrap().len(), 0);
        assert!(parse_json_array("[1,]", id).is_none());
        assert!(parse_json_array("[1 2]", id).is_none());
        assert!(parse_json_array("[1] x", id).is_none());
        assert!(parse_json_array("{}", id).is_none());
        assert!(parse_json_array("[1, 2]", |_| None::<Value>).is_none());
    }

    #[test]
    fn parallel_map_keeps_order_across_chunks() {
        let items: Vec<usize> = (0..1000).collect();
        let out = parallel_map(&items, 4, |_| 1, |x| x * 2);
        assert_eq!(out, items.iter().map(|x| x * 2).collect::<Vec<_>>());
        let bounds = chunk_bounds(&items, 3, |_| 1);
        assert_eq!(bounds.first(), Some(&0));
        assert_eq!(bounds.last(), Some(&1000));
        assert!(bounds.len() <= 4);
    }

    #[test]
    fn lines_keep_their_numbers_and_errors() {
        let parsed = parse_json_lines("{\"a\":1}\n\n  \nnot json\n[2]\n", 1);
        let numbers: Vec<_> = parsed.iter().map(|p| p.number).collect();
        assert_eq!(numbers, [1, 4, 5]);
        assert!(parsed[1].value.is_err());
        assert_eq!(parsed[2].value.as_ref().unwrap(), &serde_json::json!([2]));
    }
}
