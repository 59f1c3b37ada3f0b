//! What reaches a person's terminal and a script's exit status: no escape sequence,
//! bell or bidi override from a plan, a file name or a model ever reaches stdout or
//! stderr; ids with such characters are refused; every command exits by the README's
//! table; a closed pipe ends quietly; a panic is one short line; an ambiguous run id
//! lists the candidates; configuration errors stop every command that reads it.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const EXE: &str = env!("CARGO_BIN_EXE_plexus");

/// Bytes that must never reach a terminal from untrusted text.
const FORBIDDEN: &[&[u8]] = &[
    b"\x1b",
    b"\x07",
    "\u{202E}".as_bytes(),
    "\u{2066}".as_bytes(),
];

fn plexus(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(EXE);
    c.current_dir(dir)
        .args(args)
        .env_remove("PLEXUS_DB")
        .env_remove("PLEXUS_CONFIG")
        .env_remove("PLEXUS_PROVIDER")
        .env("XDG_CONFIG_HOME", dir.join("no-config-dir"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn assert_clean(what: &str, o: &Output) {
    for stream in [&o.stdout, &o.stderr] {
        for bad in FORBIDDEN {
            assert!(
                !stream.windows(bad.len()).any(|w| w == *bad),
                "{what}: {bad:?} reached the terminal:\n{}",
                text(o)
            );
        }
    }
}

const EVIL: &str = "\u{1b}]0;owned\u{7}\u{1b}[2J\u{202E}";

#[test]
fn ids_with_escapes_or_bidi_overrides_are_refused_naming_the_field() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = serde_json::json!({
        "plan_id": format!("P{EVIL}"),
        "execution_mode": "Deep_Internalization",
        "agents": {format!("Helper{EVIL}"): {"system_prompt": "You help.", "atom_type": "claim"}},
        "tasks": [{
            "task_id": format!("T\u{2066}1"),
            "agent": "Scholar_Internalizer",
            "instruction": "Read."
        }]
    });
    std::fs::write(dir.path().join("ids.json"), plan.to_string()).expect("plan");
    for args in [
        vec!["validate", "ids.json"],
        vec!["--db", "x.db", "run", "ids.json", "--headless"],
    ] {
        let out = plexus(dir.path(), &args).output().expect("run");
        let t = text(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {t}");
        for field in ["`plan_id`", "`tasks[0].task_id`", "`agents.Helper"] {
            assert!(t.contains(field), "{args:?} names {field}: {t}");
        }
        assert!(t.contains("U+001B") && t.contains("U+2066"), "{t}");
        assert_clean(&format!("{args:?}"), &out);
    }
    assert!(
        !dir.path().join("x.db").exists(),
        "an invalid plan runs nothing"
    );
}

#[test]
fn escapes_in_file_names_instructions_references_and_model_output_never_reach_the_terminal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan_name = format!("plan{EVIL}.json");
    let plan = serde_json::json!({
        "plan_id": "CLEAN_ID",
        "execution_mode": "Deep_Internalization",
        "description": format!("a plan {EVIL}"),
        "tasks": [
            {
                "task_id": "A",
                "agent": "Scholar_Internalizer",
                "instruction": format!("Extract the claims {EVIL} of the paper."),
                "data_references": [
                    {"ref_type": "file", "path": format!("notes/missing{EVIL}.md"), "format": "md"}
                ],
                "fallback_config": {"strategy": "skip"},
                "output_requirements": {"required_fields": ["content.claim"], "quality_threshold": "D", "max_atoms": 2}
            },
            {
                "task_id": "B",
                "agent": "Code_Architect",
                "instruction": format!("Map {EVIL} to code."),
                "depends_on": ["A"],
                "output_requirements": {"quality_threshold": "D", "max_atoms": 1}
            }
        ]
    });
    std::fs::write(dir.path().join(&plan_name), plan.to_string()).expect("plan");
    let runs: Vec<Vec<&str>> = vec![
        vec!["validate", &plan_name],
        vec![
            "--db",
            "e.db",
            "run",
            &plan_name,
            "--faults",
            "demo",
            "--chunk-ms",
            "0",
            "--first-chunk-ms",
            "0",
            "--retry-delay-div",
            "1000",
            "--timeout-scale",
            "0.002",
            "--headless",
        ],
        vec!["--db", "e.db", "runs"],
        vec!["--db", "e.db", "show", "latest"],
        vec!["--db", "e.db", "show", EVIL],
    ];
    for args in runs {
        let out = plexus(dir.path(), &args).output().expect("run");
        assert!(
            matches!(out.status.code(), Some(0 | 1 | 3)),
            "{args:?}: {}",
            text(&out)
        );
        assert_clean(&format!("{args:?}"), &out);
    }
    // The evil text did reach the places it was aimed at (so the check above means
    // something): the reference failure and the stored request hold it raw.
    let conn = rusqlite::Connection::open(dir.path().join("e.db")).expect("db");
    let raw: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM execution_logs WHERE instr(payload, char(27)) > 0 OR instr(payload, '\\u001b') > 0",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert!(raw > 0, "the log keeps the text as it was");
    // JSON output stays exact JSON.
    let out = plexus(dir.path(), &["--db", "e.db", "show", "latest", "--json"])
        .output()
        .expect("json");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("exact JSON");
    assert!(v.to_string().contains("plan"), "{v}");
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).expect("write");
    p
}

#[test]
fn every_kind_of_invalid_plan_exits_2_from_run_as_from_validate() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "not_json.json", b"{ plan_id: nope");
    write(dir.path(), "not_utf8.json", b"{\"plan_id\": \"\xff\xfe\"}");
    let deep = format!("{}1{}", "[".repeat(5000), "]".repeat(5000));
    write(dir.path(), "too_deep.json", deep.as_bytes());
    write(
        dir.path(),
        "invalid.json",
        br#"{"plan_id":"X","tasks":[{"task_id":"A","agent":"Nobody","instruction":"x"}]}"#,
    );
    for plan in [
        "missing.json",
        "not_json.json",
        "not_utf8.json",
        "too_deep.json",
        "invalid.json",
    ] {
        for args in [
            vec!["validate", plan],
            vec!["--db", "p.db", "run", plan, "--headless"],
        ] {
            let out = plexus(dir.path(), &args).output().expect("run");
            let t = text(&out);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {t}");
            assert!(t.contains(plan), "the error names the file: {t}");
            assert!(!t.contains("panicked"), "{t}");
        }
    }
}

