//! The original file's lines as JSON objects, and the renaming a copy needs: every string
//! that is exactly an id of the original (its session id, each line's uuid) becomes the
//! fork's. Only whole strings are renamed: a path that quotes the original's id (the
//! transcript a summary points to, a persisted tool output) still names the original's
//! files, which exist and stay where they are.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::ForkError;

/// One line of the original file: its 1-based number and its object.
#[derive(Debug, Clone)]
pub struct Line {
    pub number: usize,
    pub value: Map<String, Value>,
}

impl Line {
    pub fn str_field(&self, key: &str) -> Option<&str> {
        self.value.get(key).and_then(Value::as_str)
    }

    /// `payload.<key>` of a Codex line.
    pub fn payload_str(&self, key: &str) -> Option<&str> {
        self.value.get("payload")?.get(key)?.as_str()
    }
}

/// The lines of a JSONL text; blank lines are skipped, a line that is not an object is an
/// error (the reader already accepted the file, so this is a file changed meanwhile).
pub fn parse_lines(text: &str) -> Result<Vec<Line>, ForkError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        if raw.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(raw) {
            Ok(Value::Object(value)) => out.push(Line {
                number: i + 1,
                value,
            }),
            _ => {
                return Err(ForkError::BadLine { line: i + 1 });
            }
        }
    }
    Ok(out)
}

/// Renames every string of `v` that is exactly a key of `map`.
pub fn rename(v: &mut Value, map: &HashMap<String, String>) {
    match v {
        Value::String(s) => {
            if let Some(new) = map.get(s.as_str()) {
                *s = new.clone();
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|x| rename(x, map)),
        Value::Object(fields) => fields.values_mut().for_each(|x| rename(x, map)),
        _ => {}
    }
}

/// A line as the fork writes it: one JSON object and a newline.
pub fn to_line(value: &Map<String, Value>) -> Result<String, ForkError> {
    let mut s = serde_json::to_string(value).map_err(|e| ForkError::Encode(e.to_string()))?;
    s.push('\n');
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rename_touches_whole_strings_only() {
        let map: HashMap<String, String> = [("old".to_string(), "new".to_string())].into();
        let mut v = json!({"sessionId": "old", "path": "/x/old/y", "list": ["old", 1]});
        rename(&mut v, &map);
        assert_eq!(
            v,
            json!({"sessionId": "new", "path": "/x/old/y", "list": ["new", 1]})
        );
    }

    #[test]
    fn lines_keep_their_numbers_and_refuse_non_objects() {
        let lines = parse_lines("{\"a\":1}\n\n{\"b\":2}\n").unwrap();
        assert_eq!(lines[1].number, 3);
        assert!(matches!(
            parse_lines("{}\n[1]\n"),
            Err(ForkError::BadLine { line: 2 })
        ));
    }
}
