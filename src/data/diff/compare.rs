//! The pure comparison of two [`RunSnapshot`]s (rules in the [module docs](super)).

use std::collections::{BTreeMap, HashMap};

use serde_json::{json, Value};

use super::{
    AtomSnapshot, CallSnapshot, DiffOptions, FieldDiff, RunDiff, RunInfo, RunSnapshot, TaskDiff,
    TaskSnapshot, TaskTiming, Timing,
};

/// Scores closer than this are the same score.
const SCORE_EPSILON: f64 = 1e-9;

/// Compares run `a` with run `b`: every difference, run-level and per task.
pub fn compare(a: &RunSnapshot, b: &RunSnapshot, options: &DiffOptions) -> RunDiff {
    let mut run = Vec::new();
    push(&mut run, "plan_id", json!(a.plan_id), json!(b.plan_id));
    push(&mut run, "status", json!(a.status), json!(b.status));

    let b_tasks: HashMap<&str, &TaskSnapshot> =
        b.tasks.iter().map(|t| (t.task_id.as_str(), t)).collect();
    let a_ids: HashMap<&str, ()> = a.tasks.iter().map(|t| (t.task_id.as_str(), ())).collect();
    let only_a: Vec<&str> = a
        .tasks
        .iter()
        .map(|t| t.task_id.as_str())
        .filter(|id| !b_tasks.contains_key(id))
        .collect();
    let only_b: Vec<&str> = b
        .tasks
        .iter()
        .map(|t| t.task_id.as_str())
        .filter(|id| !a_ids.contains_key(id))
        .collect();
    if !only_a.is_empty() || !only_b.is_empty() {
        run.push(FieldDiff {
            field: "tasks".into(),
            a: json!(only_a),
            b: json!(only_b),
        });
    }

    let mut tasks = Vec::new();
    let mut timing_rows = Vec::new();
    for ta in &a.tasks {
        let Some(tb) = b_tasks.get(ta.task_id.as_str()) else {
            continue;
        };
        let mut fields = compare_task(ta, tb);
        if let Some(tol) = &options.timing {
            if tol.exceeded(ta.wall_ms, tb.wall_ms) {
                push(&mut fields, "time_ms", json!(ta.wall_ms), json!(tb.wall_ms));
            }
        }
        timing_rows.push(TaskTiming {
            task_id: ta.task_id.clone(),
            a_ms: ta.wall_ms,
            b_ms: tb.wall_ms,
        });
        if !fields.is_empty() {
            tasks.push(TaskDiff {
                task_id: ta.task_id.clone(),
                agent: ta.agent.clone(),
                fields,
            });
        }
    }
    if let Some(tol) = &options.timing {
        if tol.exceeded(a.wall_ms, b.wall_ms) {
            push(&mut run, "time_ms", json!(a.wall_ms), json!(b.wall_ms));
        }
    }

    RunDiff {
        a: info(a),
        b: info(b),
        same: run.is_empty() && tasks.is_empty(),
        differences: run.len() + tasks.iter().map(|t| t.fields.len()).sum::<usize>(),
        run,
        tasks,
        timing: Timing {
            compared: options.timing.is_some(),
            tolerance: options.timing,
            run_ms: [a.wall_ms, b.wall_ms],
            tasks: timing_rows,
        },
    }
}

fn info(r: &RunSnapshot) -> RunInfo {
    RunInfo {
        run_id: r.run_id.clone(),
        plan_id: r.plan_id.clone(),
        status: r.status.clone(),
        provider: r.provider.clone(),
        created_at: r.created_at.clone(),
        tasks: r.tasks.len(),
    }
}

/// Adds a [`FieldDiff`] when `a` and `b` differ.
fn push(out: &mut Vec<FieldDiff>, field: &str, a: Value, b: Value) {
    if a != b {
        out.push(FieldDiff {
            field: field.to_string(),
            a,
            b,
        });
    }
}

