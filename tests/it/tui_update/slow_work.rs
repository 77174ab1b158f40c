//! Slow work is asked for, never done, by `update`: loads, counts and replays are
//! `Effect::Work` for the loop to run.

use super::*;

fn transcript_row(relative: &str, bytes: u64) -> TranscriptFile {
    TranscriptFile {
        relative: relative.into(),
        bytes,
        age_secs: Some(5),
        messages: None,
    }
}

/// The transcript named in the list does not exist (deleted after the listing): `update`
/// still only asks for it and shows that it is loading. Had it read the file, it would
/// have found nothing and said "cannot read" instead.
#[test]
fn opening_a_transcript_returns_a_load_effect_and_reads_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let mut a = App::new(
        root.clone(),
        "test".into(),
        PipelineConfig::default(),
        false,
    );
    a.update(Msg::Resize(80, 24));
    let rel = ".transcripts/transcript_1700000000.jsonl";
    crate::support::files_listed(&mut a, vec![], vec![transcript_row(rel, 12_582_912)]);
    a.update(key(KeyCode::Esc));
    assert_eq!(
        a.update(key(KeyCode::Char('4'))),
        vec![Effect::Work(Work::ListFiles { root: root.clone() })],
        "showing a browser asks for a fresh listing"
    );
    let fx = a.update(key(KeyCode::Enter));
    let [
        Effect::Work(Work::LoadTranscript {
            id,
            root: r,
            relative,
        }),
    ] = &fx[..]
    else {
        panic!("expected one LoadTranscript, got {fx:?}");
    };
    assert_eq!((r, relative.as_str()), (&root, rel));
    let loading = a.loading().cloned().expect("the app shows it is loading");
    assert_eq!(loading.id, *id);
    assert_eq!(
        loading.what,
        LoadKind::Transcript {
            relative: rel.into(),
            bytes: 12_582_912,
            then_replay: false
        }
    );
    assert!(a.transcripts().open().is_none());
    assert!(
        a.notice_text().is_none(),
        "nothing was read, so nothing failed"
    );
    assert!(a.animating(), "the spinner turns while it loads");
    let screen = screen(&mut a, 80, 24);
    assert!(
        screen.contains("loading transcript_1700000000.jsonl (12.0 MB)"),
        "{screen}"
    );
    // The job, run as the loop would, finds no file: that is reported, and the wait ends.
    let done = Work::LoadTranscript {
        id: *id,
        root: root.clone(),
        relative: relative.clone(),
    }
    .run();
    assert!(a.update(Msg::Done(done)).is_empty());
    assert!(a.loading().is_none());
    assert!(a.notice_text().unwrap().contains("cannot read"));
}

#[test]
fn a_superseded_load_is_dropped_and_r_replays_once_open() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let t1 = ".transcripts/transcript_1.jsonl";
    let t2 = ".transcripts/transcript_2.jsonl";
    std::fs::create_dir_all(root.join(".transcripts")).unwrap();
    std::fs::write(root.join(t1), "{\"role\":\"user\",\"content\":\"one\"}\n").unwrap();
    let two = [
        r#"{"role":"user","content":"two"}"#,
        r#"{"role":"assistant","content":[{"type":"text","text":"ok"}]}"#,
    ];
    std::fs::write(root.join(t2), two.join("\n")).unwrap();
    let mut a = App::new(
        root.clone(),
        "test".into(),
        PipelineConfig::default(),
        false,
    );
    a.update(Msg::Resize(120, 40));
    crate::support::files_listed(
        &mut a,
        vec![],
        vec![transcript_row(t1, 31), transcript_row(t2, 90)],
    );
    crate::support::focus(&mut a, '4');
    let first = a.update(key(KeyCode::Enter));
    a.update(key(KeyCode::Char('j')));
    let second = a.update(key(KeyCode::Char('r')));
    // The first load finishes late: its result no longer matters.
    for e in first {
        let Effect::Work(w) = e else { panic!() };
        assert!(a.update(Msg::Done(w.run())).is_empty());
    }
    assert!(a.transcripts().open().is_none());
    assert!(a.loading().is_some(), "still waiting for the second");
    // The second opens, then asks for its replay (not run yet: no replay shown).
    let [Effect::Work(w)] = &second[..] else {
        panic!("{second:?}")
    };
    let after = a.update(Msg::Done(w.clone().run()));
    assert_eq!(a.transcripts().open().unwrap().relative(), t2);
    assert_eq!(a.transcripts().open().unwrap().rows().len(), 2);
    assert!(a.transcripts().open().unwrap().replay().is_none());
    assert!(
        matches!(&after[..], [Effect::Work(Work::Replay { rows, .. })] if rows.len() == 2),
        "{after:?}"
    );
    assert!(matches!(
        a.loading().as_ref().map(|l| &l.what),
        Some(LoadKind::Replay { messages: 2, .. })
    ));
    crate::support::settle(&mut a, after);
    assert_eq!(a.transcripts().open().unwrap().replay().unwrap().turns, 1);
    assert!(a.loading().is_none());
}

