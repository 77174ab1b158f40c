//! docs/pipeline.md, "Where ctxlab differs from the lesson, and why": tool ids name files only
//! inside `.task_outputs/tool-results/`, an existing file is never overwritten, a marker always
//! points at a file holding exactly the block's text, and atomic writes leave no temp files
//! behind.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use crate::common::files::*;
use crate::common::history::*;
use ctxlab::compact::{Pipeline, PipelineConfig, Stage};
use ctxlab::message::{Message, block};
use ctxlab::store::{Store, WriteStatus};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const DIR: &str = ".task_outputs/tool-results";

/// The divergences' name for an id that is not usable as is: sanitized, cut to 64, hash suffix.
fn hashed_name(id: &str) -> String {
    let sanitized: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    let digest = Sha256::digest(id.as_bytes());
    let hex: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    format!("{DIR}/{sanitized}-{hex}.txt")
}

/// A config under which every result over 100 chars is persisted.
fn persist_everything() -> Pipeline {
    Pipeline::new(PipelineConfig {
        budget_chars: 0,
        persist_threshold: 100,
        ..PipelineConfig::default()
    })
}

/// The `Full output:` path of a marker.
fn marker_path(content: &str) -> &str {
    let rest = content
        .strip_prefix("<persisted-output>\nFull output: ")
        .unwrap_or_else(|| panic!("not a marker: {content:.80}"));
    &rest[..rest.find('\n').unwrap()]
}

/// A workspace inside an outer folder, so writes that escape it can be seen.
struct Sandbox {
    outer: tempfile::TempDir,
}

impl Sandbox {
    fn new() -> Sandbox {
        let outer = workspace();
        std::fs::create_dir_all(outer.path().join("ws").join(DIR)).unwrap();
        Sandbox { outer }
    }
    fn ws(&self) -> PathBuf {
        self.outer.path().join("ws")
    }
    fn all_files(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        snapshot(self.outer.path())
    }
}

fn assert_only_new_files_in_results_dir(
    before: &BTreeMap<PathBuf, Vec<u8>>,
    after: &BTreeMap<PathBuf, Vec<u8>>,
) {
    for (path, bytes) in before {
        assert_eq!(after.get(path), Some(bytes), "{path:?} changed or vanished");
    }
    let results_dir = Path::new("ws").join(DIR);
    for path in after.keys().filter(|p| !before.contains_key(*p)) {
        assert_eq!(
            path.parent(),
            Some(results_dir.as_path()),
            "{path:?} written outside {DIR}"
        );
        let name = path.file_name().unwrap().to_string_lossy();
        assert!(!name.starts_with(".tmp-"), "temp file left: {path:?}");
    }
}

