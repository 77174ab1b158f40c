//! Escaping text for the exported page: the one helper both the page (`html.rs`) and its
//! plot (`svg.rs`) use, kept apart so that neither imports the other's back.

/// `&`, `<`, `>`, `"` and `'` as entities, so any text is safe in content and attributes.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}
