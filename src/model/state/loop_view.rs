//! The tool-using loops of a task kept whole, per invocation: each step's thought, the
//! calls it made with their arguments and answers, the skills they activated, the
//! compressions and the totals. The output pane shows a line per event; this is what a
//! step's popup and the conversation view read.

use std::sync::Arc;

use serde_json::Value;

use crate::model::event::{ContextCompressed, EngineEvent, LoopFinished, ToolAnswered};

/// One tool call of a step: what was asked and what came back.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LoopCall {
    /// The call's id.
    pub id: String,
    /// Tool asked for.
    pub tool: String,
    /// Its arguments, as the model wrote them.
    pub input: Value,
    /// Its answer (the observation and the call's metrics), once it came.
    pub answer: Option<ToolAnswered>,
    /// What the call did besides answering: skills activated or refused.
    pub notes: Vec<String>,
}

/// One step of a loop: a model call and the tools it asked for.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LoopStep {
    /// Step number, from 1.
    pub step: u32,
    /// The thought before the calls.
    pub thought: String,
    /// Tokens of the step's assistant message (absent in older logs).
    pub message_tokens: Option<u64>,
    /// The calls, in order.
    pub calls: Vec<LoopCall>,
}

/// The loop of one invocation.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TaskLoop {
    /// The invocation (model call) it belongs to.
    pub invocation: Arc<str>,
    /// Tokens of the system and user prompts the loop started from.
    pub prompt_tokens: u64,
    /// Steps that asked for tools, in order.
    pub steps: Vec<LoopStep>,
    /// Compressions of the conversation, each with the number of steps before it.
    pub compressions: Vec<(usize, ContextCompressed)>,
    /// The loop's end and totals, once it ended.
    pub finished: Option<LoopFinished>,
}

/// One message of a loop's conversation as the view lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct ConversationRow {
    /// Who wrote it: `system + user`, `assistant`, `tool`, or `summary`.
    pub role: &'static str,
    /// Its tokens, when the log has them.
    pub tokens: Option<u64>,
    /// The step it belongs to (the row opens that step).
    pub step: Option<u32>,
    /// A one-line preview.
    pub text: String,
}

impl TaskLoop {
    /// The step numbered `n`.
    pub fn step(&self, n: u32) -> Option<&LoopStep> {
        self.steps.iter().find(|s| s.step == n)
    }

    /// Every message of the conversation in order: the prompts it started from, each
    /// step's assistant message and tool results, the summaries that replaced older
    /// rounds, and the final answer.
    pub fn conversation(&self) -> Vec<ConversationRow> {
        let mut rows = vec![ConversationRow {
            role: "system + user",
            tokens: (self.prompt_tokens > 0).then_some(self.prompt_tokens),
            step: None,
            text: "the system prompt and the task's request (e shows the request)".into(),
        }];
        let compressed_after = |k: usize, rows: &mut Vec<ConversationRow>| {
            for (_, c) in self.compressions.iter().filter(|(at, _)| *at == k) {
                rows.push(ConversationRow {
                    role: "summary",
                    tokens: Some(c.after_tokens),
                    step: None,
                    text: format!(
                        "{} older round(s) summarised, {} kept: the conversation went from {} to {} tokens",
                        c.rounds_summarised, c.rounds_kept, c.before_tokens, c.after_tokens
                    ),
                });
            }
        };
        compressed_after(0, &mut rows);
        for (k, s) in self.steps.iter().enumerate() {
            let calls: Vec<String> = s
                .calls
                .iter()
                .map(|c| format!("{}({})", c.tool, one_line(&c.input.to_string(), 60)))
                .collect();
            let thought = one_line(&s.thought, 80);
            rows.push(ConversationRow {
                role: "assistant",
                tokens: s.message_tokens,
                step: Some(s.step),
                text: format!(
                    "step {} · {}{}",
                    s.step,
                    if thought.is_empty() {
                        String::new()
                    } else {
                        format!("{thought} → ")
                    },
                    calls.join(", ")
                ),
            });
            for c in &s.calls {
                let (tokens, text) = match &c.answer {
                    Some(a) => (
                        Some(a.output_tokens),
                        format!(
                            "step {} · {}{}: {}",
                            s.step,
                            c.tool,
                            if a.is_error { " (error)" } else { "" },
                            observation_preview(&a.observation, a.is_error, 120)
                        ),
                    ),
                    None => (None, format!("step {} · {}: waiting…", s.step, c.tool)),
                };
                rows.push(ConversationRow {
                    role: "tool",
                    tokens,
                    step: Some(s.step),
                    text,
                });
            }
            compressed_after(k + 1, &mut rows);
        }
        if let Some(f) = &self.finished {
            rows.push(ConversationRow {
                role: "assistant",
                tokens: f.answer_tokens,
                step: None,
                text: if f.stop == "answer" {
                    format!("step {} · the final answer (o shows the stream)", f.steps)
                } else {
                    format!("the loop stopped: {}", f.stop.replace('_', " "))
                },
            });
        }
        rows
    }
}

/// `text` on one line: its lines joined by ` ⏎ `, at most `max` characters (cut at a
/// word, ending in `…`).
pub fn one_line(text: &str, max: usize) -> String {
    let joined = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ⏎ ");
    crate::base::text::cut::cut_chars(&joined, max).into_owned()
}

