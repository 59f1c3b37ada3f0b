//! One database file shared by many processes: schema setup is atomic (any number of
//! processes may open a new or an old file at once), a run has one owner at a time (a
//! resume of a live run is refused; two resumes of a crashed run: one proceeds), and
//! readers create nothing.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use plexus::data::store::Store;
use plexus::dev::gen_plan::{generate, GenSpec};
use plexus::model::event::EngineEvent;

const EXE: &str = env!("CARGO_BIN_EXE_plexus");

/// A command of the real binary on database `db`, with no config file around.
fn plexus(dir: &Path, db: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(EXE);
    c.current_dir(dir)
        .arg("--db")
        .arg(db)
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

/// Kills the child when the test ends early.
struct Reap(Child);

impl Drop for Reap {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn small_plan(dir: &Path, tasks: usize) -> PathBuf {
    let plan = dir.join(format!("plan{tasks}.json"));
    let spec = GenSpec {
        tasks,
        width: 3,
        fan_in: 1,
        max_atoms: 1,
    };
    std::fs::write(&plan, generate(spec).to_string()).expect("write plan");
    plan
}

fn user_version(db: &Path) -> i64 {
    rusqlite::Connection::open(db)
        .expect("open")
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .expect("version")
}

/// Starts 4 `run` and 4 `runs` processes on `db` at once; every one must succeed.
fn eight_at_once(dir: &Path, db: &Path, plan: &Path) {
    eight(dir, db, plan, |i| i % 2 == 0);
}

/// Starts 8 `run` processes on `db` at once; every one must succeed.
fn eight_runs_at_once(dir: &Path, db: &Path, plan: &Path) {
    eight(dir, db, plan, |_| true);
}

fn eight(dir: &Path, db: &Path, plan: &Path, is_run: impl Fn(usize) -> bool) {
    let plan = plan.to_str().expect("utf8");
    let children: Vec<(String, Child)> = (0..8)
        .map(|i| {
            let args: Vec<&str> = if is_run(i) {
                vec![
                    "run",
                    plan,
                    "--chunk-ms",
                    "0",
                    "--first-chunk-ms",
                    "0",
                    "--headless",
                ]
            } else {
                vec!["runs"]
            };
            let child = plexus(dir, db, &args).spawn().expect("spawn");
            (args.join(" "), child)
        })
        .collect();
    for (what, child) in children {
        let out = child.wait_with_output().expect("wait");
        let t = text(&out);
        assert!(out.status.success(), "`{what}` failed: {t}");
        for bad in [
            "already exists",
            "duplicate column",
            "database is locked",
            "UNIQUE",
        ] {
            assert!(!t.contains(bad), "`{what}`: {t}");
        }
    }
}

#[test]
fn eight_processes_open_a_new_database_at_once_twenty_times() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = small_plan(dir.path(), 3);
    for round in 0..20 {
        let db = dir.path().join(format!("new{round}/p.db"));
        eight_at_once(dir.path(), &db, &plan);
        let store = Store::open(&db).expect("readable");
        assert_eq!(store.list_runs().expect("runs").len(), 4, "round {round}");
        drop(store);
        assert_eq!(
            user_version(&db),
            plexus::data::store::schema::SCHEMA_VERSION
        );
    }
}

#[test]
fn eight_processes_open_an_old_database_at_once_and_one_migrates_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = small_plan(dir.path(), 3);
    for round in 0..3 {
        let db = dir.path().join(format!("old{round}.db"));
        {
            let mut conn = rusqlite::Connection::open(&db).expect("open");
            plexus::data::store::schema::migrate_to(&mut conn, 1).expect("a version 1 file");
            conn.execute(
                "INSERT INTO runs VALUES ('R0','P','f','{}','simulated','{}','succeeded','2026-01-01T00:00:00Z',NULL,1)",
                [],
            )
            .expect("an old run");
        }
        // A reader does not upgrade it, and says how.
        let out = plexus(dir.path(), &db, &["runs"]).output().expect("runs");
        let t = text(&out);
        assert_eq!(out.status.code(), Some(1), "{t}");
        assert!(
            t.contains("schema version 1 is older") && t.contains("plexus check --upgrade"),
            "{t}"
        );
        assert_eq!(user_version(&db), 1);
        eight_runs_at_once(dir.path(), &db, &plan);
        assert_eq!(
            user_version(&db),
            plexus::data::store::schema::SCHEMA_VERSION
        );
        let runs = Store::open(&db).expect("store").list_runs().expect("runs");
        assert_eq!(runs.len(), 9, "the old run is kept beside the 8 new ones");
    }
}

