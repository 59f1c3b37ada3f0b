//! Recording a run and rerunning it through the real binary, and what the two runs
//! stored (tests/rerun.rs).

use std::path::Path;

use plexus::data::store::Store;
use serde_json::Value;

use super::bin::{output, plexus, Out};

/// Records `plan` on the simulated provider with the demo's faults, fast.
pub fn record(dir: &Path, plan: &Path, seed: u64, extra: &[&str]) -> String {
    let out = output(
        plexus(dir)
            .args([
                "--db",
                "r.db",
                "run",
                "--seed",
                &seed.to_string(),
                "--headless",
            ])
            .arg(plan)
            .args([
                "--faults",
                "demo",
                "--chunk-ms",
                "1",
                "--first-chunk-ms",
                "1",
            ])
            .args(["--retry-delay-div", "1000", "--timeout-scale", "0.002"])
            .args(extra),
    );
    assert!(matches!(out.code, Some(0 | 3)), "run: {}", out.stderr);
    latest(dir)
}

pub fn latest(dir: &Path) -> String {
    let store = Store::open(&dir.join("r.db")).expect("open");
    store.run("latest").expect("a run").run_id
}

/// `plexus rerun RUN ARGS --json --headless`: what it printed and its JSON report.
pub fn rerun(dir: &Path, run: &str, args: &[&str]) -> (Out, Value) {
    let out = output(
        plexus(dir)
            .args(["--db", "r.db", "rerun", run, "--json", "--headless"])
            .args(args),
    );
    let report = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("no JSON report ({e}): {}\n{}", out.stdout, out.stderr));
    (out, report)
}

/// `(task, status, attempts, atoms, error_code)` per task.
pub fn tasks(dir: &Path, run: &str) -> Vec<(String, String, i64, i64, Option<String>)> {
    let store = Store::open(&dir.join("r.db")).expect("open");
    let rows = store.tasks(run).expect("tasks");
    rows.into_iter()
        .map(|t| (t.task_id, t.status, t.attempts, t.atoms, t.error_code))
        .collect()
}

/// Every invocation as `(task, attempt, status, errors, prompt tokens, output tokens,
/// response without its id and time)`, by task and attempt.
pub fn invocations(dir: &Path, run: &str) -> Vec<(String, i64, String, String, i64, i64, Value)> {
    let store = Store::open(&dir.join("r.db")).expect("open");
    let mut st = store
        .conn()
        .prepare(
            "SELECT task_id, attempt, status, COALESCE(error_codes, ''), prompt_tokens, output_tokens, response_json
             FROM invocations WHERE run_id = ?1 ORDER BY task_id, attempt",
        )
        .expect("query");
    let rows = st
        .query_map([run], |r| {
            let mut resp: Value = serde_json::from_str(&r.get::<_, String>(6)?).unwrap_or_default();
            if let Some(o) = resp.as_object_mut() {
                o.remove("invocation_id");
                o.remove("execution_time_ms");
            }
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                resp,
            ))
        })
        .expect("rows");
    rows.collect::<Result<_, _>>().expect("invocations")
}

/// Accepted atoms: `(atom, task, grade, score, content, provenance)`.
pub fn atoms(dir: &Path, run: &str) -> Vec<(String, String, String, f64, String, String)> {
    let store = Store::open(&dir.join("r.db")).expect("open");
    let mut st = store
        .conn()
        .prepare(
            "SELECT atom_id, task_id, grade, score, content, provenance FROM knowledge_atoms
             WHERE run_id = ?1 ORDER BY task_id, atom_id",
        )
        .expect("query");
    let rows = st
        .query_map([run], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
            ))
        })
        .expect("rows");
    rows.collect::<Result<_, _>>().expect("atoms")
}

pub fn assert_same_run(dir: &Path, old: &str, new: &str) {
    assert_eq!(tasks(dir, old), tasks(dir, new), "tasks");
    pretty_assertions::assert_eq!(invocations(dir, old), invocations(dir, new), "invocations");
    assert_eq!(atoms(dir, old), atoms(dir, new), "atoms");
}

/// The provider name the run was stored with.
pub fn provider_of(dir: &Path, run: &str) -> String {
    let store = Store::open(&dir.join("r.db")).expect("open");
    store.run(run).expect("run").provider
}

/// Each chunk event's ms since its invocation started, for a one-invocation run.
pub fn chunk_offsets(dir: &Path, run: &str) -> Vec<i64> {
    chunk_progress(dir, run)
        .into_iter()
        .map(|(_, t)| t)
        .collect()
}

/// For each `chunk` event of `run`'s first invocation in order: how many bytes of text
/// had streamed with it, and its time after the invocation's start (ms). Unlike the
/// events' count, which depends on how a busy machine groups fast chunks, this is the
/// stream's pace itself.
pub fn chunk_progress(dir: &Path, run: &str) -> Vec<(usize, i64)> {
    let store = Store::open(&dir.join("r.db")).expect("open");
    let events = store.events(run, 1, u64::MAX).expect("events");
    let start = events
        .iter()
        .find(|e| {
            e.event
                .as_ref()
                .is_ok_and(|e| e.kind() == "invocation_started")
        })
        .map(|e| e.ts)
        .expect("an invocation");
    let mut streamed = 0;
    events
        .iter()
        .filter_map(|e| match e.event.as_ref() {
            Ok(plexus::model::event::EngineEvent::Chunk(c)) => {
                streamed += c.text.len();
                Some((streamed, e.ts - start))
            }
            _ => None,
        })
        .collect()
}