/// The fields of one task (present in both runs) that differ, in a fixed order.
fn compare_task(a: &TaskSnapshot, b: &TaskSnapshot) -> Vec<FieldDiff> {
    let mut out = Vec::new();
    push(&mut out, "agent", json!(a.agent), json!(b.agent));
    push(&mut out, "status", json!(a.status), json!(b.status));
    push(&mut out, "attempts", json!(a.attempts), json!(b.attempts));
    push(
        &mut out,
        "error_code",
        json!(a.error_code),
        json!(b.error_code),
    );
    push(&mut out, "atoms", json!(a.atoms), json!(b.atoms));
    push(
        &mut out,
        "blocked_by",
        json!(a.blocked_by),
        json!(b.blocked_by),
    );
    push(&mut out, "retries", json!(a.retries), json!(b.retries));
    push(&mut out, "context", json!(a.context), json!(b.context));
    push(
        &mut out,
        "references",
        json!(a.references),
        json!(b.references),
    );
    for n in 0..a.calls.len().max(b.calls.len()) {
        compare_call(&mut out, n + 1, a.calls.get(n), b.calls.get(n));
    }
    compare_atoms(&mut out, &a.accepted, &b.accepted);
    out
}

/// The Nth invocation of a task in both runs (or in one).
fn compare_call(
    out: &mut Vec<FieldDiff>,
    n: usize,
    a: Option<&CallSnapshot>,
    b: Option<&CallSnapshot>,
) {
    let name = |f: &str| format!("attempt[{n}].{f}");
    match (a, b) {
        (Some(a), Some(b)) => {
            push(out, &name("status"), json!(a.status), json!(b.status));
            push(out, &name("errors"), json!(a.errors), json!(b.errors));
            push(
                out,
                &name("prompt_tokens"),
                json!(a.prompt_tokens),
                json!(b.prompt_tokens),
            );
            push(
                out,
                &name("output_tokens"),
                json!(a.output_tokens),
                json!(b.output_tokens),
            );
            push(out, &name("grades"), json!(a.grades), json!(b.grades));
        }
        (a, b) => push(out, &format!("attempt[{n}]"), json!(a), json!(b)),
    }
}

/// Accepted atoms aligned by asset id: A's order, then those of B alone.
fn compare_atoms(out: &mut Vec<FieldDiff>, a: &[AtomSnapshot], b: &[AtomSnapshot]) {
    let in_b: BTreeMap<&str, &AtomSnapshot> = b.iter().map(|x| (x.asset_id.as_str(), x)).collect();
    let in_a: BTreeMap<&str, &AtomSnapshot> = a.iter().map(|x| (x.asset_id.as_str(), x)).collect();
    for x in a {
        let id = &x.asset_id;
        match in_b.get(id.as_str()) {
            Some(y) => {
                push(
                    out,
                    &format!("atom[{id}].grade"),
                    json!(x.grade),
                    json!(y.grade),
                );
                if !same_score(x.score, y.score) {
                    out.push(FieldDiff {
                        field: format!("atom[{id}].score"),
                        a: json!(x.score),
                        b: json!(y.score),
                    });
                }
                push(
                    out,
                    &format!("atom[{id}].content"),
                    x.content.clone(),
                    y.content.clone(),
                );
            }
            None => push(out, &format!("atom[{id}]"), atom_value(x), Value::Null),
        }
    }
    for y in b.iter().filter(|y| !in_a.contains_key(y.asset_id.as_str())) {
        push(
            out,
            &format!("atom[{}]", y.asset_id),
            Value::Null,
            atom_value(y),
        );
    }
}

/// An atom present in one run only: its grade and score.
fn atom_value(x: &AtomSnapshot) -> Value {
    json!({"grade": x.grade, "score": x.score})
}

fn same_score(a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => (a - b).abs() < SCORE_EPSILON || a == b,
        (None, None) => true,
        _ => false,
    }
}

#[cfg(test)]
#[path = "compare_tests.rs"]
mod tests;