#[test]
fn hostile_ids_stay_inside_the_results_folder() {
    let sandbox = Sandbox::new();
    let ws = sandbox.ws();
    // Files that must keep their bytes: one where `../escape` would land, one a plain id
    // would overwrite, and one outside the workspace reached through a symlink.
    std::fs::write(ws.join(".task_outputs/escape.txt"), "keep me").unwrap();
    std::fs::write(sandbox.outer.path().join("escape.txt"), "keep me too").unwrap();
    std::fs::write(ws.join(DIR).join("taken.txt"), "old bytes").unwrap();
    std::fs::write(sandbox.outer.path().join("target.txt"), "outside").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(
        sandbox.outer.path().join("target.txt"),
        ws.join(DIR).join("linked.txt"),
    )
    .unwrap();

    let long = "x".repeat(500);
    let long_wide = "解".repeat(500);
    let ids: Vec<Option<&str>> = vec![
        Some("../escape"),
        Some("../../escape"),
        Some("a/b"),
        Some("/etc/passwd"),
        Some("a\\b"),
        Some(".."),
        Some("."),
        Some(""),
        None,
        Some(long.as_str()),
        Some(long_wide.as_str()),
        Some("é解😀"),
        Some("nul\u{0}byte"),
        Some("taken"),
        Some("linked"),
        Some("dup"),
        Some("dup"),
        Some("same"),
        Some("same"),
    ];
    let mut blocks = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        // All 165 chars: the budget walk keeps document order for equal sizes.
        let text = if *id == Some("same") {
            "identical text ".repeat(11)
        } else {
            format!("{i:03}: {}", "payload ".repeat(20))
        };
        let mut b = json!({"type": "tool_result", "content": text});
        if let Some(id) = id {
            b["tool_use_id"] = json!(id);
        }
        blocks.push(b);
    }
    let originals: Vec<String> = blocks
        .iter()
        .map(|b| b["content"].as_str().unwrap().to_string())
        .collect();
    let mut h = vec![user("go"), Message::user_blocks(blocks)];
    let before = sandbox.all_files();
    let report = persist_everything()
        .run_stage(Stage::ToolResultBudget, &mut h, &Store::new(&ws))
        .unwrap();
    let after = sandbox.all_files();
    assert_only_new_files_in_results_dir(&before, &after);

    let paths: Vec<String> = result_contents(&h[1])
        .iter()
        .map(|c| marker_path(c.as_ref().unwrap().as_str().unwrap()).to_string())
        .collect();
    for (i, (path, text)) in paths.iter().zip(&originals).enumerate() {
        let p = Path::new(path);
        assert!(p.is_relative(), "{path}");
        assert!(
            p.components().all(|c| matches!(c, Component::Normal(_))),
            "{path}"
        );
        assert_eq!(p.parent(), Some(Path::new(DIR)), "{path}");
        assert_eq!(
            std::fs::read(ws.join(p)).unwrap(),
            text.as_bytes(),
            "block {i}: {path} does not hold the block's text"
        );
    }
    // The names docs/pipeline.md gives.
    let expected = [
        hashed_name("../escape"),
        hashed_name("../../escape"),
        hashed_name("a/b"),
        hashed_name("/etc/passwd"),
        hashed_name("a\\b"),
        hashed_name(".."),
        hashed_name("."),
        format!("{DIR}/unknown.txt"),
        format!("{DIR}/unknown-2.txt"),
        hashed_name(&long),
        hashed_name(&long_wide),
        hashed_name("é解😀"),
        hashed_name("nul\u{0}byte"),
        format!("{DIR}/taken-2.txt"),
        format!("{DIR}/linked-2.txt"),
        format!("{DIR}/dup.txt"),
        format!("{DIR}/dup-2.txt"),
        format!("{DIR}/same.txt"),
        format!("{DIR}/same.txt"),
    ];
    assert_eq!(paths, expected);
    assert_eq!(hashed_name(&long).len(), DIR.len() + 1 + 64 + 1 + 8 + 4);
    // The second `same` reused the first file instead of writing another.
    let statuses: Vec<_> = report.files_written.iter().map(|f| f.status).collect();
    assert_eq!(statuses.last(), Some(&WriteStatus::Reused));
    assert_eq!(
        statuses
            .iter()
            .filter(|s| **s == WriteStatus::Created)
            .count(),
        ids.len() - 1
    );
}

#[test]
fn an_existing_file_with_the_same_text_is_reused_not_rewritten() {
    let sandbox = Sandbox::new();
    let ws = sandbox.ws();
    let text = "z".repeat(300);
    let existing = ws.join(DIR).join("t1.txt");
    std::fs::write(&existing, &text).unwrap();
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&existing).unwrap());
    let mut h = vec![
        user("go"),
        Message::user_blocks(vec![block::tool_result("t1", text.clone())]),
    ];
    let before = sandbox.all_files();
    let r = persist_everything()
        .run_stage(Stage::ToolResultBudget, &mut h, &Store::new(&ws))
        .unwrap();
    assert_eq!(r.files_written[0].status, WriteStatus::Reused);
    assert_eq!(r.files_written[0].path, format!("{DIR}/t1.txt"));
    assert_eq!(sandbox.all_files(), before);
    #[cfg(unix)]
    assert_eq!(
        std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&existing).unwrap()),
        inode
    );
}

