//! One task of a plan: its fields checked for shape (every problem at its own path), its
//! agent resolved by the name rule, then the checks serde cannot make.

use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::agents::{check_react_lists, AgentTable};
use super::references::parse_references;
use super::shape::{describe, Want};
use super::{check_id, schema, Collector, K};
use crate::base::protocol::{Grade, OutputRequirements, RequestContext};
use crate::model::plan::react::TaskReact;
use crate::model::plan::{ConstraintOverrides, Task, TaskOptions};

/// Task `i` of the plan; `None` when it is too broken to keep (already reported).
pub(super) fn parse_task(
    c: &mut Collector<'_>,
    i: usize,
    t: &Map<String, Value>,
    agents: &mut AgentTable,
) -> Option<Task> {
    let task_id = task_id_of(c, i, t)?;
    let tid = Some(task_id.as_str());
    let mut ok = known_keys(c, tid, t);
    let agent = agent_of(c, tid, t, agents, &mut ok);
    let instruction = instruction_of(c, tid, t, &mut ok);
    let context: RequestContext = section(c, tid, t, "context", &schema::CONTEXT, &mut ok);
    let focus = focus_of(c, tid, t, &context, &mut ok);
    let depends_on: Box<[Box<str>]> =
        section(c, tid, t, "depends_on", &Want::List(&Want::Str), &mut ok);
    let data_references =
        parse_references(c, &task_id, t.get("data_references")).unwrap_or_else(|| {
            ok = false;
            Vec::new()
        });
    let transfer_config = optional(
        c,
        tid,
        t,
        "transfer_config",
        &schema::TRANSFER_CONFIG,
        &mut ok,
    );
    let fallback_config = optional(
        c,
        tid,
        t,
        "fallback_config",
        &schema::FALLBACK_CONFIG,
        &mut ok,
    );
    // The grade first, from the text, so it is checked even when another field of
    // output_requirements is malformed.
    check_threshold(c, tid, t);
    let output_requirements: OutputRequirements = section(
        c,
        tid,
        t,
        "output_requirements",
        &schema::OUTPUT_REQUIREMENTS,
        &mut ok,
    );
    let constraints: ConstraintOverrides =
        section(c, tid, t, "constraints", &schema::CONSTRAINTS, &mut ok);
    let react = parse_react(c, tid, t);
    let text_output = match t.get("output_format") {
        Some(v) => {
            ok &= c.shape(tid, "output_format", v, &schema::TASK_OUTPUT_FORMAT);
            v.as_str() == Some("text")
        }
        None => false,
    };
    let options = TaskOptions {
        focus,
        data_references,
        transfer_config,
        fallback_config,
        constraints,
        react: react?,
        text_output,
    };
    ok.then(|| Task {
        task_id,
        agent: c.shared.agent(&agent),
        instruction,
        context: c.shared.context(context),
        depends_on,
        output_requirements: c.shared.requirements(output_requirements),
        options: options.boxed(),
    })
}

/// The `task_id` of task `i`, checked; `None` (reported) when it is missing or empty.
fn task_id_of(c: &mut Collector<'_>, i: usize, t: &Map<String, Value>) -> Option<String> {
    match t.get("task_id") {
        Some(Value::String(s)) if !s.trim().is_empty() => {
            check_id(c, None, &format!("tasks[{i}].task_id"), s);
            Some(s.clone())
        }
        _ => {
            c.push(
                None,
                format!("tasks[{i}].task_id"),
                K::Shape,
                "every task needs a non-empty string task_id",
            );
            None
        }
    }
}

/// Reports every key of the task that is not a task field; `true` when there is none.
fn known_keys(c: &mut Collector<'_>, tid: Option<&str>, t: &Map<String, Value>) -> bool {
    let mut ok = true;
    for key in t.keys() {
        if schema::TASK.get(key).is_none() {
            c.push(
                tid,
                key,
                K::UnknownField,
                super::shape::unknown_field(key, &schema::TASK.names()),
            );
            ok = false;
        }
    }
    ok
}

