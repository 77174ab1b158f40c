//! Which of the browser's rows are on screen: project groups folded (`▸`) or open (`▾`),
//! and the filter typed after `/` (a session stays when its project, its title or its file
//! name holds the text, case-insensitive, as the viewer's search matches). Plain data over
//! the listing's rows: `App` routes the keys, `app/sessions/draw.rs` draws `visible()`.

use std::collections::BTreeSet;

use super::BrowserRow;

/// The browser's folds, its filter and the rows they leave, as indices into the listing.
#[derive(Debug, Clone, Default)]
pub struct BrowserView {
    /// Project names whose sessions are hidden.
    folded: BTreeSet<String>,
    /// The filter (empty: none).
    query: String,
    /// The filter's prompt is open: keys type into it.
    typing: bool,
    /// Indices into the listing's rows, in order.
    visible: Vec<usize>,
}

impl BrowserView {
    /// The rows on screen, as indices into the listing.
    pub fn visible(&self) -> &[usize] {
        &self.visible
    }

    /// The filter (empty: none).
    pub fn query(&self) -> &str {
        &self.query
    }

    /// The filter's prompt is open.
    pub fn typing(&self) -> bool {
        self.typing
    }

    pub fn is_folded(&self, project: &str) -> bool {
        self.folded.contains(project)
    }

    /// How many of a project's sessions the filter keeps (all of them without a filter),
    /// for its header.
    pub fn matching(&self, rows: &[BrowserRow], header: usize) -> usize {
        group_of(rows, header)
            .filter(|&i| self.keeps(rows, header, i))
            .count()
    }

    pub(crate) fn start_typing(&mut self) {
        self.typing = true;
    }

    /// Enter: the filter stays, keys are keys again.
    pub(crate) fn stop_typing(&mut self) {
        self.typing = false;
    }

    pub(crate) fn push(&mut self, c: char, rows: &[BrowserRow]) {
        self.query.push(c);
        self.rebuild(rows);
    }

    pub(crate) fn pop(&mut self, rows: &[BrowserRow]) {
        self.query.pop();
        self.rebuild(rows);
    }

    /// Esc: no filter.
    pub(crate) fn clear(&mut self, rows: &[BrowserRow]) {
        self.query.clear();
        self.typing = false;
        self.rebuild(rows);
    }

    /// Folds `project`, or opens it when it was folded.
    pub(crate) fn toggle_fold(&mut self, project: &str, rows: &[BrowserRow]) {
        if !self.folded.remove(project) {
            self.folded.insert(project.to_string());
        }
        self.rebuild(rows);
    }

    pub(crate) fn set_folded(&mut self, project: &str, folded: bool, rows: &[BrowserRow]) {
        if folded {
            self.folded.insert(project.to_string());
        } else {
            self.folded.remove(project);
        }
        self.rebuild(rows);
    }

    /// Works out `visible` again (the listing, a fold or the filter changed).
    pub(crate) fn rebuild(&mut self, rows: &[BrowserRow]) {
        self.visible.clear();
        let mut header: Option<(usize, bool)> = None;
        for (i, row) in rows.iter().enumerate() {
            match row {
                BrowserRow::Project { name, .. } => {
                    let shown = self.query.is_empty() || self.matching(rows, i) > 0;
                    header = Some((i, self.folded.contains(name)));
                    if shown {
                        self.visible.push(i);
                    }
                }
                BrowserRow::Session(_) => match header {
                    Some((h, folded)) => {
                        if !folded && self.keeps(rows, h, i) {
                            self.visible.push(i);
                        }
                    }
                    None => {
                        if self.matches_text(&session_text(row)) {
                            self.visible.push(i);
                        }
                    }
                },
                BrowserRow::Error { path, message } => {
                    header = None;
                    if self.matches_text(&format!("{} {message}", path.display())) {
                        self.visible.push(i);
                    }
                }
            }
        }
    }

    /// Whether session row `i` under the header at `header` passes the filter: its
    /// project's name counts as its own text.
    fn keeps(&self, rows: &[BrowserRow], header: usize, i: usize) -> bool {
        if self.query.is_empty() {
            return true;
        }
        let project = match rows.get(header) {
            Some(BrowserRow::Project { name, .. }) => name.as_str(),
            _ => "",
        };
        self.matches_text(project)
            || rows
                .get(i)
                .is_some_and(|r| self.matches_text(&session_text(r)))
    }

    fn matches_text(&self, text: &str) -> bool {
        crate::util::contains_folded(text, &self.query)
    }
}

/// The session rows under the header at `header`.
fn group_of(rows: &[BrowserRow], header: usize) -> impl Iterator<Item = usize> + '_ {
    rows.iter()
        .enumerate()
        .skip(header + 1)
        .take_while(|(_, r)| matches!(r, BrowserRow::Session(_)))
        .map(|(i, _)| i)
}

/// What the filter searches in a session row: its title and its file name.
fn session_text(row: &BrowserRow) -> String {
    match row {
        BrowserRow::Session(s) => {
            let e = s.entry();
            let name = e
                .path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            format!("{} {name}", e.title.as_deref().unwrap_or(""))
        }
        _ => String::new(),
    }
}