/// Reads one line of the command's standard output, closes the pipe, and returns how
/// the command ended.
fn read_one_line_then_close(dir: &Path, args: &[&str]) -> Output {
    let mut child = plexus(dir, args).spawn().expect("spawn");
    let stdout = child.stdout.take().expect("stdout");
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).expect("a line");
    assert!(!line.is_empty());
    // The reader is gone; the next write meets a closed pipe.
    child.wait_with_output().expect("wait")
}

#[test]
fn a_closed_pipe_ends_the_command_quietly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = read_one_line_then_close(dir.path(), &["dev", "gen-plan", "--tasks", "10000"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(out.stderr.is_empty(), "{}", text(&out));
    // A run whose log is far more than a pipe holds, so the writer meets the closed pipe.
    let spec = plexus::dev::gen_plan::GenSpec {
        tasks: 100,
        width: 20,
        fan_in: 2,
        max_atoms: 1,
    };
    let plan = write(
        dir.path(),
        "wide.json",
        plexus::dev::gen_plan::generate(spec).to_string().as_bytes(),
    );
    let out = plexus(
        dir.path(),
        &[
            "--db",
            "l.db",
            "run",
            plan.to_str().expect("utf8"),
            "--chunk-ms",
            "0",
            "--first-chunk-ms",
            "0",
            "--headless",
        ],
    )
    .output()
    .expect("run");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let log_bytes = plexus(dir.path(), &["--db", "l.db", "log", "latest"])
        .output()
        .expect("log")
        .stdout
        .len();
    assert!(log_bytes > 256 << 10, "a log of {log_bytes} bytes");
    let out = read_one_line_then_close(dir.path(), &["--db", "l.db", "log", "latest"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(out.stderr.is_empty(), "{}", text(&out));
}

#[test]
fn a_panic_is_one_short_line_naming_the_report_and_no_colour_off_a_terminal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = plexus(dir.path(), &["validate", "x.json"])
        .env("PLEXUS_CRASH_TEST", "1")
        .env("TMPDIR", dir.path())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(101));
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!err.contains('\u{1b}'), "no colour off a terminal: {err:?}");
    let report = err
        .split("the report is in ")
        .nth(1)
        .map(|p| PathBuf::from(p.trim()))
        .expect("names the report");
    let body = std::fs::read_to_string(&report).expect("the report exists");
    assert!(body.contains("crash requested by PLEXUS_CRASH_TEST") && body.contains("backtrace"));
}