#[test]
fn opening_an_output_is_a_job_too() {
    let mut a = app();
    crate::support::files_listed(
        &mut a,
        vec![OutputFile {
            relative: ".task_outputs/tool-results/toolu_1.txt".into(),
            bytes: 2_048,
            age_secs: None,
        }],
        vec![],
    );
    crate::support::focus(&mut a, '3');
    let fx = a.update(key(KeyCode::Enter));
    assert!(
        matches!(&fx[..], [Effect::Work(Work::ReadOutput { relative, .. })]
            if relative == ".task_outputs/tool-results/toolu_1.txt"),
        "{fx:?}"
    );
    assert!(
        a.top_layer().is_none(),
        "the viewer opens when the text arrives"
    );
    // Esc stops waiting; a late result then opens nothing.
    a.update(key(KeyCode::Esc));
    assert!(a.loading().is_none());
    let [Effect::Work(w)] = &fx[..] else { panic!() };
    a.update(Msg::Done(w.clone().run()));
    assert!(a.top_layer().is_none());
}

#[test]
fn listings_keep_known_counts_and_ask_for_the_rest_once() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let tdir = root.join(".transcripts");
    std::fs::create_dir_all(&tdir).unwrap();
    std::fs::write(tdir.join("transcript_1.jsonl"), "{}\n{}\n{}\n").unwrap();
    let mut a = App::new(
        root.clone(),
        "test".into(),
        PipelineConfig::default(),
        false,
    );
    let list = |a: &mut App| {
        let Effect::Work(w) = a.refresh_files() else {
            panic!()
        };
        a.update(Msg::Done(w.run()))
    };
    let ask = list(&mut a);
    assert_eq!(
        a.transcripts().files()[0].messages,
        None,
        "the listing read no transcript"
    );
    assert_eq!(
        ask,
        vec![Effect::Work(Work::CountMessages {
            root: root.clone(),
            files: vec![".transcripts/transcript_1.jsonl".into()]
        })]
    );
    assert!(list(&mut a).is_empty(), "not asked twice while counting");
    crate::support::settle(&mut a, ask);
    assert_eq!(a.transcripts().files()[0].messages, Some(3));
    assert!(list(&mut a).is_empty(), "a known count is kept");
    assert_eq!(a.transcripts().files()[0].messages, Some(3));
}

/// The gauge counts in the strategy's unit: s06's tokens are the `str()` chars // 4, the
/// title and the figures say so; s08-latest says JSON chars; s08 keeps chars.
#[test]
fn the_gauge_follows_the_strategys_unit() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = session(dir.path(), true);
    let chars = d.app.conversation().chars();
    assert!(chars > 400, "a session with something in it");
    let s08 = screen(&mut d.app, 120, 40);
    assert!(s08.contains("Context (limit 12,000 chars)"), "{s08}");
    let s06 = ctxlab::compact::PipelineConfig {
        strategy: ctxlab::compact::Strategy::S06,
        ..*d.app.config()
    };
    crate::support::set_config(&mut d.app, s06);
    let s06 = screen(&mut d.app, 120, 40);
    assert!(s06.contains("Context (limit 12,000 tokens)"), "{s06}");
    let figures = format!("{} / 12,000 tokens", ctxlab::util::group_digits(chars / 4));
    assert!(s06.contains(&figures), "{figures}:\n{s06}");
    let latest = ctxlab::compact::PipelineConfig {
        strategy: ctxlab::compact::Strategy::S08Latest,
        ..*d.app.config()
    };
    crate::support::set_config(&mut d.app, latest);
    let latest = screen(&mut d.app, 120, 40);
    assert!(
        latest.contains("Context (limit 12,000 JSON chars)"),
        "{latest}"
    );
    let json = ctxlab::message::json_size(&d.history);
    let figures = format!("{} / 12,000 JSON chars", ctxlab::util::group_digits(json));
    assert!(latest.contains(&figures), "{figures}:\n{latest}");
}
