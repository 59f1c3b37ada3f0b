//! The protocols against a real model plexus did not write: SmolLM2-135M-Instruct served
//! by llama-cpp-python (the real-model kit beside the project). Ignored by default — they
//! need the kit and take minutes — and run by hand:
//!
//! ```sh
//! ../shared/real-model/setup.sh      # once
//! cargo test --test cli real_model -- --ignored --nocapture --test-threads 1
//! ```
//!
//! Each starts the kit's server on `PLEXUS_REAL_MODEL_PORT` (8011 by default) unless one
//! answers there already (and stops it after when it started it), and prints its
//! figures; docs/performance.md records them.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use rusqlite::Connection;

use crate::common::bin::{output, plexus, Out};

/// The kit's folder: `PLEXUS_REAL_MODEL_KIT`, else `../shared/real-model`.
fn kit() -> PathBuf {
    std::env::var_os("PLEXUS_REAL_MODEL_KIT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/real-model"))
}

fn port() -> u16 {
    std::env::var("PLEXUS_REAL_MODEL_PORT")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(8011)
}

/// The kit's server on [`port`], for one test: stopped when dropped if it started it.
struct Server {
    started_here: bool,
}

impl Server {
    fn up() -> Server {
        let answers = || std::net::TcpStream::connect(("127.0.0.1", port())).is_ok();
        if answers() {
            return Server {
                started_here: false,
            };
        }
        let start = kit().join("start.sh");
        let o = Command::new(&start)
            .arg(port().to_string())
            .output()
            .unwrap_or_else(|e| panic!("{}: {e} (run the kit's setup.sh first)", start.display()));
        assert!(
            o.status.success(),
            "{} failed: {}{} (run the kit's setup.sh first)",
            start.display(),
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        Server { started_here: true }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.started_here {
            let _ = Command::new(kit().join("stop.sh"))
                .arg(port().to_string())
                .status();
            // stop.sh only signals the server: wait until it no longer accepts, so the
            // next test starts its own instead of using one that is going away.
            let deadline = Instant::now() + std::time::Duration::from_secs(20);
            while std::net::TcpStream::connect(("127.0.0.1", port())).is_ok()
                && Instant::now() < deadline
            {
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        }
    }
}

/// A folder with a config whose profile `smol` is the kit's server, as its README gives.
fn workdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("plexus.toml"),
        format!(
            "[providers.smol]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:{}/v1\"\n\
             model = \"smollm2\"\nconcurrency = 1\nidle_timeout_s = 300\n",
            port()
        ),
    )
    .expect("config");
    dir
}

fn smol(dir: &Path, args: &[&str]) -> (Out, f64) {
    let t = Instant::now();
    let o = output(
        plexus(dir)
            .env("PLEXUS_CONFIG", dir.join("plexus.toml"))
            .args(args),
    );
    (o, t.elapsed().as_secs_f64())
}

