//! The reporter's TODO list (`metadata.todo`): one item per task of the final plan, with
//! its phase, deadline and hours, not done yet. When the reporter gives none, plexus
//! writes it from the plan, so every report carries one.

use serde_json::{json, Value};

/// The TODO list of a final plan (`metadata.final_plan.plan`).
pub fn todo_of_plan(plan: &Value) -> Vec<Value> {
    let mut items = Vec::new();
    for phase in plan
        .get("phases")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let phase_name = phase.get("phase_name").cloned().unwrap_or(Value::Null);
        for task in phase
            .get("tasks")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(title) = task.get("title").and_then(Value::as_str) else {
                continue;
            };
            items.push(json!({
                "task": title,
                "phase": phase_name,
                "deadline": task.get("deadline").cloned().unwrap_or(Value::Null),
                "estimated_hours": task.get("estimated_hours").cloned().unwrap_or(Value::Null),
                "done": false
            }));
        }
    }
    items
}

/// Puts the TODO list into a reporter's `output` when it has none (or not a list).
pub fn fill_todo(output: &mut Value) {
    let has = output
        .pointer("/metadata/todo")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty());
    if has {
        return;
    }
    let plan = output
        .pointer("/metadata/final_plan/plan")
        .cloned()
        .unwrap_or(Value::Null);
    if let Some(meta) = output.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.insert("todo".into(), Value::Array(todo_of_plan(&plan)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_without_a_todo_list_gets_one_per_task_of_its_plan() {
        let mut out = json!({"metadata": {"final_plan": {"plan": {"phases": [
            {"phase_name": "P1", "tasks": [{"title": "a", "deadline": "2027-01-01", "estimated_hours": 3}]},
            {"phase_name": "P2", "tasks": [{"title": "b"}, {"no_title": true}]}
        ]}}}});
        fill_todo(&mut out);
        let todo = out["metadata"]["todo"].as_array().expect("a list");
        assert_eq!(todo.len(), 2);
        assert_eq!(todo[0]["task"], "a");
        assert_eq!(todo[0]["phase"], "P1");
        assert_eq!(todo[1]["deadline"], Value::Null);
        assert_eq!(todo[1]["done"], false);
        // One the reporter gave is kept as it is.
        let mut given =
            json!({"metadata": {"todo": [{"task": "mine"}], "final_plan": {"plan": {}}}});
        fill_todo(&mut given);
        assert_eq!(given["metadata"]["todo"], json!([{"task": "mine"}]));
    }
}
