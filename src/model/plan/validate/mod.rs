//! Loading a plan file and validating all of it, reporting every error at once: the
//! text (a byte-order mark skipped, duplicate keys refused), the shape of every field
//! with its own path and range, the agents, the tasks and the graph.

mod agents;
mod graph;
mod json_schema;
mod keys;
mod ref_schema;
mod references;
mod schema;
mod shape;
mod shared;
mod tasks;

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::error::{PlanError, PlanErrorKind as K, PlanErrors};
use super::{ExecutionMode, Plan, Task};
use agents::AgentTable;

pub use json_schema::plan_schema;

/// Reads and validates a plan file.
pub fn load_plan_file(path: &Path) -> Result<Plan, PlanErrors> {
    let file = path.display().to_string();
    let fail = |kind: K, message: String| {
        Err(PlanErrors(vec![PlanError {
            file: file.clone(),
            task: None,
            field: String::new(),
            kind,
            message,
        }]))
    };
    match std::fs::read(path).map(crate::base::text::utf8::decode) {
        Ok(Ok(text)) => parse_plan_owned(text, &file),
        Ok(Err(e)) => fail(K::Syntax, e.to_string()),
        Err(e) => fail(K::Io, format!("cannot read the plan: {e}")),
    }
}

struct Collector<'a> {
    file: &'a str,
    errors: Vec<PlanError>,
    /// Parts of tasks that many tasks repeat, held once.
    shared: shared::SharedParts,
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
                let msg = crate::base::text::suggest::serde_message(&e.to_string());
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

/// A byte-order mark, as some editors write, is not part of the plan.
const BOM: char = '\u{feff}';

/// Parses and validates plan JSON text; `file` names it in errors.
pub fn parse_plan(text: &str, file: &str) -> Result<Plan, PlanErrors> {
    let text = text.strip_prefix(BOM).unwrap_or(text);
    let mut plan = parse_text(text, file)?;
    plan.json = text.to_string();
    Ok(plan)
}

/// [`parse_plan`] of text the plan keeps as its snapshot without a copy.
pub fn parse_plan_owned(mut text: String, file: &str) -> Result<Plan, PlanErrors> {
    if text.starts_with(BOM) {
        text.replace_range(..BOM.len_utf8(), "");
    }
    let mut plan = parse_text(&text, file)?;
    plan.json = text;
    Ok(plan)
}

/// Parses and validates `text` (without a byte-order mark); the plan's `json` is left
/// empty for the caller. Tasks are decoded one at a time, so a large plan never exists
/// as one JSON tree next to its typed form.
fn parse_text(text: &str, file: &str) -> Result<Plan, PlanErrors> {
    let mut c = Collector {
        file,
        errors: Vec::new(),
        shared: Default::default(),
    };
    if serde_json::from_str::<&RawValue>(text).is_err() {
        // Decoded as a tree, the error is worded as it is everywhere else (skipping a
        // value words some errors differently).
        let e = serde_json::from_str::<Value>(text).err();
        let why = e.map(|e| e.to_string()).unwrap_or_default();
        c.push(None, "", K::Syntax, format!("not valid JSON: {why}"));
        return Err(PlanErrors(c.errors));
    }
    report_duplicate_keys(&mut c, text);
    // The top level with each field's text; every field but `tasks` decoded at once.
    let Ok(top) = serde_json::from_str::<BTreeMap<String, &RawValue>>(text) else {
        c.push(None, "", K::Shape, "a plan must be a JSON object");
        return Err(PlanErrors(c.errors));
    };
    let mut obj: Map<String, Value> = Map::new();
    for (k, v) in top.iter().filter(|(k, _)| k.as_str() != "tasks") {
        if let Some(value) = decode(&mut c, text, v, None, k) {
            obj.insert(k.clone(), value);
        }
    }
    check_top_keys(&mut c, &top, &obj);
    let plan_id = plan_id_of(&mut c, &obj);
    let execution_mode = execution_mode_of(&mut c, &obj);
    let description = description_of(&mut c, &obj);

    // Agents declared by the plan (new agents or changes to built-in ones).
    let mut agents = AgentTable::parse(&mut c, obj.get("agents"));

    let raw_tasks = task_texts(&mut c, top.get("tasks").copied());
    let tasks = decode_tasks(&mut c, text, &raw_tasks, &mut agents);

    agents.check_unused(&mut c);
    graph::check_graph(&mut c, &tasks);

    if !c.errors.is_empty() {
        return Err(PlanErrors(c.errors));
    }
    Ok(Plan {
        plan_id,
        execution_mode,
        description,
        agents: agents.definitions(tasks.iter().map(|t| &*t.agent)),
        source: file.to_string(),
        json: String::new(),
        index: tasks
            .iter()
            .enumerate()
            .map(|(i, t)| (Box::from(t.task_id.as_str()), i as u32))
            .collect(),
        tasks,
    })
}

/// Reports every key written twice in one object of `text`, with its line(s).
fn report_duplicate_keys(c: &mut Collector<'_>, text: &str) {
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
                crate::base::text::sanitize::sanitize(&d.key)
            ),
        );
    }
}

/// Checks the top-level keys that were decoded (and `tasks`): unknown ones reported,
/// `$schema` checked for shape.
fn check_top_keys(
    c: &mut Collector<'_>,
    top: &BTreeMap<String, &RawValue>,
    obj: &Map<String, Value>,
) {
    for key in top.keys().filter(|k| obj.contains_key(*k) || *k == "tasks") {
        match schema::PLAN.get(key) {
            // `$schema` names the file's JSON Schema for editors; plexus ignores it.
            Some(f) if f.name == "$schema" => {
                c.shape(None, key, &obj[key.as_str()], &f.want);
            }
            Some(_) => {}
            None => {
                // Keys for editors (`$schema`) are not offered as alternatives.
                let known: Vec<&str> = schema::PLAN
                    .names()
                    .into_iter()
                    .filter(|n| !n.starts_with('$'))
                    .collect();
                c.push(
                    None,
                    key,
                    K::UnknownField,
                    shape::unknown_field(key, &known),
                );
            }
        }
    }
}