#[test]
fn a_negative_or_unknown_schema_version_is_refused_by_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (v, want) in [(-3, "not one plexus knows"), (99, "newer than this plexus")] {
        let db = dir.path().join(format!("v{v}.db"));
        rusqlite::Connection::open(&db)
            .expect("open")
            .pragma_update(None, "user_version", v)
            .expect("version");
        let plan = small_plan(dir.path(), 1);
        for args in [
            vec!["runs"],
            vec!["run", plan.to_str().expect("utf8"), "--headless"],
        ] {
            let out = plexus(dir.path(), &db, &args).output().expect("run");
            let t = text(&out);
            assert_eq!(out.status.code(), Some(1), "{t}");
            assert!(
                t.contains(want) && t.contains(&db.display().to_string()),
                "{t}"
            );
        }
        assert_eq!(user_version(&db), v, "the file is left as it was");
    }
}

/// Starts a headless run slow enough to still be going a few seconds later; returns it
/// once its first invocation started, with its run id.
fn start_slow_run(dir: &Path, db: &Path, plan: &Path) -> (Reap, String) {
    start_run_at(dir, db, plan, "150")
}

/// Starts a headless run whose chunks come `chunk_ms` apart; returns it once its first
/// invocation started, with its run id.
fn start_run_at(dir: &Path, db: &Path, plan: &Path, chunk_ms: &str) -> (Reap, String) {
    let child = plexus(
        dir,
        db,
        &[
            "run",
            plan.to_str().expect("utf8"),
            "--chunk-ms",
            chunk_ms,
            "--first-chunk-ms",
            "50",
            "--headless",
            "--concurrency",
            "1",
        ],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .expect("spawn");
    let reap = Reap(child);
    let end = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(Instant::now() < end, "the run never started");
        if let Ok(store) = Store::open(db) {
            if let Ok(runs) = store.list_runs() {
                if let Some(r) = runs.first() {
                    if store
                        .in_flight_tasks(&r.run_id)
                        .is_ok_and(|t| !t.is_empty())
                    {
                        return (reap, r.run_id.clone());
                    }
                }
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn invocation_count(db: &Path, run: &str) -> i64 {
    Store::open(db)
        .expect("store")
        .invocations(run)
        .expect("invocations")
        .len() as i64
}

#[test]
fn resume_of_a_live_run_is_refused_naming_the_owner_and_the_run_finishes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("live.db");
    let plan = small_plan(dir.path(), 4);
    // Slow enough to outlive the refused resume, quick enough to finish soon after.
    let (mut owner, run) = start_run_at(dir.path(), &db, &plan, "40");
    let pid = owner.0.id();
    let out = plexus(dir.path(), &db, &["resume", &run, "--headless"])
        .output()
        .expect("resume");
    let t = text(&out);
    assert_eq!(out.status.code(), Some(4), "{t}");
    assert!(
        t.contains(&format!("is being executed by pid {pid} on host")),
        "{t}"
    );
    let status = owner.0.wait().expect("wait");
    assert!(status.success(), "the live run finished: {status:?}");
    let store = Store::open(&db).expect("store");
    let r = store.run(&run).expect("run");
    assert_eq!(r.status, "succeeded");
    // Each task ran once: the refused resume started nothing.
    assert_eq!(invocation_count(&db, &run), 4);
}

#[test]
fn two_resumes_of_a_killed_run_started_together_one_runs_one_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = small_plan(dir.path(), 6);
    for round in 0..2 {
        let db = dir.path().join(format!("killed{round}.db"));
        let (mut owner, run) = start_slow_run(dir.path(), &db, &plan);
        owner.0.kill().expect("kill -9");
        owner.0.wait().expect("reaped");
        // The winner's pace keeps it going for a few seconds, long after the loser's check.
        let resume = ["resume", &run, "--headless", "--chunk-ms", "30"];
        let a = plexus(dir.path(), &db, &resume).spawn().expect("a");
        let b = plexus(dir.path(), &db, &resume).spawn().expect("b");
        let outs = [
            a.wait_with_output().expect("a"),
            b.wait_with_output().expect("b"),
        ];
        let texts: Vec<String> = outs.iter().map(text).collect();
        let ran: Vec<&Output> = outs.iter().filter(|o| o.status.code() == Some(0)).collect();
        let refused: Vec<&Output> = outs.iter().filter(|o| o.status.code() == Some(4)).collect();
        assert_eq!((ran.len(), refused.len()), (1, 1), "{texts:#?}");
        let refusal = text(refused[0]);
        assert!(refusal.contains("is being executed by pid"), "{refusal}");
        for t in &texts {
            assert!(!t.contains("UNIQUE") && !t.contains("constraint"), "{t}");
        }
        let store = Store::open(&db).expect("store");
        assert_eq!(store.run(&run).expect("run").status, "succeeded");
        // The log says who took the run over, and why.
        let (last, _) = store.last_event(&run).expect("last");
        let takeovers: Vec<_> = store
            .events(&run, 1, last)
            .expect("events")
            .into_iter()
            .filter_map(|e| match e.event {
                Ok(EngineEvent::LeaseTakenOver(l)) => Some(l),
                _ => None,
            })
            .collect();
        assert_eq!(takeovers.len(), 1, "{takeovers:?}");
        assert_eq!(takeovers[0].reason, "process_gone");
    }
}

/// Makes `run` look as if `pid` on `host` owned it with a heartbeat `age` ago.
fn fake_owner(db: &Path, run: &str, pid: u32, host: &str, age: Duration) {
    let now = chrono::Utc::now().timestamp_millis();
    rusqlite::Connection::open(db)
        .expect("open")
        .execute(
            "INSERT OR REPLACE INTO run_leases (run_id, token, pid, host, started_at, heartbeat_ms)
             VALUES (?1, 1, ?2, ?3, '2026-01-01T00:00:00Z', ?4)",
            rusqlite::params![run, pid, host, now - age.as_millis() as i64],
        )
        .expect("lease");
}

#[test]
fn a_lease_with_a_stale_heartbeat_is_taken_over_and_a_fresh_one_on_this_host_is_not() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("stale.db");
    let plan = small_plan(dir.path(), 4);
    let (mut owner, run) = start_slow_run(dir.path(), &db, &plan);
    owner.0.kill().expect("kill -9");
    owner.0.wait().expect("reaped");
    // A live process on this host (this test) with a fresh heartbeat owns it: refused.
    fake_owner(
        &db,
        &run,
        std::process::id(),
        &plexus::data::store::lease::host_name(),
        Duration::ZERO,
    );
    let out = plexus(dir.path(), &db, &["resume", &run, "--headless"])
        .output()
        .expect("resume");
    let t = text(&out);
    assert_eq!(out.status.code(), Some(4), "{t}");
    assert!(
        t.contains(&format!("pid {} on host", std::process::id())),
        "{t}"
    );
    // Another host that has not been heard of for a minute: taken over.
    fake_owner(&db, &run, 1, "elsewhere.example", Duration::from_secs(60));
    let out = plexus(
        dir.path(),
        &db,
        &["resume", &run, "--headless", "--chunk-ms", "0"],
    )
    .output()
    .expect("resume");
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(
        t.contains("taken over from pid 1 on host elsewhere.example (heartbeat stale"),
        "{t}"
    );
    let store = Store::open(&db).expect("store");
    let (last, _) = store.last_event(&run).expect("last");
    let reasons: Vec<String> = store
        .events(&run, 1, last)
        .expect("events")
        .into_iter()
        .filter_map(|e| match e.event {
            Ok(EngineEvent::LeaseTakenOver(l)) => Some(format!(
                "{}@{}:{}",
                l.previous_pid, l.previous_host, l.reason
            )),
            _ => None,
        })
        .collect();
    assert_eq!(
        reasons,
        vec!["1@elsewhere.example:heartbeat_stale".to_string()]
    );
    // The lease is given back at the end.
    let leases: i64 = rusqlite::Connection::open(&db)
        .expect("open")
        .query_row("SELECT COUNT(*) FROM run_leases", [], |r| r.get(0))
        .expect("count");
    assert_eq!(leases, 0);
}

fn listing(dir: &Path) -> Vec<String> {
    let mut all = Vec::new();
    for e in walk(dir) {
        all.push(e.strip_prefix(dir).unwrap_or(&e).display().to_string());
    }
    all.sort();
    all
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            }
            out.push(p);
        }
    }
    out
}

