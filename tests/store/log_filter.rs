//! `plexus log RUN` filtered: by kind (comma lists too), by task, by time (`--since` as
//! an RFC 3339 time, a time of day, a duration from the run's start or an event number),
//! each alone and combined, with clear errors for unknown kinds and tasks and bad times;
//! and followed: new events of a run another process writes are printed as they are
//! committed, and following stops by itself when the run ends — read-only throughout.

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use chrono::{SecondsFormat, TimeZone, Utc};
use common::bin::{output, plexus, Running};
use plexus::cli::commands::log::{write_log, LogFilter};
use plexus::data::store::Store;
use serde_json::Value;

/// One finished run on the simulated provider, shared by the tests.
struct Ran {
    _dir: tempfile::TempDir,
    dir: PathBuf,
    db: PathBuf,
    /// Its whole log.
    all: Vec<Value>,
}

fn ran() -> &'static Ran {
    static RAN: OnceLock<Ran> = OnceLock::new();
    RAN.get_or_init(|| {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().to_path_buf();
        let plan = serde_json::json!({
            "plan_id": "LOG",
            "execution_mode": "Deep_Internalization",
            "tasks": [
                {"task_id": "zeta", "agent": "Scholar_Internalizer", "instruction": "Last.", "depends_on": ["mid"]},
                {"task_id": "alpha", "agent": "Scholar_Internalizer", "instruction": "Alone."},
                {"task_id": "mid", "agent": "Scholar_Internalizer", "instruction": "First."}
            ]
        });
        std::fs::write(dir.join("plan.json"), plan.to_string()).expect("plan");
        let db = dir.join("log.db");
        let out = output(plexus(&dir).arg("--db").arg(&db).args(["run", "plan.json", "--chunk-ms", "5", "--first-chunk-ms", "20", "--headless"]));
        assert_eq!(out.code, Some(0), "{}", out.stderr);
        let all = lines(&db, &LogFilter::default()).expect("the whole log");
        Ran {
            _dir: tmp,
            dir,
            db,
            all,
        }
    })
}

/// The events `filter` keeps of the latest run of `db`, parsed.
fn lines(db: &Path, filter: &LogFilter) -> color_eyre::Result<Vec<Value>> {
    let mut out = Vec::new();
    write_log(db, "latest", filter, &mut out)?;
    Ok(parse(&out))
}