/// The plan's `plan_id`, checked; empty (reported) when missing or not a non-empty string.
fn plan_id_of(c: &mut Collector<'_>, obj: &Map<String, Value>) -> String {
    match obj.get("plan_id") {
        Some(Value::String(s)) if !s.trim().is_empty() => {
            check_id(c, None, "plan_id", s);
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
    }
}

/// The plan's execution mode; the default when absent, or (reported) when not a known name.
fn execution_mode_of(c: &mut Collector<'_>, obj: &Map<String, Value>) -> ExecutionMode {
    match obj.get("execution_mode") {
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
    }
}

/// The plan's optional description; a non-string is reported.
fn description_of(c: &mut Collector<'_>, obj: &Map<String, Value>) -> Option<String> {
    match obj.get("description") {
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
    }
}

/// Each task's text with its place in the file's `tasks`, the objects among them; the
/// rest, and a missing, empty or non-array `tasks`, reported.
fn task_texts<'t>(
    c: &mut Collector<'_>,
    tasks: Option<&'t RawValue>,
) -> Vec<(usize, &'t RawValue)> {
    let Some(raw) = tasks else {
        c.push(None, "tasks", K::Shape, "missing");
        return Vec::new();
    };
    match serde_json::from_str::<Vec<&RawValue>>(raw.get()) {
        Ok(list) if !list.is_empty() => list
            .into_iter()
            .enumerate()
            .filter(|(i, t)| {
                let object = t.get().starts_with('{');
                if !object {
                    c.push(
                        None,
                        format!("tasks[{i}]"),
                        K::Shape,
                        "a task must be a JSON object",
                    );
                }
                object
            })
            .collect(),
        Ok(_) => {
            c.push(None, "tasks", K::Shape, "a plan needs at least one task");
            Vec::new()
        }
        Err(_) => {
            c.push(
                None,
                "tasks",
                K::Shape,
                format!(
                    "must be an array of tasks, not {}",
                    shape::describe_text(raw.get())
                ),
            );
            Vec::new()
        }
    }
}

/// The typed tasks of `raw_tasks`, decoded one at a time; a task id used twice is
/// reported and its later task dropped.
fn decode_tasks(
    c: &mut Collector<'_>,
    text: &str,
    raw_tasks: &[(usize, &RawValue)],
    agents: &mut AgentTable,
) -> Vec<Task> {
    let mut tasks = Vec::with_capacity(raw_tasks.len());
    let mut seen_ids: HashSet<String> = HashSet::new();
    for &(i, raw) in raw_tasks {
        // One task's tree at a time: it is dropped once the task is typed. A task that
        // cannot be decoded is an error, never a task less.
        let field = format!("tasks[{i}]");
        let id = task_id_of(raw);
        let Some(Value::Object(t)) = decode(c, text, raw, id.as_deref(), &field) else {
            continue;
        };
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
        if let Some(task) = tasks::parse_task(c, i, &t, agents) {
            tasks.push(task);
        }
    }
    tasks.shrink_to_fit();
    tasks
}

/// The value of `raw`, a part of the plan's `text` at `field`; `None` with an error at
/// its line and column when valid JSON cannot be held as a value: a number beyond a
/// 64-bit float (`1e400`), or nesting deeper than 128 levels. Nothing is read as null.
fn decode(
    c: &mut Collector<'_>,
    text: &str,
    raw: &RawValue,
    task: Option<&str>,
    field: &str,
) -> Option<Value> {
    let e = match serde_json::from_str::<Value>(raw.get()) {
        Ok(v) => return Some(v),
        Err(e) => e,
    };
    // Where `raw` starts in the file, for the error's line and column.
    let offset = (raw.get().as_ptr() as usize)
        .checked_sub(text.as_ptr() as usize)
        .filter(|o| *o <= text.len())
        .unwrap_or(0);
    let (line0, col0) = crate::base::text::utf8::place(text, offset);
    let (line, column) = if e.line() <= 1 {
        (line0, col0 + e.column().saturating_sub(1))
    } else {
        (line0 + e.line() - 1, e.column())
    };
    let what = e.to_string();
    let what = what.split(" at line ").next().unwrap_or(&what);
    let why = match what {
        "recursion limit exceeded" => {
            "nested deeper than 128 levels of objects and arrays, which plexus does not read"
                .to_string()
        }
        "number out of range" => {
            "a number beyond the range of a 64-bit float (about ±1.8e308)".to_string()
        }
        other => other.to_string(),
    };
    c.push(
        task,
        field,
        K::Syntax,
        format!("cannot be read at line {line}, column {column}: {why}"),
    );
    None
}

/// The `task_id` of a task's text, when it has a plain one (for errors about a task that
/// cannot be decoded whole).
fn task_id_of(raw: &RawValue) -> Option<String> {
    let top = serde_json::from_str::<BTreeMap<&str, &RawValue>>(raw.get()).ok()?;
    serde_json::from_str::<String>(top.get("task_id")?.get()).ok()
}

/// Refuses an id with a control character or a bidi control in it: ids are printed on
/// terminals and in file names, where such characters hide or rearrange text.
fn check_id(c: &mut Collector<'_>, task: Option<&str>, field: &str, id: &str) {
    if let Some(bad) = crate::base::text::sanitize::invisible_in(id) {
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
