//! A run whose only obstacles are decisions waiting for a person ends in a state of its
//! own: `awaiting_review`, exit code 6, and every place that reports it names the next
//! step (the commands that accept or reject each waiting task, and the resume). A
//! rejection of the last waiting task makes the run failed; an acceptance lets the
//! resume finish it. Decisions are recorded under the configured reviewer's name, else
//! the login name, never `unknown`.

use crate::common;

use common::bin::{output, plexus};

/// The demo, headless, in a fresh database: returns (dir, db, run id, stdout).
fn demo() -> (tempfile::TempDir, std::path::PathBuf, String, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("w.db");
    let out = output(plexus(dir.path()).arg("--db").arg(&db).args([
        "demo",
        "--headless",
        "--chunk-ms",
        "0",
        "--first-chunk-ms",
        "0",
    ]));
    assert_eq!(
        out.code,
        Some(6),
        "a run waiting for review exits 6:\n{}\n{}",
        out.stdout,
        out.stderr
    );
    let run = out
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("run ")?.split_once(": awaiting_review"))
        .map(|(id, _)| id.to_string())
        .unwrap_or_else(|| panic!("no `run R: awaiting_review` line:\n{}", out.stdout));
    (dir, db, run, out.stdout)
}

#[test]
fn the_demo_ends_awaiting_review_with_its_own_exit_code_and_the_next_steps() {
    let (dir, db, run, stdout) = demo();
    // The run stored its end (awaiting review), and it is the log's.
    common::snapshots::assert_snapshot_matches_log(&db, &run, true);
    let d = db.display().to_string();
    let task = "TASK_VALIDATOR_DIFF_01";
    // The headless summary names each command to go on with, for this database.
    for line in [
        format!("1 task is waiting for your review; read the evidence with: plexus --db {d} review {run}"),
        format!("  accept: plexus --db {d} review {run} {task} --accept"),
        format!("  reject: plexus --db {d} review {run} {task} --reject --reason \"…\""),
        format!("then run what an acceptance unblocked: plexus --db {d} resume {run}"),
    ] {
        assert!(stdout.lines().any(|l| l == line), "missing {line:?} in:\n{stdout}");
    }
    // `runs` and `show`, as tables and as JSON.
    let runs = output(plexus(dir.path()).arg("--db").arg(&db).arg("runs"));
    assert!(runs.stdout.contains("awaiting_review"), "{}", runs.stdout);
    let runs = output(
        plexus(dir.path())
            .arg("--db")
            .arg(&db)
            .args(["runs", "--json"]),
    );
    let v: serde_json::Value = serde_json::from_str(&runs.stdout).expect("runs --json");
    assert_eq!(v[0]["status"], "awaiting_review", "{v}");
    let show = output(plexus(dir.path()).arg("--db").arg(&db).args(["show", &run]));
    assert!(
        show.stdout.contains("status    awaiting_review"),
        "{}",
        show.stdout
    );
    assert!(
        show.stdout.contains("E007, awaiting review"),
        "{}",
        show.stdout
    );
    assert!(
        show.stdout.contains(&format!(
            "  accept: plexus --db {d} review {run} {task} --accept"
        )),
        "{}",
        show.stdout
    );
    let show = output(
        plexus(dir.path())
            .arg("--db")
            .arg(&db)
            .args(["show", &run, "--json"]),
    );
    let v: serde_json::Value = serde_json::from_str(&show.stdout).expect("show --json");
    assert_eq!(v["run"]["status"], "awaiting_review");
    assert_eq!(v["awaiting_review"], serde_json::json!([task]));
    // A resume with nothing decided says what to do instead.
    let resume =
        output(
            plexus(dir.path())
                .arg("--db")
                .arg(&db)
                .args(["resume", &run, "--headless"]),
        );
    assert_ne!(resume.code, Some(0));
    assert!(
        resume.stderr.contains("1 task(s) wait for review")
            && resume
                .stderr
                .contains(&format!("plexus review {run} TASK --accept")),
        "{}",
        resume.stderr
    );

    // Accepted: the resume runs what it blocked, and the run succeeds.
    let acc = output(
        plexus(dir.path())
            .arg("--db")
            .arg(&db)
            .args(["review", &run, task, "--accept"]),
    );
    assert_eq!(acc.code, Some(0), "{}", acc.stderr);
    assert!(
        acc.stdout
            .contains(&format!("run them with: plexus --db {d} resume {run}")),
        "the resume command names the database:\n{}",
        acc.stdout
    );
    let resumed =
        output(
            plexus(dir.path())
                .arg("--db")
                .arg(&db)
                .args(["resume", &run, "--headless"]),
        );
    assert_eq!(resumed.code, Some(0), "{}", resumed.stderr);
    assert!(
        resumed.stdout.contains(&format!("run {run}: succeeded")),
        "{}",
        resumed.stdout
    ); // Reviewed, then resumed: the snapshot at the end is the log's.
    common::snapshots::assert_snapshot_matches_log(&db, &run, true);
}

