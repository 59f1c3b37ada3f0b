//! An eval spec: a JSON file naming the plan to run per sample, the dataset, and the
//! checks, with the epochs and how they reduce, and the pass rates the eval must reach.
//! Paths are relative to the spec file. Errors name the file and the field.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::checks::{Check, CheckKind};
use super::epochs::Reducer;

/// A checked eval spec.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalSpec {
    /// Its name.
    pub name: String,
    /// The plan run once per sample (resolved against the spec's folder).
    pub plan: PathBuf,
    /// The dataset (resolved against the spec's folder).
    pub dataset: PathBuf,
    /// The field that holds each sample's id, when not `id`.
    pub id_key: Option<String>,
    /// The checks, in order; names are unique.
    pub checks: Vec<Check>,
    /// Runs per sample.
    pub epochs: u32,
    /// How the epochs of a sample make one result.
    pub reducer: Reducer,
    /// The least pass rate each named check must reach.
    pub fail_under: BTreeMap<String, f64>,
    /// The task of the plan whose answer the checks read (the plan's last task that no
    /// other depends on, when absent).
    pub output_task: Option<String>,
}

impl EvalSpec {
    /// What scores the samples, as stored with the eval.
    pub fn scoring(&self) -> Scoring {
        Scoring {
            checks: self.checks.clone(),
            epochs: self.epochs,
            reducer: self.reducer.to_string(),
            fail_under: self.fail_under.clone(),
            plan_tasks: Vec::new(),
            output_task: String::new(),
        }
    }
}

/// What scores an eval's samples, as stored with the eval (a rescore replaces the
/// checks).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scoring {
    /// The checks, in order.
    pub checks: Vec<Check>,
    /// Runs per sample.
    pub epochs: u32,
    /// How the epochs reduce (`mean`, `majority`, `all`, `any`, `at_least:N`).
    pub reducer: String,
    /// The least pass rate of each named check.
    #[serde(default)]
    pub fail_under: BTreeMap<String, f64>,
    /// The plan's task ids, in order (each copy's are `PREFIX/TASK`).
    #[serde(default)]
    pub plan_tasks: Vec<String>,
    /// The plan's task whose answer the checks read.
    #[serde(default)]
    pub output_task: String,
}

impl Scoring {
    /// The names of its `judge` checks, in order.
    pub fn judge_names(&self) -> Vec<&str> {
        self.checks
            .iter()
            .filter(|c| c.judge().is_some())
            .map(|c| c.name.as_str())
            .collect()
    }

    /// The reducer (a stored one that no longer parses reduces by `mean`).
    pub fn reducer(&self) -> Reducer {
        self.reducer.parse().unwrap_or(Reducer::Mean)
    }
}

/// The spec as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Written {
    #[serde(rename = "$schema", default)]
    _schema: Option<String>,
    name: String,
    plan: String,
    dataset: String,
    #[serde(default)]
    id_key: Option<String>,
    checks: Vec<Check>,
    #[serde(default = "one")]
    epochs: u32,
    #[serde(default)]
    reducer: Option<String>,
    #[serde(default)]
    fail_under: BTreeMap<String, f64>,
    #[serde(default)]
    output_task: Option<String>,
}

fn one() -> u32 {
    1
}

/// Most answers a judge check asks of each judge.
pub const MOST_VOTES: u32 = 25;

/// Checks every `judge` check: its rubric read (a path replaced by the rubric itself, so
/// the spec as stored carries it), at least one vote, none nested in another check.
/// The first at fault: (its field, why).
pub fn resolve_judges(checks: &mut [Check], dir: &Path) -> Result<(), (String, String)> {
    fn nested(kind: &CheckKind) -> bool {
        match kind {
            CheckKind::Judge { .. } => true,
            CheckKind::All { checks }
            | CheckKind::Any { checks }
            | CheckKind::AtLeastK { checks, .. } => checks.iter().any(nested),
            CheckKind::Not { check } => nested(check),
            _ => false,
        }
    }
    for (i, c) in checks.iter_mut().enumerate() {
        match &mut c.kind {
            CheckKind::Judge { rubric, votes, .. } => {
                let r = super::judge::Rubric::load(rubric, dir)
                    .map_err(|why| (format!("checks[{i}].rubric"), why))?;
                *rubric = serde_json::to_value(&r).unwrap_or_default();
                if !(1..=MOST_VOTES).contains(votes) {
                    return Err((
                        format!("checks[{i}].votes"),
                        format!("from 1 to {MOST_VOTES}"),
                    ));
                }
            }
            CheckKind::All { checks }
            | CheckKind::Any { checks }
            | CheckKind::AtLeastK { checks, .. }
                if checks.iter().any(nested) =>
            {
                return Err((
                    format!("checks[{i}]"),
                    "a judge check stands alone: it cannot be inside all, any, at_least_k or not"
                        .into(),
                ))
            }
            CheckKind::Not { check } if nested(check) => {
                return Err((
                    format!("checks[{i}]"),
                    "a judge check stands alone: it cannot be inside all, any, at_least_k or not"
                        .into(),
                ))
            }
            _ => {}
        }
    }
    Ok(())
}

