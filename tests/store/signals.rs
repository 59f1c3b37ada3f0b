//! Stop signals and lost terminals, end to end with the real binary. SIGTERM or SIGHUP
//! stops a headless run gracefully (exit 3, the run `interrupted`, in-flight invocations
//! `cancelled`) and `plexus resume` finishes it without running a finished task again; a
//! second stop signal right after the first exits at once and the run resumes like a
//! crashed one. A UI whose terminal goes away without a SIGHUP reaching it (a wrapper is
//! the session leader and ignores it) notices on its own and leaves, `run` and `browse`.

#![cfg(target_os = "linux")]

use crate::common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::bin::{
    busy_plan, finished_tasks, listed_status, logged_kinds, output, plexus, resume_to_the_end,
    snapshot, wait_mid_run, Running, BIN,
};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use plexus::data::store::Store;
use portable_pty::{native_pty_system, CommandBuilder, MasterPty, PtySize};

/// A headless run of an 8-task plan, two invocations at a time, each about 2 s long.
fn start_headless(dir: &Path, db: &Path) -> Running {
    let plan = busy_plan(dir, 8);
    Running::spawn(
        plexus(dir)
            .arg("--db")
            .arg(db)
            .args(["run", "--concurrency", "2"])
            .arg(&plan)
            .args(["--chunk-ms", "60", "--first-chunk-ms", "60", "--headless"]),
        dir.join("stderr.txt"),
    )
}

/// One stop signal to a headless run mid-way: it ends `interrupted` with exit code 3,
/// every invocation in flight is recorded `cancelled`, stderr says how to resume, and the
/// resume finishes the run without invoking the finished tasks again.
fn stop_headless_with(signal: Signal) {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let db = d.join("s.db");
    let mut run = start_headless(d, &db);
    let mid = wait_mid_run(&db, &mut run, 1);
    kill(run.pid(), signal).expect("send the signal");
    let status = run.wait(Duration::from_secs(30));
    let err = run.stderr();
    let id = &mid.run_id;
    assert_eq!(
        status.code(),
        Some(3),
        "exit status {status:?}; stderr:\n{err}"
    );
    assert!(
        err.contains(&format!(
            "{}: stopping; the run stays resumable",
            signal.as_str()
        )),
        "{err}"
    );
    assert!(
        // The database is not the default one: the hint names it.
        err.contains("resume with: plexus --db ") && err.contains(&format!(" resume {id}")),
        "{err}"
    );
    // The result is on stdout, the hint above on stderr.
    let out = run.stdout();
    assert!(out.contains(&format!("run {id}: interrupted")), "{out}");
    assert_eq!(listed_status(d, &db, id), "interrupted");

    let store = Store::open(&db).expect("open the database");
    let invocations = store.invocations(id).expect("invocations");
    let tasks = store.tasks(id).expect("tasks");
    for inv in &mid.in_flight {
        let row = invocations
            .iter()
            .find(|i| &i.invocation_id == inv)
            .unwrap_or_else(|| panic!("in-flight invocation {inv} has no row: {invocations:?}"));
        assert_eq!(
            row.status.as_deref(),
            Some("cancelled"),
            "invocation {inv} was in flight"
        );
        let task = tasks
            .iter()
            .find(|t| t.task_id == row.task_id)
            .expect("task");
        assert_eq!(task.status, "pending", "its task waits for the resume");
    }
    assert!(
        invocations.iter().all(|i| i.status.is_some()),
        "every invocation ended: {invocations:?}"
    );
    assert_eq!(
        store.in_flight_tasks(id).expect("in flight"),
        Vec::<String>::new()
    );
    let finished = finished_tasks(&store, id);
    for (task, n) in &mid.finished {
        assert_eq!(finished.get(task), Some(n), "task {task} before the stop");
    }
    assert!(finished.len() < tasks.len(), "the run was stopped mid-way");
    drop(store);
    // The interrupted run stored its state at its end, and it is the log's.
    crate::common::snapshots::assert_snapshot_matches_log(&db, id, true);

    resume_to_the_end(d, &db, id, &finished);
    crate::common::snapshots::assert_snapshot_matches_log(&db, id, true);
    let kinds = logged_kinds(d, &db, id);
    assert!(kinds.iter().any(|k| k == "run_resumed"), "{kinds:?}");
    // A graceful stop is not a crash: the lease was given back, the status written.
    assert!(
        !kinds
            .iter()
            .any(|k| k == "crash_detected" || k == "lease_taken_over"),
        "{kinds:?}"
    );
}