#[test]
fn readers_and_commands_without_a_database_create_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = small_plan(dir.path(), 2);
    let before = listing(dir.path());
    let typo = dir.path().join(".plexsu/plexus.db");
    let plan_arg = plan.to_str().expect("utf8");
    for (args, code) in [
        (vec!["runs"], 0),
        (vec!["show", "latest"], 1),
        (vec!["log", "latest"], 1),
        (vec!["check"], 1),
        (vec!["validate", plan_arg], 0),
        (vec!["dev", "gen-plan", "--tasks", "5", "--width", "2"], 0),
        (vec!["providers"], 0),
        (vec!["ping", "simulated"], 0),
    ] {
        let out = plexus(dir.path(), &typo, &args).output().expect("run");
        let t = text(&out);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {t}");
        if code == 1 {
            assert!(t.contains("no database at") && t.contains(".plexsu"), "{t}");
        }
        assert_eq!(listing(dir.path()), before, "{args:?} created something");
    }
    // The mock server too (it is stopped once it has said where it listens).
    let mut server = Reap(
        plexus(dir.path(), &typo, &["dev", "mock-server", "--port", "0"])
            .spawn()
            .expect("mock"),
    );
    let mut stdout = server.0.stdout.take().expect("stdout");
    let mut first = [0u8; 16];
    let _ = std::io::Read::read(&mut stdout, &mut first);
    drop(server);
    assert_eq!(listing(dir.path()), before, "mock-server created something");
}

