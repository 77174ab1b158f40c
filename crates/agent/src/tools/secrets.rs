//! Keeping secrets out of what tools see and return (README, "Security model").
//!
//! Two lines of defence. [`EnvPolicy`] decides which environment variables a child process
//! (`bash`) does not inherit: the variables ctxlab reads its provider keys from, every name
//! ending in `_API_KEY`, `_TOKEN` or `_SECRET`, and whatever `env_deny` in config.toml adds
//! (`env_passthrough` keeps a suffix-matched name). [`Redactions`] then replaces the exact
//! value of each key ctxlab holds wherever it still shows up in a tool's output (a key read
//! from `.env` or config.toml, or from a file the command printed). Neither knows where the
//! keys came from; the composition root hands them over.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use serde_json::Value;

/// The variables ctxlab reads provider keys from: never passed to a child, whatever the
/// configuration says.
pub const PROVIDER_KEY_VARS: [&str; 2] = ["ANTHROPIC_API_KEY", "OPENAI_API_KEY"];

/// Name endings (compared without case) of variables a child does not get by default.
pub const SECRET_SUFFIXES: [&str; 3] = ["_API_KEY", "_TOKEN", "_SECRET"];

/// Values shorter than this are not redacted: replacing every `1234` in a tool's output
/// would destroy it and hide nothing.
const MIN_REDACTED_CHARS: usize = 8;

/// Which environment variables child processes do not inherit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvPolicy {
    /// Removed as well (config.toml `env_deny`).
    pub deny: Vec<String>,
    /// Kept although their name ends in a secret suffix (config.toml `env_passthrough`).
    /// Never applies to [`PROVIDER_KEY_VARS`].
    pub passthrough: Vec<String>,
}

impl EnvPolicy {
    /// Whether a child process must not see the variable `name`.
    pub fn removes(&self, name: &str) -> bool {
        if PROVIDER_KEY_VARS.contains(&name) || self.deny.iter().any(|d| d == name) {
            return true;
        }
        if self.passthrough.iter().any(|p| p == name) {
            return false;
        }
        let upper = name.to_ascii_uppercase();
        SECRET_SUFFIXES.iter().any(|s| upper.ends_with(s))
    }

    /// The names of this process's environment a child must not get.
    pub fn removed_from_current_env(&self) -> Vec<std::ffi::OsString> {
        std::env::vars_os()
            .map(|(k, _)| k)
            .filter(|k| k.to_str().is_none_or(|name| self.removes(name)))
            .collect()
    }
}

/// Secret values and the names shown in their place. `Debug` never prints a value.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Redactions(Arc<Vec<(String, String)>>);

impl fmt::Debug for Redactions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.0.iter().map(|(n, _)| n.as_str()).collect();
        write!(f, "Redactions({names:?})")
    }
}

impl Redactions {
    /// `(name, value)` pairs; values too short to be a key are ignored, duplicates dropped.
    pub fn new(pairs: impl IntoIterator<Item = (String, String)>) -> Redactions {
        let mut out: Vec<(String, String)> = Vec::new();
        for (name, value) in pairs {
            let value = value.trim().to_string();
            if value.chars().count() >= MIN_REDACTED_CHARS && !out.iter().any(|(_, v)| *v == value)
            {
                out.push((name, value));
            }
        }
        // The longest first: a key that contains another is replaced whole.
        out.sort_by_key(|pair| std::cmp::Reverse(pair.1.len()));
        Redactions(Arc::new(out))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `text` with every secret value replaced by `[redacted NAME]`.
    pub fn text<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        for (name, value) in self.0.iter() {
            if out.contains(value.as_str()) {
                out = Cow::Owned(out.replace(value.as_str(), &format!("[redacted {name}]")));
            }
        }
        out
    }

    /// Redacts every string (keys of objects included) inside a JSON value, in place.
    /// Returns whether anything changed.
    pub fn value(&self, value: &mut Value) -> bool {
        if self.is_empty() {
            return false;
        }
        match value {
            Value::String(s) => match self.text(s) {
                Cow::Owned(clean) => {
                    *s = clean;
                    true
                }
                Cow::Borrowed(_) => false,
            },
            Value::Array(items) => {
                // Every item is visited: `any` would stop at the first change.
                let mut changed = false;
                for v in items.iter_mut() {
                    changed |= self.value(v);
                }
                changed
            }
            Value::Object(map) => {
                let dirty_key = map.keys().any(|k| matches!(self.text(k), Cow::Owned(_)));
                if dirty_key {
                    let old = std::mem::take(map);
                    for (k, v) in old {
                        map.insert(self.text(&k).into_owned(), v);
                    }
                }
                let mut changed = dirty_key;
                for v in map.values_mut() {
                    changed |= self.value(v);
                }
                changed
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_keys_and_secret_suffixes_are_removed_unless_passed_through() {
        let policy = EnvPolicy {
            deny: vec!["AWS_SECRET_ACCESS_KEY".into()],
            passthrough: vec!["GITHUB_TOKEN".into(), "OPENAI_API_KEY".into()],
        };
        for name in [
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "MY_API_KEY",
            "gitlab_token",
            "CLIENT_SECRET",
            "AWS_SECRET_ACCESS_KEY",
        ] {
            assert!(policy.removes(name), "{name}");
        }
        for name in ["PATH", "HOME", "GITHUB_TOKEN", "TOKENIZER", "SECRETS_DIR"] {
            assert!(!policy.removes(name), "{name}");
        }
    }

    #[test]
    fn values_are_replaced_everywhere_and_never_printed() {
        let r = Redactions::new([
            (
                "ANTHROPIC_API_KEY".to_string(),
                "sk-ant-0123456789".to_string(),
            ),
            ("SHORT".to_string(), "1234".to_string()),
        ]);
        assert_eq!(
            r.text("key=sk-ant-0123456789; 1234"),
            "key=[redacted ANTHROPIC_API_KEY]; 1234"
        );
        assert!(matches!(r.text("nothing here"), Cow::Borrowed(_)));
        let mut v = serde_json::json!({"a": ["x sk-ant-0123456789"], "sk-ant-0123456789": 1});
        assert!(r.value(&mut v));
        assert!(!v.to_string().contains("sk-ant"), "{v}");
        assert!(!format!("{r:?}").contains("sk-ant"));
    }
}
