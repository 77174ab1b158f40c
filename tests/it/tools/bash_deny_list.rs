//! bash: the deny-list.

use super::*;

#[tokio::test]
async fn deny_list_refuses_without_running() {
    let f = fixture();
    for command in [
        "sudo touch ran",
        "touch ran; shutdown now",
        "touch ran && reboot",
        "mkfs.ext4 img; touch ran",
        "dd if=/dev/zero of=img count=1; touch ran",
        "touch ran; rm -rf /",
        "touch ran; rm -fr /",
        "touch ran; rm -rf /*",
    ] {
        let (content, is_error) = f.bash(command).await;
        assert!(is_error, "{command}");
        assert!(
            content.starts_with("Permission denied: "),
            "{command}: {content}"
        );
        assert!(!content.contains('\n'));
        assert!(!f.root().join("ran").exists(), "{command} ran");
    }
}

#[tokio::test]
async fn deny_list_allows_look_alikes() {
    let f = fixture();
    let r = f
        .bash("echo solved > sudoku.txt && cat sudoku.txt && mkdir -p d && rm -rf d && echo ok")
        .await;
    assert_eq!(r, ("solved\nok\n".to_string(), false));
    assert!(f.root().join("sudoku.txt").exists());
}
