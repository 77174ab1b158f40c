//! A small HTML well-formedness check for the exported page, so CI needs no browser: tags
//! nest and close, attribute values are quoted, entities are known, text holds no raw `<`,
//! and nothing reaches for the network (no script, no `src`, no link out of the page, no
//! remote CSS).

/// Elements that never take a closing tag.
const VOID: &[&str] = &["meta", "br", "hr", "img", "input", "link", "wbr"];

/// `Ok(number of elements)` or the first problem, with its byte offset.
pub fn check(html: &str) -> Result<usize, String> {
    let b = html.as_bytes();
    let mut stack: Vec<String> = Vec::new();
    let mut elements = 0;
    let mut i = 0;
    let err = |at: usize, what: &str| Err(format!("at byte {at}: {what}: {:?}", snippet(html, at)));
    if !html.starts_with("<!DOCTYPE html>") {
        return err(0, "no doctype");
    }
    i += "<!DOCTYPE html>".len();
    while i < b.len() {
        match b[i] {
            b'<' => {
                if html[i..].starts_with("<!--") {
                    match html[i..].find("-->") {
                        Some(end) => i += end + 3,
                        None => return err(i, "unclosed comment"),
                    }
                    continue;
                }
                let Some(end) = find_tag_end(b, i) else {
                    return err(i, "unclosed tag");
                };
                let inner = &html[i + 1..end];
                if let Some(name) = inner.strip_prefix('/') {
                    let name = name.trim();
                    match stack.pop() {
                        Some(open) if open == name => {}
                        Some(open) => return err(i, &format!("</{name}> closes <{open}>")),
                        None => return err(i, &format!("</{name}> closes nothing")),
                    }
                } else {
                    let self_closing = inner.ends_with('/');
                    let body = inner.trim_end_matches('/');
                    let name: String = body
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                        .collect();
                    if name.is_empty() || name != name.to_ascii_lowercase() && name != "textPath" {
                        return err(i, "bad tag name");
                    }
                    check_attributes(&body[name.len()..])
                        .map_err(|e| format!("at byte {i}: {e}: {:?}", snippet(html, i)))?;
                    if ["script", "iframe", "object", "embed", "link", "img"]
                        .contains(&name.as_str())
                    {
                        return err(i, "an element that loads or runs something");
                    }
                    elements += 1;
                    if name == "style" {
                        // Raw text up to its end tag (CSS uses `>` as a combinator).
                        let Some(close) = html[end..].find("</style>") else {
                            return err(i, "unclosed style");
                        };
                        let css = &html[end + 1..end + close];
                        if css.contains("url(") || css.contains("@import") {
                            return err(i, "CSS that loads something");
                        }
                        i = end + close + "</style>".len();
                        continue;
                    }
                    if !self_closing && !VOID.contains(&name.as_str()) {
                        stack.push(name);
                    }
                }
                i = end + 1;
            }
            b'&' => {
                let Some(len) = entity_len(&html[i..]) else {
                    return err(i, "bad entity");
                };
                i += len;
            }
            b'>' => return err(i, "raw >"),
            _ => i += 1,
        }
    }
    match stack.pop() {
        None => Ok(elements),
        Some(open) => Err(format!("<{open}> never closed")),
    }
}

fn snippet(html: &str, at: usize) -> String {
    html[at..].chars().take(60).collect()
}

/// The `>` that ends the tag opened at `start`, skipping quoted attribute values.
fn find_tag_end(b: &[u8], start: usize) -> Option<usize> {
    let mut quote: Option<u8> = None;
    for (k, &c) in b.iter().enumerate().skip(start + 1) {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, b'"' | b'\'') => quote = Some(c),
            (None, b'>') => return Some(k),
            (None, b'<') => return None,
            _ => {}
        }
    }
    None
}

fn check_attributes(mut rest: &str) -> Result<(), String> {
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            return Ok(());
        }
        let name_len = rest
            .find(|c: char| c == '=' || c.is_whitespace())
            .unwrap_or(rest.len());
        let name = &rest[..name_len];
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-:_".contains(c))
        {
            return Err(format!("bad attribute name {name:?}"));
        }
        rest = &rest[name_len..];
        if ["src", "srcset", "action", "formaction", "background"].contains(&name)
            || name.starts_with("on")
        {
            return Err(format!("attribute {name} loads or runs something"));
        }
        if let Some(after) = rest.strip_prefix('=') {
            let q = after.chars().next().ok_or("attribute without a value")?;
            if q != '"' {
                return Err(format!("unquoted value of {name}"));
            }
            let end = after[1..].find('"').ok_or("unclosed attribute value")?;
            let value = &after[1..1 + end];
            if value.contains('<') {
                return Err(format!("raw < in {name}"));
            }
            if name == "href" && !value.starts_with('#') {
                return Err(format!("a link out of the page: {value}"));
            }
            if name == "xmlns" && value != "http://www.w3.org/2000/svg" {
                return Err(format!("namespace {value}"));
            }
            let mut v = value;
            while let Some(p) = v.find('&') {
                let len = entity_len(&v[p..]).ok_or(format!("bad entity in {name}"))?;
                v = &v[p + len..];
            }
            rest = &after[1 + end + 1..];
        }
    }
}

/// The length of a known entity at the start of `s`.
fn entity_len(s: &str) -> Option<usize> {
    for named in ["&amp;", "&lt;", "&gt;", "&quot;", "&#39;"] {
        if s.starts_with(named) {
            return Some(named.len());
        }
    }
    let rest = s.strip_prefix("&#")?;
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    (digits > 0 && rest[digits..].starts_with(';')).then_some(2 + digits + 1)
}

#[test]
fn the_checker_catches_what_it_should() {
    let ok = "<!DOCTYPE html><html><body><p class=\"a\">x &amp; y<br></p><svg><rect x=\"1\"/></svg></body></html>";
    assert_eq!(check(ok), Ok(6));
    for bad in [
        "<!DOCTYPE html><p>a</b>",
        "<!DOCTYPE html><p>a",
        "<!DOCTYPE html><p class=a>x</p>",
        "<!DOCTYPE html><p>x & y</p>",
        "<!DOCTYPE html><p>1 > 0</p>",
        "<!DOCTYPE html><p title=\"<b>\">x</p>",
        "<!DOCTYPE html><script>alert(1)</script>",
        "<!DOCTYPE html><p><img src=\"x.png\"></p>",
        "<!DOCTYPE html><a href=\"https://example.com\">x</a>",
        "<!DOCTYPE html><p onclick=\"x()\">x</p>",
        "<!DOCTYPE html><style>body{background:url(x.png)}</style>",
    ] {
        assert!(check(bad).is_err(), "{bad}");
    }
    let local =
        "<!DOCTYPE html><a href=\"#step-1\">x</a><svg xmlns=\"http://www.w3.org/2000/svg\"></svg>";
    assert_eq!(check(local), Ok(2));
}