/// The task's agent resolved by the name rule; an unknown name is reported but kept,
/// a missing one clears `ok`.
fn agent_of(
    c: &mut Collector<'_>,
    tid: Option<&str>,
    t: &Map<String, Value>,
    agents: &mut AgentTable,
    ok: &mut bool,
) -> String {
    match t.get("agent") {
        Some(Value::String(name)) => {
            check_id(c, tid, "agent", name);
            agents.resolve(name).unwrap_or_else(|| {
                c.push(
                    tid,
                    "agent",
                    K::UnknownAgent,
                    format!(
                        "unknown agent `{name}`; known agents: {}",
                        agents.known().join(", ")
                    ),
                );
                // keep the task so that graph errors are reported too
                name.clone()
            })
        }
        _ => {
            c.push(tid, "agent", K::Shape, "missing or not a string");
            *ok = false;
            String::new()
        }
    }
}

/// The task's instruction; a missing or empty one is reported and clears `ok`.
fn instruction_of(
    c: &mut Collector<'_>,
    tid: Option<&str>,
    t: &Map<String, Value>,
    ok: &mut bool,
) -> String {
    match t.get("instruction") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        _ => {
            c.push(tid, "instruction", K::Shape, "missing or empty");
            *ok = false;
            String::new()
        }
    }
}

/// The task's focus: its own field, else the context's `focus`; a non-string is
/// reported and clears `ok`.
fn focus_of(
    c: &mut Collector<'_>,
    tid: Option<&str>,
    t: &Map<String, Value>,
    context: &RequestContext,
    ok: &mut bool,
) -> Option<String> {
    match t.get("focus") {
        None => context
            .extra
            .get("focus")
            .and_then(Value::as_str)
            .map(str::to_string),
        Some(Value::String(s)) => Some(s.clone()),
        Some(v) => {
            c.push(
                tid,
                "focus",
                K::Shape,
                format!("must be a string, not {}", describe(v)),
            );
            *ok = false;
            None
        }
    }
}

/// Reports a `quality_threshold` text of `output_requirements` that is not a grade.
fn check_threshold(c: &mut Collector<'_>, tid: Option<&str>, t: &Map<String, Value>) {
    let Some(Value::String(th)) = t
        .get("output_requirements")
        .and_then(|o| o.get("quality_threshold"))
    else {
        return;
    };
    if Grade::parse(th).is_none() {
        c.push(
            tid,
            "output_requirements.quality_threshold",
            K::BadThreshold,
            format!(
                "quality threshold `{th}` is not one of {}",
                schema::GRADES.join(", ")
            ),
        );
    }
}

/// An optional part of a task, checked for shape and read; its default when absent or
/// malformed (then `ok` is cleared).
fn section<T: DeserializeOwned + Default>(
    c: &mut Collector<'_>,
    tid: Option<&str>,
    t: &Map<String, Value>,
    field: &str,
    want: &Want,
    ok: &mut bool,
) -> T {
    optional(c, tid, t, field, want, ok).unwrap_or_default()
}

/// An optional part of a task, checked for shape and read; `None` when absent or
/// malformed (then `ok` is cleared).
fn optional<T: DeserializeOwned>(
    c: &mut Collector<'_>,
    tid: Option<&str>,
    t: &Map<String, Value>,
    field: &str,
    want: &Want,
    ok: &mut bool,
) -> Option<T> {
    let v = t.get(field)?;
    let read = c.read(tid, field, v, want);
    *ok &= read.is_some();
    read
}

/// The tool-using fields of a task, checked: known tools, plain skill names, numbers in
/// their ranges.
fn parse_react(
    c: &mut Collector<'_>,
    tid: Option<&str>,
    t: &Map<String, Value>,
) -> Option<TaskReact> {
    let mut fields = Map::new();
    let before = c.errors.len();
    let mut ok = true;
    for name in schema::REACT_FIELDS {
        let (Some(v), Some(f)) = (t.get(*name), schema::task_field(name)) else {
            continue;
        };
        // Each checked at its own name; serde reads them together below.
        ok &= c.shape(tid, name, v, &f.want);
        fields.insert(name.to_string(), v.clone());
    }
    if !ok {
        return None;
    }
    let fields = Value::Object(fields);
    let react: TaskReact = if c.errors.len() > before {
        // Only numbers out of range, already reported.
        TaskReact::deserialize(&fields).ok()?
    } else {
        c.typed(tid, "tools", &fields)?
    };
    check_react_lists(c, tid, "", &react.tools, &react.skills);
    Some(react)
}
