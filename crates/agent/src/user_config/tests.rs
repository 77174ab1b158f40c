use super::*;

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |k| map.get(k).cloned()
}

#[test]
fn no_key_anywhere_runs_the_scripted_model_with_a_notice() {
    let env = env_of(&[]);
    let dotenv = HashMap::new();
    let r = resolve(
        &FlagSettings::default(),
        &Lookup {
            env: &env,
            dotenv: &dotenv,
        },
        &FileSettings::default(),
    )
    .unwrap();
    assert_eq!(r.kind, ProviderKind::Scripted);
    assert!(r.notice.unwrap().contains("ANTHROPIC_API_KEY"));
}

#[test]
fn flags_beat_environment_beat_dotenv_beat_file() {
    let env = env_of(&[("MODEL_ID", "from-env"), ("ANTHROPIC_API_KEY", "sk-env")]);
    let dotenv = parse_dotenv(
        Path::new(".env"),
        "MODEL_ID=from-dotenv\nANTHROPIC_BASE_URL='http://127.0.0.1:9'\n",
    )
    .unwrap();
    let file = FileSettings {
        model: Some("from-file".into()),
        anthropic_base_url: Some("http://file".into()),
        ..Default::default()
    };
    let lookup = Lookup {
        env: &env,
        dotenv: &dotenv,
    };
    let r = resolve(&FlagSettings::default(), &lookup, &file).unwrap();
    assert_eq!(r.kind, ProviderKind::Anthropic);
    assert_eq!(r.model, "from-env");
    assert_eq!(r.base_url, "http://127.0.0.1:9");
    let flags = FlagSettings {
        provider: Some(ProviderKind::Openai),
        model: Some("from-flag".into()),
    };
    let r = resolve(&flags, &lookup, &file).unwrap();
    assert_eq!(
        (r.kind, r.model.as_str()),
        (ProviderKind::Openai, "from-flag")
    );
    let empty_env = env_of(&[]);
    let r = resolve(
        &FlagSettings::default(),
        &Lookup {
            env: &empty_env,
            dotenv: &HashMap::new(),
        },
        &FileSettings {
            model: Some("from-file".into()),
            openai_base_url: Some("http://127.0.0.1:8080".into()),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(
        (r.kind, r.model.as_str()),
        (ProviderKind::Openai, "from-file")
    );
    assert_eq!(r.max_attempts, DEFAULT_MAX_ATTEMPTS);
}

#[test]
fn retry_attempts_come_from_the_environment_or_the_file() {
    let dotenv = HashMap::new();
    let file = FileSettings {
        max_attempts: Some(2),
        ..Default::default()
    };
    let none = env_of(&[]);
    let lookup = Lookup {
        env: &none,
        dotenv: &dotenv,
    };
    let r = resolve(&FlagSettings::default(), &lookup, &file).unwrap();
    assert_eq!(r.max_attempts, 2);
    let env = env_of(&[("CTXLAB_MAX_ATTEMPTS", "9")]);
    let lookup = Lookup {
        env: &env,
        dotenv: &dotenv,
    };
    let r = resolve(&FlagSettings::default(), &lookup, &file).unwrap();
    assert_eq!(r.max_attempts, 9);
}

#[test]
fn attempts_outside_the_range_are_errors_naming_the_source_and_the_range() {
    let dotenv = HashMap::new();
    for bad in ["0", "21", "-1", "five", "2.5"] {
        let pairs = [("CTXLAB_MAX_ATTEMPTS", bad)];
        let env = env_of(&pairs);
        let lookup = Lookup {
            env: &env,
            dotenv: &dotenv,
        };
        let e = resolve(&FlagSettings::default(), &lookup, &FileSettings::default())
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            format!("CTXLAB_MAX_ATTEMPTS is {bad:?}: must be a whole number from 1 to 20")
        );
    }
    for good in ["1", " 20 "] {
        let pairs = [("CTXLAB_MAX_ATTEMPTS", good)];
        let env = env_of(&pairs);
        let lookup = Lookup {
            env: &env,
            dotenv: &dotenv,
        };
        let r = resolve(&FlagSettings::default(), &lookup, &FileSettings::default()).unwrap();
        assert_eq!(r.max_attempts, good.trim().parse::<u32>().unwrap());
    }
    // From .env it is the same variable, and the same check.
    let none = env_of(&[]);
    let from_file = parse_dotenv(Path::new(".env"), "CTXLAB_MAX_ATTEMPTS=0\n").unwrap();
    let lookup = Lookup {
        env: &none,
        dotenv: &from_file,
    };
    let e = resolve(&FlagSettings::default(), &lookup, &FileSettings::default()).unwrap_err();
    assert!(matches!(e, SettingsError::MaxAttempts { .. }), "{e}");
}

#[test]
fn a_config_file_attempt_count_of_zero_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, "max_attempts = 0\n").unwrap();
    let file = load_file_settings(&path).unwrap();
    let none = env_of(&[]);
    let dotenv = HashMap::new();
    let lookup = Lookup {
        env: &none,
        dotenv: &dotenv,
    };
    let e = resolve(&FlagSettings::default(), &lookup, &file)
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        format!(
            "max_attempts in {} is \"0\": must be a whole number from 1 to 20",
            path.display()
        )
    );
}