#[test]
fn an_ambiguous_run_prefix_lists_the_candidates() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("a.db");
    let conn = plexus::data::store::open_connection(&db).expect("db");
    for id in [
        "R20260101-000000-aaaa",
        "R20260101-000000-aabb",
        "R20260202-000000-cccc",
    ] {
        conn.execute(
            "INSERT INTO runs VALUES (?1,'P','f','{}','simulated','{}','succeeded','2026-01-01T00:00:00Z',NULL,1)",
            [id],
        )
        .expect("run");
    }
    drop(conn);
    let out = plexus(dir.path(), &["--db", "a.db", "show", "R20260101"])
        .output()
        .expect("show");
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(
        t.contains("ambiguous")
            && t.contains("R20260101-000000-aaaa")
            && t.contains("R20260101-000000-aabb"),
        "{t}"
    );
    assert!(!t.contains("cccc"), "{t}");
    let out = plexus(dir.path(), &["--db", "a.db", "show", "R20260202"])
        .output()
        .expect("show");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

#[test]
fn configuration_errors_stop_every_command_that_reads_it_with_file_line_and_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/plans/avp_diffusion_planner.json");
    let plan = plan.to_str().expect("utf8");
    write(dir.path(), "syntax.toml", b"[ui]\ntheme = \"dark\n");
    write(
        dir.path(),
        "unknown.toml",
        b"[ui]\ntheme = \"dark\"\ncolour = \"red\"\n",
    );
    write(
        dir.path(),
        "type.toml",
        b"[providers.local]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\nrate_limit_rpm = \"fast\"\n",
    );
    let cases = [
        ("missing.toml", "missing.toml does not exist"),
        ("syntax.toml", "syntax.toml:2"),
        ("unknown.toml", "unknown.toml:3: unknown key `colour`"),
        ("type.toml", "type.toml:5: `providers.local.rate_limit_rpm`"),
    ];
    let commands: Vec<Vec<&str>> = vec![
        vec!["run", plan, "--headless"],
        vec!["demo", "--headless"],
        vec!["resume", "latest", "--headless"],
        vec!["providers"],
        vec!["ping", "simulated"],
        vec!["browse"],
    ];
    for (file, want) in cases {
        for cmd in &commands {
            let mut args = vec!["--db", "c.db", "--config", file];
            args.extend(cmd.iter().copied());
            let out = plexus(dir.path(), &args).output().expect("run");
            let t = text(&out);
            assert_eq!(out.status.code(), Some(1), "{args:?}: {t}");
            assert!(t.contains(want), "{args:?} should say {want:?}: {t}");
        }
    }
    assert!(!dir.path().join("c.db").exists(), "nothing ran");
}

/// A panic in a run's worker (a bug) stops the run instead of failing the task quietly:
/// the process exits as a crash (101) with the one line naming its report, and the run
/// stays `interrupted`, resumable, with the task not finished.
#[test]
fn a_worker_that_panics_ends_the_run_as_a_crash_and_leaves_it_resumable() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = dir.path().join("plan.json");
    std::fs::write(
        &plan,
        plexus::dev::gen_plan::generate(plexus::dev::gen_plan::GenSpec {
            tasks: 6,
            width: 3,
            fan_in: 1,
            max_atoms: 1,
        })
        .to_string(),
    )
    .expect("plan");
    let out = plexus(
        dir.path(),
        &[
            "--db",
            "c.db",
            "run",
            plan.to_str().expect("utf8"),
            "--headless",
        ],
    )
    .env("PLEXUS_CRASH_TEST_TASK", "T00004")
    .env("TMPDIR", dir.path())
    .output()
    .expect("run");
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(101), "{err}");
    assert!(err.contains("plexus crashed (a bug)"), "{err}");
    assert!(err.contains("the report is in"), "{err}");
    assert!(err.contains("a worker crashed (a bug)"), "{err}");
    let store = plexus::data::store::Store::open(&dir.path().join("c.db")).expect("store");
    let run = store.list_runs().expect("runs").remove(0);
    assert_eq!(run.status, "interrupted", "{err}");
    let t4 = store
        .tasks(&run.run_id)
        .expect("tasks")
        .into_iter()
        .find(|t| t.task_id == "T00004")
        .expect("T00004");
    assert!(
        !["success", "partial", "failed", "timeout", "blocked"].contains(&t4.status.as_str()),
        "{t4:?}"
    );
}
