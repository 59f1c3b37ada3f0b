//! `plexus export` and `plexus import` through the real binary: a run exported from one
//! database and imported into another is the same run row for row (only its number in
//! event ids and the ids SQLite gives quality records and relations differ), with the
//! same `log` and `show --json`; a taken run id is refused until the run is renamed, and
//! then every row names the new id; a bad file fails with its name and line and changes
//! nothing; a closed pipe ends an export quietly; an export taken while the run goes on
//! is a consistent snapshot.

use crate::common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use common::bin::{gen_plan, output, plexus, Out, Running};
use rusqlite::types::Value;
use rusqlite::{Connection, OpenFlags};

/// Fast simulated settings with the demo's faults (retries, failures, grades).
const FAST: [&str; 10] = [
    "--chunk-ms",
    "0",
    "--first-chunk-ms",
    "0",
    "--retry-delay-div",
    "1000",
    "--timeout-scale",
    "0.002",
    "--faults",
    "demo",
];

fn run_cmd(dir: &Path, db: &str, args: &[&str]) -> Out {
    output(plexus(dir).arg("--db").arg(db).args(args))
}

/// Database `a.db` in `dir` with a generated plan's run and then the demo's (papers,
/// library assets, relations); returns the demo run's id.
fn source_db(dir: &Path) -> String {
    let plan = gen_plan(dir, 30, 6);
    let mut args = vec!["run", plan.to_str().expect("utf8"), "--headless"];
    args.extend(FAST);
    let out = run_cmd(dir, "a.db", &args);
    assert!(matches!(out.code, Some(0 | 3)), "run: {}", out.stderr);
    let runs = |dir: &Path| -> Vec<String> {
        let store = plexus::data::store::Store::open(&dir.join("a.db")).expect("a.db");
        let list = store.list_runs().expect("runs");
        list.into_iter().map(|r| r.run_id).collect()
    };
    let first = runs(dir);
    let out = run_cmd(dir, "a.db", &["demo", "--chunk-ms", "0", "--headless"]);
    // The demo ends awaiting review: its validator stops for a person (E007).
    assert_eq!(out.code, Some(6), "demo: {}", out.stderr);
    // The demo's run: both may start within one second, so not simply the newest.
    runs(dir)
        .into_iter()
        .find(|r| !first.contains(r))
        .expect("the demo's run")
}

fn open(db: &Path) -> Connection {
    Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).expect("open")
}

/// A row: its columns and their values.
type Row = Vec<(String, Value)>;

/// Every row of run `run` in `db`, table by table, with its columns: the run id written
/// `<run>`, event ids as their sequence numbers, the ids SQLite assigns left out. Also
/// the prompts, papers and library assets the run refers to.
fn rows_of(db: &Path, run: &str) -> Vec<(&'static str, Vec<Row>)> {
    let conn = open(db);
    let tables: [(&str, &str); 12] = [
        ("runs", "SELECT * FROM runs WHERE run_id = ?1"),
        ("run_plans", "SELECT * FROM run_plans WHERE run_id = ?1"),
        ("tasks", "SELECT * FROM tasks WHERE run_id = ?1 ORDER BY rowid"),
        ("invocations", "SELECT * FROM invocations WHERE run_id = ?1 ORDER BY rowid"),
        ("knowledge_atoms", "SELECT * FROM knowledge_atoms WHERE run_id = ?1 ORDER BY rowid"),
        ("quality_records", "SELECT * FROM quality_records WHERE run_id = ?1 ORDER BY record_id"),
        ("relations", "SELECT * FROM relations WHERE run_id = ?1 ORDER BY relation_id"),
        ("execution_logs", "SELECT * FROM execution_logs WHERE run_id = ?1 ORDER BY event_id"),
        ("log_runs", "SELECT run_id FROM log_runs WHERE run_id = ?1"),
        ("prompts", "SELECT * FROM prompts WHERE prompt_hash IN (SELECT json_extract(request_json, '$.system_prompt_ref') FROM invocations WHERE run_id = ?1) ORDER BY prompt_hash"),
        ("papers", "SELECT * FROM papers WHERE paper_id IN (SELECT paper_id FROM knowledge_atoms WHERE run_id = ?1) ORDER BY paper_id"),
        ("assets", "SELECT * FROM knowledge_atoms WHERE run_id IS NULL AND atom_id IN (SELECT target_atom_id FROM relations WHERE run_id = ?1) ORDER BY atom_id"),
    ];
    let mut out = Vec::new();
    for (name, sql) in tables {
        let mut st = conn.prepare(sql).expect(sql);
        let cols: Vec<String> = st.column_names().iter().map(|c| c.to_string()).collect();
        let mut rows = st.query([run]).expect("query");
        let mut got = Vec::new();
        while let Some(r) = rows.next().expect("row") {
            let mut row = Vec::new();
            for (i, c) in cols.iter().enumerate() {
                let v: Value = r.get(i).expect("value");
                let v = match (c.as_str(), v) {
                    ("record_id" | "relation_id", _) => continue,
                    ("event_id", Value::Integer(id)) => Value::Integer(id & 0xffff_ffff),
                    ("run_id", Value::Text(t)) if t == run => Value::Text("<run>".into()),
                    (_, v) => v,
                };
                row.push((c.clone(), v));
            }
            got.push(row);
        }
        out.push((name, got));
    }
    let leases: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM run_leases WHERE run_id = ?1",
            [run],
            |r| r.get(0),
        )
        .expect("leases");
    assert_eq!(leases, 0, "no lease is left on {run} in {}", db.display());
    out
}

