//! The file tools: read, write, edit.

use super::*;

#[tokio::test]
async fn read_file_whole_limited_and_capped() {
    let f = fixture();
    let lines: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    fs::write(f.root().join("ten.txt"), &lines).unwrap();

    assert_eq!(
        f.call("read_file", json!({"path": "ten.txt"})).await,
        (lines.clone(), false)
    );
    assert_eq!(
        f.call("read_file", json!({"path": "ten.txt", "limit": 3}))
            .await,
        (
            "line 1\nline 2\nline 3\n[7 more lines not shown]".to_string(),
            false
        )
    );
    assert_eq!(
        f.call("read_file", json!({"path": "ten.txt", "limit": 9}))
            .await,
        (
            format!("{}[1 more line not shown]", &lines[..lines.len() - 8]),
            false
        )
    );
    assert_eq!(
        f.call("read_file", json!({"path": "ten.txt", "limit": 10}))
            .await,
        (lines.clone(), false)
    );

    fs::write(f.root().join("open.txt"), "a\nb\nc").unwrap();
    assert_eq!(
        f.call("read_file", json!({"path": "open.txt", "limit": 1}))
            .await,
        ("a\n[2 more lines not shown]".to_string(), false)
    );

    let limits = ToolLimits {
        output_cap_chars: 4,
        ..ToolLimits::default()
    };
    assert_eq!(
        f.call_with("read_file", json!({"path": "ten.txt"}), &limits)
            .await,
        (
            format!("line\n[output truncated: {} chars cut]", lines.len() - 4),
            false
        )
    );
}

#[tokio::test]
async fn read_file_replaces_invalid_utf8_and_reports_missing_files() {
    let f = fixture();
    fs::write(f.root().join("bin"), b"x\xffy").unwrap();
    assert_eq!(
        f.call("read_file", json!({"path": "bin"})).await,
        ("x\u{FFFD}y".to_string(), false)
    );
    let (content, is_error) = f.call("read_file", json!({"path": "nope.txt"})).await;
    assert!(is_error);
    assert!(content.starts_with("Cannot read nope.txt: "), "{content}");
    assert!(!content.contains('\n'));
}

#[tokio::test]
async fn write_file_creates_parents_and_reports_bytes() {
    let f = fixture();
    let r = f
        .call(
            "write_file",
            json!({"path": "a/b/c.txt", "content": "héllo"}),
        )
        .await;
    assert_eq!(r, ("Wrote 6 bytes to a/b/c.txt".to_string(), false));
    assert_eq!(
        fs::read_to_string(f.root().join("a/b/c.txt")).unwrap(),
        "héllo"
    );
    // Overwrite leaves no temp files behind.
    f.call("write_file", json!({"path": "a/b/c.txt", "content": "new"}))
        .await;
    let names: Vec<_> = fs::read_dir(f.root().join("a/b"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["c.txt"]);
    assert_eq!(
        fs::read_to_string(f.root().join("a/b/c.txt")).unwrap(),
        "new"
    );
}

#[tokio::test]
async fn edit_file_once_missing_and_multiple() {
    let f = fixture();
    let path = f.root().join("e.txt");
    fs::write(&path, "alpha beta beta\n").unwrap();

    let (content, is_error) = f
        .call(
            "edit_file",
            json!({"path": "e.txt", "old": "alpha", "new": "gamma"}),
        )
        .await;
    assert!(!is_error, "{content}");
    assert_eq!(fs::read_to_string(&path).unwrap(), "gamma beta beta\n");

    let (content, is_error) = f
        .call(
            "edit_file",
            json!({"path": "e.txt", "old": "delta", "new": "x"}),
        )
        .await;
    assert!(is_error);
    assert_eq!(content, "Text to replace was not found in e.txt");

    let (content, is_error) = f
        .call(
            "edit_file",
            json!({"path": "e.txt", "old": "beta", "new": "x"}),
        )
        .await;
    assert!(is_error);
    assert!(content.contains("occurs 2 times"), "{content}");
    assert_eq!(fs::read_to_string(&path).unwrap(), "gamma beta beta\n");
}

/// A 20 GiB sparse file (no disk space used): `limit: 1` took 42 s reading it all to count
/// its lines. Now only what is returned is read, and the note gives the size.
#[tokio::test]
async fn read_file_reads_only_what_it_returns_from_a_huge_file() {
    let f = fixture();
    let size = 20u64 << 30;
    let path = f.root().join("huge.bin");
    let file = fs::File::create(&path).unwrap();
    file.set_len(size).unwrap();
    fs::write(f.root().join("lines.txt"), "first\nsecond\n").unwrap();
    let mut big = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    std::io::Write::write_all(&mut big, b"one\ntwo\n").unwrap();
    drop(big);

    let limits = ToolLimits {
        output_cap_chars: 100,
        ..ToolLimits::default()
    };
    let (fixture, limits) = (&f, &limits);
    let read = |input: Value| async move {
        let call = fixture.call_with("read_file", input, limits);
        tokio::time::timeout(Duration::from_secs(60), call)
            .await
            .expect("read_file answers without reading 20 GiB")
    };
    assert_eq!(
        read(json!({"path": "huge.bin", "limit": 1})).await,
        (
            format!("one\n[more lines not shown; the file is {size} bytes]"),
            false
        )
    );
    // Without a limit the cap ends the reading: 100 chars, then the note.
    let (content, is_error) = read(json!({"path": "huge.bin"})).await;
    assert!(!is_error);
    let expected_text = format!("one\ntwo\n{}", "\0".repeat(92));
    assert_eq!(
        content,
        format!(
            "{expected_text}\n[output truncated: the file is {size} bytes; the rest was not read]"
        )
    );
    // A small file is still counted exactly.
    assert_eq!(
        read(json!({"path": "lines.txt", "limit": 1})).await,
        ("first\n[1 more line not shown]".to_string(), false)
    );
}
