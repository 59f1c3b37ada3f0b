//! How the simulated model (and the mock server, which answers with it) behaves in a
//! tool-using loop: deterministic from the conversation alone, so a run replays and
//! re-executes the same way. It activates the skills it is offered, then the skills
//! those name under `Uses:` (depth-first, each from the skill that asked for it), then
//! calls every other tool once, one call per step, and then gives its final answer.

use serde_json::{json, Value};

use crate::base::protocol::messages::{ContentBlockType, MessageType, ReactTurns};
use crate::data::provider::ToolCall;

/// The tool that activates a skill.
pub const ACTIVATE_SKILL: &str = "activate_skill";
/// The tool that reads an active skill's other files (level 3).
pub const READ_SKILL_FILE: &str = "read_skill_file";

/// What the simulated model does next.
#[derive(Debug, Clone, PartialEq)]
pub enum SimStep {
    /// Think aloud, then call one tool.
    Act {
        /// The thought, streamed as text.
        thought: String,
        /// The call.
        call: ToolCall,
    },
    /// Give the final answer (the usual answer of the task).
    Answer,
}

/// A call already made: tool, input, and the observation it got (if answered).
struct Made {
    name: String,
    input: Value,
    result: Option<(String, bool)>,
}

fn calls_made(react: &ReactTurns) -> Vec<Made> {
    let mut made: Vec<(String, Made)> = Vec::new();
    for turn in &react.turns {
        for b in &turn.content {
            match (turn.role, b.block_type) {
                (MessageType::Assistant, ContentBlockType::ToolUse) => made.push((
                    b.id.clone().unwrap_or_default(),
                    Made {
                        name: b.name.clone().unwrap_or_default(),
                        input: b.input_json(),
                        result: None,
                    },
                )),
                (_, ContentBlockType::ToolResult) => {
                    let id = b.tool_use_id.clone().unwrap_or_default();
                    if let Some((_, m)) = made.iter_mut().find(|(i, _)| *i == id) {
                        m.result = Some((b.result_text(), b.is_error));
                    }
                }
                _ => {}
            }
        }
    }
    let mut made: Vec<Made> = made.into_iter().map(|(_, m)| m).collect();
    // Calls whose rounds were summarised away: the summary keeps their ids
    // (`call_N_TOOL`), which name the tool, and on a line `NAME [ID] INPUT → …` the start
    // of their input (whole when short).
    for turn in &react.turns {
        for b in &turn.content {
            let text = b.text.as_deref().unwrap_or_default();
            for line in text.lines() {
                add_summarised(&mut made, line);
            }
        }
    }
    made
}

/// Adds the calls a summary line names by id (`call_N_TOOL`) that are not known yet, as
/// answered.
fn add_summarised(made: &mut Vec<Made>, line: &str) {
    for word in line.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        let Some(rest) = word.strip_prefix("call_") else {
            continue;
        };
        let Some((n, tool)) = rest.split_once('_') else {
            continue;
        };
        let input = summarised_input(line, word);
        let known = made.iter().any(|m| m.name == tool && m.input == input);
        if n.chars().all(|c| c.is_ascii_digit()) && !tool.is_empty() && !known {
            made.push(Made {
                name: tool.to_string(),
                input,
                result: Some((String::new(), false)),
            });
        }
    }
}

/// The input of call `id` on a summary line `NAME [ID] INPUT → …` (or, in a round's
/// references, `NAME [ID] INPUT; …`), when it is whole JSON.
fn summarised_input(line: &str, id: &str) -> Value {
    let Some(at) = line.find(&format!("[{id}] ")) else {
        return Value::Null;
    };
    let rest = &line[at + id.len() + 3..];
    // The first JSON value on the rest of the line, whatever follows it.
    match serde_json::Deserializer::from_str(rest)
        .into_iter::<Value>()
        .next()
    {
        Some(Ok(v @ Value::Object(_))) => v,
        _ => Value::Null,
    }
}

/// The skills a skill's activation said it uses: a line `Uses: A, B`.
fn uses_in(observation: &str) -> Vec<String> {
    observation
        .lines()
        .find_map(|l| l.trim().strip_prefix("Uses:"))
        .map(|rest| {
            rest.split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty() && s != "none")
                .collect()
        })
        .unwrap_or_default()
}

