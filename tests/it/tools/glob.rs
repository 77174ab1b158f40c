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

/// `**/a` repeated `stars` times, then `/**/b`.
fn many_stars(stars: usize) -> String {
    format!("{}/**/b", vec!["**/a"; stars].join("/"))
}

/// A file `depth` folders named `a` deep, named `c`: every `**/a` can take any of the `a`s,
/// and none of the ways ends in `b`.
fn deep_tree(root: &Path, depth: usize) {
    let rel = format!("{}/c", vec!["a"; depth].join("/"));
    touch(root, &rel);
}

/// A backtracking matcher tried every way to share the folders among the `**`s: 7.9 s at
/// 12 stars and depth 30, and no end at 16 and 40. The set-of-positions matcher is linear.
#[tokio::test]
async fn many_double_stars_over_a_deep_tree_finish() {
    let f = fixture();
    deep_tree(f.root(), 40);
    touch(f.root(), &format!("{}/b", vec!["a"; 20].join("/")));
    let call = f.call("glob", json!({ "pattern": many_stars(16) }));
    let (content, is_error) = tokio::time::timeout(Duration::from_secs(60), call)
        .await
        .expect("glob finishes");
    assert!(!is_error, "{content}");
    assert_eq!(content, format!("{}/b", vec!["a"; 20].join("/")));
}

#[tokio::test]
async fn the_walk_stops_after_its_entry_limit_and_says_so() {
    let f = fixture();
    for i in 0..30 {
        touch(f.root(), &format!("d{i:02}/f.txt"));
    }
    let limits = ToolLimits {
        glob_max_entries: 10,
        ..ToolLimits::default()
    };
    let (content, is_error) = f
        .call_with("glob", json!({"pattern": "**/*.txt"}), &limits)
        .await;
    assert!(!is_error);
    let (found, note) = content.rsplit_once('\n').unwrap();
    assert_eq!(
        note,
        "[search stopped after 10 entries; narrow the pattern]"
    );
    // Ten entries are at most five folders and their files.
    assert!(found.lines().count() <= 5, "{found}");
}

/// CPU time (user + system) of this process's threads whose name is `name`, from
/// /proc/self/task/*/stat.
#[cfg(target_os = "linux")]
fn cpu_of_threads_named(name: &str) -> Duration {
    // SAFETY: sysconf only reads a constant.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    let mut total = 0u64;
    for task in fs::read_dir("/proc/self/task").unwrap().flatten() {
        let Ok(stat) = fs::read_to_string(task.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ...`: the name is between the first `(` and the last `)`.
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        if &stat[open + 1..close] != name {
            continue;
        }
        let fields: Vec<&str> = stat[close + 2..].split(' ').collect();
        // utime and stime are fields 14 and 15 of the line, 12 and 13 after `state`.
        total += fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    }
    Duration::from_millis(total * 1000 / ticks)
}

/// After a cancel the glob's thread goes back to idle: the runtime's own threads (the
/// blocking pool's included) carry a name no other test uses, so their CPU time is the
/// glob's alone. Before the fix the match of one path ran on for minutes after the cancel
/// (measured here: as much CPU as the spinning thread).
#[cfg(target_os = "linux")]
#[test]
fn a_cancelled_glob_leaves_the_cpu_idle() {
    const NAME: &str = "glob-cpu-probe";
    const SPINNER: &str = "cpu-reference";
    let f = fixture();
    deep_tree(f.root(), 40);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name(NAME)
        .enable_all()
        .build()
        .unwrap();
    let cancel = CancellationToken::new();
    let outcome = runtime.block_on(async {
        let canceller = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            canceller.cancel();
        });
        let input = json!({ "pattern": many_stars(16) });
        run_tool(&f.ws, "glob", &input, &ToolLimits::default(), &cancel).await
    });
    assert!(
        matches!(&outcome, ToolOutcome::Output { is_error: true, content } if content == "Cancelled by user")
            || matches!(
                &outcome,
                ToolOutcome::Output {
                    is_error: false,
                    ..
                }
            ),
        "{outcome:?}"
    );
    // Give a stopping walk a moment, then watch the threads for a second, next to a thread
    // that spins all along: on a loaded machine a busy thread gets a share of a core, not a
    // whole one, and the spinning one gets about the same share.
    std::thread::sleep(Duration::from_millis(300));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let spinner = {
        let stop = stop.clone();
        std::thread::Builder::new()
            .name(SPINNER.into())
            .spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
            .unwrap()
    };
    let (before, spun_before) = (cpu_of_threads_named(NAME), cpu_of_threads_named(SPINNER));
    std::thread::sleep(Duration::from_millis(1000));
    let used = cpu_of_threads_named(NAME).saturating_sub(before);
    let spun = cpu_of_threads_named(SPINNER).saturating_sub(spun_before);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    spinner.join().unwrap();
    // A glob still matching would use about what the spinner used; idle threads use none.
    assert!(
        spun > Duration::ZERO && used <= spun / 4,
        "CPU of the glob's runtime after the cancel: {used:?}; a busy thread's: {spun:?}"
    );
    drop(runtime);
}