fn parse(out: &[u8]) -> Vec<Value> {
    String::from_utf8(out.to_vec())
        .expect("UTF-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

fn log(filter: LogFilter) -> Vec<Value> {
    lines(&ran().db, &filter).expect("the filtered log")
}

fn err(filter: LogFilter) -> String {
    format!(
        "{:#}",
        lines(&ran().db, &filter).expect_err("an error is expected")
    )
}

fn kinds(v: &[Value]) -> BTreeSet<String> {
    v.iter()
        .map(|e| e["kind"].as_str().unwrap_or("").to_string())
        .collect()
}

fn seqs(v: &[Value]) -> Vec<u64> {
    v.iter().filter_map(|e| e["seq"].as_u64()).collect()
}

fn ts(e: &Value) -> i64 {
    e["ts"].as_i64().expect("ts")
}

/// The events of the whole log for which `keep` holds.
fn expected(keep: impl Fn(&Value) -> bool) -> Vec<Value> {
    ran().all.iter().filter(|e| keep(e)).cloned().collect()
}

fn since(text: &str) -> LogFilter {
    LogFilter {
        since: Some(text.into()),
        ..LogFilter::default()
    }
}

#[test]
fn without_a_filter_every_event_is_printed_as_before() {
    let r = ran();
    let n = r.all.len() as u64;
    assert!(n > 20, "{n} events");
    assert_eq!(seqs(&r.all), (1..=n).collect::<Vec<_>>());
    // The binary's `plexus log` prints the same lines.
    let out = output(
        plexus(&r.dir)
            .arg("--db")
            .arg(&r.db)
            .args(["log", "latest"]),
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(parse(out.stdout.as_bytes()), r.all);
}

#[test]
fn kinds_keep_exactly_those_kinds() {
    let one = log(LogFilter {
        kinds: vec!["task_finished,run_finished".into()],
        ..LogFilter::default()
    });
    assert_eq!(
        kinds(&one),
        BTreeSet::from(["task_finished".into(), "run_finished".into()])
    );
    assert_eq!(
        one,
        expected(|e| e["kind"] == "task_finished" || e["kind"] == "run_finished")
    );
    assert_eq!(
        one.iter().filter(|e| e["kind"] == "task_finished").count(),
        3
    );

    let two = log(LogFilter {
        kinds: vec!["chunk".into(), " atoms_graded ".into()],
        ..LogFilter::default()
    });
    assert_eq!(
        kinds(&two),
        BTreeSet::from(["chunk".into(), "atoms_graded".into()])
    );
    assert_eq!(
        two,
        expected(|e| e["kind"] == "chunk" || e["kind"] == "atoms_graded")
    );
}

#[test]
fn a_task_keeps_only_its_events() {
    let mid = log(LogFilter {
        task: Some("mid".into()),
        ..LogFilter::default()
    });
    assert!(mid.iter().all(|e| e["task_id"] == "mid"));
    assert_eq!(mid, expected(|e| e["task_id"] == "mid"));
    let k = kinds(&mid);
    for kind in ["task_ready", "invocation_started", "chunk", "task_finished"] {
        assert!(k.contains(kind), "{kind} in {k:?}");
    }
    assert!(!k.contains("run_started") && !k.contains("run_finished"));

    let both = log(LogFilter {
        kinds: vec!["task_finished".into()],
        task: Some("zeta".into()),
        ..LogFilter::default()
    });
    assert_eq!(both.len(), 1, "{both:?}");
    assert_eq!(
        (&both[0]["kind"], &both[0]["task_id"]),
        (&"task_finished".into(), &"zeta".into())
    );
}

#[test]
fn since_takes_each_form() {
    let all = &ran().all;
    let n = all.len() as u64;
    let start = ts(&all[0]);
    // An event in the middle of the run, later than the start.
    let mid = all
        .iter()
        .skip(all.len() / 2)
        .find(|e| ts(e) > start)
        .expect("an event after the start");
    let t = ts(mid);

    let k = n / 2;
    assert_eq!(
        seqs(&log(since(&format!("#{k}")))),
        (k..=n).collect::<Vec<_>>()
    );
    assert_eq!(log(since("+0s")), *all);

    let later = expected(|e| ts(e) >= t);
    assert!(!later.is_empty() && later.len() < all.len());
    assert_eq!(log(since(&format!("+{}ms", t - start))), later);
    let at = Utc.timestamp_millis_opt(t).single().expect("time");
    assert_eq!(
        log(since(&at.to_rfc3339_opts(SecondsFormat::Millis, true))),
        later
    );

    // A time of day is UTC on the run's start date, to the second or the minute.
    let second = t - t.rem_euclid(1000);
    assert_eq!(
        log(since(&at.format("%H:%M:%S").to_string())),
        expected(|e| ts(e) >= second)
    );
    let minute = t - t.rem_euclid(60_000);
    assert_eq!(
        log(since(&at.format("%H:%M").to_string())),
        expected(|e| ts(e) >= minute)
    );

    // Forms that keep nothing.
    for none in [
        "+1h",
        "+2m30s",
        "2999-01-01T00:00:00Z",
        &format!("#{}", n + 1),
    ] {
        assert!(log(since(none)).is_empty(), "{none}");
    }

    // Combined with a kind and a task.
    let f = LogFilter {
        kinds: vec!["chunk".into()],
        task: Some("zeta".into()),
        since: Some(format!("+{}ms", t - start)),
        follow: false,
    };
    assert_eq!(
        log(f),
        expected(|e| ts(e) >= t && e["kind"] == "chunk" && e["task_id"] == "zeta")
    );
}

#[test]
fn unknown_kinds_and_tasks_and_bad_times_are_clear_errors() {
    let e = err(LogFilter {
        kinds: vec!["chunk,task_started".into()],
        ..LogFilter::default()
    });
    assert!(e.contains("--kind") && e.contains("`task_started`"), "{e}");
    assert!(
        e.contains("task_finished") && e.contains("run_started"),
        "lists the kinds: {e}"
    );
    let e = err(LogFilter {
        kinds: vec![",".into()],
        ..LogFilter::default()
    });
    assert!(e.contains("--kind"), "{e}");

    let e = err(LogFilter {
        task: Some("omega".into()),
        ..LogFilter::default()
    });
    assert!(e.contains("--task") && e.contains("`omega`"), "{e}");
    assert!(
        e.contains("zeta, alpha, mid"),
        "lists the tasks in plan order: {e}"
    );

    for bad in ["yesterday", "+5", "+1x", "#0", "#-3", "24:61", ""] {
        let e = err(since(bad));
        assert!(e.contains("--since"), "{bad}: {e}");
    }
    let e = format!(
        "{:#}",
        write_log(
            &ran().db,
            "NO_SUCH_RUN",
            &LogFilter::default(),
            &mut Vec::new()
        )
        .expect_err("no such run")
    );
    assert!(e.contains("NO_SUCH_RUN"), "{e}");
}

/// The files in `dir`, with their sizes; SQLite's own `-shm` and `-wal` by name only
/// (every reader of the database, here the other tests sharing it, may touch them).
fn files(dir: &Path) -> BTreeSet<(String, u64)> {
    std::fs::read_dir(dir)
        .expect("read dir")
        .filter_map(Result::ok)
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let size = if name.ends_with("-shm") || name.ends_with("-wal") {
                0
            } else {
                e.metadata().map(|m| m.len()).unwrap_or(0)
            };
            (name, size)
        })
        .collect()
}

#[test]
fn following_a_finished_run_prints_it_and_ends_creating_nothing() {
    let r = ran();
    let before = files(&r.dir);
    let started = Instant::now();
    let got = log(LogFilter {
        follow: true,
        ..LogFilter::default()
    });
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(got, r.all);
    assert_eq!(
        files(&r.dir),
        before,
        "following wrote nothing beside the database"
    );
}

#[test]
fn following_a_live_run_prints_new_events_and_stops_when_it_ends() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    common::bin::gen_plan(dir, 5, 2);
    let db = dir.join("live.db");
    let mut child = Running::spawn(
        plexus(dir).arg("--db").arg(&db).args([
            "run",
            "plan.json",
            "--chunk-ms",
            "40",
            "--first-chunk-ms",
            "100",
            "--headless",
        ]),
        dir.join("stderr.txt"),
    );
    // Wait for its first events.
    let deadline = Instant::now() + Duration::from_secs(60);
    let seen = loop {
        let last = Store::open(&db)
            .ok()
            .and_then(|s| {
                let run = s.list_runs().ok()?.first()?.run_id.clone();
                s.last_event(&run).ok()
            })
            .map_or(0, |(seq, _)| seq);
        if last > 0 {
            break last;
        }
        assert!(child.running(), "the run ended early: {}", child.stderr());
        assert!(Instant::now() < deadline, "no events: {}", child.stderr());
        std::thread::sleep(Duration::from_millis(20));
    };

    let follow = |kinds: Vec<String>| {
        let db = db.clone();
        std::thread::spawn(move || {
            let mut out = Vec::new();
            let filter = LogFilter {
                kinds,
                follow: true,
                ..LogFilter::default()
            };
            write_log(&db, "latest", &filter, &mut out).map(|()| out)
        })
    };
    assert!(child.running(), "the run ended before following began");
    let begun = Utc::now().timestamp_millis();
    let whole = follow(Vec::new());
    let finished = follow(vec!["task_finished,run_finished".into()]);
    let deadline = Instant::now() + Duration::from_secs(90);
    while !(whole.is_finished() && finished.is_finished()) {
        assert!(
            Instant::now() < deadline,
            "following never stopped: {}",
            child.stderr()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let whole = parse(&whole.join().expect("thread").expect("follow"));
    let finished = parse(&finished.join().expect("thread").expect("follow"));
    assert!(
        child.wait(Duration::from_secs(30)).success(),
        "{}",
        child.stderr()
    );

    // Everything, in order, including what was written after following began.
    let store = Store::open(&db).expect("store");
    let run = store.list_runs().expect("runs")[0].clone();
    assert_eq!(run.status, "succeeded");
    let (last, _) = store.last_event(&run.run_id).expect("last");
    assert!(last > seen, "the run went on after following began");
    assert_eq!(seqs(&whole), (1..=last).collect::<Vec<_>>());
    assert_eq!(
        whole.last().map(|e| e["kind"].clone()),
        Some("run_finished".into())
    );
    assert!(
        whole.iter().any(|e| ts(e) > begun),
        "following saw events written after it began"
    );

    assert_eq!(
        finished
            .iter()
            .filter(|e| e["kind"] == "task_finished")
            .count(),
        5
    );
    assert_eq!(
        finished.last().map(|e| e["kind"].clone()),
        Some("run_finished".into())
    );
    assert_eq!(
        finished,
        whole
            .iter()
            .filter(|e| e["kind"] == "task_finished" || e["kind"] == "run_finished")
            .cloned()
            .collect::<Vec<_>>()
    );
}