#[test]
fn check_upgrade_brings_an_old_file_to_this_schema_and_plain_check_does_not() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("old.db");
    let mut conn = rusqlite::Connection::open(&db).expect("open");
    plexus::data::store::schema::migrate_to(&mut conn, 2).expect("a version 2 file");
    drop(conn);
    let out = plexus(dir.path(), &db, &["check"]).output().expect("check");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(user_version(&db), 2);
    let out = plexus(dir.path(), &db, &["check", "--upgrade"])
        .output()
        .expect("check --upgrade");
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(t.contains("integrity_check ok"), "{t}");
    assert_eq!(
        user_version(&db),
        plexus::data::store::schema::SCHEMA_VERSION
    );
}

/// What schema versions 8 to 11 added, taken away (the plan's text back in the run's row;
/// no cost columns; no eval tables): a file as version 7 left it.
const UNDO_8_AND_9: &str = "DROP TABLE judge_cache; DROP TABLE eval_checks; DROP TABLE eval_attempts;
     DROP TABLE eval_samples; DROP TABLE evals;
     UPDATE runs SET plan_json = (SELECT CAST(p.plan_json AS TEXT) FROM run_plans p WHERE p.run_id = runs.run_id);
     DROP TABLE run_plans;
     DROP INDEX invocations_cost;
     ALTER TABLE invocations DROP COLUMN cost_usd;
     ALTER TABLE invocations DROP COLUMN provider_cached_tokens;";

#[test]
fn resume_upgrades_a_file_written_by_the_previous_version() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("prev.db");
    let plan = small_plan(dir.path(), 4);
    let (mut owner, run) = start_slow_run(dir.path(), &db, &plan);
    owner.0.kill().expect("kill -9");
    owner.0.wait().expect("reaped");
    // What the version of schema 3 left behind: the plan's text in the run's row, no
    // failed-attempts index and its computed columns, no reviews, no leases.
    let conn = rusqlite::Connection::open(&db).expect("open");
    conn.execute_batch(&format!(
        "{UNDO_8_AND_9}
         DROP INDEX invocations_failed;
         ALTER TABLE invocations DROP COLUMN avg_score;
         ALTER TABLE invocations DROP COLUMN error_message;
         DROP TABLE reviews;
         ALTER TABLE knowledge_atoms DROP COLUMN reviewed_at;
         ALTER TABLE knowledge_atoms DROP COLUMN reviewed_by;
         DROP TABLE run_leases;
         DROP TABLE id_counters;
         PRAGMA user_version = 3;"
    ))
    .expect("downgrade");
    drop(conn);
    let out = plexus(
        dir.path(),
        &db,
        &["resume", &run, "--headless", "--chunk-ms", "0"],
    )
    .output()
    .expect("resume");
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert_eq!(
        user_version(&db),
        plexus::data::store::schema::SCHEMA_VERSION
    );
    let store = Store::open(&db).expect("store");
    assert_eq!(store.run(&run).expect("run").status, "succeeded");
}