/// Runs plexus in `dir` with the kit's config, reading its standard error as it comes:
/// the output, and the longest silence on standard error (seconds).
fn smol_timed(dir: &Path, args: &[&str]) -> (Out, f64, f64) {
    use std::io::BufRead;
    let t = Instant::now();
    let mut child = plexus(dir)
        .env("PLEXUS_CONFIG", dir.join("plexus.toml"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn plexus");
    let err = child.stderr.take().expect("stderr");
    let reader = std::thread::spawn(move || {
        let (mut text, mut last, mut longest) = (String::new(), Instant::now(), 0f64);
        for line in std::io::BufReader::new(err).lines().map_while(Result::ok) {
            longest = longest.max(last.elapsed().as_secs_f64());
            last = Instant::now();
            text.push_str(&line);
            text.push('\n');
        }
        (text, longest)
    });
    let mut stdout = String::new();
    if let Some(mut out) = child.stdout.take() {
        use std::io::Read;
        let _ = out.read_to_string(&mut stdout);
    }
    let status = child.wait().expect("wait");
    let (stderr, longest) = reader.join().expect("reader");
    (
        Out {
            code: status.code(),
            stdout,
            stderr,
        },
        t.elapsed().as_secs_f64(),
        longest,
    )
}

/// Every invocation's error codes.
fn error_codes(db: &Path) -> Vec<(String, String)> {
    let c = Connection::open(db).expect("db");
    let mut st = c
        .prepare("SELECT task_id, COALESCE(error_codes, '') FROM invocations ORDER BY started_at")
        .expect("query");
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("rows")
        .map(|r| r.expect("row"))
        .collect()
}

#[test]
#[ignore = "needs the real-model kit (../shared/real-model/setup.sh); minutes"]
fn real_model_demo_every_answer_parses_and_validates() {
    let _server = Server::up();
    let dir = workdir();
    let (o, secs) = smol(
        dir.path(),
        &["--db", "d.db", "demo", "--provider", "smol", "--headless"],
    );
    let codes = error_codes(&dir.path().join("d.db"));
    eprintln!(
        "real-model demo: exit {:?} in {secs:.0} s; {} invocation(s): {codes:?}\n{}",
        o.code,
        codes.len(),
        o.stdout
    );
    assert!(!codes.is_empty(), "{}", o.stderr);
    for (task, c) in &codes {
        assert!(
            !c.contains("E002") && !c.contains("E003"),
            "{task}: a format error ({c}):\n{}",
            o.stderr
        );
    }
}

#[test]
#[ignore = "needs the real-model kit (../shared/real-model/setup.sh); minutes"]
fn real_model_eval_of_twenty_sums_has_no_format_error_and_reports_progress() {
    let _server = Server::up();
    let dir = workdir();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/eval");
    for f in [
        "arith_plain.eval.json",
        "plain_answer_plan.json",
        "arith20.jsonl",
    ] {
        std::fs::copy(root.join(f), dir.path().join(f)).expect("copy fixture");
    }
    let (o, secs, silence) = smol_timed(
        dir.path(),
        &[
            "--db",
            "e.db",
            "eval",
            "arith_plain.eval.json",
            "--out",
            "tree",
            "--provider",
            "smol",
            "--headless",
            "--json",
        ],
    );
    let codes = error_codes(&dir.path().join("e.db"));
    let report: serde_json::Value = serde_json::from_str(&o.stdout).unwrap_or_default();
    let number = report["checks"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["check"] == "number"))
        .cloned()
        .unwrap_or_default();
    let status = o
        .stderr
        .lines()
        .filter(|l| l.starts_with("status: "))
        .count();
    eprintln!(
        "real-model eval: exit {:?} in {secs:.0} s; number {}/{} passed; {} call(s); {status} status line(s); longest silence {silence:.1} s",
        o.code,
        number["passed"],
        number["of"],
        codes.len()
    );
    assert_eq!(number["of"], 20, "{}\n{}", o.stdout, o.stderr);
    assert!(
        number["passed"].is_u64(),
        "the pass rate is reported: {number}"
    );
    for (task, c) in &codes {
        assert!(
            !c.contains("E002") && !c.contains("E003"),
            "{task}: a format error ({c})"
        );
    }
    // Never silent: a line at least every 10 s (a little more for a busy machine).
    assert!(
        silence <= 12.0,
        "{silence:.1} s without a line:\n{}",
        o.stderr
    );
}

#[test]
#[ignore = "needs the real-model kit (../shared/real-model/setup.sh); minutes"]
fn real_model_debate_of_two_rounds_gives_valid_positions_and_a_report() {
    let _server = Server::up();
    let dir = workdir();
    let (o, secs) = smol(
        dir.path(),
        &[
            "--db",
            "d.db",
            "debate",
            "Should a small team write its tests first?",
            "--provider",
            "smol",
            "--max-rounds",
            "2",
            "--headless",
        ],
    );
    let valid = o.stderr.lines().filter(|l| l.contains(": valid")).count();
    eprintln!(
        "real-model debate: exit {:?} in {secs:.0} s; {valid} valid output(s)\n{}\n{}",
        o.code, o.stderr, o.stdout
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    for round in 1..=2 {
        for role in ["planner", "critic"] {
            let said = o
                .stderr
                .lines()
                .any(|l| l.starts_with(&format!("round {round} {role}: valid")));
            // A debate that converged after round 1 holds no round 2.
            let held = round == 1 || o.stderr.contains("round 2 ");
            assert!(!held || said, "round {round} {role}:\n{}", o.stderr);
        }
    }
    assert!(
        o.stderr.lines().any(|l| l.contains("reporter: valid")),
        "{}",
        o.stderr
    );
    assert!(!o.stdout.contains("(no report"), "{}", o.stdout);
}
