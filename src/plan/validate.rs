//! Loading a plan file and validating all of it, reporting every error at once.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::error::{PlanError, PlanErrorKind as K, PlanErrors};
use super::react::TaskReact;
use super::{ConstraintOverrides, ExecutionMode, Plan, Task};
use crate::agents::{self, AgentSpec};
use crate::jsonpath::JsonPath;
use crate::protocol::{DataReference, Grade, OutputRequirements, RequestContext};
use crate::store::schema::{queryable_columns, QUERYABLE};

const TOP_FIELDS: &[&str] = &[
    "plan_id",
    "execution_mode",
    "description",
    "agents",
    "tasks",
];
const TASK_FIELDS: &[&str] = &[
    "task_id",
    "agent",
    "instruction",
    "context",
    "focus",
    "depends_on",
    "data_references",
    "transfer_config",
    "fallback_config",
    "output_requirements",
    "constraints",
    "tools",
    "skills",
    "max_steps",
    "token_budget",
];
const FILE_FORMATS: &[&str] = &["pdf", "md", "json", "txt"];

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
        match serde_json::from_value::<T>(value.clone()) {
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
    let root: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            c.push(None, "", K::Syntax, format!("not valid JSON: {e}"));
            return Err(PlanErrors(c.errors));
        }
    };
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
    let description = obj
        .get("description")
        .and_then(Value::as_str)
        .map(str::to_string);

    // Agents declared by the plan (new agents or overrides of built-ins).
    let mut declared: BTreeMap<String, AgentSpec> = BTreeMap::new();
    match obj.get("agents") {
        None => {}
        Some(Value::Object(m)) => {
            for (name, spec) in m {
                check_id(&mut c, None, &format!("agents.{name}"), name);
                if let Some(s) = c.typed::<AgentSpec>(None, &format!("agents.{name}"), spec) {
                    if let Some(short) = &s.short_name {
                        check_id(&mut c, None, &format!("agents.{name}.short_name"), short);
                    }
                    let field = format!("agents.{name}");
                    check_react_lists(&mut c, None, &field, &s.tools, &s.skills);
                    declared.insert(name.clone(), s);
                }
            }
        }
        Some(_) => c.push(
            None,
            "agents",
            K::Shape,
            "must be an object of agent definitions",
        ),
    }

    let raw_tasks: Vec<&Map<String, Value>> = match obj.get("tasks") {
        Some(Value::Array(a)) if !a.is_empty() => a
            .iter()
            .enumerate()
            .filter_map(|(i, t)| match t.as_object() {
                Some(o) => Some(o),
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
        Some(_) => {
            c.push(None, "tasks", K::Shape, "must be an array of tasks");
            Vec::new()
        }
        None => {
            c.push(None, "tasks", K::Shape, "missing");
            Vec::new()
        }
    };

    let mut agents_used = BTreeMap::new();
    let mut tasks = Vec::with_capacity(raw_tasks.len());
    let mut seen_ids: HashSet<String> = HashSet::new();
    for (i, t) in raw_tasks.iter().enumerate() {
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
        if let Some(task) = parse_task(&mut c, i, t, &declared, &mut agents_used) {
            tasks.push(task);
        }
    }

    check_graph(&mut c, &tasks);

    if c.errors.is_empty() {
        Ok(Plan {
            plan_id,
            execution_mode,
            description,
            agents: agents_used,
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
        .find(|&ch| ch.is_control() || crate::ui::sanitize::is_bidi_control(ch))
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

fn parse_task(
    c: &mut Collector<'_>,
    i: usize,
    t: &Map<String, Value>,
    declared: &BTreeMap<String, AgentSpec>,
    agents_used: &mut BTreeMap<String, agents::AgentDef>,
) -> Option<Task> {
    let task_id = match t.get("task_id") {
        Some(Value::String(s)) if !s.trim().is_empty() => {
            check_id(c, None, &format!("tasks[{i}].task_id"), s);
            s.clone()
        }
        _ => {
            c.push(
                None,
                format!("tasks[{i}].task_id"),
                K::Shape,
                "every task needs a non-empty string task_id",
            );
            return None;
        }
    };
    let tid = Some(task_id.as_str());
    let mut ok = true;
    for key in t.keys() {
        if !TASK_FIELDS.contains(&key.as_str()) {
            c.push(
                tid,
                key,
                K::UnknownField,
                format!("unknown field; expected one of {}", TASK_FIELDS.join(", ")),
            );
            ok = false;
        }
    }
    let agent = match t.get("agent") {
        Some(Value::String(name)) => {
            check_id(c, tid, "agent", name);
            let def = match (declared.get(name), agents::builtin(name)) {
                (Some(spec), base) => Some(spec.build(name, base)),
                (None, Some(b)) => Some(b),
                (None, None) => None,
            };
            match def {
                Some(d) => {
                    let full = d.name.clone();
                    agents_used.entry(full.clone()).or_insert(d);
                    full
                }
                None => {
                    let mut known: Vec<String> = agents::builtin_names()
                        .iter()
                        .map(|s| s.to_string())
                        .collect();
                    known.extend(declared.keys().cloned());
                    c.push(
                        tid,
                        "agent",
                        K::UnknownAgent,
                        format!("unknown agent `{name}`; known agents: {}", known.join(", ")),
                    );
                    // keep the task so that graph errors are reported too
                    name.clone()
                }
            }
        }
        _ => {
            c.push(tid, "agent", K::Shape, "missing or not a string");
            ok = false;
            String::new()
        }
    };
    let instruction = match t.get("instruction") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        _ => {
            c.push(tid, "instruction", K::Shape, "missing or empty");
            ok = false;
            String::new()
        }
    };
    let context: RequestContext = match t.get("context") {
        Some(v) => c.typed(tid, "context", v).unwrap_or_else(|| {
            ok = false;
            RequestContext::default()
        }),
        None => RequestContext::default(),
    };
    let focus = match t.get("focus") {
        None => context
            .extra
            .get("focus")
            .and_then(Value::as_str)
            .map(str::to_string),
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => {
            c.push(tid, "focus", K::Shape, "must be a string");
            ok = false;
            None
        }
    };
    let depends_on: Vec<String> = match t.get("depends_on") {
        None => Vec::new(),
        Some(v) => c.typed(tid, "depends_on", v).unwrap_or_else(|| {
            ok = false;
            Vec::new()
        }),
    };
    let mut data_references = Vec::new();
    match t.get("data_references") {
        None => {}
        Some(Value::Array(refs)) => {
            for (j, r) in refs.iter().enumerate() {
                let field = format!("data_references[{j}]");
                match c.typed::<DataReference>(tid, &field, r) {
                    Some(dr) => {
                        check_reference(c, &task_id, &field, &dr);
                        data_references.push(dr);
                    }
                    None => ok = false,
                }
            }
        }
        Some(_) => {
            c.push(tid, "data_references", K::Shape, "must be an array");
            ok = false;
        }
    }
    let transfer_config = t.get("transfer_config").and_then(|v| {
        let r = c.typed(tid, "transfer_config", v);
        ok &= r.is_some();
        r
    });
    let fallback_config = t.get("fallback_config").and_then(|v| {
        let r = c.typed(tid, "fallback_config", v);
        ok &= r.is_some();
        r
    });
    let output_requirements: OutputRequirements = match t.get("output_requirements") {
        None => OutputRequirements::default(),
        Some(v) => match c.typed::<OutputRequirements>(tid, "output_requirements", v) {
            Some(o) => {
                if let Some(th) = &o.quality_threshold {
                    if Grade::parse(th).is_none() {
                        c.push(
                            tid,
                            "output_requirements.quality_threshold",
                            K::BadThreshold,
                            format!("quality threshold `{th}` is not one of A, B, C, D"),
                        );
                    }
                }
                if o.max_atoms == Some(0) {
                    c.push(
                        tid,
                        "output_requirements.max_atoms",
                        K::OutOfRange,
                        "max_atoms must be at least 1",
                    );
                }
                o
            }
            None => {
                ok = false;
                OutputRequirements::default()
            }
        },
    };
    let constraints: ConstraintOverrides = match t.get("constraints") {
        None => ConstraintOverrides::default(),
        Some(v) => match c.typed::<ConstraintOverrides>(tid, "constraints", v) {
            Some(k) => {
                if k.timeout_seconds
                    .is_some_and(|x| !(x > 0.0 && x.is_finite()))
                {
                    c.push(
                        tid,
                        "constraints.timeout_seconds",
                        K::OutOfRange,
                        "must be a positive number of seconds",
                    );
                }
                if k.max_tokens == Some(0) {
                    c.push(
                        tid,
                        "constraints.max_tokens",
                        K::OutOfRange,
                        "must be at least 1",
                    );
                }
                if k.temperature.is_some_and(|x| !(0.0..=2.0).contains(&x)) {
                    c.push(
                        tid,
                        "constraints.temperature",
                        K::OutOfRange,
                        "must be between 0 and 2",
                    );
                }
                k
            }
            None => {
                ok = false;
                ConstraintOverrides::default()
            }
        },
    };
    let react = parse_react(c, tid, t);
    ok.then_some(Task {
        task_id,
        agent,
        instruction,
        context,
        focus,
        depends_on,
        data_references,
        transfer_config,
        fallback_config,
        output_requirements,
        constraints,
        react: react?,
    })
}

fn check_reference(c: &mut Collector<'_>, task_id: &str, field: &str, r: &DataReference) {
    let tid = Some(task_id);
    match r {
        DataReference::TaskOutput(t) => {
            if let Some(p) = &t.path {
                if let Err(e) = JsonPath::parse(p) {
                    c.push(
                        tid,
                        format!("{field}.path"),
                        K::BadJsonPath,
                        format!("JSONPath `{p}` does not parse {e}"),
                    );
                }
            }
            if let Some(f) = &t.filter {
                if f.field.trim().is_empty() {
                    c.push(
                        tid,
                        format!("{field}.filter.field"),
                        K::Shape,
                        "filter field must not be empty",
                    );
                }
            }
        }
        DataReference::File(f) => {
            if f.path.trim().is_empty() {
                c.push(
                    tid,
                    format!("{field}.path"),
                    K::Shape,
                    "file path must not be empty",
                );
            }
            if let Some(fmt) = &f.format {
                if !FILE_FORMATS.contains(&fmt.as_str()) {
                    c.push(
                        tid,
                        format!("{field}.format"),
                        K::Shape,
                        format!(
                            "file format `{fmt}` is not one of {}",
                            FILE_FORMATS.join(", ")
                        ),
                    );
                }
            }
        }
        DataReference::DbQuery(q) => {
            let Some(columns) = queryable_columns(&q.table) else {
                let tables: Vec<&str> = QUERYABLE.iter().map(|(t, _)| *t).collect();
                c.push(
                    tid,
                    format!("{field}.table"),
                    K::UnknownTable,
                    format!(
                        "table `{}` may not be queried; allowed: {}",
                        q.table,
                        tables.join(", ")
                    ),
                );
                return;
            };
            let check_col = |c: &mut Collector<'_>, sub: String, col: &str| {
                if !columns.contains(&col) {
                    c.push(
                        tid,
                        sub,
                        K::UnknownColumn,
                        format!(
                            "table `{}` has no column `{col}`; columns: {}",
                            q.table,
                            columns.join(", ")
                        ),
                    );
                }
            };
            for (k, cond) in q.conditions.iter().flatten().enumerate() {
                check_col(c, format!("{field}.conditions[{k}].field"), &cond.field);
            }
            for (k, col) in q.select.iter().flatten().enumerate() {
                check_col(c, format!("{field}.select[{k}]"), col);
            }
            if let Some(o) = &q.order_by {
                check_col(c, format!("{field}.order_by.field"), &o.field);
                if !matches!(o.direction.as_str(), "asc" | "desc") {
                    c.push(
                        tid,
                        format!("{field}.order_by.direction"),
                        K::Shape,
                        "direction must be `asc` or `desc`",
                    );
                }
            }
        }
    }
}

/// Dependencies exist, no cycles, task_output references point upstream.
fn check_graph(c: &mut Collector<'_>, tasks: &[Task]) {
    let index: HashMap<&str, usize> = tasks
        .iter()
        .enumerate()
        .map(|(i, t)| (t.task_id.as_str(), i))
        .collect();
    let mut edges: Vec<Vec<usize>> = vec![Vec::new(); tasks.len()];
    for (i, t) in tasks.iter().enumerate() {
        for (j, d) in t.depends_on.iter().enumerate() {
            match index.get(d.as_str()) {
                Some(&k) => edges[i].push(k),
                None => c.push(
                    Some(&t.task_id),
                    format!("depends_on[{j}]"),
                    K::MissingDependency,
                    format!("depends on `{d}`, which is not a task of this plan"),
                ),
            }
        }
    }
    // Cycles: iterative DFS with colours; report each cycle once, naming its members.
    let mut colour = vec![0u8; tasks.len()]; // 0 new, 1 on stack, 2 done
    let mut reported: HashSet<Vec<usize>> = HashSet::new();
    for start in 0..tasks.len() {
        if colour[start] != 0 {
            continue;
        }
        let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
        colour[start] = 1;
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            if *next < edges[node].len() {
                let child = edges[node][*next];
                *next += 1;
                match colour[child] {
                    0 => {
                        colour[child] = 1;
                        stack.push((child, 0));
                    }
                    1 => {
                        let pos = stack.iter().position(|(n, _)| *n == child).unwrap_or(0);
                        let members: Vec<usize> = stack[pos..].iter().map(|(n, _)| *n).collect();
                        let mut key = members.clone();
                        key.sort_unstable();
                        if reported.insert(key) {
                            // stack order is dependent -> dependency; show it as "depends on" chain
                            let mut names: Vec<&str> =
                                members.iter().map(|&n| tasks[n].task_id.as_str()).collect();
                            names.push(&tasks[child].task_id);
                            c.push(
                                Some(&tasks[child].task_id),
                                "depends_on",
                                K::Cycle,
                                format!("dependency cycle: {}", names.join(" -> ")),
                            );
                        }
                    }
                    _ => {}
                }
            } else {
                colour[node] = 2;
                stack.pop();
            }
        }
    }
    // task_output references must point at an upstream task.
    for t in tasks {
        for (j, r) in t.data_references.iter().enumerate() {
            let DataReference::TaskOutput(o) = r else {
                continue;
            };
            let Some(&target) = index.get(o.task_id.as_str()) else {
                c.push(
                    Some(&t.task_id),
                    format!("data_references[{j}].task_id"),
                    K::RefNotUpstream,
                    format!(
                        "references the output of `{}`, which is not a task of this plan",
                        o.task_id
                    ),
                );
                continue;
            };
            if !is_upstream(&edges, index[t.task_id.as_str()], target) {
                c.push(
                    Some(&t.task_id),
                    format!("data_references[{j}].task_id"),
                    K::RefNotUpstream,
                    format!(
                        "references the output of `{}`, which is not upstream (add it to depends_on, directly or through another task)",
                        o.task_id
                    ),
                );
            }
        }
    }
}

fn is_upstream(edges: &[Vec<usize>], from: usize, target: usize) -> bool {
    let mut seen = vec![false; edges.len()];
    let mut stack = edges[from].clone();
    while let Some(n) = stack.pop() {
        if n == target {
            return true;
        }
        if !std::mem::replace(&mut seen[n], true) {
            stack.extend(edges[n].iter().copied());
        }
    }
    false
}

/// The tool-using fields of a task, checked: known tools, plain skill names, a step
/// limit from 1 to 100, a positive token budget.
fn parse_react(
    c: &mut Collector<'_>,
    tid: Option<&str>,
    t: &Map<String, Value>,
) -> Option<TaskReact> {
    let fields: Map<String, Value> = ["tools", "skills", "max_steps", "token_budget"]
        .iter()
        .filter_map(|k| t.get(*k).map(|v| (k.to_string(), v.clone())))
        .collect();
    let react: TaskReact = c.typed(tid, "tools", &Value::Object(fields))?;
    check_react_lists(c, tid, "", &react.tools, &react.skills);
    if react
        .max_steps
        .is_some_and(|n| !(1..=super::react::MAX_STEPS_LIMIT).contains(&n))
    {
        c.push(tid, "max_steps", K::OutOfRange, "must be from 1 to 100");
    }
    if react.token_budget == Some(0) {
        c.push(tid, "token_budget", K::OutOfRange, "must be at least 1");
    }
    Some(react)
}

/// Checks `tools` and `skills` lists (of a task, or of an agent under `prefix`).
fn check_react_lists(
    c: &mut Collector<'_>,
    tid: Option<&str>,
    prefix: &str,
    tools: &Option<Vec<String>>,
    skills: &Option<Vec<String>>,
) {
    let at = |f: &str, i: usize| {
        if prefix.is_empty() {
            format!("{f}[{i}]")
        } else {
            format!("{prefix}.{f}[{i}]")
        }
    };
    for (i, name) in tools.iter().flatten().enumerate() {
        if let Err(e) = super::react::check_tool(name) {
            c.push(tid, at("tools", i), K::UnknownField, e);
        }
    }
    for (i, name) in skills.iter().flatten().enumerate() {
        if let Err(e) = super::react::check_skill(name) {
            c.push(tid, at("skills", i), K::Shape, e);
        }
    }
}