/// A file of schema 7 kept each run's plan text in the run's row: it opens, its plan is
/// read from there, and the run resumes, exports and imports with that plan (a run made
/// after the upgrade keeps its text in `run_plans`, its row's column left empty).
#[test]
fn a_run_whose_plan_text_is_in_its_row_as_schema_7_kept_it_resumes_and_exports() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("v7.db");
    let plan = small_plan(dir.path(), 4);
    let (mut owner, run) = start_slow_run(dir.path(), &db, &plan);
    owner.0.kill().expect("kill -9");
    owner.0.wait().expect("reaped");
    let conn = rusqlite::Connection::open(&db).expect("open");
    conn.execute_batch(&format!("{UNDO_8_AND_9} PRAGMA user_version = 7;"))
        .expect("downgrade");
    drop(conn);
    let want: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&plan).expect("plan")).expect("json");
    let plan_of = |db: &Path, run: &str| -> serde_json::Value {
        let (_, json, _) = Store::open(db).expect("store").run_plan(run).expect("plan");
        serde_json::from_str(&json).expect("stored plan")
    };
    let out = plexus(
        dir.path(),
        &db,
        &["resume", &run, "--headless", "--chunk-ms", "0"],
    )
    .output()
    .expect("resume");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        user_version(&db),
        plexus::data::store::schema::SCHEMA_VERSION
    );
    assert_eq!(
        Store::open(&db)
            .expect("store")
            .run(&run)
            .expect("run")
            .status,
        "succeeded"
    );
    assert_eq!(plan_of(&db, &run), want, "read from the run's row");
    let out = plexus(dir.path(), &db, &["export", &run, "-o", "run.jsonl"])
        .output()
        .expect("export");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let copy = dir.path().join("copy.db");
    let out = plexus(dir.path(), &copy, &["import", "run.jsonl"])
        .output()
        .expect("import");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(plan_of(&copy, &run), want, "exported and imported");
    // A new run on the upgraded file: its row holds no plan text.
    let out = plexus(
        dir.path(),
        &db,
        &[
            "run",
            plan.to_str().expect("utf8"),
            "--headless",
            "--chunk-ms",
            "0",
        ],
    )
    .output()
    .expect("run");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let conn = rusqlite::Connection::open(&db).expect("open");
    let rows: Vec<(String, usize, Option<usize>)> = conn
        .prepare("SELECT r.run_id, length(r.plan_json), length(p.plan_json) FROM runs r LEFT JOIN run_plans p USING (run_id) ORDER BY r.rowid")
        .expect("prepare")
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(
        (rows[0].0.as_str(), rows[0].2),
        (run.as_str(), None),
        "{rows:?}"
    );
    assert!(rows[0].1 > 0, "{rows:?}");
    assert_eq!(rows[1].1, 0, "{rows:?}");
    assert!(rows[1].2.is_some_and(|n| n > 0), "{rows:?}");
    assert_eq!(plan_of(&db, &rows[1].0), want);
}

#[test]
fn another_programs_sqlite_file_is_refused_and_left_as_it_was() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("other.sqlite");
    let conn = rusqlite::Connection::open(&db).expect("open");
    conn.execute_batch("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine');")
        .expect("another program's data");
    drop(conn);
    let before = std::fs::read(&db).expect("bytes");
    let plan = small_plan(dir.path(), 1);
    for args in [
        vec!["run", plan.to_str().expect("utf8"), "--headless"],
        vec!["runs"],
        vec!["check", "--upgrade"],
    ] {
        let out = plexus(dir.path(), &db, &args).output().expect("run");
        let t = text(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {t}");
        assert!(t.contains("is not a plexus database"), "{t}");
        assert_eq!(
            std::fs::read(&db).expect("bytes"),
            before,
            "{args:?} changed it"
        );
    }
    assert!(!dir.path().join("other.sqlite-wal").exists());
}

