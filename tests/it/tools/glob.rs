//! glob.

use super::*;

fn touch(root: &Path, rel: &str) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, "").unwrap();
}

#[tokio::test]
async fn glob_matches_sorts_and_skips() {
    let f = fixture();
    for rel in [
        "src/main.rs",
        "src/a/b.rs",
        "src/a/c.txt",
        "x.log",
        "logs/y.log",
        "target/debug/z.rs",
        ".git/hooks/h.rs",
        ".task_outputs/t.rs",
        ".transcripts/u.rs",
        "B.rs",
        "a1.rs",
        "a22.rs",
    ] {
        touch(f.root(), rel);
    }
    let glob = |pattern: &'static str| f.call("glob", json!({ "pattern": pattern }));
    assert_eq!(
        glob("src/**/*.rs").await,
        ("src/a/b.rs\nsrc/main.rs".to_string(), false)
    );
    assert_eq!(glob("*.log").await, ("x.log".to_string(), false));
    assert_eq!(
        glob("**/*.log").await,
        ("logs/y.log\nx.log".to_string(), false)
    );
    assert_eq!(
        glob("**/*.rs").await,
        (
            "B.rs\na1.rs\na22.rs\nsrc/a/b.rs\nsrc/main.rs".to_string(),
            false
        )
    );
    assert_eq!(glob("a?.rs").await, ("a1.rs".to_string(), false));
    assert_eq!(
        glob("*.md").await,
        ("No files match *.md".to_string(), false)
    );
}

#[tokio::test]
async fn glob_result_is_capped_with_a_note() {
    let f = fixture();
    for i in 0..15 {
        touch(f.root(), &format!("f{i:02}.txt"));
    }
    let limits = ToolLimits {
        glob_cap: 10,
        ..ToolLimits::default()
    };
    let (content, is_error) = f
        .call_with("glob", json!({"pattern": "*.txt"}), &limits)
        .await;
    assert!(!is_error);
    let expected: Vec<String> = (0..10).map(|i| format!("f{i:02}.txt")).collect();
    assert_eq!(
        content,
        format!(
            "{}\n[5 more matches not shown; narrow the pattern]",
            expected.join("\n")
        )
    );
}
