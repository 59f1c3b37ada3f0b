//! One plan for a whole eval: the plan's tasks copied once per sample, with the sample's
//! fields placed into them. An eval is then one run of that plan, so the scheduler,
//! resume, replay, diff and the Failures screen serve it as any run.
//!
//! A copy's task id is `SAMPLE/TASK`, and its dependencies and `task_output`
//! references point at the same sample's copies. Placeholders are placed in a task's
//! `instruction`, `focus`, `context` and `data_references` (every string inside them).
//! A data reference of kind `sample` gets the value its JSONPath finds in the sample
//! (`{id, input, vars, metadata}`), so a large input reaches the agent as an input,
//! through the transfer modes and trimming, rather than inside the instruction.
//! Every placeholder and sample reference of every sample is resolved before the plan
//! is made: if any cannot be, the plan is not made and each is named.

use serde_json::{Map, Value};

use super::dataset::Sample;
use super::placeholders::{render, Unresolved};

/// The fields of a task whose strings may hold placeholders.
const PLACED: [&str; 4] = ["instruction", "focus", "context", "data_references"];

/// Most unresolved placeholders listed.
const MOST_LISTED: usize = 50;

/// Why a plan could not be made for the eval.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExpandError {
    /// The plan has no task list to copy.
    #[error("the plan has no `tasks` array")]
    NoTasks,
    /// A task has no string `task_id`.
    #[error("task {0} of the plan has no `task_id`")]
    NoTaskId(usize),
    /// Placeholders that cannot be resolved (at most 50 listed).
    #[error("{} placeholder(s) cannot be resolved; the first: {}", .0.len(), .0.first().map(ToString::to_string).unwrap_or_default())]
    Unresolved(Vec<Unresolved>),
}

/// The id of sample `sample`'s copy of task `task`.
pub fn copy_id(sample: &str, task: &str) -> String {
    format!("{sample}/{task}")
}

/// One copy of the plan: the sample placed in it and the prefix of its task ids (the
/// sample's id, with the epoch when a sample runs several times).
#[derive(Debug, Clone, Copy)]
pub struct PlanCopy<'a> {
    /// The prefix of the copy's task ids.
    pub prefix: &'a str,
    /// The sample.
    pub sample: &'a Sample,
}

/// The plan of the eval: `plan` (as JSON) with its tasks copied for each sample.
pub fn expand(plan: &Value, samples: &[Sample]) -> Result<Value, ExpandError> {
    let copies: Vec<PlanCopy<'_>> = samples
        .iter()
        .map(|s| PlanCopy {
            prefix: &s.id,
            sample: s,
        })
        .collect();
    expand_copies(plan, &copies)
}