/// A spec that could not be used: the file, the field at fault (empty for the whole
/// file) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}{}: {message}", if field.is_empty() { String::new() } else { format!(": {field}") })]
pub struct SpecError {
    /// The spec file.
    pub file: String,
    /// The field.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

/// Reads and checks the spec at `path`.
pub fn load_spec(path: &Path) -> Result<EvalSpec, SpecError> {
    let file = path.display().to_string();
    let err = |field: &str, message: String| SpecError {
        file: file.clone(),
        field: field.to_string(),
        message,
    };
    let text = crate::base::text::utf8::read_text(path).map_err(|e| err("", e.to_string()))?;
    let w: Written = serde_json::from_str(&text).map_err(|e| {
        err(
            "",
            crate::base::text::suggest::serde_message(&e.to_string()),
        )
    })?;
    let dir = path.parent().unwrap_or(Path::new(""));
    if w.name.trim().is_empty() {
        return Err(err("name", "must not be empty".into()));
    }
    if w.checks.is_empty() {
        return Err(err("checks", "an eval needs at least one check".into()));
    }
    let mut names = HashSet::new();
    for (i, c) in w.checks.iter().enumerate() {
        if c.name.trim().is_empty() {
            return Err(err(
                &format!("checks[{i}].name"),
                "must not be empty".into(),
            ));
        }
        if let Some(why) = crate::base::text::sanitize::invisible_name(&c.name) {
            return Err(err(&format!("checks[{i}].name"), why));
        }
        if !names.insert(c.name.as_str()) {
            return Err(err(
                &format!("checks[{i}].name"),
                format!("`{}` names another check too; names are unique", c.name),
            ));
        }
        if !(c.weight.is_finite() && c.weight >= 0.0) {
            return Err(err(
                &format!("checks[{i}].weight"),
                "must be a number from 0".into(),
            ));
        }
    }
    if w.epochs == 0 {
        return Err(err("epochs", "must be at least 1".into()));
    }
    let reducer = match &w.reducer {
        None => Reducer::Mean,
        Some(r) => r.parse().map_err(|e| err("reducer", e))?,
    };
    if let Reducer::AtLeast(n) = reducer {
        if n > w.epochs {
            return Err(err(
                "reducer",
                format!("at_least:{n} can never pass with {} epoch(s)", w.epochs),
            ));
        }
    }
    for (check, rate) in &w.fail_under {
        if !names.contains(check.as_str()) {
            return Err(err(
                &format!("fail_under.{check}"),
                "names no check of this eval".into(),
            ));
        }
        if !(0.0..=1.0).contains(rate) {
            return Err(err(
                &format!("fail_under.{check}"),
                "a pass rate is from 0 to 1".into(),
            ));
        }
    }
    drop(names);
    let mut checks = w.checks;
    if let Err((field, why)) = resolve_judges(&mut checks, dir) {
        return Err(err(&field, why));
    }
    Ok(EvalSpec {
        name: w.name,
        plan: dir.join(&w.plan),
        dataset: dir.join(&w.dataset),
        id_key: w.id_key,
        checks,
        epochs: w.epochs,
        reducer,
        fail_under: w.fail_under,
        output_task: w.output_task,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn write(dir: &Path, v: &serde_json::Value) -> PathBuf {
        let p = dir.join("eval.json");
        std::fs::write(&p, v.to_string()).expect("write");
        p
    }

    fn good() -> serde_json::Value {
        json!({
            "name": "arith",
            "plan": "plans/one.json",
            "dataset": "data/arith.jsonl",
            "checks": [
                {"name": "exact", "kind": "exact", "normalize": ["trim"]},
                {"name": "short", "kind": "tokens_at_most", "tokens": 500, "severity": "warning"}
            ],
            "epochs": 3,
            "reducer": "at_least:2",
            "fail_under": {"exact": 0.9}
        })
    }

    #[test]
    fn a_misspelt_key_is_refused_with_the_key_it_meant() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut v = good();
        v["epoch"] = v["epochs"].take();
        v.as_object_mut().expect("object").remove("epochs");
        let e = load_spec(&write(dir.path(), &v)).expect_err("a typo");
        assert!(
            e.message.contains("unknown field `epoch`")
                && e.message.contains("did you mean `epochs`?"),
            "{e}"
        );
        let mut v = good();
        v["checks"][0]["normalise"] = serde_json::json!(["trim"]);
        let e = load_spec(&write(dir.path(), &v)).expect_err("a typo in a check");
        assert!(e.message.contains("did you mean `normalize`?"), "{e}");
    }

    #[test]
    fn a_check_name_with_an_invisible_character_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut v = good();
        v["checks"][0]["name"] = serde_json::json!("ex\u{1b}[31mact");
        let e = load_spec(&write(dir.path(), &v)).expect_err("a control character");
        assert_eq!(e.field, "checks[0].name");
        assert!(e.message.contains("invisible character U+001B"), "{e}");
    }

    #[test]
    fn a_spec_that_is_not_utf8_is_refused_with_its_place() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("eval.json");
        std::fs::write(&p, b"{\n  \"name\": \"a\xff\"}").expect("write");
        let e = load_spec(&p).expect_err("not UTF-8");
        assert!(e.message.contains("not UTF-8 at line 2, column 13"), "{e}");
    }