#[test]
fn the_context_window_comes_from_the_environment_or_the_file() {
    let dotenv = HashMap::new();
    let file = FileSettings {
        context_window_tokens: Some(8_192),
        ..Default::default()
    };
    let none = env_of(&[]);
    let lookup = Lookup {
        env: &none,
        dotenv: &dotenv,
    };
    let r = resolve(&FlagSettings::default(), &lookup, &file).unwrap();
    assert_eq!(r.context_window_tokens, Some(8_192));
    let r = resolve(&FlagSettings::default(), &lookup, &FileSettings::default()).unwrap();
    assert_eq!(r.context_window_tokens, None, "unknown by default");
    let env = env_of(&[("CTXLAB_CONTEXT_WINDOW_TOKENS", "512")]);
    let lookup = Lookup {
        env: &env,
        dotenv: &dotenv,
    };
    let r = resolve(&FlagSettings::default(), &lookup, &file).unwrap();
    assert_eq!(r.context_window_tokens, Some(512));
    let parsed: FileSettings = toml::from_str("context_window_tokens = 4096").unwrap();
    assert_eq!(parsed.context_window_tokens, Some(4_096));
    let bad = env_of(&[("CTXLAB_CONTEXT_WINDOW_TOKENS", "8k")]);
    let lookup = Lookup {
        env: &bad,
        dotenv: &dotenv,
    };
    let e = resolve(&FlagSettings::default(), &lookup, &file).unwrap_err();
    assert!(matches!(e, SettingsError::ContextWindow(_)), "{e}");
}

#[test]
fn keys_never_show_in_debug_output() {
    let env = env_of(&[("ANTHROPIC_API_KEY", "sk-ant-secret-123")]);
    let dotenv = HashMap::new();
    let r = resolve(
        &FlagSettings::default(),
        &Lookup {
            env: &env,
            dotenv: &dotenv,
        },
        &FileSettings::default(),
    )
    .unwrap();
    assert!(!format!("{r:?}").contains("secret"));
}

#[test]
fn asking_for_anthropic_without_a_key_is_a_clear_error() {
    let env = env_of(&[]);
    let dotenv = HashMap::new();
    let flags = FlagSettings {
        provider: Some(ProviderKind::Anthropic),
        model: None,
    };
    let e = resolve(
        &flags,
        &Lookup {
            env: &env,
            dotenv: &dotenv,
        },
        &FileSettings::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("ANTHROPIC_API_KEY"));
}

#[test]
fn the_config_file_names_a_strategy() {
    let f: FileSettings = toml::from_str("strategy = \"s08-latest\"").unwrap();
    assert_eq!(f.strategy, Some(crate::compact::Strategy::S08Latest));
    let f: FileSettings = toml::from_str("strategy = \"lesson\"").unwrap();
    assert_eq!(f.strategy, Some(crate::compact::Strategy::S08));
    let e = toml::from_str::<FileSettings>("strategy = \"s07\"").unwrap_err();
    assert!(e.to_string().contains("s08-latest"), "{e}");
}

#[test]
fn dotenv_lines_are_parsed_like_a_shell_would() {
    let d = parse_dotenv(
        Path::new(".env"),
        "# c\nexport A=1\nB=\"two words\"\n\nC = x \nD='a # not a comment' # a comment\n",
    )
    .unwrap();
    assert_eq!(d.get("A").map(String::as_str), Some("1"));
    assert_eq!(d.get("B").map(String::as_str), Some("two words"));
    assert_eq!(d.get("C").map(String::as_str), Some("x"));
    assert_eq!(d.get("D").map(String::as_str), Some("a # not a comment"));
    assert_eq!(d.len(), 4);
}

