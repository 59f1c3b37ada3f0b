//! The documentation checks itself: README.md and docs/*.md.
//!
//! 1. Every `plexus …` or `cargo run [--release] -- …` line in a code block parses with
//!    the command-line definition the binary uses (subcommand, options, values).
//! 2. Every relative link points at a file that exists, and every `#anchor` at a heading
//!    (GitHub's slug rules).
//! 3. README.md stays short and opens with the commands a newcomer needs: the source,
//!    the demo, the tests; run from a fresh clone, the demo and the eval example work.
//! 4. The documents explain themselves: no references to papers outside the repository.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every docs/*.md, as (path relative to the root, text).
fn documents() -> Vec<(PathBuf, String)> {
    let mut paths = vec![PathBuf::from("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/ exists")
        .map(|e| e.expect("a docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .map(|p| PathBuf::from("docs").join(p.file_name().expect("a file name")))
        .collect();
    docs.sort();
    paths.extend(docs);
    paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(root().join(&p)).expect("a readable document");
            (p, text)
        })
        .collect()
}

/// A line of a document, whether it is inside a fenced code block, and that block's
/// language (the fence's info string; empty when none).
struct Line<'a> {
    no: usize,
    text: &'a str,
    in_code: bool,
    lang: String,
}

impl Line<'_> {
    /// A line of a shell block (`sh`, `bash`, `shell`, `console` or no language), or a
    /// `$ ` prompt line in any block. Screen captures (`text` blocks) and TOML or JSON
    /// examples are not command lines.
    fn is_shell(&self) -> bool {
        self.in_code
            && (matches!(self.lang.as_str(), "" | "sh" | "bash" | "shell" | "console")
                || self.text.trim_start().starts_with("$ "))
    }
}

fn lines(text: &str) -> Vec<Line<'_>> {
    let mut fence: Option<String> = None;
    let mut lang = String::new();
    let mut out = Vec::new();
    for (i, text) in text.lines().enumerate() {
        let t = text.trim_start();
        let marker: String = t.chars().take_while(|&c| c == '`' || c == '~').collect();
        if marker.len() >= 3 {
            match &fence {
                None => {
                    lang = t[marker.len()..].trim().to_string();
                    fence = Some(marker);
                    continue;
                }
                Some(open) if marker.starts_with(open.as_str()) && t.trim() == marker => {
                    fence = None;
                    continue;
                }
                _ => {}
            }
        }
        out.push(Line {
            no: i + 1,
            text,
            in_code: fence.is_some(),
            lang: lang.clone(),
        });
    }
    out
}

/// Splits a shell line into words: single and double quotes, no expansion.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut has = false;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                has = true;
            }
            None if c.is_whitespace() => {
                if has || !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                    has = false;
                }
            }
            None => cur.push(c),
        }
    }
    if has || !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// The plexus command lines of a code-block line: the arguments after `plexus` or after
/// `cargo run [--release] --`, one list per command of a pipeline or `&&` chain. A
/// trailing `# comment` is dropped first.
fn commands_in(line: &str) -> Vec<Vec<String>> {
    let line = line.trim().trim_start_matches("$ ");
    let code = match line.find(" #") {
        Some(i) => &line[..i],
        None => line,
    };
    let mut out = Vec::new();
    for part in code.split("&&").flat_map(|p| p.split(" | ")) {
        let mut words = shell_words(part);
        // `VAR=value plexus …`
        while words.first().is_some_and(|w| {
            w.contains('=')
                && !w.starts_with('-')
                && w.chars().next().is_some_and(char::is_uppercase)
        }) {
            words.remove(0);
        }
        let args = match words.first().map(String::as_str) {
            Some("plexus") => words[1..].to_vec(),
            Some("cargo") if words.get(1).is_some_and(|w| w == "run") => {
                match words.iter().position(|w| w == "--") {
                    Some(i) => words[i + 1..].to_vec(),
                    None => continue, // `cargo run` with no arguments: the default, demo-less help
                }
            }
            _ => continue,
        };
        out.push(args);
    }
    out
}

/// Drops shell redirections (`> FILE`, `2>&1`, `< FILE`) from a command's words.
fn without_redirections(words: Vec<String>) -> Vec<String> {
    let mut out = Vec::new();
    let mut skip_next = false;
    for w in words {
        if skip_next {
            skip_next = false;
            continue;
        }
        let bare = w.trim_start_matches(|c: char| c.is_ascii_digit());
        if bare.starts_with('>') || bare.starts_with('<') {
            // `>FILE` carries its target; `>` alone takes the next word (`2>&1` none).
            skip_next = bare.trim_start_matches(['>', '<', '&']).is_empty() && !w.ends_with('&');
            continue;
        }
        out.push(w);
    }
    out
}