#[test]
fn a_file_whose_bytes_only_decode_lossily_to_the_text_is_not_reused() {
    // Bytes that are not UTF-8 decode (lossily) to U+FFFD; a block whose text is U+FFFD
    // must not be pointed at that file, which does not hold exactly its text.
    let sandbox = Sandbox::new();
    let ws = sandbox.ws();
    let text = "\u{FFFD}".repeat(150);
    std::fs::write(ws.join(DIR).join("t1.txt"), vec![0xffu8; 150]).unwrap();
    let mut h = vec![
        user("go"),
        Message::user_blocks(vec![block::tool_result("t1", text.clone())]),
    ];
    let before = sandbox.all_files();
    persist_everything()
        .run_stage(Stage::ToolResultBudget, &mut h, &Store::new(&ws))
        .unwrap();
    assert_only_new_files_in_results_dir(&before, &sandbox.all_files());
    let content = result_contents(&h[1])[0].clone().unwrap();
    let path = marker_path(content.as_str().unwrap());
    assert_eq!(std::fs::read(ws.join(path)).unwrap(), text.as_bytes());
}

#[test]
fn racing_writers_for_one_name_never_clobber_each_other() {
    let sandbox = Sandbox::new();
    let ws = sandbox.ws();
    let store = Store::new(&ws);
    let texts: Vec<String> = (0..8).map(|i| format!("writer {i} ").repeat(50)).collect();
    let written: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = texts
            .iter()
            .map(|t| {
                let store = &store;
                s.spawn(move || store.persist_tool_result(Some("race"), t).unwrap().path)
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut distinct = written.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), texts.len(), "{written:?}");
    for (path, text) in written.iter().zip(&texts) {
        assert_eq!(&std::fs::read_to_string(ws.join(path)).unwrap(), text);
    }
    let files = sandbox.all_files();
    assert_eq!(files.len(), texts.len());
    assert!(files.keys().all(|p| {
        !p.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with(".tmp-")
    }));
}

#[test]
fn transcripts_and_results_leave_no_temp_files_and_never_overwrite() {
    let sandbox = Sandbox::new();
    let ws = sandbox.ws();
    let store = Store::new(&ws);
    std::fs::create_dir_all(ws.join(".transcripts")).unwrap();
    std::fs::write(ws.join(".transcripts/transcript_5.jsonl"), "old").unwrap();
    let before = sandbox.all_files();
    let a = store.write_transcript(5, "new\n").unwrap();
    let b = store.write_transcript(5, "newer\n").unwrap();
    assert_eq!(a.path, ".transcripts/transcript_5-2.jsonl");
    assert_eq!(b.path, ".transcripts/transcript_5-3.jsonl");
    let after = sandbox.all_files();
    for (p, bytes) in &before {
        assert_eq!(after.get(p), Some(bytes));
    }
    assert_eq!(after.len(), before.len() + 2);
    assert!(after.keys().all(|p| {
        !p.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with(".tmp-")
    }));
    assert_eq!(
        std::fs::read_to_string(ws.join(&b.path)).unwrap(),
        "newer\n"
    );
}

#[test]
fn list_content_markers_point_at_the_python_str_text() {
    let sandbox = Sandbox::new();
    let ws = sandbox.ws();
    let content: Value =
        json!([{"type": "text", "text": "it's ".repeat(40)}, {"type": "image", "n": 1.0}]);
    let mut h = vec![
        user("go"),
        Message::user_blocks(vec![result_block("../l", content.clone())]),
    ];
    persist_everything()
        .run_stage(Stage::ToolResultBudget, &mut h, &Store::new(&ws))
        .unwrap();
    let marker = result_contents(&h[1])[0].clone().unwrap();
    let path = marker_path(marker.as_str().unwrap()).to_string();
    assert_eq!(path, hashed_name("../l"));
    let expected = format!(
        "[{{'type': 'text', 'text': \"{}\"}}, {{'type': 'image', 'n': 1.0}}]",
        "it's ".repeat(40)
    );
    assert_eq!(std::fs::read_to_string(ws.join(&path)).unwrap(), expected);
}

#[test]
fn a_safe_id_that_looks_like_a_temp_name_is_still_listed() {
    // `.tmp-1` is a safe id (only [A-Za-z0-9._-]), so it names `.tmp-1.txt`;
    // the temp files of atomic writes never end in `.txt`, so nothing hides it.
    let sandbox = Sandbox::new();
    let store = Store::new(sandbox.ws());
    let f = store.persist_tool_result(Some(".tmp-1"), "kept").unwrap();
    assert_eq!(f.path, format!("{DIR}/.tmp-1.txt"));
    let listed: Vec<String> = store
        .list_tool_results()
        .into_iter()
        .map(|s| s.relative)
        .collect();
    assert_eq!(listed, vec![f.path]);
}