#[test]
fn rejecting_the_last_waiting_task_ends_the_run_failed() {
    let (dir, db, run, _) = demo();
    let rej = output(plexus(dir.path()).arg("--db").arg(&db).args([
        "review",
        &run,
        "TASK_VALIDATOR_DIFF_01",
        "--reject",
        "--reason",
        "made up",
    ]));
    assert_eq!(rej.code, Some(0), "{}", rej.stderr);
    assert!(
        rej.stdout.contains("the run now ends failed"),
        "{}",
        rej.stdout
    );
    let runs = output(
        plexus(dir.path())
            .arg("--db")
            .arg(&db)
            .args(["runs", "--json"]),
    );
    let v: serde_json::Value = serde_json::from_str(&runs.stdout).expect("runs --json");
    assert_eq!(v[0]["status"], "failed", "{v}");
    // The log ends with the new outcome, so a replay or a follower sees it too.
    let log = output(plexus(dir.path()).arg("--db").arg(&db).args(["log", &run]));
    let last: serde_json::Value =
        serde_json::from_str(log.stdout.lines().last().expect("a line")).expect("JSON");
    assert_eq!(
        (last["kind"].as_str(), last["status"].as_str()),
        (Some("run_finished"), Some("failed")),
        "{last}"
    ); // The rejection was written after the run's process ended: its snapshot is
       // older than the log's end, and the state read from it plus the rest is the log's.
    common::snapshots::assert_snapshot_matches_log(&db, &run, false);
}

#[test]
fn decisions_are_recorded_under_the_configured_name_else_the_login_name() {
    let (dir, db, run, _) = demo();
    let copy = dir.path().join("copy.db");
    std::fs::copy(&db, &copy).expect("copy");
    let config = dir.path().join("review.toml");
    std::fs::write(&config, "[review]\nreviewer = \"Ada Lovelace\"\n").expect("config");
    let out = output(
        plexus(dir.path())
            .arg("--db")
            .arg(&db)
            .arg("--config")
            .arg(&config)
            .args([
                "review",
                &run,
                "TASK_VALIDATOR_DIFF_01",
                "--accept",
                "--json",
            ]),
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let d: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    assert_eq!(d["reviewer"], "Ada Lovelace", "{d}");

    // No name configured and none in the environment: the system's login name.
    let out = output(
        plexus(dir.path())
            .env_remove("USER")
            .env_remove("LOGNAME")
            .arg("--db")
            .arg(&copy)
            .args([
                "review",
                &run,
                "TASK_VALIDATOR_DIFF_01",
                "--accept",
                "--json",
            ]),
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let d: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    let who = d["reviewer"].as_str().unwrap_or_default();
    assert!(!who.is_empty() && who != "unknown", "{d}");

    // A reviewer name that is not a name is refused where it stands.
    std::fs::write(&config, "[review]\nreviewer = \"  \"\n").expect("config");
    let out = output(
        plexus(dir.path())
            .arg("--db")
            .arg(&copy)
            .arg("--config")
            .arg(&config)
            .args(["review", &run]),
    );
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(out.stderr.contains("review.reviewer"), "{}", out.stderr);
}

/// A run's listed time is its own clock's: the wait for a review between the demo's
/// stop and the resume that finished it is left out (`runs` and the Runs screen showed
/// the time from its start to its end), and it equals the clock the run's log folds to.
#[test]
fn a_run_s_listed_time_leaves_out_the_wait_for_its_review() {
    let (dir, db, run, _) = demo();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let plexus_at = |args: &[&str]| output(plexus(dir.path()).arg("--db").arg(&db).args(args));
    let acc = plexus_at(&["review", &run, "TASK_VALIDATOR_DIFF_01", "--accept"]);
    assert_eq!(acc.code, Some(0), "{}", acc.stderr);
    let resumed = plexus_at(&["resume", &run, "--headless"]);
    assert_eq!(resumed.code, Some(0), "{}", resumed.stderr);
    let store = plexus::data::store::Store::open(&db).expect("store");
    let listed = store
        .list_runs()
        .expect("runs")
        .into_iter()
        .find(|r| r.run_id == run)
        .expect("the run");
    let ms = |t: &str| {
        chrono::DateTime::parse_from_rfc3339(t)
            .expect("a time")
            .timestamp_millis()
    };
    let wall = ms(listed.finished_at.as_deref().expect("ended")) - ms(&listed.created_at);
    let active = listed.active_ms.expect("its clock");
    assert!(active + 1_000 < wall, "ran {active} ms of {wall} ms");
    let folded = plexus::tui::loader::fold_run(&store, &run, None, None).expect("fold");
    assert_eq!(active, folded.clock.active_ms, "the run's own clock");
}
