//! Path confinement: every way out of the workspace is refused.

use super::*;

#[tokio::test]
async fn dotdot_escape_is_refused_and_nothing_is_written() {
    let f = fixture();
    let r = f
        .call(
            "write_file",
            json!({"path": "../outside/x.txt", "content": "pwned"}),
        )
        .await;
    assert_escape(&r, "../outside/x.txt");
    assert!(!f.outside.join("x.txt").exists());

    let r = f
        .call(
            "write_file",
            json!({"path": "a/../../y.txt", "content": "x"}),
        )
        .await;
    assert_escape(&r, "a/../../y.txt");
    assert!(!f.root().parent().unwrap().join("y.txt").exists());
    assert!(!f.root().join("a").exists(), "no dirs created on refusal");

    let r = f.call("read_file", json!({"path": "../outside"})).await;
    assert_escape(&r, "../outside");

    // `..` that stays inside is fine.
    let r = f
        .call(
            "write_file",
            json!({"path": "a/../in.txt", "content": "ok"}),
        )
        .await;
    assert!(!r.1, "{r:?}");
    assert_eq!(fs::read_to_string(f.root().join("in.txt")).unwrap(), "ok");
}

#[tokio::test]
async fn absolute_path_outside_is_refused_inside_is_allowed() {
    let f = fixture();
    let target = f.outside.join("abs.txt");
    let target_str = target.to_str().unwrap();
    let r = f
        .call("write_file", json!({"path": target_str, "content": "x"}))
        .await;
    assert_escape(&r, target_str);
    assert!(!target.exists());

    fs::write(&target, "secret").unwrap();
    let r = f.call("read_file", json!({"path": target_str})).await;
    assert_escape(&r, target_str);
    let r = f
        .call(
            "edit_file",
            json!({"path": target_str, "old": "secret", "new": "x"}),
        )
        .await;
    assert_escape(&r, target_str);
    assert_eq!(fs::read_to_string(&target).unwrap(), "secret");

    let inside = f.root().join("abs_in.txt");
    let r = f
        .call(
            "write_file",
            json!({"path": inside.to_str().unwrap(), "content": "ok"}),
        )
        .await;
    assert!(!r.1, "{r:?}");
    assert_eq!(fs::read_to_string(&inside).unwrap(), "ok");
}

#[tokio::test]
async fn symlinked_file_pointing_outside_is_refused() {
    let f = fixture();
    let secret = f.outside.join("secret.txt");
    fs::write(&secret, "secret").unwrap();
    symlink(&secret, f.root().join("link.txt")).unwrap();

    assert_escape(
        &f.call("read_file", json!({"path": "link.txt"})).await,
        "link.txt",
    );
    assert_escape(
        &f.call("write_file", json!({"path": "link.txt", "content": "x"}))
            .await,
        "link.txt",
    );
    assert_escape(
        &f.call(
            "edit_file",
            json!({"path": "link.txt", "old": "secret", "new": "x"}),
        )
        .await,
        "link.txt",
    );
    assert_eq!(fs::read_to_string(&secret).unwrap(), "secret");
}

#[tokio::test]
async fn symlinked_dir_pointing_outside_is_refused_even_for_new_files() {
    let f = fixture();
    symlink(&f.outside, f.root().join("ldir")).unwrap();

    for path in ["ldir/new.txt", "ldir/sub/deeper/new.txt"] {
        let r = f
            .call("write_file", json!({"path": path, "content": "x"}))
            .await;
        assert_escape(&r, path);
    }
    assert_eq!(
        fs::read_dir(&f.outside).unwrap().count(),
        0,
        "nothing written outside"
    );
    fs::write(f.outside.join("there.txt"), "x").unwrap();
    assert_escape(
        &f.call("read_file", json!({"path": "ldir/there.txt"})).await,
        "ldir/there.txt",
    );
}

#[tokio::test]
async fn dangling_symlink_to_outside_is_refused() {
    let f = fixture();
    let target = f.outside.join("not_yet.txt");
    symlink(&target, f.root().join("dangling")).unwrap();
    let r = f
        .call("write_file", json!({"path": "dangling", "content": "x"}))
        .await;
    assert_escape(&r, "dangling");
    assert!(!target.exists());
}

#[tokio::test]
async fn symlink_inside_the_workspace_is_followed() {
    let f = fixture();
    fs::create_dir(f.root().join("real")).unwrap();
    fs::write(f.root().join("real/a.txt"), "hello").unwrap();
    symlink(f.root().join("real"), f.root().join("alias")).unwrap();
    let r = f.call("read_file", json!({"path": "alias/a.txt"})).await;
    assert_eq!(r, ("hello".to_string(), false));
}

#[tokio::test]
async fn glob_pattern_leaving_the_root_is_refused() {
    let f = fixture();
    assert_escape(
        &f.call("glob", json!({"pattern": "../outside/*"})).await,
        "../outside/*",
    );
    assert_escape(
        &f.call("glob", json!({"pattern": "/etc/*"})).await,
        "/etc/*",
    );
}