#[test]
fn headless_sigterm_interrupts_the_run_and_resume_finishes_it() {
    stop_headless_with(Signal::SIGTERM);
}

#[test]
fn headless_sighup_interrupts_the_run_and_resume_finishes_it() {
    stop_headless_with(Signal::SIGHUP);
}

/// The state letter of process `pid` (`/proc/PID/stat`), with its parent; None once it
/// is gone.
fn proc_stat(pid: u32) -> Option<(char, u32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The name is in parentheses and may hold anything: the fields follow the last ')'.
    let mut rest = stat[stat.rfind(')')? + 1..].split_whitespace();
    let state = rest.next()?.chars().next()?;
    let ppid = rest.next()?.parse().ok()?;
    Some((state, ppid))
}

/// Whether process `pid` has ended (gone, or a zombie not reaped yet).
fn ended(pid: u32) -> bool {
    proc_stat(pid).is_none_or(|(state, _)| matches!(state, 'Z' | 'X'))
}

#[test]
fn a_second_stop_signal_exits_at_once_and_the_run_resumes_like_a_crashed_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let db = d.join("s.db");
    let mut run = start_headless(d, &db);
    let mid = wait_mid_run(&db, &mut run, 1);
    let id = &mid.run_id;
    // A graceful stop takes a few ms, too short to send a second signal after the first
    // one was seen. So both are delivered together: the process is stopped, gets SIGTERM
    // and SIGINT (two kinds, which the kernel does not merge), and continues.
    let pid = run.pid();
    kill(pid, Signal::SIGSTOP).expect("SIGSTOP");
    let end = Instant::now() + Duration::from_secs(10);
    while proc_stat(run.child.id()).is_some_and(|(s, _)| s != 'T') {
        assert!(Instant::now() < end, "the process did not stop");
        std::thread::sleep(Duration::from_millis(5));
    }
    kill(pid, Signal::SIGTERM).expect("SIGTERM");
    kill(pid, Signal::SIGINT).expect("SIGINT");
    kill(pid, Signal::SIGCONT).expect("SIGCONT");
    let status = run.wait(Duration::from_secs(30));
    let err = run.stderr();
    assert_eq!(
        status.code(),
        Some(3),
        "exit status {status:?}; stderr:\n{err}"
    );
    let again = err
        .lines()
        .find(|l| l.contains(" again: exiting at once"))
        .unwrap_or_else(|| panic!("no `again` line:\n{err}"));
    assert!(
        (again.starts_with("SIGTERM") || again.starts_with("SIGINT"))
            && again.ends_with(&format!("the run stays resumable: plexus resume {id}")),
        "{again}"
    );
    // It left at once: no summary of a graceful end.
    assert!(
        !run.stdout().contains(&format!("run {id}: interrupted")),
        "{}",
        run.stdout()
    );

    let check = output(plexus(d).arg("--db").arg(&db).arg("check"));
    assert_eq!(check.code, Some(0), "{}", check.stderr);
    assert!(
        check.stdout.contains("integrity_check ok"),
        "{}",
        check.stdout
    );
    // Both signals arrive together, but the first one's graceful stop may still finish
    // its writes (on a loaded machine) before the second one is handled. Either way the
    // run must resume; it resumes like a crashed one unless that stop was written whole.
    let stopped_cleanly = listed_status(d, &db, id) == "interrupted";
    let finished = finished_tasks(&Store::open(&db).expect("open"), id);
    resume_to_the_end(d, &db, id, &finished);
    let kinds = logged_kinds(d, &db, id);
    assert!(kinds.iter().any(|k| k == "run_resumed"), "{kinds:?}");
    if !stopped_cleanly {
        assert!(
            kinds
                .iter()
                .any(|k| k == "crash_detected" || k == "lease_taken_over"),
            "resumed like a crashed run: {kinds:?}"
        );
    }
}