/// Readers that open a file another process is creating (it exists, empty, before its
/// schema is set up) wait for it instead of calling it "not a plexus database"; `check`
/// of it is never damage; a file nobody fills is said to be empty, and `check` of it
/// exits 0 with nothing to check.
#[test]
fn readers_wait_for_a_file_being_created_and_check_never_calls_it_damage() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("new.db");
    // What SQLite leaves for an instant when a process creates the file.
    std::fs::write(&db, b"").expect("an empty file");
    let readers: Vec<Reap> = ["runs", "check", "runs", "check"]
        .iter()
        .map(|c| Reap(plexus(dir.path(), &db, &[c]).spawn().expect("reader")))
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    // The creator sets the schema up.
    drop(plexus::data::store::open_connection(&db).expect("create"));
    for mut r in readers {
        let out = std::mem::replace(&mut r.0, Command::new("true").spawn().expect("placeholder"))
            .wait_with_output()
            .expect("reader output");
        let t = text(&out);
        assert_eq!(out.status.code(), Some(0), "{t}");
        assert!(!t.contains("empty"), "{t}");
    }
    // A file nobody fills: said plainly after a short wait.
    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, b"").expect("an empty file");
    let out = plexus(dir.path(), &empty, &["check"])
        .output()
        .expect("check");
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(t.contains("empty, nothing to check"), "{t}");
    let out = plexus(dir.path(), &empty, &["runs"])
        .output()
        .expect("runs");
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(t.contains("no runs"), "{t}");
    let out = plexus(dir.path(), &empty, &["show", "latest"])
        .output()
        .expect("show");
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("has no plexus schema yet"), "{t}");
}

/// The gaps, in ms, between consecutive chunks of one invocation, for the invocations
/// that started after event `after`.
fn chunk_gaps(store: &Store, run: &str, after: u64) -> Vec<i64> {
    let (last, _) = store.last_event(run).expect("last");
    let mut prev: std::collections::HashMap<String, i64> = Default::default();
    let mut gaps = Vec::new();
    for e in store.events(run, after + 1, last).expect("events") {
        let Some(inv) = e.invocation_id.clone() else {
            continue;
        };
        match e.event {
            Ok(EngineEvent::InvocationStarted(_)) => {
                prev.insert(inv, e.ts);
            }
            Ok(EngineEvent::Chunk(_)) => {
                if let Some(p) = prev.get_mut(&inv) {
                    gaps.push(e.ts - *p);
                    *p = e.ts;
                }
            }
            _ => {}
        }
    }
    gaps.sort_unstable();
    gaps
}

#[test]
fn a_resume_runs_the_simulated_model_at_the_pace_it_is_given_else_at_the_runs_own() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = small_plan(dir.path(), 2);
    for (round, pace) in [(0, Some("0")), (1, None)] {
        let db = dir.path().join(format!("pace{round}.db"));
        let (mut owner, run) = start_run_at(dir.path(), &db, &plan, "120");
        owner.0.kill().expect("kill -9");
        owner.0.wait().expect("reaped");
        let mut args = vec!["resume", run.as_str(), "--headless"];
        if let Some(ms) = pace {
            args.extend(["--chunk-ms", ms, "--first-chunk-ms", ms]);
        }
        let out = plexus(dir.path(), &db, &args).output().expect("resume");
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let store = Store::open(&db).expect("store");
        let (last, _) = store.last_event(&run).expect("last");
        let resumed = store
            .events(&run, 1, last)
            .expect("events")
            .into_iter()
            .find(|e| matches!(e.event, Ok(EngineEvent::RunResumed(_))))
            .expect("a run_resumed event")
            .seq;
        let gaps = chunk_gaps(&store, &run, resumed);
        assert!(gaps.len() >= 10, "{gaps:?}");
        let median = gaps[gaps.len() / 2];
        match pace {
            Some(_) => assert!(median < 60, "no delay asked, median gap {median} ms"),
            None => assert!(
                median >= 110,
                "the run's own 120 ms, median gap {median} ms"
            ),
        }
    }
}
