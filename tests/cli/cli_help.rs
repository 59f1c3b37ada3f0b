//! The command line follows the conventions people expect: help fits 80 columns, each
//! command lists only the options it takes, every `--help` ends with examples that
//! parse, developer tools stay out of the main list, and completions and the manual
//! page come from the same definition.

use std::process::Command;

use unicode_width::UnicodeWidthStr;

const BIN: &str = env!("CARGO_BIN_EXE_plexus");

/// `plexus ARGS` with `COLUMNS` set (or unset), not on a terminal: (exit ok, stdout).
fn plexus(args: &[&str], columns: Option<&str>) -> (bool, String) {
    let mut c = Command::new(BIN);
    c.args(args)
        .env_remove("PLEXUS_DB")
        .env_remove("PLEXUS_CONFIG")
        .env_remove("PLEXUS_PROVIDER")
        .env_remove("PLEXUS_THEME");
    match columns {
        Some(w) => c.env("COLUMNS", w),
        None => c.env_remove("COLUMNS"),
    };
    let out = c.output().expect("the binary runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// Every command path: `[]`, `["run"]`, …, `["bench", "ui"]`, ….
fn command_paths() -> Vec<Vec<String>> {
    let root = plexus::cli::args::command();
    let mut out = vec![vec![]];
    for sub in root.get_subcommands() {
        out.push(vec![sub.get_name().to_string()]);
        for nested in sub.get_subcommands() {
            out.push(vec![
                sub.get_name().to_string(),
                nested.get_name().to_string(),
            ]);
        }
    }
    out
}

fn too_wide(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.width() > 80)
        .map(|l| format!("{} columns: {l}", l.width()))
        .collect()
}

#[test]
fn every_help_fits_80_columns() {
    let mut problems = Vec::new();
    let paths = command_paths();
    assert!(paths.len() > 25, "only {} commands", paths.len());
    for path in &paths {
        for flag in ["-h", "--help"] {
            // An 80-column terminal, and help piped to a file (no COLUMNS, no terminal).
            for columns in [Some("80"), None] {
                let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
                args.push(flag);
                let (ok, text) = plexus(&args, columns);
                assert!(ok, "plexus {} failed", args.join(" "));
                for line in too_wide(&text) {
                    problems.push(format!("plexus {} ({columns:?}): {line}", args.join(" ")));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_command_list_has_one_line_per_command_and_no_developer_tools() {
    let (_, text) = plexus(&["--help"], Some("80"));
    let list: Vec<&str> = text
        .lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    assert!(list.len() >= 20, "{text}");
    for line in &list {
        // A wrapped description would show as a line that starts with blanks only.
        let name = line.split_whitespace().next().unwrap_or_default();
        assert!(
            line.starts_with("  ") && !line.starts_with("   ") && !name.is_empty(),
            "a description does not fit its line: {line:?}\n{text}"
        );
    }
    let names: Vec<&str> = list
        .iter()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    for tool in [
        "gen-plan",
        "mock-server",
        "gen-failures",
        "bench-ui",
        "bench-http",
    ] {
        assert!(!names.contains(&tool), "{tool} is in the main list");
    }
    for grouped in ["bench", "dev", "completions", "man", "log", "replay"] {
        assert!(names.contains(&grouped), "{grouped} is missing: {names:?}");
    }
}

/// The options a command's `-h` lists (long names).
fn options_of(path: &[&str]) -> Vec<String> {
    let mut args = path.to_vec();
    args.push("-h");
    let (ok, text) = plexus(&args, Some("80"));
    assert!(ok, "{args:?}");
    text.lines()
        .filter_map(|l| {
            let t = l.trim_start();
            let t = t.strip_prefix("-").map_or(t, |_| t);
            let i = t.find("--")?;
            // Only an option's own line: it starts with `-x, --name` or `--name`.
            (i == 0 || t.starts_with('-')).then(|| {
                t[i..]
                    .split(|c: char| c.is_whitespace() || c == '=' || c == '<' || c == ',')
                    .next()
                    .unwrap_or_default()
                    .to_string()
            })
        })
        .collect()
}

#[test]
fn each_command_lists_only_the_options_it_uses() {
    let session = ["--seed", "--concurrency", "--headless", "--provider"];
    let runs_a_session = ["demo", "run", "resume", "rerun"];
    for path in command_paths().iter().filter(|p| !p.is_empty()) {
        let path: Vec<&str> = path.iter().map(String::as_str).collect();
        let opts = options_of(&path);
        assert!(opts.contains(&"--help".to_string()), "{path:?}: {opts:?}");
        for s in session {
            let allowed = path.len() == 1 && runs_a_session.contains(&path[0]);
            let allowed = allowed && !(path[0] == "rerun" && s == "--provider");
            // `bench engine` and `bench eval` have a --concurrency, the generator a --seed
            // of its own.
            // A debate runs on a provider, with or without the UI; serve only on one.
            let allowed = allowed
                || (path == ["debate"] && (s == "--provider" || s == "--headless"))
                || (path == ["serve"] && s == "--provider")
                || ((path == ["bench", "engine"] || path == ["bench", "eval"])
                    && s == "--concurrency")
                || (path == ["dev", "gen-failures"] && s == "--seed")
                // An eval runs a plan under the Eval screen (--headless without it); its
                // resume and rerun keep the eval's seed.
                || path == ["eval"]
                || (path.len() == 2
                    && path[0] == "eval"
                    && ["resume", "rerun"].contains(&path[1])
                    && (s == "--concurrency" || s == "--provider"));
            assert_eq!(
                opts.iter().any(|o| o == s),
                allowed,
                "`plexus {}` and {s}: {opts:?}",
                path.join(" ")
            );
        }
        let ui = [
            "demo", "run", "resume", "rerun", "browse", "replay", "failures", "debate",
        ];
        assert_eq!(
            opts.iter().any(|o| o == "--theme"),
            path.len() == 1 && ui.contains(&path[0]),
            "`plexus {}` and --theme: {opts:?}",
            path.join(" ")
        );
    }
    // The cases that used to be wrong.
    assert!(!options_of(&["check"]).contains(&"--seed".to_string()));
    assert!(!options_of(&["browse"]).contains(&"--headless".to_string()));
    // The two global options are on every command, under their own heading.
    let (_, text) = plexus(&["runs", "-h"], Some("80"));
    let global = text.split("Global options:").nth(1).expect("the heading");
    assert!(
        global.contains("--db") && global.contains("--config"),
        "{text}"
    );
}

#[test]
fn defaults_are_shown_and_the_same_across_commands() {
    for cmd in ["demo", "run"] {
        let (_, text) = plexus(&[cmd, "--help"], Some("100"));
        for default in ["[default: 15]", "[default: 120]", "--faults"] {
            assert!(text.contains(default), "{cmd}: {default}\n{text}");
        }
        assert!(text.contains("--concurrency"), "{text}");
        assert!(text.contains("[default: 8"), "{cmd}\n{text}");
    }
    let (_, demo) = plexus(&["demo", "--help"], Some("100"));
    assert!(demo.contains("[default: 2]"), "{demo}");
    let (_, run) = plexus(&["run", "--help"], Some("100"));
    assert!(run.contains("[default: 7]"), "{run}");
}

/// The example command lines at the end of a `--help`.
fn examples(help: &str) -> Vec<Vec<String>> {
    help.lines()
        .skip_while(|l| !l.starts_with("Example"))
        .flat_map(|l| l.split("&&"))
        .filter_map(|l| {
            let t = l.trim();
            let rest = t
                .strip_prefix("plexus ")
                .or_else(|| t.strip_prefix("cargo run --release -- "))?;
            let code = rest.split("  ").next().unwrap_or_default(); // a trailing remark
            let code = code.split(['>', '|']).next().unwrap_or_default();
            Some(words(code))
        })
        .collect()
}

/// Splits a shell line into words, honouring single and double quotes.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote = None;
    for c in line.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c.is_whitespace() => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            None => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[test]
fn every_help_ends_with_examples_that_parse() {
    let mut problems = Vec::new();
    for path in command_paths() {
        let is_group = path.len() == 1 && (path[0] == "bench" || path[0] == "dev");
        if is_group {
            continue;
        }
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let (_, text) = plexus(&args, Some("100"));
        let found = examples(&text);
        if found.is_empty() {
            problems.push(format!("`plexus {}` has no example", path.join(" ")));
        }
        for ex in found {
            let argv = std::iter::once("plexus".to_string()).chain(ex.iter().cloned());
            if let Err(e) = plexus::cli::args::command().try_get_matches_from(argv) {
                if e.kind() != clap::error::ErrorKind::DisplayHelp {
                    problems.push(format!("`plexus {}`: {e}", ex.join(" ")));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn completions_and_the_man_page_cover_every_command() {
    let (ok, bash) = plexus(&["completions", "bash"], None);
    assert!(ok);
    let (ok, zsh) = plexus(&["completions", "zsh"], None);
    assert!(ok);
    let (ok, man) = plexus(&["man"], None);
    assert!(ok);
    assert!(
        man.starts_with(".ie") || man.contains(".TH plexus"),
        "{man}"
    );
    for path in command_paths().iter().filter(|p| !p.is_empty()) {
        let last = path.last().expect("a name");
        assert!(bash.contains(last.as_str()), "bash completion lacks {last}");
        assert!(zsh.contains(last.as_str()), "zsh completion lacks {last}");
        let heading = format!(".SH \"PLEXUS {}\"", path.join(" ").to_uppercase());
        assert!(man.contains(&heading), "the man page lacks {heading}");
    }
    // Options and value choices are there too.
    assert!(bash.contains("--max-gap") && bash.contains("--rename-auto"));
    assert!(zsh.contains("none") && zsh.contains("demo"), "fault mixes");
    let bad = plexus(&["completions", "tcsh"], None);
    assert!(!bad.0, "an unknown shell is refused");
}
