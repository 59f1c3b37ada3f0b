//! `plexus diff` through the real binary: two runs of one plan at the same settings on
//! the simulated provider (what re-executing a recorded run gives) have no difference;
//! raising one task's quality threshold shows exactly the changes that follow from it;
//! a run that is not there is trouble (exit 2); the JSON form's shape.

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use common::bin::{output, plexus, Out};
use serde_json::Value;

/// T1 asks for a field the simulated model never writes (`provenance.figure`), so its
/// atoms grade B: they pass threshold `C`, and threshold `A` turns them away (E005)
/// until the retries run out and the task ends partial. T3 takes T2's output through a
/// data reference, so a context is planned (and compared) too.
const PLAN: &str = r#"{"plan_id":"DIFF_TEST","execution_mode":"Deep_Internalization","tasks":[
 {"task_id":"T1","agent":"Scholar_Internalizer","instruction":"Analyse the denoising formula.",
  "output_requirements":{"atom_type":"Math_Atom","required_fields":["content.mathematical_expression","provenance.paper_location","provenance.figure"],"quality_threshold":"THRESHOLD","max_atoms":3}},
 {"task_id":"T2","agent":"Scenario_Validator","instruction":"List parking scenarios.",
  "output_requirements":{"atom_type":"Scenario_Atom","required_fields":["content.scenario"],"quality_threshold":"C","max_atoms":2}},
 {"task_id":"T3","agent":"Code_Architect","instruction":"Review the sampler for these scenarios.","depends_on":["T2"],
  "data_references":[{"ref_type":"task_output","task_id":"T2","path":"$.atoms[*].asset_id"}],
  "output_requirements":{"atom_type":"Code_Atom","required_fields":["content.code_snippet"],"quality_threshold":"C","max_atoms":2}}
]}"#;

/// A database with three runs: the plan at threshold `C` twice, then at `A`.
struct Runs {
    dir: PathBuf,
    db: PathBuf,
    first: String,
    again: String,
    raised: String,
}

/// The runs, made once for all the tests of this file.
fn runs() -> &'static Runs {
    static RUNS: OnceLock<Runs> = OnceLock::new();
    RUNS.get_or_init(|| {
        let dir =
            Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("diff-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("test directory");
        let db = dir.join("t.db");
        let run = |threshold: &str| {
            let plan = dir.join(format!("plan_{threshold}.json"));
            std::fs::write(&plan, PLAN.replace("THRESHOLD", threshold)).expect("write plan");
            let o = output(
                plexus(&dir)
                    .arg("--db")
                    .arg(&db)
                    .args(["run", "--headless", "--seed", "5"])
                    .arg(&plan)
                    .args([
                        "--chunk-ms",
                        "0",
                        "--first-chunk-ms",
                        "0",
                        "--retry-delay-div",
                        "1000",
                        "--timeout-scale",
                        "0.002",
                    ]),
            );
            assert_eq!(o.code, Some(0), "run at {threshold}: {}", o.stderr);
            run_id(&o.stdout)
        };
        let first = run("C");
        let again = run("C");
        let raised = run("A");
        Runs {
            dir,
            db,
            first,
            again,
            raised,
        }
    })
}

/// The run id of `run R…: STATUS`, the last line a headless run prints.
fn run_id(stdout: &str) -> String {
    stdout
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("run ").and_then(|r| r.split(':').next()))
        .expect("a `run ID: status` line")
        .to_string()
}

fn diff(args: &[&str]) -> Out {
    let r = runs();
    output(plexus(&r.dir).arg("--db").arg(&r.db).arg("diff").args(args))
}

fn json(o: &Out) -> Value {
    serde_json::from_str(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", o.stdout))
}

/// `(task, field)` of every difference of the JSON form; run-level ones under `run`.
fn pairs(v: &Value) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for f in v["run"].as_array().expect("run") {
        out.insert((
            "run".to_string(),
            f["field"].as_str().expect("field").to_string(),
        ));
    }
    for t in v["tasks"].as_array().expect("tasks") {
        for f in t["fields"].as_array().expect("fields") {
            out.insert((
                t["task_id"].as_str().expect("task_id").to_string(),
                f["field"].as_str().expect("field").to_string(),
            ));
        }
    }
    out
}

