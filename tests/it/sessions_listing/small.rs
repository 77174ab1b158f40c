//! Issue 22's small points on the command line's listing side: `inspect` of a folder is bad
//! input (exit 2, saying what to run instead), counts read "1 call", one wording for a
//! session without a project, and one order (newest first) in the CLI and the browser.

use crate::common::cli::homeless as ctxlab;

#[test]
fn inspect_of_a_folder_is_bad_input_with_exit_2_and_says_what_to_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = ctxlab().arg("inspect").arg(dir.path()).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("it is a folder"), "{err}");
    assert!(err.contains("ctxlab sessions"), "{err}");
    // A missing file was already exit 2: the same class of mistake.
    let out = ctxlab()
        .arg("inspect")
        .arg(dir.path().join("missing.jsonl"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