/// A UI in a pseudo-terminal under `sh`, the session leader, which ignores SIGHUP: when
/// the terminal goes away, no SIGHUP reaches plexus (the kernel sends it to the session
/// leader only, and `sh` waits for plexus rather than exiting).
struct Tui {
    master: Option<Box<dyn MasterPty + Send>>,
    reader: Option<Box<dyn Read + Send>>,
    shell: Box<dyn portable_pty::Child + Send + Sync>,
    parser: vt100::Parser,
    /// The plexus process (the shell's child).
    pid: u32,
    rc: PathBuf,
}

/// Runs plexus (not `exec`: the shell stays its parent and the session leader) and
/// writes its exit code.
const WRAPPER: &str = r#"trap '' HUP; "$0" "$@"; echo $? > "$PLEXUS_TEST_RC""#;

impl Tui {
    fn start(dir: &Path, args: &[&str]) -> Tui {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: 30,
                cols: 110,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("openpty");
        let config = dir.join("none.toml");
        std::fs::write(&config, "").expect("config");
        let rc = dir.join("rc");
        let mut cmd = CommandBuilder::new("sh");
        cmd.args(["-c", WRAPPER, BIN]);
        cmd.args(args);
        cmd.cwd(dir);
        cmd.env("TERM", "xterm-256color");
        cmd.env("PLEXUS_CONFIG", &config);
        cmd.env("PLEXUS_TEST_RC", &rc);
        for v in ["PLEXUS_DB", "PLEXUS_THEME", "PLEXUS_PROVIDER", "PLEXUS_LOG"] {
            cmd.env_remove(v);
        }
        let shell = pair.slave.spawn_command(cmd).expect("spawn sh");
        drop(pair.slave);
        let reader = pair.master.try_clone_reader().expect("reader");
        // Read without blocking, so the test can close every descriptor of the master
        // (a reader thread blocked in read would keep the terminal alive).
        let fd = pair.master.as_raw_fd().expect("master fd");
        let flags = nix::fcntl::fcntl(fd, nix::fcntl::FcntlArg::F_GETFL).expect("F_GETFL");
        let flags = nix::fcntl::OFlag::from_bits_truncate(flags) | nix::fcntl::OFlag::O_NONBLOCK;
        nix::fcntl::fcntl(fd, nix::fcntl::FcntlArg::F_SETFL(flags)).expect("F_SETFL");
        let sh = shell.process_id().expect("sh pid");
        let mut tui = Tui {
            master: Some(pair.master),
            reader: Some(reader),
            shell,
            parser: vt100::Parser::new(30, 110, 0),
            pid: 0,
            rc,
        };
        let end = Instant::now() + Duration::from_secs(20);
        while tui.pid == 0 {
            tui.pump();
            tui.pid = children_of(sh).first().copied().unwrap_or(0);
            assert!(Instant::now() < end, "sh started no plexus");
            std::thread::sleep(Duration::from_millis(10));
        }
        tui
    }

    /// Feeds what the terminal received so far to the screen.
    fn pump(&mut self) {
        let Some(r) = self.reader.as_mut() else {
            return;
        };
        let mut buf = [0u8; 16384];
        while let Ok(n @ 1..) = r.read(&mut buf) {
            self.parser.process(&buf[..n]);
        }
    }

