//! Loading a plan file and validating all of it, reporting every error at once: the
//! text (a byte-order mark skipped, duplicate keys refused), the shape of every field
//! with its own path and range, the agents, the tasks and the graph.

mod agents;
mod graph;
mod keys;
mod references;
mod schema;
mod shape;
mod tasks;

use std::collections::HashSet;
use std::path::Path;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::error::{PlanError, PlanErrorKind as K, PlanErrors};
use super::{ExecutionMode, Plan};
use agents::AgentTable;

const TOP_FIELDS: &[&str] = &[
    "plan_id",
    "execution_mode",
    "description",
    "agents",
    "tasks",
];

/// Reads and validates a plan file.
pub fn load_plan_file(path: &Path) -> Result<Plan, PlanErrors> {
    let file = path.display().to_string();
    match std::fs::read_to_string(path) {
        Ok(text) => parse_plan(&text, &file),
        Err(e) => Err(PlanErrors(vec![PlanError {
            file,
            task: None,
            field: String::new(),
            kind: K::Io,
            message: format!("cannot read the plan: {e}"),
        }])),
    }
}

struct Collector<'a> {
    file: &'a str,
    errors: Vec<PlanError>,
}

impl Collector<'_> {
    fn push(
        &mut self,
        task: Option<&str>,
        field: impl Into<String>,
        kind: K,
        message: impl Into<String>,
    ) {
        self.errors.push(PlanError {
            file: self.file.to_string(),
            task: task.map(str::to_string),
            field: field.into(),
            kind,
            message: message.into(),
        });
    }

    /// Deserialises `value` as `T`, recording a shape error on failure.
    fn typed<T: DeserializeOwned>(
        &mut self,
        task: Option<&str>,
        field: &str,
        value: &Value,
    ) -> Option<T> {
        match T::deserialize(value) {
            Ok(v) => Some(v),
            Err(e) => {
                let msg = e.to_string();
                let kind = if msg.starts_with("unknown field") {
                    K::UnknownField
                } else {
                    K::Shape
                };
                self.push(task, field, kind, msg);
                None
            }
        }
    }
}

/// Parses and validates plan JSON text; `file` names it in errors.
pub fn parse_plan(text: &str, file: &str) -> Result<Plan, PlanErrors> {
    let mut c = Collector {
        file,
        errors: Vec::new(),
    };
    // A byte-order mark, as some editors write, is not part of the plan.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let root: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            c.push(None, "", K::Syntax, format!("not valid JSON: {e}"));
            return Err(PlanErrors(c.errors));
        }
    };
    for d in keys::duplicate_keys(text) {
        let lines = if d.first_line == d.line {
            format!("on line {}", d.line)
        } else {
            format!("at lines {} and {}", d.first_line, d.line)
        };
        c.push(
            None,
            d.path,
            K::DuplicateKey,
            format!(
                "key `{}` is written twice in the same object, {lines}; keep one",
                crate::text::sanitize::sanitize(&d.key)
            ),
        );
    }
    let Some(obj) = root.as_object() else {
        c.push(None, "", K::Shape, "a plan must be a JSON object");
        return Err(PlanErrors(c.errors));
    };
    for key in obj.keys() {
        if !TOP_FIELDS.contains(&key.as_str()) {
            c.push(
                None,
                key,
                K::UnknownField,
                format!("unknown field; expected one of {}", TOP_FIELDS.join(", ")),
            );
        }
    }
    let plan_id = match obj.get("plan_id") {
        Some(Value::String(s)) if !s.trim().is_empty() => {
            check_id(&mut c, None, "plan_id", s);
            s.clone()
        }
        Some(_) => {
            c.push(None, "plan_id", K::Shape, "must be a non-empty string");
            String::new()
        }
        None => {
            c.push(None, "plan_id", K::Shape, "missing");
            String::new()
        }
    };
    let execution_mode = match obj.get("execution_mode") {
        None => ExecutionMode::DeepInternalization,
        Some(Value::String(s)) => ExecutionMode::parse(s).unwrap_or_else(|| {
            c.push(
                None,
                "execution_mode",
                K::BadExecutionMode,
                format!(
                    "unknown execution mode `{s}`; expected one of {}",
                    ExecutionMode::NAMES.join(", ")
                ),
            );
            ExecutionMode::DeepInternalization
        }),
        Some(_) => {
            c.push(
                None,
                "execution_mode",
                K::BadExecutionMode,
                "must be a string",
            );
            ExecutionMode::DeepInternalization
        }
    };
    let description = match obj.get("description") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(v) => {
            c.push(
                None,
                "description",
                K::Shape,
                format!("must be a string, not {}", shape::describe(v)),
            );
            None
        }
    };

    // Agents declared by the plan (new agents or changes to built-in ones).
    let mut agents = AgentTable::parse(&mut c, obj.get("agents"));

    // Each task object with its place in the file's `tasks`.
    let raw_tasks: Vec<(usize, &Map<String, Value>)> = match obj.get("tasks") {
        Some(Value::Array(a)) if !a.is_empty() => a
            .iter()
            .enumerate()
            .filter_map(|(i, t)| match t.as_object() {
                Some(o) => Some((i, o)),
                None => {
                    c.push(
                        None,
                        format!("tasks[{i}]"),
                        K::Shape,
                        "a task must be a JSON object",
                    );
                    None
                }
            })
            .collect(),
        Some(Value::Array(_)) => {
            c.push(None, "tasks", K::Shape, "a plan needs at least one task");
            Vec::new()
        }
        Some(v) => {
            c.push(
                None,
                "tasks",
                K::Shape,
                format!("must be an array of tasks, not {}", shape::describe(v)),
            );
            Vec::new()
        }
        None => {
            c.push(None, "tasks", K::Shape, "missing");
            Vec::new()
        }
    };

    let mut tasks = Vec::with_capacity(raw_tasks.len());
    let mut seen_ids: HashSet<String> = HashSet::new();
    for &(i, t) in &raw_tasks {
        if let Some(Value::String(id)) = t.get("task_id") {
            if !id.trim().is_empty() && !seen_ids.insert(id.clone()) {
                c.push(
                    Some(id),
                    format!("tasks[{i}].task_id"),
                    K::DuplicateTaskId,
                    format!("task id `{id}` is used by more than one task"),
                );
                continue;
            }
        }
        if let Some(task) = tasks::parse_task(&mut c, i, t, &mut agents) {
            tasks.push(task);
        }
    }

    agents.check_unused(&mut c);
    graph::check_graph(&mut c, &tasks);

    if c.errors.is_empty() {
        Ok(Plan {
            plan_id,
            execution_mode,
            description,
            agents: agents.definitions(tasks.iter().map(|t| t.agent.as_str())),
            source: file.to_string(),
            json: text.to_string(),
            index: tasks
                .iter()
                .enumerate()
                .map(|(i, t)| (t.task_id.clone(), i))
                .collect(),
            tasks,
        })
    } else {
        Err(PlanErrors(c.errors))
    }
}

/// Refuses an id with a control character or a bidi control in it: ids are printed on
/// terminals and in file names, where such characters hide or rearrange text.
fn check_id(c: &mut Collector<'_>, task: Option<&str>, field: &str, id: &str) {
    if let Some(bad) = id
        .chars()
        .find(|&ch| ch.is_control() || crate::text::sanitize::is_bidi_control(ch))
    {
        c.push(
            task,
            field,
            K::BadId,
            format!(
                "contains the invisible character U+{:04X}; ids may not hold control characters or bidi overrides",
                bad as u32
            ),
        );
    }
}