#[test]
fn a_malformed_dotenv_names_the_file_and_line_but_not_the_text() {
    let path = Path::new("/work/project/.env");
    let text = "# keys\nA=1\n\nANTHROPIC_API_KEY sk-ant-secret-9\nB=2\n";
    let e = parse_dotenv(path, text).unwrap_err();
    assert!(
        matches!(&e, SettingsError::DotEnv { line: Some(4), .. }),
        "{e:?}"
    );
    let shown = e.to_string();
    assert!(shown.starts_with("/work/project/.env:4: "), "{shown}");
    assert!(!shown.contains("secret"), "{shown}");
}

#[test]
fn dotenv_line_numbers_count_lines_inside_quotes_and_an_unclosed_quote_is_an_error() {
    let text = "A=\"one\ntwo\"\nB=2\nC=3 4\n";
    let e = parse_dotenv(Path::new(".env"), text).unwrap_err();
    assert_eq!(
        e.to_string(),
        ".env:4: not a KEY=VALUE setting (or an unclosed quote)"
    );
    let e = parse_dotenv(Path::new(".env"), "A=1\nB='open\nC=3\n").unwrap_err();
    assert!(e.to_string().starts_with(".env:2: "), "{e}");
    // The same text twice: the second occurrence, on its own line, is the one reported.
    let e = parse_dotenv(Path::new(".env"), "X=bad\nbad\n").unwrap_err();
    assert!(e.to_string().starts_with(".env:2: "), "{e}");
}

#[test]
fn a_missing_dotenv_is_no_settings_and_an_unreadable_one_an_error() {
    let dir = tempfile::tempdir().unwrap();
    assert!(load_dotenv(&dir.path().join(".env")).unwrap().is_empty());
    let not_utf8 = dir.path().join("bad.env");
    std::fs::write(&not_utf8, b"A=\xff\xfe\n").unwrap();
    let e = load_dotenv(&not_utf8).unwrap_err().to_string();
    assert!(e.starts_with(&format!("{}: ", not_utf8.display())), "{e}");
}

#[test]
fn call_deadline_and_retry_budget_come_from_the_environment_or_the_file() {
    use std::time::Duration;
    let dotenv = HashMap::new();
    let none = env_of(&[]);
    let lookup = Lookup {
        env: &none,
        dotenv: &dotenv,
    };
    let r = resolve(&FlagSettings::default(), &lookup, &FileSettings::default()).unwrap();
    assert_eq!(r.call_limits, CallLimits::default());
    assert_eq!(r.call_limits.deadline, Duration::from_secs(600));
    assert_eq!(r.call_limits.retry_budget, Duration::from_secs(120));
    let file: FileSettings =
        toml::from_str("call_deadline_secs = 90\nretry_budget_secs = 0\n").unwrap();
    let r = resolve(&FlagSettings::default(), &lookup, &file).unwrap();
    assert_eq!(r.call_limits.deadline, Duration::from_secs(90));
    assert_eq!(r.call_limits.retry_budget, Duration::ZERO);
    let env = env_of(&[("CTXLAB_CALL_DEADLINE_SECS", "30")]);
    let lookup = Lookup {
        env: &env,
        dotenv: &dotenv,
    };
    let r = resolve(&FlagSettings::default(), &lookup, &file).unwrap();
    assert_eq!(r.call_limits.deadline, Duration::from_secs(30));
    for (name, bad, range) in [
        ("CTXLAB_CALL_DEADLINE_SECS", "5", "10 to 86400"),
        ("CTXLAB_CALL_DEADLINE_SECS", "soon", "10 to 86400"),
        ("CTXLAB_RETRY_BUDGET_SECS", "3601", "0 to 3600"),
    ] {
        let pairs = [(name, bad)];
        let env = env_of(&pairs);
        let lookup = Lookup {
            env: &env,
            dotenv: &dotenv,
        };
        let e = resolve(&FlagSettings::default(), &lookup, &FileSettings::default())
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            format!("{name} is {bad:?}: must be a whole number of seconds from {range}")
        );
    }
}

#[test]
fn the_compaction_bell_is_on_unless_the_file_or_the_flag_turns_it_off() {
    let off: FileSettings = toml::from_str("bell_on_compaction = false").unwrap();
    let on: FileSettings = toml::from_str("bell_on_compaction = true").unwrap();
    let unset = FileSettings::default();
    assert!(bell_on_compaction(None, false));
    assert!(bell_on_compaction(Some(&unset), false));
    assert!(bell_on_compaction(Some(&on), false));
    assert!(!bell_on_compaction(Some(&off), false));
    assert!(!bell_on_compaction(Some(&on), true), "--no-bell wins");
    assert!(!bell_on_compaction(None, true));
}