/// [`expand`] with one copy per entry of `copies` (a sample may have several).
pub fn expand_copies(plan: &Value, copies: &[PlanCopy<'_>]) -> Result<Value, ExpandError> {
    let text = expand_copies_text(plan, copies)?;
    // The text was written from JSON values just now: it reads back.
    Ok(serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// [`expand_copies`] as JSON text, written copy by copy: a plan of 100,000 copies is
/// never held as a tree of JSON values, only as its text.
pub fn expand_copies_text(plan: &Value, copies: &[PlanCopy<'_>]) -> Result<String, ExpandError> {
    let (tasks, ids) = plan_tasks(plan)?;
    check_copies(tasks, &ids, copies)?;
    let mut out: Map<String, Value> = plan.as_object().cloned().unwrap_or_default();
    out.insert("tasks".into(), Value::Array(Vec::new()));
    let shell = Value::Object(out).to_string();
    // `"tasks":[]` is in the shell once; the copies go between its brackets.
    let at = shell
        .find("\"tasks\":[]")
        .map(|i| i + "\"tasks\":[".len())
        .unwrap_or(shell.len());
    let mut text = String::with_capacity(shell.len() + copies.len() * tasks.len() * 512);
    text.push_str(&shell[..at]);
    let mut first = true;
    for c in copies {
        for (t, id) in tasks.iter().zip(&ids) {
            if !first {
                text.push(',');
            }
            first = false;
            text.push_str(&copy_task(t, id, c, &ids).to_string());
        }
    }
    text.push_str(&shell[at..]);
    Ok(text)
}

/// The plan's tasks and their ids.
fn plan_tasks(plan: &Value) -> Result<(&Vec<Value>, Vec<String>), ExpandError> {
    let tasks = plan
        .get("tasks")
        .and_then(Value::as_array)
        .ok_or(ExpandError::NoTasks)?;
    let mut ids = Vec::with_capacity(tasks.len());
    for (i, t) in tasks.iter().enumerate() {
        ids.push(
            t.get("task_id")
                .and_then(Value::as_str)
                .ok_or(ExpandError::NoTaskId(i))?
                .to_string(),
        );
    }
    Ok((tasks, ids))
}

/// Every placeholder of every sample, before anything is made.
fn check_copies(
    tasks: &[Value],
    ids: &[String],
    copies: &[PlanCopy<'_>],
) -> Result<(), ExpandError> {
    let mut unresolved = Vec::new();
    let mut checked = std::collections::HashSet::new();
    'samples: for s in copies.iter().map(|c| c.sample) {
        if !checked.insert(s.id.as_str()) {
            continue;
        }
        for (t, id) in tasks.iter().zip(ids) {
            check_sample_refs(t, id, s, &mut unresolved);
            for field in PLACED {
                if let Some(v) = t.get(field) {
                    let mut path = format!("tasks[{id}].{field}");
                    check_strings(v, s, &mut path, &mut unresolved);
                    if unresolved.len() >= MOST_LISTED {
                        unresolved.truncate(MOST_LISTED);
                        break 'samples;
                    }
                }
            }
        }
    }
    if unresolved.is_empty() {
        Ok(())
    } else {
        Err(ExpandError::Unresolved(unresolved))
    }
}

/// What a `sample` reference reads: the sample without its expected value.
fn sample_view(s: &Sample) -> Value {
    serde_json::json!({"id": s.id, "input": s.input, "vars": s.vars, "metadata": s.metadata})
}

/// The value `sample` reference `r` (a task's data reference, as JSON) finds in `s`, or
/// why it finds nothing. A path into the expected value is refused: it never reaches an
/// agent.
fn sample_value(r: &Value, s: &Sample) -> Result<Value, (String, String)> {
    let path = r.get("path").and_then(Value::as_str).unwrap_or("$.input");
    let head = path
        .trim_start_matches('$')
        .trim_start_matches('.')
        .trim_start_matches("['")
        .split(['.', '[', '\''])
        .next()
        .unwrap_or("");
    if matches!(head, "expected" | "target") {
        return Err((
            path.to_string(),
            "the expected value never reaches an agent".into(),
        ));
    }
    let p = crate::base::jsonpath::JsonPath::parse(path)
        .map_err(|e| (path.to_string(), format!("the JSONPath does not parse {e}")))?;
    p.select_value(&sample_view(s))
        .ok_or_else(|| (path.to_string(), "the sample has nothing there".into()))
}

/// Records each `sample` reference of task `t` (id `id`) that `s` cannot fill.
fn check_sample_refs(t: &Value, id: &str, s: &Sample, found: &mut Vec<Unresolved>) {
    let refs = t.get("data_references").and_then(Value::as_array);
    for (i, r) in refs.into_iter().flatten().enumerate() {
        if r.get("ref_type").and_then(Value::as_str) != Some("sample") {
            continue;
        }
        if let Err((placeholder, why)) = sample_value(r, s) {
            found.push(Unresolved {
                sample: s.id.clone(),
                field: format!("tasks[{id}].data_references[{i}].path"),
                placeholder,
                why,
            });
        }
    }
}

/// Copy `c`'s copy of task `t` (whose id is `id`; the plan's ids are `ids`).
fn copy_task(t: &Value, id: &str, copy: &PlanCopy<'_>, ids: &[String]) -> Value {
    let (s, prefix) = (copy.sample, copy.prefix);
    let mut c = t.clone();
    let Some(obj) = c.as_object_mut() else {
        return c;
    };
    obj.insert("task_id".into(), Value::String(copy_id(prefix, id)));
    for field in PLACED {
        if let Some(v) = obj.get_mut(field) {
            place_strings(v, s);
        }
    }
    let of_plan = |d: &str| ids.iter().any(|i| i == d);
    if let Some(Value::Array(deps)) = obj.get_mut("depends_on") {
        for d in deps {
            if let Some(name) = d.as_str().filter(|n| of_plan(n)) {
                *d = Value::String(copy_id(prefix, name));
            }
        }
    }
    if let Some(Value::Array(refs)) = obj.get_mut("data_references") {
        for r in refs {
            if r.get("ref_type").and_then(Value::as_str) == Some("sample") {
                // Checked beforehand: the value is there.
                if let Ok(v) = sample_value(r, s) {
                    r["data"] = v;
                }
                continue;
            }
            if r.get("ref_type").and_then(Value::as_str) != Some("task_output") {
                continue;
            }
            if let Some(target) = r
                .get("task_id")
                .and_then(Value::as_str)
                .filter(|n| of_plan(n))
            {
                let new = copy_id(prefix, target);
                r["task_id"] = Value::String(new);
            }
        }
    }
    c
}

/// Every string inside `v` with `s`'s fields placed (checked beforehand).
fn place_strings(v: &mut Value, s: &Sample) {
    match v {
        Value::String(text) => {
            if let Ok(placed) = render(text, s) {
                *text = placed;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| place_strings(i, s)),
        Value::Object(m) => m.values_mut().for_each(|i| place_strings(i, s)),
        _ => {}
    }
}

/// Records each string inside `v` (at `path`) whose placeholders `s` cannot resolve.
fn check_strings(v: &Value, s: &Sample, path: &mut String, found: &mut Vec<Unresolved>) {
    match v {
        Value::String(text) => {
            if let Err((placeholder, why)) = render(text, s) {
                found.push(Unresolved {
                    sample: s.id.clone(),
                    field: path.clone(),
                    placeholder,
                    why,
                });
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                check_strings(item, s, path, found);
                path.truncate(len);
            }
        }
        Value::Object(m) => {
            for (k, item) in m {
                let len = path.len();
                path.push('.');
                path.push_str(k);
                check_strings(item, s, path, found);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sample(id: &str, q: &str) -> Sample {
        Sample {
            id: id.into(),
            input: json!(q),
            expected: Some(json!("hidden")),
            vars: json!({"lang": "en"})
                .as_object()
                .cloned()
                .unwrap_or_default(),
            metadata: Map::new(),
            hash: String::new(),
            line: 1,
        }
    }

    fn plan() -> Value {
        json!({
            "plan_id": "P",
            "tasks": [
                {"task_id": "solve", "agent": "Scholar_Internalizer",
                 "instruction": "Solve {{sample.input}} in {{vars.lang}}",
                 "context": {"paper_info": {"title": "Sample {{id}}"}}},
                {"task_id": "check", "agent": "Critic", "depends_on": ["solve"],
                 "instruction": "Check the answer",
                 "data_references": [
                    {"ref_type": "task_output", "task_id": "solve", "path": "$.atoms"},
                    {"ref_type": "file", "path": "notes/{{id}}.md"}
                 ]}
            ]
        })
    }

    #[test]
    fn each_sample_gets_its_own_copies_wired_to_each_other() {
        let out = expand(&plan(), &[sample("s1", "2+2"), sample("s2", "3+3")]).expect("expand");
        let tasks = out["tasks"].as_array().expect("tasks");
        assert_eq!(tasks.len(), 4);
        assert_eq!(out["plan_id"], "P");
        let ids: Vec<&str> = tasks.iter().filter_map(|t| t["task_id"].as_str()).collect();
        assert_eq!(ids, ["s1/solve", "s1/check", "s2/solve", "s2/check"]);
        assert_eq!(tasks[2]["instruction"], "Solve 3+3 in en");
        assert_eq!(tasks[2]["context"]["paper_info"]["title"], "Sample s2");
        assert_eq!(tasks[3]["depends_on"], json!(["s2/solve"]));
        assert_eq!(tasks[3]["data_references"][0]["task_id"], "s2/solve");
        assert_eq!(tasks[3]["data_references"][1]["path"], "notes/s2.md");
        assert!(
            !out.to_string().contains("hidden"),
            "the expected value is nowhere"
        );
    }

    #[test]
    fn nothing_is_made_when_a_placeholder_fails_and_each_failure_is_named() {
        let mut p = plan();
        p["tasks"][1]["instruction"] = json!("Compare with {{expected}}");
        let mut no_lang = sample("s2", "3+3");
        no_lang.vars.clear();
        let e = expand(&p, &[sample("s1", "2+2"), no_lang]).expect_err("unresolved");
        let ExpandError::Unresolved(list) = &e else {
            panic!("{e}");
        };
        let named: Vec<(String, String)> = list
            .iter()
            .map(|u| (u.sample.clone(), u.field.clone()))
            .collect();
        assert_eq!(
            named,
            [
                ("s1".to_string(), "tasks[check].instruction".to_string()),
                ("s2".to_string(), "tasks[solve].instruction".to_string()),
                ("s2".to_string(), "tasks[check].instruction".to_string()),
            ]
        );
        assert!(e.to_string().starts_with("3 placeholder(s)"), "{e}");
        let mut nested = plan();
        nested["tasks"][0]["context"]["paper_info"]["authors"] = json!(["{{metadata.who}}"]);
        let e = expand(&nested, &[sample("s1", "q")]).expect_err("nested");
        let ExpandError::Unresolved(list) = e else {
            panic!("not unresolved");
        };
        assert_eq!(list[0].field, "tasks[solve].context.paper_info.authors[0]");
    }

    #[test]
    fn a_plan_without_tasks_or_task_ids_is_refused() {
        assert_eq!(
            expand(&json!({"plan_id": "P"}), &[]),
            Err(ExpandError::NoTasks)
        );
        assert_eq!(
            expand(&json!({"tasks": [{"agent": "A"}]}), &[]),
            Err(ExpandError::NoTaskId(0))
        );
    }

    #[test]
    fn the_made_plan_of_a_real_plan_passes_plan_validation() {
        let text = include_str!("../../../fixtures/plans/avp_diffusion_planner.json");
        let plan: Value = serde_json::from_str(text).expect("fixture");
        let n = plan["tasks"].as_array().map_or(0, Vec::len);
        let out = expand(&plan, &[sample("a", "q1"), sample("b", "q2")]).expect("expand");
        let parsed = crate::model::plan::parse_plan(&out.to_string(), "eval").expect("valid plan");
        assert_eq!(parsed.tasks.len(), 2 * n);
        let first = &plan["tasks"][0]["task_id"];
        assert!(parsed
            .task_index(&copy_id("b", first.as_str().unwrap_or_default()))
            .is_some());
    }

    #[test]
    fn a_sample_reference_carries_the_value_its_path_finds_and_never_the_expected_one() {
        let mut s = sample("q1", "");
        s.input = json!({"document": "a long text", "lang": "fr"});
        let p = json!({"plan_id": "P", "tasks": [
            {"task_id": "read", "agent": "Scholar_Internalizer", "instruction": "Read it",
             "data_references": [
                {"ref_type": "sample", "path": "$.input.document"},
                {"ref_type": "sample"}]}]});
        let out = expand(&p, std::slice::from_ref(&s)).expect("expanded");
        let refs = &out["tasks"][0]["data_references"];
        assert_eq!(refs[0]["data"], "a long text");
        assert_eq!(
            refs[1]["data"],
            json!({"document": "a long text", "lang": "fr"})
        );
        for (path, why) in [
            ("$.expected", "never reaches"),
            ("$.input.missing", "nothing there"),
        ] {
            let bad = json!({"plan_id": "P", "tasks": [
                {"task_id": "read", "agent": "Scholar_Internalizer", "instruction": "Read it",
                 "data_references": [{"ref_type": "sample", "path": path}]}]});
            let Err(ExpandError::Unresolved(u)) = expand(&bad, std::slice::from_ref(&s)) else {
                panic!("{path} was accepted");
            };
            assert_eq!(u[0].field, "tasks[read].data_references[0].path");
            assert!(u[0].why.contains(why), "{path}: {}", u[0].why);
        }
    }
}