/// The skills offered: the `enum` of the activation tool's `skill_name`.
fn skills_offered(react: &ReactTurns) -> Vec<String> {
    react
        .tools
        .iter()
        .find(|t| t.name == ACTIVATE_SKILL)
        .and_then(|t| t.input_schema["properties"]["skill_name"]["enum"].as_array())
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The activations to make, in order, as (skill, the skill that asked for it), given
/// what the activations made so far answered.
fn activation_plan(react: &ReactTurns, made: &[Made]) -> Vec<(String, Option<String>)> {
    let mut plan: Vec<(String, Option<String>)> = skills_offered(react)
        .into_iter()
        .map(|s| (s, None))
        .collect();
    let mut i = 0;
    while i < plan.len() && plan.len() < 64 {
        let (skill, parent) = plan[i].clone();
        let answered = made.iter().find(|m| {
            m.name == ACTIVATE_SKILL
                && m.input["skill_name"] == json!(skill)
                && m.input.get("from_skill").and_then(Value::as_str) == parent.as_deref()
        });
        if let Some(Made {
            result: Some((text, false)),
            ..
        }) = answered
        {
            let mut at = i + 1;
            for used in uses_in(text) {
                let pair = (used, Some(skill.clone()));
                if !plan.contains(&pair) {
                    plan.insert(at, pair);
                    at += 1;
                }
            }
        }
        i += 1;
    }
    plan
}

/// The first Markdown file a search found.
fn found_path(made: &[Made]) -> Option<String> {
    made.iter()
        .filter(|m| m.name == "file_search")
        .filter_map(|m| m.result.as_ref())
        .flat_map(|(text, _)| text.lines())
        .map(|l| l.trim().trim_start_matches("- "))
        .find(|l| l.ends_with(".md") && !l.contains(' '))
        .map(str::to_string)
}

/// The input the simulated model gives a built-in tool.
fn input_for(tool: &str, made: &[Made]) -> Value {
    match tool {
        "file_search" => json!({"pattern": "**/*.md"}),
        "file_reader" => {
            // The first path a search found, else the workspace's README.
            let found = found_path(made);
            json!({"path": found.unwrap_or_else(|| "README.md".into()), "start_line": 1, "end_line": 40})
        }
        "atom_query" => json!({"limit": 5}),
        "get_now" => json!({"timezone": "UTC"}),
        "calculate_date" => json!({"base_date": "2026-01-05", "days": 10}),
        // The files of the first skill it activated (a list, no path given).
        READ_SKILL_FILE => {
            let skill = made
                .iter()
                .find(|m| m.name == ACTIVATE_SKILL)
                .map(|m| m.input["skill_name"].clone())
                .unwrap_or(Value::Null);
            json!({"skill_name": skill})
        }
        _ => json!({}),
    }
}

/// The tool that fetches what a task was given by reference.
pub const FETCH_REFERENCE: &str = "fetch_reference";

/// A fetch of the first reference the tool offers, 500 tokens of it.
fn fetch_input(react: &ReactTurns) -> Value {
    let first = react
        .tools
        .iter()
        .find(|t| t.name == FETCH_REFERENCE)
        .and_then(|t| t.input_schema.pointer("/properties/ref_id/enum/0").cloned())
        .unwrap_or(Value::Null);
    json!({"ref_id": first, "max_tokens": 500})
}

/// What the simulated model does next in this conversation.
pub fn next_step(react: &ReactTurns) -> SimStep {
    if react.tools.is_empty() {
        return SimStep::Answer;
    }
    let made = calls_made(react);
    let step = match react.step {
        0 => made.len() as u32 + 1,
        n => n,
    };
    let id = |name: &str| format!("call_{step}_{name}");
    let activated = |skill: &str, parent: &Option<String>| {
        made.iter().any(|m| {
            m.name == ACTIVATE_SKILL
                && m.input["skill_name"] == json!(skill)
                && m.input.get("from_skill").and_then(Value::as_str) == parent.as_deref()
        })
    };
    if let Some((skill, parent)) = activation_plan(react, &made)
        .into_iter()
        .find(|(s, p)| !activated(s, p))
    {
        let mut input = json!({"skill_name": skill});
        let thought = match &parent {
            Some(p) => {
                input["from_skill"] = json!(p);
                format!("Thought: the skill {p} asks for {skill}; I activate it.\n")
            }
            None => format!("Thought: the skill {skill} fits this task; I activate it.\n"),
        };
        return SimStep::Act {
            thought,
            call: ToolCall {
                id: id(ACTIVATE_SKILL),
                name: ACTIVATE_SKILL.into(),
                arguments: input.to_string(),
            },
        };
    }
    // Nothing to read when the search found no file: the reader is not called blind.
    let nothing_found = made.iter().any(|m| m.name == "file_search") && found_path(&made).is_none();
    let next = react
        .tools
        .iter()
        .map(|t| t.name.as_str())
        .filter(|n| *n != ACTIVATE_SKILL)
        .filter(|n| !(*n == "file_reader" && nothing_found))
        .find(|n| !made.iter().any(|m| m.name == *n));
    match next {
        Some(tool) => {
            let input = match tool {
                FETCH_REFERENCE => fetch_input(react),
                _ => input_for(tool, &made),
            };
            SimStep::Act {
                thought: format!("Thought: I need what {tool} can tell me; I call it.\n"),
                call: ToolCall {
                    id: id(tool),
                    name: tool.into(),
                    arguments: input.to_string(),
                },
            }
        }
        None => SimStep::Answer,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::protocol::messages::{ContentBlock, Message, ToolDefinition};

    fn tool(name: &str, schema: Value) -> ToolDefinition {
        ToolDefinition {
            name: name.into(),
            description: String::new(),
            input_schema: schema,
        }
    }

    /// Plays the loop with `answer` giving each call's observation.
    fn play(
        react: &mut ReactTurns,
        answer: impl Fn(&str, &Value) -> (String, bool),
    ) -> Vec<String> {
        let mut seen = Vec::new();
        for _ in 0..32 {
            match next_step(react) {
                SimStep::Answer => return seen,
                SimStep::Act { call, .. } => {
                    let input: Value = serde_json::from_str(&call.arguments).expect("json");
                    seen.push(format!("{} {}", call.name, input));
                    let (text, err) = answer(&call.name, &input);
                    react.turns.push(Message {
                        role: MessageType::Assistant,
                        content: vec![ContentBlock::tool_use(&call.id, &call.name, input)],
                    });
                    react.turns.push(Message {
                        role: MessageType::User,
                        content: vec![ContentBlock::tool_result(&call.id, text, err)],
                    });
                }
            }
        }
        panic!("the loop did not end: {seen:?}");
    }

    #[test]
    fn no_tools_means_an_answer_at_once() {
        assert_eq!(next_step(&ReactTurns::default()), SimStep::Answer);
    }

    #[test]
    fn skills_and_their_uses_are_activated_depth_first_then_each_tool_once() {
        let mut react = ReactTurns {
            tools: vec![
                tool(
                    ACTIVATE_SKILL,
                    json!({"properties": {"skill_name": {"enum": ["A", "D"]}}}),
                ),
                tool("get_now", json!({})),
                tool("file_search", json!({})),
            ],
            turns: vec![],
            step: 0,
        };
        let seen = play(&mut react, |name, input| {
            if name != ACTIVATE_SKILL {
                return ("ok".into(), false);
            }
            let from = input.get("from_skill").and_then(Value::as_str);
            match (input["skill_name"].as_str(), from) {
                (Some("A"), None) => ("Skill A\nUses: B".into(), false),
                // C asks for A again: the engine refuses the cycle A → B → C → A.
                (Some("A"), Some(_)) => ("Operation failed.\nError Type: cycle".into(), true),
                (Some("B"), _) => ("Skill B\nUses: C".into(), false),
                (Some("C"), _) => ("Skill C\nUses: A".into(), false),
                _ => ("Skill\nUses: none".into(), false),
            }
        });
        let names: Vec<&str> = seen.iter().map(String::as_str).collect();
        assert_eq!(
            names,
            [
                r#"activate_skill {"skill_name":"A"}"#,
                r#"activate_skill {"from_skill":"A","skill_name":"B"}"#,
                r#"activate_skill {"from_skill":"B","skill_name":"C"}"#,
                r#"activate_skill {"from_skill":"C","skill_name":"A"}"#,
                r#"activate_skill {"skill_name":"D"}"#,
                r#"get_now {"timezone":"UTC"}"#,
                r#"file_search {"pattern":"**/*.md"}"#,
            ]
        );
    }
}
