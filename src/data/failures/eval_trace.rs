//! The trace document `plexus eval` writes, as a conversation: it has no message
//! history but one entry per epoch (`epochs[]`: the epoch's tasks with their calls, the
//! tools called and the output task's answer). Each task becomes a turn that says how it
//! ended and what each call cost, and the answer a turn of its own with the epoch's tool
//! calls, so the browser shows what the sample did instead of an empty history.

use serde_json::Value;

use super::conversation::{Conversation, ToolCall, Turn};

/// Whether `doc` is an eval trace: an object with an `epochs` list.
pub fn is_eval_trace(doc: &Value) -> bool {
    doc.get("epochs").is_some_and(Value::is_array)
}

/// The turns of an eval trace's epochs, numbered from 1 across them.
pub fn epoch_turns(doc: &Value, c: &mut Conversation) {
    let Some(epochs) = doc.get("epochs").and_then(Value::as_array) else {
        return;
    };
    for (i, epoch) in epochs.iter().enumerate() {
        let number = epoch
            .get("epoch")
            .and_then(Value::as_u64)
            .unwrap_or(i as u64 + 1);
        let trace = epoch.get("trace").unwrap_or(&Value::Null);
        for task in trace
            .get("tasks")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            push(c, "task", task_text(number, task), Vec::new());
        }
        let calls = trace
            .get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(tool_call)
            .collect();
        let answer = match epoch.get("output").and_then(Value::as_str) {
            Some(text) if !text.is_empty() => text.to_string(),
            _ => format!("epoch {number}: no answer"),
        };
        push(c, "answer", answer, calls);
    }
    if epochs.is_empty() {
        c.notes.push("the eval trace has no epochs".into());
    }
}

/// Adds a turn numbered after the last.
fn push(c: &mut Conversation, role: &str, content: String, tool_calls: Vec<ToolCall>) {
    let number = u32::try_from(c.turns.len() + 1).unwrap_or(u32::MAX);
    c.turns.push(Turn {
        number,
        role: role.into(),
        content,
        tool_name: None,
        tool_calls,
        states: Vec::new(),
    });
}

/// `epoch 1 · task T01: success after 2 attempts`, then one line per call.
fn task_text(epoch: u64, task: &Value) -> String {
    let word = |k: &str| task.get(k).and_then(Value::as_str).unwrap_or("?");
    let attempts = task.get("attempts").and_then(Value::as_u64).unwrap_or(0);
    let mut text = format!(
        "epoch {epoch} · task {}: {} after {attempts} attempt{}",
        word("task_id"),
        word("status"),
        if attempts == 1 { "" } else { "s" }
    );
    if let Some(code) = task.get("error_code").and_then(Value::as_str) {
        text.push_str(&format!(" ({code})"));
    }
    for call in task
        .get("invocations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        text.push('\n');
        text.push_str(&call_line(call));
    }
    text
}

/// `call INV-1 (attempt 1): success · 120 prompt + 34 output tokens · 812 ms`.
fn call_line(call: &Value) -> String {
    let num = |k: &str| call.get(k).and_then(Value::as_u64);
    let mut line = format!(
        "call {} (attempt {}): {}",
        call.get("invocation_id")
            .and_then(Value::as_str)
            .unwrap_or("?"),
        num("attempt").map_or("?".into(), |n| n.to_string()),
        call.get("status").and_then(Value::as_str).unwrap_or("open"),
    );
    if let (Some(p), Some(o)) = (num("prompt_tokens"), num("output_tokens")) {
        line.push_str(&format!(" · {p} prompt + {o} output tokens"));
    }
    if let Some(ms) = num("execution_time_ms") {
        line.push_str(&format!(" · {ms} ms"));
    }
    if let Some(codes) = call.get("error_codes").and_then(Value::as_str) {
        line.push_str(&format!(" · {codes}"));
    }
    line
}

/// A tool call of the epoch's `tools` list (`{"tool": name, "args": …}`).
fn tool_call(v: &Value) -> Option<ToolCall> {
    Some(ToolCall {
        id: None,
        name: v.get("tool")?.as_str()?.to_string(),
        arguments: v.get("args").cloned().unwrap_or(Value::Null),
        result: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_epoch_gives_its_tasks_and_its_answer_with_the_tools_called() {
        let doc = json!({"sample_id": "q1", "epochs": [
            {"epoch": 1, "output": "42", "trace": {
                "tasks": [{"task_id": "T01", "status": "success", "attempts": 2,
                    "error_code": null, "invocations": [
                        {"invocation_id": "I1", "attempt": 1, "status": "failed",
                         "prompt_tokens": 120, "output_tokens": 3, "execution_time_ms": 40,
                         "error_codes": "E002"},
                        {"invocation_id": "I2", "attempt": 2, "status": "success"}]}],
                "tools": [{"tool": "time", "args": {"tz": "UTC"}}]}},
            {"epoch": 2, "output": "", "trace": {"tasks": [], "tools": []}}
        ]});
        let mut c = Conversation::default();
        epoch_turns(&doc, &mut c);
        assert_eq!(c.turns.len(), 3, "{c:?}");
        let task = &c.turns[0];
        assert_eq!(task.role, "task");
        assert_eq!(
            task.content,
            "epoch 1 · task T01: success after 2 attempts\n\
             call I1 (attempt 1): failed · 120 prompt + 3 output tokens · 40 ms · E002\n\
             call I2 (attempt 2): success"
        );
        assert_eq!(c.turns[1].role, "answer");
        assert_eq!(c.turns[1].content, "42");
        assert_eq!(c.turns[1].tool_calls[0].name, "time");
        assert_eq!(c.turns[1].tool_calls[0].arguments, json!({"tz": "UTC"}));
        assert_eq!(c.turns[2].content, "epoch 2: no answer");
        assert_eq!(c.turns[2].number, 3);
        assert!(c.notes.is_empty());
    }

    #[test]
    fn an_empty_epoch_list_is_said() {
        let mut c = Conversation::default();
        epoch_turns(&json!({"epochs": []}), &mut c);
        assert!(c.turns.is_empty());
        assert_eq!(c.notes, vec!["the eval trace has no epochs".to_string()]);
    }
}
