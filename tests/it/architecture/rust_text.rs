//! Rust source as the architecture scans read it: comments and literal contents blanked
//! (so a path in a comment or a message is not an import, and braces balance), and the
//! `#[cfg(test)]` modules cut out or named.

use std::collections::BTreeSet;

/// Code with comments removed and the contents of string and char literals blanked, line
/// breaks kept, so that a path in a comment or a message is not an import and braces balance.
pub(crate) fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let keep_lines = |s: &[char], out: &mut String| {
        out.extend(s.iter().filter(|&&c| c == '\n'));
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            let end = chars[i..]
                .iter()
                .position(|&c| c == '\n')
                .map_or(chars.len(), |p| i + p);
            i = end;
        } else if c == '/' && next == Some('*') {
            let (mut depth, mut j) = (0usize, i);
            while j < chars.len() {
                if chars[j] == '/' && chars.get(j + 1) == Some(&'*') {
                    depth += 1;
                    j += 2;
                } else if chars[j] == '*' && chars.get(j + 1) == Some(&'/') {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            keep_lines(&chars[i..j.min(chars.len())], &mut out);
            i = j;
        } else if c == 'r' && matches!(next, Some('#') | Some('"')) && !prev_is_ident(&chars, i) {
            let hashes = chars[i + 1..].iter().take_while(|&&c| c == '#').count();
            if chars.get(i + 1 + hashes) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            let start = i + 2 + hashes;
            let mut j = start;
            while j < chars.len() {
                if chars[j] == '"'
                    && chars[j + 1..]
                        .iter()
                        .take(hashes)
                        .filter(|&&c| c == '#')
                        .count()
                        == hashes
                {
                    break;
                }
                j += 1;
            }
            out.push_str("\"\"");
            keep_lines(&chars[start..j.min(chars.len())], &mut out);
            i = (j + 1 + hashes).min(chars.len());
        } else if c == '"' {
            let mut j = i + 1;
            while j < chars.len() && chars[j] != '"' {
                j += if chars[j] == '\\' { 2 } else { 1 };
            }
            out.push_str("\"\"");
            keep_lines(&chars[i + 1..j.min(chars.len())], &mut out);
            i = j + 1;
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{..}'), else a lifetime or label.
            let end = if next == Some('\\') {
                chars[i + 2..]
                    .iter()
                    .position(|&c| c == '\'')
                    .map(|p| i + 2 + p)
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(end) => {
                    out.push_str("' '");
                    i = end + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn prev_is_ident(chars: &[char], i: usize) -> bool {
    i > 0 && (chars[i - 1].is_ascii_alphanumeric() || chars[i - 1] == '_')
}

pub(crate) fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// `code` without the `#[cfg(test)]` inline modules (their `super` is the file itself, and
/// tests may reach anywhere).
pub(crate) fn without_test_modules(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(pos) = rest.find("#[cfg(test)]") {
        let after = &rest[pos + "#[cfg(test)]".len()..];
        let trimmed = after.trim_start();
        let is_inline_mod = trimmed.starts_with("mod ")
            && trimmed
                .find(['{', ';'])
                .is_some_and(|p| trimmed.as_bytes()[p] == b'{');
        if !is_inline_mod {
            out.push_str(&rest[..pos + "#[cfg(test)]".len()]);
            rest = after;
            continue;
        }
        out.push_str(&rest[..pos]);
        let open = after.find('{').unwrap_or(after.len());
        let mut depth = 0usize;
        let mut end = after.len();
        for (k, c) in after[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + k + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        out.extend(after[..end].chars().filter(|&c| c == '\n'));
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// The names of file modules declared under `#[cfg(test)]` (`#[cfg(test)] mod tests;`).
pub(crate) fn test_file_modules(code: &str) -> BTreeSet<String> {
    code.match_indices("#[cfg(test)]")
        .filter_map(|(pos, m)| {
            let rest = code[pos + m.len()..].trim_start();
            let rest = rest.strip_prefix("mod ")?;
            let name: String = rest
                .trim_start()
                .chars()
                .take_while(|&c| is_ident_char(c))
                .collect();
            rest.trim_start()[name.len()..]
                .trim_start()
                .starts_with(';')
                .then_some(name)
        })
        .collect()
}