/// What an observation says, on one line: for an error, its code and message (the
/// reason, not the `Operation failed.` heading); otherwise its text from the first
/// non-empty line.
pub fn observation_preview(observation: &str, is_error: bool, max: usize) -> String {
    if is_error {
        let field = |name: &str| {
            observation
                .lines()
                .find_map(|l| l.strip_prefix(name).map(str::trim))
                .filter(|v| !v.is_empty())
        };
        if let Some(message) = field("Error Message:") {
            let code = field("Error Code:").or(field("Error Type:"));
            let text = match code {
                Some(code) => format!("{code}: {message}"),
                None => message.to_string(),
            };
            return one_line(&text, max);
        }
    }
    one_line(observation, max)
}

/// Folds one loop event of invocation `invocation` into `loops` (the task's, prompt
/// tokens `prompt_tokens` for a loop it starts).
pub(super) fn fold(
    loops: &mut Vec<TaskLoop>,
    invocation: &Arc<str>,
    prompt_tokens: u64,
    event: &EngineEvent,
) {
    if loops.last().is_none_or(|l| l.invocation != *invocation) {
        loops.push(TaskLoop {
            invocation: invocation.clone(),
            prompt_tokens,
            steps: Vec::new(),
            compressions: Vec::new(),
            finished: None,
        });
    }
    let Some(l) = loops.last_mut() else {
        return;
    };
    match event {
        EngineEvent::ToolCalled(c) => {
            if l.steps.last().is_none_or(|s| s.step != c.step) {
                l.steps.push(LoopStep {
                    step: c.step,
                    thought: c.thought.clone(),
                    message_tokens: c.message_tokens,
                    calls: Vec::new(),
                });
            }
            if let Some(s) = l.steps.last_mut() {
                s.calls.push(LoopCall {
                    id: c.tool_call_id.clone(),
                    tool: c.tool.clone(),
                    input: c.input.clone(),
                    answer: None,
                    notes: Vec::new(),
                });
            }
        }
        EngineEvent::ToolAnswered(a) => {
            if let Some(c) = call_mut(l, a.step, &a.tool_call_id) {
                c.answer = Some(a.clone());
            }
        }
        EngineEvent::SkillActivated(s) => {
            if let Some(c) = l.steps.last_mut().and_then(|s| s.calls.last_mut()) {
                c.notes.push(format!(
                    "skill {} activated ({}, {} tokens)",
                    s.skill,
                    s.chain.join(" → "),
                    s.tokens
                ));
            }
        }
        EngineEvent::SkillRefused(s) => {
            if let Some(c) = l.steps.last_mut().and_then(|s| s.calls.last_mut()) {
                c.notes
                    .push(format!("skill {} refused: {}", s.skill, s.reason));
            }
        }
        EngineEvent::ContextCompressed(c) => l.compressions.push((l.steps.len(), c.clone())),
        EngineEvent::LoopFinished(f) => l.finished = Some(f.clone()),
        _ => {}
    }
}

fn call_mut<'a>(l: &'a mut TaskLoop, step: u32, id: &str) -> Option<&'a mut LoopCall> {
    l.steps
        .iter_mut()
        .rev()
        .filter(|s| s.step == step)
        .flat_map(|s| s.calls.iter_mut())
        .find(|c| c.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(v: serde_json::Value) -> EngineEvent {
        serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{v}: {e}"))
    }

    fn called(step: u32, id: &str) -> EngineEvent {
        // As logged before the step's message tokens were recorded.
        event(
            json!({"kind": "tool_called", "step": step, "tool_call_id": id, "tool": "get_now",
            "input": {"timezone": "UTC"}, "thought": "Thought: the date.\n"}),
        )
    }

    fn answered(step: u32, id: &str, observation: &str, error: bool) -> EngineEvent {
        event(
            json!({"kind": "tool_answered", "step": step, "tool_call_id": id, "tool": "get_now",
            "observation": observation, "is_error": error, "output_level": "standard",
            "duration_ms": 1.0, "input_tokens": 3, "output_tokens": 9}),
        )
    }

    #[test]
    fn each_invocation_has_its_loop_and_an_old_log_has_no_message_tokens() {
        let mut loops = Vec::new();
        let (a, b): (Arc<str>, Arc<str>) = ("INV_1".into(), "INV_2".into());
        fold(&mut loops, &a, 500, &called(1, "c1"));
        fold(&mut loops, &a, 500, &answered(1, "c1", "Now: today", false));
        fold(&mut loops, &b, 510, &called(1, "c1"));
        assert_eq!(loops.len(), 2);
        assert_eq!(
            loops[0].steps[0].calls[0]
                .answer
                .as_ref()
                .map(|x| x.output_tokens),
            Some(9)
        );
        assert!(loops[1].steps[0].calls[0].answer.is_none());
        let rows = loops[0].conversation();
        assert_eq!(rows.len(), 3, "{rows:?}");
        assert_eq!((rows[0].role, rows[0].tokens), ("system + user", Some(500)));
        assert_eq!((rows[1].role, rows[1].tokens), ("assistant", None));
        assert_eq!((rows[2].role, rows[2].tokens), ("tool", Some(9)));
        assert_eq!(
            rows[1].text,
            "step 1 · Thought: the date. → get_now({\"timezone\":\"UTC\"})"
        );
    }

    #[test]
    fn an_error_preview_is_its_code_and_message_not_its_heading() {
        let obs = "Operation failed.\nError Type: not_found\nError Code: NOT_FOUND\nError Message: `a.md`: no such file\nTool Call ID: c1";
        assert_eq!(
            observation_preview(obs, true, 200),
            "NOT_FOUND: `a.md`: no such file"
        );
        // Not an error: from the first non-empty line, lines joined.
        assert_eq!(
            observation_preview("\n# Skill\n\nStep one.\n", false, 200),
            "# Skill ⏎ Step one."
        );
        assert_eq!(one_line("abcdef", 3), "ab…");
        assert_eq!(one_line("one two three", 9), "one two…");
    }
}
