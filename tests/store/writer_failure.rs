//! A database that cannot be written, with the real binary. A run whose writes start
//! failing mid-way (a file size limit: SQLite's writes fail with EFBIG) stops with an
//! error that names the file, the cause and how to resume, and nothing from the log
//! reaches the terminal; the run then resumes to its end. A read-only database file, or
//! one in a read-only directory, refuses `run` and `resume` with a clear error and
//! changes nothing, while `runs`, `show`, `check` and `log` work and create no file.

#![cfg(unix)]

use crate::common;

use std::collections::BTreeSet;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::bin::{
    busy_plan, finished_tasks, gen_plan, output, plexus, resume_to_the_end, sh, wait_mid_run,
    Running, BIN,
};
use nix::sys::signal::{kill, Signal};
use plexus::data::store::Store;

/// The file size limit of the disk-full runs, in 512-byte blocks (`ulimit -f` of a POSIX
/// shell): the schema and the run's first rows fit; the whole 40-task run (about 800 KB
/// of database) does not.
const LIMIT_BLOCKS: usize = 1400;

/// Runs `$@` with files limited to `$0` blocks; SIGXFSZ ignored (inherited across
/// `exec`), so a write past the limit fails with EFBIG instead of killing the process.
const LIMITED: &str = r#"trap '' XFSZ; ulimit -f "$0"; exec "$@""#;

/// Whether `line` starts like a `tracing` log line (an RFC 3339 timestamp).
fn log_like(line: &str) -> bool {
    let b = line.trim_start().as_bytes();
    b.len() >= 11 && b[..4].iter().all(u8::is_ascii_digit) && b[4] == b'-' && b[10] == b'T'
}

#[test]
fn a_disk_that_fills_mid_run_stops_it_with_the_file_and_the_cause_and_resume_finishes_it() {
    // The writer thread, the engine and the progress printer all see the failure; which
    // one reports first varies from run to run, so the run is repeated.
    for round in 1..=5 {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        let data = d.join("data");
        std::fs::create_dir(&data).expect("mkdir");
        let db = data.join("full.db");
        // A log already past the limit: every log write fails as well, and that must
        // not reach the terminal either.
        std::fs::write(
            data.join("plexus.log"),
            vec![b'.'; LIMIT_BLOCKS * 512 + 4096],
        )
        .expect("write the log");
        let plan = gen_plan(d, 40, 4);
        let out = output(
            sh(d, LIMITED)
                .arg(LIMIT_BLOCKS.to_string())
                .arg(BIN)
                .arg("--db")
                .arg(&db)
                .args(["run", "--concurrency", "4"])
                .arg(&plan)
                .args(["--chunk-ms", "5", "--first-chunk-ms", "5", "--headless"]),
        );
        let err = &out.stderr;
        let ctx = format!("round {round}: exit {:?}, stderr:\n{err}", out.code);
        assert!(matches!(out.code, Some(c) if c != 0), "{ctx}");
        let store = Store::open(&db).expect("open the database");
        let runs = store.list_runs().expect("runs");
        let id = &runs
            .first()
            .unwrap_or_else(|| panic!("no run: {ctx}"))
            .run_id;
        assert!(
            err.contains(&db.display().to_string()),
            "names the file: {ctx}"
        );
        // SQLite reports EFBIG as a mere "disk I/O error" (a full disk, ENOSPC, as
        // "database or disk is full"); plexus adds the limit.
        assert!(
            err.contains(&format!(
                "disk I/O error (this process may not write a file past {} bytes: ulimit -f)",
                LIMIT_BLOCKS * 512
            )) || err.contains("database or disk is full"),
            "names the cause: {ctx}"
        );
        assert!(
            err.contains(&format!("plexus resume {id}")),
            "says how to resume: {ctx}"
        );
        for line in err.lines() {
            assert!(
                !line.starts_with("[tracing")
                    && !line.contains("Unable to write an event")
                    && !log_like(line),
                "a log line reached the terminal: {line:?}\n{ctx}"
            );
        }
        assert!(!err.contains("stopped: stopped"), "{ctx}");
        assert!(!err.contains("panicked"), "{ctx}");
        let finished = finished_tasks(&store, id);
        assert!(finished.len() < 40, "the run could not finish: {ctx}");
        drop(store);
        // Without the limit it resumes to its end.
        let status = resume_to_the_end(d, &db, id, &finished);
        assert_eq!(status, "succeeded", "round {round}");
    }
}

/// The uid plexus runs as in the read-only test when the tests run as root (root ignores
/// file modes).
const NOBODY: u32 = 65534;

/// Gives the data directory back its mode, so the temporary directory can be removed.
struct Restore(PathBuf);

