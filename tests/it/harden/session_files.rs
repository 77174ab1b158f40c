//! Issue 19 §2, §3, §4 and §7 (write_file): session files are only read when regular and
//! within the caps, a FIFO never hangs a listing, an export never writes the file it reads
//! (nor a FIFO, nor through a link to it) and a failed `write_file` leaves no folders.

use std::ffi::CString;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::files::session_fixture;
use crate::common::scratch::Scratch;
use crate::common::stub_server::{after_tools, start, text_answer};

fn mkfifo(path: &Path) {
    let c = CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid path string; mkfifo only creates the node.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o644) },
        0,
        "mkfifo {path:?}"
    );
}

/// Runs `cmd`, failing the test if it has not ended within a minute (a hang).
fn output_within(mut cmd: Command, what: &str) -> Output {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(cmd.output().unwrap());
    });
    rx.recv_timeout(Duration::from_secs(60))
        .unwrap_or_else(|_| panic!("{what} hung"))
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn devices_and_fifos_are_refused_at_once_with_a_clear_error() {
    let s = Scratch::new();
    let fifo = s.path().join("live.jsonl");
    mkfifo(&fifo);
    for (args, file, says) in [
        (
            &["inspect"][..],
            Path::new("/dev/zero"),
            "a character device",
        ),
        (
            &["inspect", "--json"][..],
            Path::new("/dev/zero"),
            "a character device",
        ),
        (&["inspect"][..], fifo.as_path(), "a FIFO"),
        (&["open"][..], Path::new("/dev/zero"), "a character device"),
        (&["open"][..], fifo.as_path(), "a FIFO"),
    ] {
        let mut cmd = s.ctxlab();
        cmd.args(args).arg(file);
        let out = output_within(cmd, &format!("{args:?} {file:?}"));
        assert!(!out.status.success(), "{args:?} {file:?}");
        assert!(
            stderr(&out).contains(says) && stderr(&out).contains("only regular files"),
            "{args:?} {file:?}: {}",
            stderr(&out)
        );
    }
    let mut replay = s.ctxlab();
    replay
        .args(["replay"])
        .arg(&fifo)
        .arg("--workspace")
        .arg(s.ws());
    let out = output_within(replay, "replay of a FIFO");
    assert!(stderr(&out).contains("a FIFO"), "{}", stderr(&out));
}

#[test]
fn a_fifo_in_a_project_folder_is_skipped_and_the_rest_listed() {
    let s = Scratch::new();
    let project = s.path().join("projects/-home-dev-parser");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::copy(
        session_fixture("claude_code.jsonl"),
        project.join("good.jsonl"),
    )
    .unwrap();
    mkfifo(&project.join("live.jsonl"));
    let mut cmd = s.ctxlab();
    cmd.arg("sessions").arg(s.path().join("projects"));
    let out = output_within(cmd, "ctxlab sessions");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout.contains("good.jsonl"), "{stdout}");
    assert!(
        stderr(&out).contains("live.jsonl") && stderr(&out).contains("skipped: a FIFO"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_session_size_cap_is_a_setting_with_a_clear_error() {
    let s = Scratch::new();
    let file = session_fixture("claude_code.jsonl");
    let out = s
        .ctxlab()
        .env("CTXLAB_MAX_SESSION_BYTES", "100")
        .arg("inspect")
        .arg(&file)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("over the cap of 100 bytes"),
        "{}",
        stderr(&out)
    );
    s.write_config("max_session_bytes = 200\n");
    let out = s.ctxlab().arg("inspect").arg(&file).output().unwrap();
    assert!(
        stderr(&out).contains("over the cap of 200 bytes"),
        "{}",
        stderr(&out)
    );
    s.write_config("max_session_bytes = 100000000\n");
    let out = s.ctxlab().arg("inspect").arg(&file).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}

fn export(s: &Scratch, session: &Path, out: &Path) -> Output {
    let mut cmd = s.ctxlab();
    cmd.arg("export").arg(session).arg("--out").arg(out);
    output_within(cmd, "ctxlab export")
}

#[test]
fn export_never_writes_its_input_a_link_to_it_or_a_fifo() {
    let s = Scratch::new();
    let session = s.path().join("s.jsonl");
    std::fs::copy(session_fixture("claude_code.jsonl"), &session).unwrap();
    let before = std::fs::read(&session).unwrap();
    let link = s.path().join("link.html");
    std::os::unix::fs::symlink(&session, &link).unwrap();
    let fifo = s.path().join("pipe.html");
    mkfifo(&fifo);
    for (out, says) in [
        (session.as_path(), "the file the export reads"),
        (link.as_path(), "the file the export reads"),
        (Path::new("/dev/null"), "a device"),
        (fifo.as_path(), "a FIFO"),
    ] {
        let o = export(&s, &session, out);
        assert!(!o.status.success(), "{out:?}");
        assert!(stderr(&o).contains(says), "{out:?}: {}", stderr(&o));
    }
    assert_eq!(std::fs::read(&session).unwrap(), before);
    // An ordinary target is written whole, and nothing else is left in the folder.
    let page = s.path().join("page.html");
    std::fs::write(&page, "old").unwrap();
    let o = export(&s, &session, &page);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read_to_string(&page).unwrap().contains("<html"));
    let mut names: Vec<String> = std::fs::read_dir(s.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["home", "link.html", "page.html", "pipe.html", "s.jsonl"]
    );
}

/// An answer calling `write_file` once.
fn write_file_answer(path: &str, content: &str) -> String {
    let input = json!({"path": path, "content": content}).to_string();
    let events = [
        json!({"type": "message_start", "message": {"id": "m", "type": "message",
            "role": "assistant", "content": [], "model": "stub", "stop_reason": null,
            "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use",
            "id": "toolu_w1", "name": "write_file", "input": {}}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": input}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null},
            "usage": {"output_tokens": 5}}),
        json!({"type": "message_stop"}),
    ];
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect()
}

#[test]
fn a_failed_write_file_leaves_no_folders_it_made() {
    use std::os::unix::process::CommandExt;
    let s = Scratch::new();
    std::fs::create_dir_all(s.ws()).unwrap();
    let big = "x".repeat(200_000);
    let stub = start(Arc::new(move |body: &Value| {
        if after_tools(body) {
            text_answer("done")
        } else {
            write_file_answer("new/deeper/still/f.txt", &big)
        }
    }));
    let mut cmd = s.ctxlab_anthropic(&stub.url, "sk-ant-stub");
    cmd.args(["run", "--json", "--workspace"])
        .arg(s.ws())
        .arg("write it");
    // A full disk, as the write sees it: files cannot grow past 64 KiB (EFBIG, with
    // SIGXFSZ ignored so the write fails instead of killing the process).
    // SAFETY: setrlimit and signal are async-signal-safe; nothing else runs here.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 64 * 1024,
                rlim_max: 64 * 1024,
            };
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = output_within(cmd, "ctxlab run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("Cannot write"),
        "{stdout}\n{}",
        stderr(&out)
    );
    assert!(
        !s.ws().join("new").exists(),
        "the folders made for the write are still there"
    );
}