/// Everything in `db`: every table's rows in rowid order.
fn dump(db: &Path) -> Vec<(String, Vec<Vec<Value>>)> {
    let conn = open(db);
    let names: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .expect("tables")
        .query_map([], |r| r.get(0))
        .expect("names")
        .collect::<Result<_, _>>()
        .expect("names");
    names
        .into_iter()
        .map(|t| {
            let mut st = conn
                .prepare(&format!("SELECT * FROM \"{t}\""))
                .expect("select");
            let n = st.column_count();
            let mut rows: Vec<Vec<Value>> = st
                .query_map([], |r| {
                    (0..n)
                        .map(|i| r.get::<_, Value>(i))
                        .collect::<Result<Vec<_>, _>>()
                })
                .expect("rows")
                .collect::<Result<_, _>>()
                .expect("rows");
            // A table without rowids (an eval's) has no insertion order to keep.
            rows.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
            (t, rows)
        })
        .collect()
}

fn stdout_of(dir: &Path, db: &str, args: &[&str]) -> String {
    let out = run_cmd(dir, db, args);
    assert_eq!(out.code, Some(0), "{args:?}: {}", out.stderr);
    out.stdout
}

/// The file's lines after the header (the header's `exported_at` may differ).
fn body(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("export");
    text.split_once('\n').expect("a header line").1.to_string()
}