    fn wait_for(&mut self, text: &str, limit: Duration) -> String {
        let end = Instant::now() + limit;
        loop {
            self.pump();
            let s = self.parser.screen().contents();
            if s.contains(text) {
                return s;
            }
            assert!(
                Instant::now() < end,
                "timed out waiting for {text:?}; screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Closes the terminal: every descriptor of the master side.
    fn hang_up(&mut self) {
        self.reader = None;
        self.master = None;
    }

    /// Waits for plexus to end after the hang-up; returns how long that took.
    fn wait_gone(&self, limit: Duration) -> Duration {
        let t0 = Instant::now();
        while !ended(self.pid) {
            assert!(
                t0.elapsed() < limit,
                "plexus (pid {}) still runs {limit:?} after its terminal went away",
                self.pid
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        t0.elapsed()
    }

    /// Plexus's exit code, as the shell wrote it.
    fn exit_code(&self) -> i32 {
        let end = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(s) = std::fs::read_to_string(&self.rc) {
                if s.ends_with('\n') {
                    return s.trim().parse().expect("an exit code");
                }
            }
            assert!(Instant::now() < end, "the shell wrote no exit code");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Tui {
    fn drop(&mut self) {
        if self.pid != 0 && !ended(self.pid) {
            let pid = Pid::from_raw(i32::try_from(self.pid).unwrap_or(0));
            let _ = kill(pid, Signal::SIGKILL);
        }
        let _ = self.shell.kill();
        let _ = self.shell.wait();
    }
}

/// The processes whose parent is `ppid`.
fn children_of(ppid: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| proc_stat(pid).is_some_and(|(_, p)| p == ppid))
        .collect()
}

/// How soon a UI must leave once its terminal is gone (it checks every 250 ms).
const LEAVES_WITHIN: Duration = Duration::from_secs(2);

#[test]
fn a_run_ui_whose_terminal_is_gone_leaves_without_a_sighup_and_the_run_resumes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let db = d.join("t.db");
    let plan = busy_plan(d, 6);
    let db_s = db.to_str().expect("utf-8 path");
    let plan_s = plan.to_str().expect("utf-8 path");
    let mut tui = Tui::start(
        d,
        &[
            "--db",
            db_s,
            "run",
            plan_s,
            "--chunk-ms",
            "60",
            "--first-chunk-ms",
            "60",
            "--concurrency",
            "2",
        ],
    );
    tui.wait_for("Plan DAG", Duration::from_secs(30));
    // The run is live: an invocation streams, and plexus holds the run's lease.
    let end = Instant::now() + Duration::from_secs(30);
    let mid = loop {
        tui.pump();
        if let Some((mid, _)) = snapshot(&db) {
            if !mid.in_flight.is_empty() {
                break mid;
            }
        }
        assert!(Instant::now() < end, "no invocation started");
        std::thread::sleep(Duration::from_millis(20));
    };
    let owner: i64 = Store::open(&db)
        .expect("open")
        .conn()
        .query_row(
            "SELECT pid FROM run_leases WHERE run_id = ?1",
            [&mid.run_id],
            |r| r.get(0),
        )
        .expect("the run's lease");
    assert_eq!(
        owner,
        i64::from(tui.pid),
        "the lease names the plexus process"
    );
    tui.wait_for("running", Duration::from_secs(10));

    tui.hang_up();
    let took = tui.wait_gone(LEAVES_WITHIN);
    eprintln!("the run UI left {took:?} after its terminal went away");
    assert_eq!(tui.exit_code(), 3, "an interrupted run exits 3");
    let id = &mid.run_id;
    assert_eq!(listed_status(d, &db, id), "interrupted");
    let store = Store::open(&db).expect("open");
    assert_eq!(
        store.in_flight_tasks(id).expect("in flight"),
        Vec::<String>::new()
    );
    let finished = finished_tasks(&store, id);
    drop(store);
    let status = resume_to_the_end(d, &db, id, &finished);
    assert_eq!(status, "succeeded");
}

#[test]
fn browse_whose_terminal_is_gone_leaves_without_a_sighup() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let db = d.join("b.db");
    let plan = busy_plan(d, 2);
    let quick = output(plexus(d).arg("--db").arg(&db).arg("run").arg(&plan).args([
        "--chunk-ms",
        "1",
        "--first-chunk-ms",
        "1",
        "--headless",
    ]));
    assert_eq!(quick.code, Some(0), "{}", quick.stderr);
    let mut tui = Tui::start(d, &["--db", db.to_str().expect("utf-8"), "browse"]);
    tui.wait_for("Runs in this database", Duration::from_secs(30));
    tui.wait_for("succeeded", Duration::from_secs(10));
    tui.hang_up();
    let took = tui.wait_gone(LEAVES_WITHIN);
    eprintln!("browse left {took:?} after its terminal went away");
    assert_eq!(tui.exit_code(), 0, "browse leaves like a quit");
}

/// The signals a process has handlers for, from `/proc/PID/status` (`SigCgt`).
fn caught_signals(pid: Pid) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let mask = status.lines().find_map(|l| l.strip_prefix("SigCgt:"))?;
    u64::from_str_radix(mask.trim(), 16).ok()
}

/// A stop signal sent the moment a run's process has its handlers in place (before it
/// opened the database: the file does not exist yet) is handled: the process exits 3 (a
/// run that did not finish), never killed by the signal, and leaves no lease behind; a
/// run it managed to create ends `interrupted`, resumable.
#[test]
fn the_first_signal_is_handled_from_the_start_and_leaves_no_lease_behind() {
    let mut early = 0;
    for (round, signal) in [Signal::SIGTERM, Signal::SIGHUP, Signal::SIGINT]
        .into_iter()
        .cycle()
        .take(9)
        .enumerate()
    {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        let db = d.join("early.db");
        // Long enough (100 layers) that no pause of this test's thread on a loaded
        // machine lets the run end before the signal reaches it.
        let plan = busy_plan(d, 200);
        let mut run = Running::spawn(
            plexus(d)
                .arg("--db")
                .arg(&db)
                .arg("run")
                .arg(&plan)
                .arg("--headless"),
            d.join("stderr.txt"),
        );
        let bit = 1u64 << (signal as i32 - 1);
        let end = Instant::now() + Duration::from_secs(20);
        loop {
            if caught_signals(run.pid()).is_some_and(|m| m & bit != 0) {
                break;
            }
            assert!(
                run.running(),
                "round {round}: exited before taking the signals over"
            );
            assert!(
                Instant::now() < end,
                "round {round}: no handler for {signal:?}"
            );
            std::thread::sleep(Duration::from_micros(200));
        }
        // The handlers come before the database; whether this poll saw them before the
        // file appeared depends on the machine's load, so it is counted, not required.
        if !db.exists() {
            early += 1;
        }
        kill(run.pid(), signal).expect("send the signal");
        let status = run.wait(Duration::from_secs(30));
        let err = run.stderr();
        assert_eq!(
            status.code(),
            Some(3),
            "round {round} {signal:?}: {status:?}; stderr:\n{err}"
        );
        if !db.exists() {
            continue;
        }
        let store = Store::open(&db).expect("the database");
        let leases: i64 = store
            .conn()
            .query_row("SELECT COUNT(*) FROM run_leases", [], |r| r.get(0))
            .expect("leases");
        assert_eq!(
            leases, 0,
            "round {round}: a lease was left behind; stderr:\n{err}"
        );
        for r in store.list_runs().expect("runs") {
            assert_eq!(r.status, "interrupted", "round {round}: {err}");
        }
    }
    assert!(
        early >= 1,
        "in none of 9 rounds were the handlers in place before the database was opened"
    );
}