#[test]
fn every_command_line_shown_parses() {
    let mut checked = 0;
    let mut problems = Vec::new();
    for (path, text) in documents() {
        for line in lines(&text).into_iter().filter(Line::is_shell) {
            for args in commands_in(line.text) {
                let at = format!("{}:{}: `{}`", path.display(), line.no, line.text.trim());
                // Parsed by the very definition the binary uses: the subcommand, every
                // option, every value (numbers, choices) and the required arguments.
                // Placeholders (RUN, PLAN …) parse as the words they are.
                let argv = std::iter::once("plexus".to_string()).chain(without_redirections(args));
                match plexus::cli::args::command().try_get_matches_from(argv) {
                    Ok(_) => {}
                    Err(e)
                        if matches!(
                            e.kind(),
                            clap::error::ErrorKind::DisplayHelp
                                | clap::error::ErrorKind::DisplayVersion
                        ) => {}
                    Err(e) => {
                        let first = e.render().to_string();
                        let first = first.lines().next().unwrap_or_default().to_string();
                        problems.push(format!("{at}: {first}"));
                        continue;
                    }
                }
                checked += 1;
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(
        checked >= 10,
        "only {checked} command lines found in the docs"
    );
}

/// GitHub's heading anchor: lower case, punctuation other than `-` and `_` removed,
/// spaces to `-`; a repeated slug gets `-1`, `-2`, ….
fn slug(heading: &str) -> String {
    let text = heading.replace('`', "");
    text.trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| {
            if c == ' ' {
                Some('-')
            } else if c.is_alphanumeric() || c == '-' || c == '_' {
                Some(c)
            } else {
                None
            }
        })
        .collect()
}

fn anchors(text: &str) -> HashSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = HashSet::new();
    for line in lines(text).into_iter().filter(|l| !l.in_code) {
        let t = line.text;
        let hashes = t.chars().take_while(|&c| c == '#').count();
        if (1..=6).contains(&hashes) && t[hashes..].starts_with(' ') {
            let base = slug(&t[hashes + 1..]);
            let n = seen.entry(base.clone()).or_insert(0);
            out.insert(if *n == 0 {
                base.clone()
            } else {
                format!("{base}-{n}")
            });
            *n += 1;
        }
    }
    out
}

/// Link targets `[text](target)` of a line, inline code spans left out.
fn link_targets(line: &str) -> Vec<String> {
    let mut plain = String::new();
    for (i, piece) in line.split('`').enumerate() {
        if i % 2 == 0 {
            plain.push_str(piece);
        }
    }
    let mut out = Vec::new();
    let mut rest = plain.as_str();
    while let Some(i) = rest.find("](") {
        let after = &rest[i + 2..];
        match after.find(')') {
            Some(j) => {
                let target = after[..j].split_whitespace().next().unwrap_or_default();
                out.push(target.to_string());
                rest = &after[j..];
            }
            None => break,
        }
    }
    out
}

#[test]
fn no_link_is_broken() {
    let docs = documents();
    let by_path: BTreeMap<PathBuf, &String> = docs.iter().map(|(p, t)| (p.clone(), t)).collect();
    let mut problems = Vec::new();
    let mut checked = 0;
    for (path, text) in &docs {
        let dir = path.parent().unwrap_or(Path::new(""));
        for line in lines(text).into_iter().filter(|l| !l.in_code) {
            for target in link_targets(line.text) {
                if target.starts_with("http://")
                    || target.starts_with("https://")
                    || target.starts_with("mailto:")
                {
                    continue;
                }
                let at = format!("{}:{}: ({target})", path.display(), line.no);
                checked += 1;
                let (file, anchor) = match target.split_once('#') {
                    Some((f, a)) => (f, Some(a)),
                    None => (target.as_str(), None),
                };
                let resolved = if file.is_empty() {
                    path.clone()
                } else {
                    normalise(&dir.join(file))
                };
                if !root().join(&resolved).exists() {
                    problems.push(format!("{at}: no file {}", resolved.display()));
                    continue;
                }
                if let Some(anchor) = anchor {
                    let Some(target_text) = by_path.get(&resolved) else {
                        problems.push(format!("{at}: an anchor into a file that is not checked"));
                        continue;
                    };
                    if !anchors(target_text).contains(anchor) {
                        problems.push(format!("{at}: no heading `#{anchor}`"));
                    }
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(checked >= 10, "only {checked} links found");
}

/// `a/../b` → `b`, `./a` → `a`.
fn normalise(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[test]
fn readme_is_short_and_starts_with_the_source_the_demo_and_the_tests() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let chars = readme.chars().count();
    assert!(chars < 12_000, "README.md has {chars} characters");
    let first_block: Vec<&str> = lines(&readme)
        .into_iter()
        .skip_while(|l| !l.in_code)
        .take_while(|l| l.in_code)
        .map(|l| l.text.trim())
        .filter(|t| !t.is_empty())
        .collect();
    let gets_source = first_block
        .first()
        .is_some_and(|l| l.starts_with("git clone ") && l.contains("&& cd plexus"));
    assert!(
        gets_source,
        "README.md's first command gets the source and enters it: {first_block:?}"
    );
    assert_eq!(
        first_block.get(1..3),
        Some(&["cargo run --release -- demo", "cargo test --locked"][..]),
        "README.md's first code block goes on with the demo and the tests"
    );
    let ci = std::fs::read_to_string(root().join(".ci/run")).expect(".ci/run");
    assert!(
        ci.lines().any(|l| l.trim() == "cargo test --locked"),
        ".ci/run runs the README's test command"
    );
}

#[test]
fn documents_explain_themselves() {
    let mut problems = Vec::new();
    for (path, text) in documents() {
        for (i, line) in text.lines().enumerate() {
            let lower = line.to_lowercase();
            let bad = line.contains('§')
                || line.contains("SPEC")
                || lower.contains("seed 00")
                || lower
                    .match_indices("issue ")
                    .any(|(j, m)| lower[j + m.len()..].starts_with(|c: char| c.is_ascii_digit()));
            if bad {
                problems.push(format!("{}:{}: {line}", path.display(), i + 1));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "references to documents outside the repository:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_parsers_of_this_test_work() {
    assert_eq!(
        commands_in("cargo run --release -- demo   # offline"),
        vec![vec!["demo".to_string()]]
    );
    assert_eq!(
        commands_in("plexus export RUN | plexus --db b.db import -").len(),
        2
    );
    assert_eq!(
        commands_in("PLEXUS_LOG=debug plexus run x.json"),
        vec![vec!["run".to_string(), "x.json".to_string()]]
    );
    assert_eq!(
        slug("Data references and context budgets"),
        "data-references-and-context-budgets"
    );
    assert_eq!(slug("Human review (E007)"), "human-review-e007");
    assert_eq!(
        slug("`plexus diff`: comparing runs"),
        "plexus-diff-comparing-runs"
    );
    let words = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
    assert_eq!(
        without_redirections(words("completions bash > out 2>&1")),
        words("completions bash")
    );
    assert_eq!(without_redirections(words("log x >out")), words("log x"));
    // The checker can fail: an unknown option, a missing argument, a bad value.
    for bad in ["runs --nope", "run", "replay --max-gap soon", "bench-ui"] {
        let argv = std::iter::once("plexus").chain(bad.split(' '));
        assert!(
            plexus::cli::args::command()
                .try_get_matches_from(argv)
                .is_err(),
            "`{bad}` parsed"
        );
    }
    assert_eq!(
        link_targets("see [a](docs/a.md#x) and `[b](c)` and [d](#e)"),
        vec!["docs/a.md#x".to_string(), "#e".to_string()]
    );
}

/// The README's examples run where its first line leaves a newcomer: the top folder of a
/// fresh clone (of the committed tree; the checkout itself when it is not a git one).
/// The demo (without the terminal UI) stops for its review, the eval example scores
/// its fixture, the completions are written.
#[test]
fn from_a_fresh_clone_the_readmes_demo_and_eval_example_run() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let eval_line = readme
        .lines()
        .find(|l| l.trim_start().starts_with("plexus eval fixtures/"))
        .expect("the README's eval example");
    let eval_args = commands_in(eval_line).remove(0);
    let tmp = tempfile::tempdir().expect("tempdir");
    let clone = tmp.path().join("plexus");
    let cloned = std::process::Command::new("git")
        .args(["clone", "--quiet", "--local", "--no-hardlinks"])
        .arg(root())
        .arg(&clone)
        .status()
        .is_ok_and(|s| s.success());
    let top = if cloned {
        clone
    } else {
        eprintln!("not a git checkout: the examples run in the checkout itself");
        root()
    };
    let run = |args: &[String]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_plexus"))
            .current_dir(&top)
            .args(["--db"])
            .arg(tmp.path().join("readme.db"))
            .args(args)
            .args(["--chunk-ms", "0", "--first-chunk-ms", "0"])
            .env_remove("PLEXUS_DB")
            .env_remove("PLEXUS_CONFIG")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("plexus")
    };
    let demo = run(&["demo".into(), "--headless".into()]);
    assert_eq!(
        demo.status.code(),
        Some(6),
        "the demo stops for its review: {}",
        String::from_utf8_lossy(&demo.stderr)
    );
    let mut eval = eval_args.clone();
    eval.push("--json".into());
    let scored = run(&eval);
    assert_eq!(
        scored.status.code(),
        Some(0),
        "`{}` from the top folder: {}",
        eval_line.trim(),
        String::from_utf8_lossy(&scored.stderr)
    );
    let completions = std::process::Command::new(env!("CARGO_BIN_EXE_plexus"))
        .args(["completions", "bash"])
        .output()
        .expect("plexus");
    assert!(completions.status.success() && !completions.stdout.is_empty());
}
