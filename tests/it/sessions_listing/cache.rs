//! The listing cache (issue 22, "Listing speed"): a second listing takes each file's row from
//! `<data dir>/listing-cache.json` by path, size and modification time instead of reading
//! the file; a changed file is read again; a corrupt cache is rebuilt, never fatal; the
//! browser's first rows come with their counts from it.

use std::path::Path;
use std::time::{Duration, SystemTime};

use crate::common::cli::homeless;
use ctxlab::tui::sessions::{BrowserRow, SessionDone, SessionWork};

/// A Claude Code session of `calls` one-call turns (written from the format).
fn session_text(calls: usize) -> String {
    let mut lines = Vec::new();
    let mut parent = serde_json::Value::Null;
    for i in 0..calls {
        for (kind, uuid) in [("user", format!("u{i}")), ("assistant", format!("a{i}"))] {
            let message = if kind == "user" {
                serde_json::json!({"role": "user", "content": "go on"})
            } else {
                serde_json::json!({"id": format!("msg{i}"), "role": "assistant",
                    "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": "ok"}],
                    "usage": {"input_tokens": 100 + i, "output_tokens": 2}})
            };
            lines.push(
                serde_json::json!({"parentUuid": parent, "isSidechain": false,
                "sessionId": "s1", "cwd": "/home/dev/cached", "type": kind, "uuid": uuid,
                "timestamp": "2025-04-01T10:00:00.000Z", "message": message})
                .to_string(),
            );
            parent = uuid.into();
        }
    }
    lines.join("\n") + "\n"
}

fn calls_listed(data: &Path, folder: &Path) -> u64 {
    let out = homeless()
        .env("CTXLAB_DATA_DIR", data)
        .args(["sessions", "--json"])
        .arg(folder)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v[0]["calls"].as_u64().unwrap()
}

fn set_mtime(path: &Path, at: SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(at)
        .unwrap();
}

#[test]
fn a_second_listing_takes_rows_from_the_cache_until_a_file_changes() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let folder = dir.path().join("-home-dev-cached");
    std::fs::create_dir_all(&folder).unwrap();
    let file = folder.join("s1.jsonl");
    // Two texts of one length: 3 calls, and 3 calls with one assistant line turned into a
    // user line (2 calls).
    let three = session_text(3);
    let two = three.replacen(r#""type":"assistant""#, r#""type":"user"     "#, 1);
    assert_eq!(three.len(), two.len());
    std::fs::write(&file, &three).unwrap();
    let at = SystemTime::UNIX_EPOCH + Duration::from_secs(1_750_000_000);
    set_mtime(&file, at);
    assert_eq!(calls_listed(&data, &folder), 3);
    let cache = data.join("listing-cache.json");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&cache).unwrap().permissions().mode() & 0o777,
        0o600
    );
    // Same path, size and modification time: the cached row, the file is not read.
    std::fs::write(&file, &two).unwrap();
    set_mtime(&file, at);
    assert_eq!(calls_listed(&data, &folder), 3, "from the cache");
    // A new modification time: read again.
    set_mtime(&file, at + Duration::from_secs(1));
    assert_eq!(calls_listed(&data, &folder), 2, "the changed file is read");
    // A corrupt cache is ignored and rebuilt.
    std::fs::write(&cache, "{\"format\": \"ctxlab-listing-cache\", \"entr").unwrap();
    assert_eq!(calls_listed(&data, &folder), 2);
    let text = std::fs::read_to_string(&cache).unwrap();
    assert!(
        serde_json::from_str::<serde_json::Value>(&text).is_ok(),
        "rebuilt: {text}"
    );
    // A data dir that cannot be written is no error either.
    assert_eq!(calls_listed(&dir.path().join("file/under"), &folder), 2);
}

#[test]
fn the_browser_shows_cached_rows_with_their_counts_at_once_and_caches_what_it_counts() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let folder = dir.path().join("-home-dev-cached");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("s1.jsonl"), session_text(4)).unwrap();
    std::fs::write(folder.join("s2.jsonl"), session_text(2)).unwrap();
    let discover = || SessionWork::Discover {
        paths: vec![folder.clone()],
        data_dir: Some(data.clone()),
    };
    let counts = |rows: &[BrowserRow]| -> Vec<Option<usize>> {
        rows.iter()
            .filter_map(|r| match r {
                BrowserRow::Session(s) => {
                    Some(s.stats().and_then(|s| s.as_ref().ok()).map(|n| n.calls))
                }
                _ => None,
            })
            .collect()
    };
    // Cold: listed without counts; the counting job fills them in and caches them.
    let SessionDone::Discovered { rows, .. } = discover().run() else {
        panic!("a listing")
    };
    assert_eq!(counts(&rows), [None, None]);
    let files = ctxlab::tui::sessions::uncounted(&rows);
    let SessionDone::Stats { results, rest, .. } = (SessionWork::Stats {
        listing: 1,
        files,
        data_dir: Some(data.clone()),
    })
    .run() else {
        panic!("counts")
    };
    assert!(rest.is_empty());
    assert_eq!(results.len(), 2);
    // Warm: the listing itself carries the counts, nothing is left to count.
    let SessionDone::Discovered { rows, .. } = discover().run() else {
        panic!("a listing")
    };
    let mut got = counts(&rows);
    got.sort();
    assert_eq!(got, [Some(2), Some(4)]);
    assert!(ctxlab::tui::sessions::uncounted(&rows).is_empty());
    // The CLI reads the same cache.
    assert!(data.join("listing-cache.json").is_file());
}