    #[test]
    fn a_spec_reads_with_paths_beside_it_and_defaults() {
        let dir = tempfile::tempdir().expect("tempdir");
        let spec = load_spec(&write(dir.path(), &good())).expect("spec");
        assert_eq!(spec.plan, dir.path().join("plans/one.json"));
        assert_eq!(spec.dataset, dir.path().join("data/arith.jsonl"));
        assert_eq!(spec.reducer, Reducer::AtLeast(2));
        assert_eq!(spec.checks.len(), 2);
        let mut minimal = good();
        for k in ["epochs", "reducer", "fail_under"] {
            minimal.as_object_mut().map(|o| o.remove(k));
        }
        let spec = load_spec(&write(dir.path(), &minimal)).expect("minimal");
        assert_eq!((spec.epochs, spec.reducer), (1, Reducer::Mean));
    }

    #[test]
    fn a_bad_spec_is_refused_naming_the_field() {
        let dir = tempfile::tempdir().expect("tempdir");
        type Edit = Box<dyn Fn(&mut serde_json::Value)>;
        let cases: Vec<(Edit, &str, &str)> = vec![
            (
                Box::new(|v| v["checks"] = json!([])),
                "checks",
                "at least one check",
            ),
            (
                Box::new(|v| v["checks"][1]["name"] = json!("exact")),
                "checks[1].name",
                "unique",
            ),
            (
                Box::new(|v| v["checks"][0]["weight"] = json!(-1)),
                "checks[0].weight",
                "from 0",
            ),
            (Box::new(|v| v["epochs"] = json!(0)), "epochs", "at least 1"),
            (
                Box::new(|v| v["reducer"] = json!("median")),
                "reducer",
                "unknown reducer",
            ),
            (
                Box::new(|v| v["reducer"] = json!("at_least:4")),
                "reducer",
                "never pass",
            ),
            (
                Box::new(|v| v["fail_under"] = json!({"nope": 0.5})),
                "fail_under.nope",
                "names no check",
            ),
            (
                Box::new(|v| v["fail_under"] = json!({"exact": 90})),
                "fail_under.exact",
                "from 0 to 1",
            ),
            (Box::new(|v| v["name"] = json!(" ")), "name", "empty"),
            (
                Box::new(|v| {
                    v["checks"][1] = json!({"name": "shape", "kind": "any", "checks": [
                        {"kind": "json_schema", "schema": {"type": "no such type"}}]})
                }),
                // Refused as the spec is read: at its line and column.
                "",
                "the schema does not compile",
            ),
            (
                Box::new(|v| v["datasets"] = json!("x")),
                "",
                "unknown field `datasets`",
            ),
            (
                Box::new(|v| v["checks"][0]["kind"] = json!("fuzzy")),
                "",
                "fuzzy",
            ),
        ];
        for (edit, field, says) in cases {
            let mut v = good();
            edit(&mut v);
            let e = load_spec(&write(dir.path(), &v)).expect_err(says);
            assert_eq!(e.field, field, "{e}");
            assert!(e.message.contains(says), "{e}");
        }
        let e = load_spec(&dir.path().join("missing.json")).expect_err("missing");
        assert!(e.message.contains("cannot read"), "{e}");
    }

    #[test]
    fn a_judge_check_carries_its_rubric_and_is_refused_nested_or_without_votes() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            dir.path().join("r.json"),
            r#"{"criteria": [{"name": "ok", "question": "Is it right?"}], "pass_at": 0.5}"#,
        )
        .expect("rubric");
        let mut v = good();
        v["fail_under"] = json!({});
        v["checks"] = json!([{"name": "j", "kind": "judge", "rubric": "r.json", "votes": 3}]);
        let spec = load_spec(&write(dir.path(), &v)).expect("spec");
        let CheckKind::Judge { rubric, votes, .. } = &spec.checks[0].kind else {
            panic!("not a judge: {:?}", spec.checks[0]);
        };
        assert_eq!(*votes, 3);
        assert_eq!(
            rubric["criteria"][0]["name"], "ok",
            "the rubric itself, not its path"
        );
        assert_eq!(rubric["pass_at"], 0.5);
        for (check, field) in [
            (
                json!({"name": "j", "kind": "judge", "rubric": "r.json", "votes": 0}),
                "checks[0].votes",
            ),
            (
                json!({"name": "j", "kind": "judge", "rubric": {"criteria": []}}),
                "checks[0].rubric",
            ),
            (
                json!({"name": "j", "kind": "any", "checks": [{"kind": "judge", "rubric": "r.json"}]}),
                "checks[0]",
            ),
        ] {
            v["checks"] = json!([check]);
            let e = load_spec(&write(dir.path(), &v)).expect_err("refused");
            assert_eq!(e.field, field, "{e}");
        }
    }
}