#[test]
fn a_run_exported_from_one_database_and_imported_into_another_is_the_same_run() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    let run = source_db(dir);
    let out = run_cmd(dir, "a.db", &["export", &run, "-o", "run.jsonl"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        out.stderr.contains(&format!("exported run {run}")),
        "{}",
        out.stderr
    );
    let out = run_cmd(dir, "b.db", &["import", "run.jsonl"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        out.stdout
            .contains(&format!("imported run {run} into b.db")),
        "{}",
        out.stdout
    );

    let (a, b) = (
        rows_of(&dir.join("a.db"), &run),
        rows_of(&dir.join("b.db"), &run),
    );
    for (table, rows) in &a {
        assert!(!rows.is_empty(), "the demo run has {table} rows to compare");
    }
    for ((table, ra), (_, rb)) in a.iter().zip(&b) {
        assert_eq!(ra.len(), rb.len(), "{table}: row count");
        for (x, y) in ra.iter().zip(rb) {
            assert_eq!(x, y, "{table}: a row differs");
        }
    }
    // The run is number 2 in a.db and number 1 in b.db.
    let base = |db: &str| -> i64 {
        open(&dir.join(db))
            .query_row(
                "SELECT MIN(event_id) >> 32 FROM execution_logs WHERE run_id = ?1",
                [&run],
                |r| r.get(0),
            )
            .expect("base")
    };
    assert_eq!((base("a.db"), base("b.db")), (2, 1));
    // Every invocation number the imported run uses is behind b.db's counters, so a
    // resume of it there never hands the same id out again.
    {
        let conn = open(&dir.join("b.db"));
        let mut st = conn
            .prepare(
                "SELECT invocation_id FROM invocations UNION ALL
                 SELECT invocation_id FROM execution_logs WHERE invocation_id IS NOT NULL",
            )
            .expect("ids");
        let ids: Vec<String> = st
            .query_map([], |r| r.get(0))
            .expect("ids")
            .map(|r| r.expect("id"))
            .collect();
        assert!(!ids.is_empty());
        for id in &ids {
            let (short, seq) =
                plexus::data::store::ids::parse_invocation_id(id).expect("protocol id");
            let next: i64 = conn
                .query_row(
                    "SELECT next FROM id_counters WHERE name = ?1",
                    [short],
                    |r| r.get(0),
                )
                .unwrap_or_else(|e| panic!("no counter for {short} after the import: {e}"));
            assert!(
                next as u64 > seq,
                "{id}: the counter of {short} is at {next}"
            );
        }
    }

    for args in [
        vec!["log", run.as_str()],
        vec!["show", run.as_str(), "--json"],
        vec!["show", run.as_str()],
    ] {
        // `show` names the database in the commands it suggests.
        assert_eq!(
            stdout_of(dir, "a.db", &args).replace("--db a.db", "--db b.db"),
            stdout_of(dir, "b.db", &args),
            "{args:?}"
        );
    }
    let listed = |db: &str| -> serde_json::Value {
        let v: serde_json::Value =
            serde_json::from_str(&stdout_of(dir, db, &["runs", "--json"])).expect("json");
        v.as_array()
            .expect("array")
            .iter()
            .find(|r| r["run_id"] == run.as_str())
            .cloned()
            .expect("listed")
    };
    assert_eq!(listed("a.db"), listed("b.db"));

    // Exported again from b.db (and to standard output), the file is the same, byte for byte.
    let out = run_cmd(dir, "b.db", &["export", &run, "-o", "again.jsonl"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(body(&dir.join("run.jsonl")), body(&dir.join("again.jsonl")));
    let piped = stdout_of(dir, "a.db", &["export", &run]);
    assert_eq!(
        piped.split_once('\n').expect("header").1,
        body(&dir.join("run.jsonl"))
    );
}

#[test]
fn a_taken_run_id_is_refused_until_the_run_is_renamed_and_then_every_row_names_the_new_id() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    let run = source_db(dir);
    let out = run_cmd(dir, "a.db", &["export", &run, "-o", "run.jsonl"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let before = dump(&dir.join("a.db"));
    let out = run_cmd(dir, "a.db", &["import", "run.jsonl"]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(
        out.stderr.contains("already has a run") && out.stderr.contains("--rename"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("a.db"),
        "names the database: {}",
        out.stderr
    );
    assert_eq!(
        dump(&dir.join("a.db")),
        before,
        "a refused import changes nothing"
    );

    let out = run_cmd(dir, "a.db", &["import", "run.jsonl", "--rename", "latest"]);
    assert_eq!(out.code, Some(2), "{}", out.stderr);

    let out = run_cmd(dir, "a.db", &["import", "run.jsonl", "--rename", "R-copy"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(out.stdout.contains("as R-copy"), "{}", out.stdout);
    let original = rows_of(&dir.join("a.db"), &run);
    assert_eq!(rows_of(&dir.join("a.db"), "R-copy"), original);
    // Nothing of the copy names the old id.
    for (table, rows) in rows_of(&dir.join("a.db"), "R-copy") {
        for row in rows {
            for (col, v) in row {
                if let Value::Text(t) = v {
                    assert!(!t.contains(&run), "{table}.{col} still names {run}");
                }
            }
        }
    }
    // The original is untouched, and the copy is shown as the original is.
    assert_eq!(
        stdout_of(dir, "a.db", &["show", &run, "--json"]).replace(&run, "<run>"),
        stdout_of(dir, "a.db", &["show", "R-copy", "--json"]).replace("R-copy", "<run>")
    );
    let out = run_cmd(dir, "a.db", &["import", "run.jsonl", "--rename-auto"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        out.stdout.contains(&format!("as {run}-2")),
        "{}",
        out.stdout
    );
    assert_eq!(rows_of(&dir.join("a.db"), &format!("{run}-2")), original);
}

/// Writes `text` to `name` in `dir`.
fn write(dir: &Path, name: &str, text: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write");
    p
}

#[test]
fn a_bad_file_fails_with_its_name_and_line_and_leaves_the_database_unchanged() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    let run = source_db(dir);
    let out = run_cmd(dir, "a.db", &["export", &run, "-o", "run.jsonl"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let good = std::fs::read_to_string(dir.join("run.jsonl")).expect("export");
    let lines: Vec<&str> = good.lines().collect();
    let n = lines.len();
    let join = |ls: &[&str]| ls.iter().map(|l| format!("{l}\n")).collect::<String>();
    let with = |i: usize, new: &str| {
        let mut ls = lines.clone();
        ls[i - 1] = new;
        join(&ls)
    };
    let line3 = lines[2].replacen("{\"t\":\"task\",", "{\"t\":\"task\",\"extra\":1,", 1);
    let mut swapped = lines.clone();
    swapped.swap(n - 2, n - 1);
    let mut before_run = lines.clone();
    before_run.swap(1, 2);
    let mut cut = good.find(lines[99]).expect("line 100") + lines[99].len() / 2;
    while !good.is_char_boundary(cut) {
        cut -= 1;
    }
    let mut not_utf8 = join(&lines[..3]).into_bytes();
    not_utf8.extend_from_slice(b"{\"t\":\"task\",\"task_id\":\"\xff\"}\n");
    let header2 = lines[0].replace("\"version\":1", "\"version\":99");
    let cases: Vec<(Vec<u8>, usize, &str)> = vec![
        (good[..cut].into(), 100, "cut short"),
        (join(&lines[..n - 5]).into(), n - 4, "cut short"),
        (
            with(7, "{\"t\":\"task\",\"task_id\":").into(),
            7,
            "not a JSON object record",
        ),
        (
            with(8, "{\"t\":\"bogus\"}").into(),
            8,
            "unknown kind `bogus`",
        ),
        (with(3, &line3).into(), 3, "unknown field `extra`"),
        (with(3, lines[1]).into(), 3, "a second run record"),
        (join(&before_run).into(), 2, "before the run record"),
        (join(&swapped).into(), n, "out of order"),
        (not_utf8, 4, "not UTF-8"),
        (with(1, &header2).into(), 1, "version 99"),
        (
            std::fs::read(common_plan()).expect("plan"),
            1,
            "not a plexus run export",
        ),
        (Vec::new(), 1, "empty"),
    ];
    // The target already holds a run (the same one, renamed): the file's own id is free.
    let out = run_cmd(dir, "b.db", &["import", "run.jsonl", "--rename", "R-other"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let before = dump(&dir.join("b.db"));
    for (i, (bytes, line, says)) in cases.into_iter().enumerate() {
        let name = format!("bad-{i}.jsonl");
        write(dir, &name, &bytes);
        let out = run_cmd(dir, "b.db", &["import", &name]);
        assert_eq!(out.code, Some(2), "{name}: {}", out.stderr);
        assert!(
            out.stderr.contains(&format!("{name}:{line}: ")),
            "{name} line {line}: {}",
            out.stderr
        );
        assert!(
            out.stderr.contains(says),
            "{name} says {says}: {}",
            out.stderr
        );
        assert!(
            out.stderr.contains("nothing was imported"),
            "{}",
            out.stderr
        );
        assert!(!out.stderr.contains("panick"), "{}", out.stderr);
        assert_eq!(
            dump(&dir.join("b.db")),
            before,
            "{name} changed the database"
        );
    }
    let out = run_cmd(dir, "b.db", &["import", "missing.jsonl"]);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(out.stderr.contains("missing.jsonl"), "{}", out.stderr);
}

fn common_plan() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/plans/seed000_task_chain.json")
}

#[test]
fn a_file_from_a_newer_format_version_is_refused_with_what_to_do() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    let header = format!(
        "{{\"format\":\"plexus-run\",\"version\":{},\"plexus\":\"9.0.0\",\"schema\":99,\"run_id\":\"R\",\"new_field\":true}}\n{{\"t\":\"hologram\"}}\n",
        plexus::data::portable::VERSION + 1
    );
    write(dir, "future.jsonl", header.as_bytes());
    let out = run_cmd(dir, "b.db", &["import", "future.jsonl"]);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(out.stderr.contains("future.jsonl:1: "), "{}", out.stderr);
    assert!(
        out.stderr.contains(&format!(
            "version {} (by plexus 9.0.0)",
            plexus::data::portable::VERSION + 1
        )) && out.stderr.contains("upgrade plexus"),
        "{}",
        out.stderr
    );
    assert!(
        !dir.join("b.db").exists(),
        "the database is not even created"
    );
}

#[test]
fn an_export_to_a_closed_pipe_ends_quietly_and_a_failed_one_leaves_no_file() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    let run = source_db(dir);
    let mut child = plexus(dir)
        .args(["--db", "a.db", "export", &run])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut first = [0u8; 100];
    child
        .stdout
        .take()
        .expect("stdout")
        .read_exact(&mut first)
        .expect("read");
    let out = child.wait_with_output().expect("wait");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    write(dir, "kept.jsonl", b"old\n");
    let out = run_cmd(dir, "a.db", &["export", "R-none", "-o", "kept.jsonl"]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert_eq!(
        std::fs::read(dir.join("kept.jsonl")).expect("kept"),
        b"old\n"
    );
    let names: Vec<String> = std::fs::read_dir(dir)
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.contains("partial")), "{names:?}");
    let out = run_cmd(dir, "a.db", &["export", &run, "-o", "a.db"]);
    assert_eq!(
        out.code,
        Some(1),
        "the database is not overwritten: {}",
        out.stderr
    );
}

#[test]
fn an_export_taken_while_the_run_goes_on_is_a_consistent_snapshot() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    let plan = gen_plan(dir, 40, 4);
    let mut running = Running::spawn(
        plexus(dir)
            .args(["--db", "a.db", "run", "--concurrency", "2", "--headless"])
            .arg(&plan)
            .args(["--chunk-ms", "15"]),
        dir.join("run.err"),
    );
    let mut taken = 0;
    let mut live_copy = None;
    for k in 0..40 {
        std::thread::sleep(Duration::from_millis(150));
        if !running.running() {
            break;
        }
        let Ok(store) = plexus::data::store::Store::open(&dir.join("a.db")) else {
            continue;
        };
        if store.list_runs().map(|r| r.is_empty()).unwrap_or(true) {
            continue;
        }
        let file = format!("snap-{k}.jsonl");
        let out = run_cmd(dir, "a.db", &["export", "latest", "-o", &file]);
        assert_eq!(out.code, Some(0), "{}", out.stderr);
        let db = format!("snap-{k}.db");
        let out = run_cmd(dir, &db, &["import", &file]);
        assert_eq!(out.code, Some(0), "{}", out.stderr);
        let header: serde_json::Value = serde_json::from_str(
            std::fs::read_to_string(dir.join(&file))
                .expect("file")
                .lines()
                .next()
                .expect("header"),
        )
        .expect("json");
        let conn = open(&dir.join(&db));
        // Events dense from 1, and every stored invocation started in the log.
        let (n, max): (i64, i64) = conn
            .query_row(
                "SELECT COUNT(*), COALESCE(MAX(seq), 0) FROM execution_logs",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .expect("events");
        assert_eq!(n, max);
        let orphans: i64 = conn
            .query_row("SELECT COUNT(*) FROM invocations i WHERE NOT EXISTS (SELECT 1 FROM execution_logs e WHERE e.kind = 'invocation_started' AND e.invocation_id = i.invocation_id)", [], |r| r.get(0))
            .expect("orphans");
        assert_eq!(orphans, 0);
        if header["status"] == "running" {
            assert_eq!(header["live"], true, "{header}");
            assert!(out.stdout.contains("plexus resume"), "{}", out.stdout);
            taken += 1;
            live_copy = Some(db);
        }
        if taken >= 3 {
            break;
        }
    }
    assert!(
        taken >= 1,
        "no export was taken while the run went on; {}",
        running.stderr()
    );
    drop(running);
    // The copy of a run taken mid-way is resumed in its new database like a crashed run.
    let db = live_copy.expect("a copy taken while the run went on");
    let out = run_cmd(
        dir,
        &db,
        &["resume", "latest", "--concurrency", "8", "--headless"],
    );
    assert_eq!(out.code, Some(0), "resume of the copy: {}", out.stderr);
    let status: String = open(&dir.join(&db))
        .query_row("SELECT status FROM runs", [], |r| r.get(0))
        .expect("status");
    assert_eq!(status, "succeeded");
}

/// The pid of a process that has ended (and was reaped).
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true")
        .spawn()
        .expect("spawn true");
    let pid = child.id();
    child.wait().expect("wait");
    pid
}

#[test]
fn an_export_removes_the_partial_files_killed_exports_left_and_no_live_one() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    let plan = common_plan();
    let mut args = vec!["run", plan.to_str().expect("utf8"), "--headless"];
    args.extend(FAST);
    let out = run_cmd(dir, "a.db", &args);
    assert!(matches!(out.code, Some(0 | 3)), "run: {}", out.stderr);
    let dead = dead_pid();
    let stale = write(dir, &format!(".out.json.partial-{dead}"), b"half an export");
    // This test's own process is alive: as if another export were writing now.
    let live = write(
        dir,
        &format!(".out.json.partial-{}", std::process::id()),
        b"being written",
    );
    // Another target's file, and a name that is not a pid: not ours to remove.
    let other = write(dir, &format!(".other.json.partial-{dead}"), b"other");
    let odd = write(dir, ".out.json.partial-x1", b"odd");
    let out = run_cmd(dir, "a.db", &["export", "latest", "-o", "out.json"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(dir.join("out.json").is_file());
    assert!(!stale.exists(), "the killed export's file is removed");
    assert!(live.exists(), "a live process's file stays");
    assert!(other.exists() && odd.exists());
}

#[test]
fn an_export_killed_mid_write_leaves_a_partial_file_that_the_next_export_removes() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    // A run large enough that its export takes a while to write (about half a second
    // in a debug build).
    let plan = gen_plan(dir, 500, 20);
    let out = run_cmd(
        dir,
        "a.db",
        &[
            "run",
            plan.to_str().expect("utf8"),
            "--headless",
            "--chunk-ms",
            "0",
            "--first-chunk-ms",
            "0",
        ],
    );
    assert_eq!(out.code, Some(0), "run: {}", out.stderr);
    // Killed once its partial file holds something; tried again if an export was too
    // quick to be caught.
    let mut killed = None;
    for _ in 0..5 {
        let mut child = plexus(dir)
            .args(["--db", "a.db", "export", "latest", "-o", "big.jsonl"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        let partial = dir.join(format!(".big.jsonl.partial-{}", child.id()));
        let started = std::time::Instant::now();
        let caught = loop {
            if std::fs::metadata(&partial).is_ok_and(|m| m.len() > 0) {
                child.kill().expect("SIGKILL");
                break true;
            }
            if child.try_wait().expect("try_wait").is_some()
                || started.elapsed() > Duration::from_secs(30)
            {
                break false;
            }
            std::thread::sleep(Duration::from_millis(1));
        };
        child.wait().expect("wait");
        if caught {
            killed = Some(partial);
            break;
        }
        let _ = std::fs::remove_file(dir.join("big.jsonl"));
    }
    let partial = killed.expect("an export was caught mid-write");
    assert!(partial.exists(), "the killed export left its partial file");
    assert!(!dir.join("big.jsonl").exists(), "and no export");
    let out = run_cmd(dir, "a.db", &["export", "latest", "-o", "big.jsonl"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(!partial.exists(), "the next export removed it");
    let names: Vec<String> = std::fs::read_dir(dir)
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.contains("partial")), "{names:?}");
}
