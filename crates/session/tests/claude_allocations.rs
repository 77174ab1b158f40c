//! What reading a Claude Code session of many tiny lines costs per line (issues 36 and 39):
//! the allocations a numbers-only read makes (each one is also a free, and on a million
//! tiny lines the allocator was half the time). Counted by a global allocator of this test binary (its only test, so no other
//! test's allocations are counted); no timing.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// `lines` tiny lines as `scripts/gen_claude_session.py --tiny-lines` writes them: a prompt,
/// a one-word answer with its usage, and every tenth line a tool call and its result.
fn tiny_session(lines: usize) -> String {
    let mut out = String::new();
    let mut parent = "null".to_string();
    let mut i = 0;
    while i < lines {
        let uuid = format!("u{i}");
        let line = if i % 10 == 9 {
            format!(
                r#"{{"type":"assistant","uuid":"{uuid}","parentUuid":{parent},"sessionId":"s1","requestId":"r{i}","message":{{"id":"m{i}","role":"assistant","content":[{{"type":"tool_use","id":"t{i}","name":"Bash","input":{{"command":"ls"}}}}],"usage":{{"input_tokens":{},"output_tokens":1}}}}}}"#,
                1000 + i
            )
        } else if i % 10 == 0 && i > 0 {
            format!(
                r#"{{"type":"user","uuid":"{uuid}","parentUuid":{parent},"sessionId":"s1","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t{}","content":"ok"}}]}}}}"#,
                i - 1
            )
        } else if i % 2 == 1 {
            format!(
                r#"{{"type":"assistant","uuid":"{uuid}","parentUuid":{parent},"sessionId":"s1","requestId":"r{i}","message":{{"id":"m{i}","role":"assistant","content":[{{"type":"text","text":"ok"}}],"usage":{{"input_tokens":{},"output_tokens":1}}}}}}"#,
                1000 + i
            )
        } else {
            format!(
                r#"{{"type":"user","uuid":"{uuid}","parentUuid":{parent},"sessionId":"s1","message":{{"role":"user","content":"go {i}"}}}}"#
            )
        };
        out.push_str(&line);
        out.push('\n');
        parent = format!("\"{uuid}\"");
        i += 1;
    }
    out
}

#[test]
fn a_numbers_read_of_tiny_lines_allocates_and_holds_little_per_line() {
    const LINES: usize = 20_000;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tiny.jsonl");
    std::fs::File::create(&path)
        .unwrap()
        .write_all(tiny_session(LINES).as_bytes())
        .unwrap();
    let allocations_before = ALLOCATIONS.load(Ordering::Relaxed);
    let session = ctxlab_session::session::load_session_numbers(&path).unwrap();
    let allocations = ALLOCATIONS.load(Ordering::Relaxed) - allocations_before;
    assert_eq!(session.lines, LINES);
    assert_eq!(session.messages.len(), LINES);
    let per_line = allocations / LINES;
    eprintln!("{per_line} allocations per line");
    // 50 before the line uuids, the parents and the calls' keys were hashed instead of
    // copied, a content list kept as it came and each message made into its outline in
    // place (38 then), and the line's header and message read into typed fields instead of
    // JSON maps (`session::claude_line`: 21 then; 22 once an outline's kept tool blocks are
    // shrunk to size).
    assert!(per_line <= 24, "{per_line} allocations per line");
}