/// The `a` and `b` of one difference.
fn values(v: &Value, task: &str, field: &str) -> (Value, Value) {
    let t = v["tasks"]
        .as_array()
        .and_then(|ts| ts.iter().find(|t| t["task_id"] == task))
        .unwrap_or_else(|| panic!("no task {task}"));
    let f = t["fields"]
        .as_array()
        .and_then(|fs| fs.iter().find(|f| f["field"] == field))
        .unwrap_or_else(|| panic!("no field {field} of {task}"));
    (f["a"].clone(), f["b"].clone())
}

#[test]
fn the_same_plan_at_the_same_settings_has_no_differences() {
    let r = runs();
    let o = diff(&[&r.first, &r.again]);
    assert_eq!(o.code, Some(0), "{}{}", o.stdout, o.stderr);
    assert_eq!(o.stdout, "no differences\n");
    assert_eq!(o.stderr, "");
    let o = diff(&[&r.first, &r.again, "--json"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let v = json(&o);
    assert_eq!(v["same"], true);
    assert_eq!(v["differences"], 0);
    assert_eq!(v["run"], serde_json::json!([]));
    assert_eq!(v["tasks"], serde_json::json!([]));
    // Not the same by being empty: what was compared has every kind of entry.
    let store = plexus::data::store::Store::open(&r.db).expect("store");
    let run = plexus::data::diff::load(&store, &r.first).expect("load");
    let ids: Vec<&str> = run.tasks.iter().map(|t| t.task_id.as_str()).collect();
    assert_eq!(ids, ["T1", "T2", "T3"]);
    let t3 = &run.tasks[2];
    assert!(
        t3.context[0].starts_with("task_output:T2: "),
        "{:?}",
        t3.context
    );
    assert!(run.tasks.iter().all(|t| t.calls.len() == 1
        && !t.calls[0].grades.is_empty()
        && !t.accepted.is_empty()
        && t.calls[0].prompt_tokens > 0));
    // `latest` and a unique prefix name runs too; a run against itself is the same.
    let o = diff(&["latest", "latest"]);
    assert_eq!(
        (o.code, o.stdout.as_str()),
        (Some(0), "no differences\n"),
        "{}",
        o.stderr
    );
    let o = diff(&[&r.raised, &r.raised[..r.raised.len() - 1]]);
    assert_eq!(
        (o.code, o.stdout.as_str()),
        (Some(0), "no differences\n"),
        "{}",
        o.stderr
    );
}

#[test]
fn a_raised_quality_threshold_shows_exactly_what_follows_from_it() {
    let r = runs();
    let o = diff(&[&r.first, &r.raised, "--json"]);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    let v = json(&o);
    assert_eq!(v["same"], false);
    let expected: BTreeSet<(String, String)> = [
        // The run ends partial, because T1 does.
        ("run", "status"),
        // T1's atoms grade B, below A: every attempt fails the gate (E005) and is
        // retried until the retries run out; the last attempt's atoms are kept.
        ("T1", "status"),
        ("T1", "attempts"),
        ("T1", "error_code"),
        ("T1", "retries"),
        ("T1", "attempt[1].status"),
        ("T1", "attempt[1].errors"),
        ("T1", "attempt[2]"),
        ("T1", "attempt[3]"),
        // The third attempt's answer is another text with one atom more.
        ("T1", "atoms"),
        ("T1", "atom[MATH_T1_01].content"),
        ("T1", "atom[MATH_T1_02]"),
    ]
    .into_iter()
    .map(|(t, f)| (t.to_string(), f.to_string()))
    .collect();
    assert_eq!(pairs(&v), expected);
    assert_eq!(v["differences"], expected.len());
    let pair = |a: Value, b: Value| (a, b);
    use serde_json::json;
    assert_eq!(v["run"][0]["a"], "succeeded");
    assert_eq!(v["run"][0]["b"], "partial");
    assert_eq!(
        values(&v, "T1", "status"),
        pair(json!("success"), json!("partial"))
    );
    assert_eq!(values(&v, "T1", "attempts"), pair(json!(1), json!(3)));
    assert_eq!(
        values(&v, "T1", "error_code"),
        pair(json!(null), json!("E005"))
    );
    assert_eq!(
        values(&v, "T1", "attempt[1].errors"),
        pair(json!([]), json!(["E005"]))
    );
    let (a, b) = values(&v, "T1", "attempt[3]");
    assert_eq!(a, Value::Null);
    assert_eq!(b["status"], "partial");
    assert_eq!(b["errors"], json!(["E005"]));
    assert_eq!(b["grades"], json!(["B", "B"]));
    assert_eq!(
        values(&v, "T1", "atom[MATH_T1_02]"),
        pair(Value::Null, json!({"grade": "B", "score": 0.8}))
    );

    // The text form: aligned, at most 100 columns, a summary line at the end.
    let o = diff(&[&r.first, &r.raised]);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    let lines: Vec<&str> = o.stdout.lines().collect();
    for l in &lines {
        assert!(
            unicode_width::UnicodeWidthStr::width(*l) <= 100,
            "too wide: {l:?}"
        );
    }
    assert!(
        o.stdout.contains("\nT1  (Scholar_Internalizer)\n"),
        "{}",
        o.stdout
    );
    assert!(
        lines
            .iter()
            .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["attempts", "1", "3"]),
        "{}",
        o.stdout
    );
    assert_eq!(lines.last(), Some(&"1 task differs: T1; run: status"));
}

#[test]
fn a_run_that_is_not_there_is_trouble() {
    let r = runs();
    let o = diff(&[&r.first, "R-nope"]);
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    assert_eq!(o.stdout, "");
    assert!(
        o.stderr
            .contains("run B `R-nope`: no run `R-nope` in this database"),
        "{}",
        o.stderr
    );
    // A prefix of several runs is trouble too.
    let o = diff(&["R", &r.first]);
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    assert!(o.stderr.contains("is ambiguous"), "{}", o.stderr);
    // So is a database that does not exist; nothing is created.
    let missing = r.dir.join("none.db");
    let o = output(
        plexus(&r.dir)
            .arg("--db")
            .arg(&missing)
            .args(["diff", "a", "b"]),
    );
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    assert!(o.stderr.contains("no database at"), "{}", o.stderr);
    assert!(!missing.exists());
}

#[test]
fn the_json_form_has_both_runs_the_differences_and_the_times() {
    let r = runs();
    let v = json(&diff(&[&r.first, &r.raised, "--json"]));
    for side in ["a", "b"] {
        let keys: BTreeSet<&str> = v[side]
            .as_object()
            .expect(side)
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "created_at",
                "plan_id",
                "provider",
                "run_id",
                "status",
                "tasks"
            ]
            .into_iter()
            .collect()
        );
    }
    assert_eq!(v["a"]["run_id"], r.first.as_str());
    assert_eq!(v["b"]["run_id"], r.raised.as_str());
    assert_eq!(v["a"]["tasks"], 3);
    let keys: BTreeSet<&str> = v
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        ["a", "b", "differences", "run", "same", "tasks", "timing"]
            .into_iter()
            .collect()
    );
    let t = &v["tasks"][0];
    assert_eq!(t["task_id"], "T1");
    assert_eq!(t["agent"], "Scholar_Internalizer");
    for f in t["fields"].as_array().expect("fields") {
        let keys: BTreeSet<&str> = f
            .as_object()
            .expect("field")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, ["a", "b", "field"].into_iter().collect());
    }
    let timing = &v["timing"];
    assert_eq!(timing["compared"], false);
    assert_eq!(timing["tolerance"], Value::Null);
    assert!(timing["run_ms"].as_array().is_some_and(|a| a.len() == 2));
    let tasks: Vec<&str> = timing["tasks"]
        .as_array()
        .expect("timing tasks")
        .iter()
        .map(|t| t["task_id"].as_str().expect("task_id"))
        .collect();
    assert_eq!(tasks, ["T1", "T2", "T3"]);
    // --timing says so and gives its tolerance.
    let v = json(&diff(&[&r.first, &r.raised, "--json", "--timing"]));
    assert_eq!(v["timing"]["compared"], true);
    assert_eq!(v["timing"]["tolerance"]["min_ms"], 100);
}