impl Drop for Restore {
    fn drop(&mut self) {
        let _ = std::fs::set_permissions(&self.0, std::fs::Permissions::from_mode(0o755));
    }
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

fn chown(path: &Path, uid: u32) {
    std::os::unix::fs::chown(path, Some(uid), Some(uid)).expect("chown");
}

/// The names in `dir`.
fn listing(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .expect("read_dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect()
}

/// `cmd` as the unprivileged user when the test runs as root.
fn as_user(cmd: &mut Command, root: bool) -> &mut Command {
    if root {
        cmd.uid(NOBODY).gid(NOBODY);
    }
    cmd
}

#[test]
fn a_database_that_cannot_be_written_refuses_runs_clearly_and_still_serves_reads() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let root = std::fs::metadata(d).expect("stat").uid() == 0;
    chmod(d, 0o755);
    let data = d.join("data");
    std::fs::create_dir(&data).expect("mkdir");
    let _restore = Restore(data.clone());
    let db = data.join("r.db");
    // A run stopped mid-way, so there is something to resume.
    let plan = busy_plan(d, 8);
    let mut run = Running::spawn(
        plexus(d)
            .arg("--db")
            .arg(&db)
            .args(["run", "--concurrency", "2"])
            .arg(&plan)
            .args(["--chunk-ms", "60", "--first-chunk-ms", "60", "--headless"]),
        d.join("stderr.txt"),
    );
    let mid = wait_mid_run(&db, &mut run, 1);
    kill(run.pid(), Signal::SIGTERM).expect("SIGTERM");
    let status = run.wait(Duration::from_secs(30));
    assert_eq!(status.code(), Some(3), "{}", run.stderr());

    // A read-only file in a directory the process may write to.
    chmod(&db, 0o444);
    if root {
        chown(&data, NOBODY);
    }
    refuses_writes_and_serves_reads(d, &db, &mid.run_id, root, "read-only file");

    // A writable file in a directory it may not write to (no -wal or -shm can be made).
    chmod(&db, 0o644);
    if root {
        chown(&db, NOBODY);
        chown(&data, 0);
    } else {
        chmod(&data, 0o555);
    }
    refuses_writes_and_serves_reads(d, &db, &mid.run_id, root, "read-only directory");
}

fn refuses_writes_and_serves_reads(d: &Path, db: &Path, run_id: &str, root: bool, what: &str) {
    let data = db.parent().expect("the database's directory");
    let files = listing(data);
    let bytes = std::fs::read(db).expect("read the database");
    let unchanged = |ctx: &str| {
        assert_eq!(listing(data), files, "files were created: {ctx}");
        assert!(
            std::fs::read(db).expect("read") == bytes,
            "the database changed: {ctx}"
        );
    };
    let plan = d.join("plan.json");
    let plan = plan.to_str().expect("utf-8");
    for args in [
        ["resume", run_id, "--headless"],
        ["run", plan, "--headless"],
    ] {
        let out = output(as_user(plexus(d).arg("--db").arg(db).args(args), root));
        let err = &out.stderr;
        let ctx = format!(
            "{what}, plexus {args:?}: exit {:?}, stderr:\n{err}",
            out.code
        );
        assert_eq!(out.code, Some(1), "{ctx}");
        assert!(
            err.contains(&db.display().to_string()),
            "names the file: {ctx}"
        );
        assert!(
            err.contains("read-only") || err.contains("readonly"),
            "names the cause: {ctx}"
        );
        assert!(!err.contains("panicked"), "{ctx}");
        unchanged(&ctx);
    }
    let reads: [(&[&str], &str); 4] = [
        (&["runs"], run_id),
        (&["show", "latest"], run_id),
        (&["check"], "integrity_check ok"),
        (&["log", "latest"], run_id),
    ];
    for (args, expect) in reads {
        let out = output(as_user(plexus(d).arg("--db").arg(db).args(args), root));
        let ctx = format!(
            "{what}, plexus {args:?}: exit {:?}, stderr:\n{}",
            out.code, out.stderr
        );
        assert_eq!(out.code, Some(0), "{ctx}");
        assert!(
            out.stdout.contains(expect),
            "{ctx}\nstdout:\n{}",
            out.stdout
        );
        unchanged(&ctx);
    }
    let out = output(as_user(
        plexus(d).arg("--db").arg(db).args(["runs", "--json"]),
        root,
    ));
    let runs: serde_json::Value = serde_json::from_str(&out.stdout).expect("runs --json");
    assert_eq!(runs[0]["status"], "interrupted", "{what}: {}", out.stdout);
    unchanged(what);
}

#[test]
fn a_reader_of_a_database_whose_write_ahead_log_was_deleted_is_told_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let db = d.join("w.db");
    let plan = busy_plan(d, 8);
    let mut run = Running::spawn(
        plexus(d)
            .arg("--db")
            .arg(&db)
            .args(["run", "--concurrency", "2"])
            .arg(&plan)
            .args(["--chunk-ms", "60", "--first-chunk-ms", "60", "--headless"]),
        d.join("stderr.txt"),
    );
    wait_mid_run(&db, &mut run, 1);
    std::fs::remove_file(d.join("w.db-wal")).expect("delete the write-ahead log");
    let out = output(plexus(d).arg("--db").arg(&db).arg("runs"));
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(
        out.stderr.contains("disk I/O error")
            && out.stderr.contains("write-ahead log")
            && out.stderr.contains("deleted or replaced"),
        "{}",
        out.stderr
    );
    kill(run.pid(), Signal::SIGKILL).expect("SIGKILL");
}
