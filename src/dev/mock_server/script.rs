//! A scripted model (`plexus dev mock-server --script FILE`): the server answers each
//! request with the next turn of a file instead of the simulated model, so tests can play
//! what real models do and ours never does: several tool calls in one message, arguments
//! streamed in many fragments, malformed or cut arguments, an unknown tool, text and tool
//! calls mixed, an HTTP error, a delay, a stream cut short.
//!
//! The file is JSON: `{"turns": [TURN, …]}`. A request takes the first turn not used yet
//! whose `when` it matches (a turn without `when` matches any request, so turns without
//! one are played in order; `when` names a task, an agent, a debate round, or a text the
//! request must contain). A request no turn is left for is answered 500 with a message
//! that says so, or by the simulated model with `"rest": "simulated"`.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::data::provider::ToolCall;

/// The whole script.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// The turns, in the order they are played.
    pub turns: Vec<Turn>,
    /// Who answers a request no turn is left for.
    #[serde(default)]
    pub rest: Rest,
}

/// Who answers the requests a script has no turn for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rest {
    /// An HTTP 500 that says the script is used up.
    #[default]
    Error,
    /// The simulated model, as without a script: a script then plays only the turns
    /// that differ.
    Simulated,
}

/// Which requests a turn answers; every field given must match.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct When {
    /// The task id plexus sends (`x-plexus-task`; a debate turn's is `rN.ROLE`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// The agent plexus sends (`x-plexus-agent`; a debate turn's role).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// A debate round: matches the task ids `rN.…`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<u32>,
    /// Text the request's body must contain: the model answers so only when it can read
    /// this in what it was sent (an earlier observation, a skill's instructions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contains: Option<String>,
}

/// What a request is matched by.
#[derive(Debug, Clone, Copy)]
pub struct Asked<'a> {
    /// Its task id.
    pub task: &'a str,
    /// Its agent.
    pub agent: &'a str,
    /// Its body, as sent.
    pub body: &'a str,
}

impl When {
    /// Whether the request `asked` matches.
    pub fn matches(&self, asked: Asked<'_>) -> bool {
        let Asked { task, agent, body } = asked;
        self.contains.as_deref().is_none_or(|c| body.contains(c))
            && self.task.as_deref().is_none_or(|t| t == task)
            && self.agent.as_deref().is_none_or(|a| a == agent)
            && self.round.is_none_or(|n| {
                task.strip_prefix('r')
                    .and_then(|rest| rest.split_once('.'))
                    .is_some_and(|(k, _)| k == n.to_string())
            })
    }
}

/// One tool call of a turn.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedCall {
    /// Call id [default: `call_TURN_INDEX`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Tool name (any name: an unknown tool is a test too).
    pub name: String,
    /// Arguments as a JSON value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
    /// Arguments as raw text, sent as they are (malformed or cut JSON); wins over
    /// `arguments`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_arguments: Option<String>,
}

/// What the model answers to one request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    /// Which request this answers [default: the next one].
    #[serde(default)]
    pub when: When,
    /// The answer's text (may be empty beside tool calls).
    #[serde(default)]
    pub text: String,
    /// Tool calls, all in the one message.
    #[serde(default)]
    pub tool_calls: Vec<ScriptedCall>,
    /// Pieces each call's arguments stream in [default: 2].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fragments: Option<usize>,
    /// Wait this long before answering, ms.
    #[serde(default)]
    pub delay_ms: u64,
    /// Answer with this HTTP error status instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The `Retry-After` header of the error status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<String>,
    /// Cut the stream short: the connection closes after half of its events.
    #[serde(default)]
    pub cut: bool,
}

impl Turn {
    /// The turn's tool calls as the provider types them (`n` is the turn's number).
    pub fn calls(&self, n: usize) -> Vec<ToolCall> {
        self.tool_calls
            .iter()
            .enumerate()
            .map(|(i, c)| ToolCall {
                id: c.id.clone().unwrap_or_else(|| format!("call_{n}_{i}")),
                name: c.name.clone(),
                arguments: match (&c.raw_arguments, &c.arguments) {
                    (Some(raw), _) => raw.clone(),
                    (None, Some(v)) => v.to_string(),
                    (None, None) => "{}".to_string(),
                },
            })
            .collect()
    }
}

impl Script {
    /// Reads and checks a script file; the error names the file and, for bad JSON or an
    /// unknown field, the line and column.
    pub fn load(path: &Path) -> Result<Script, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the script {}: {e}", path.display()))?;
        let script: Script = serde_json::from_str(&text).map_err(|e| {
            format!(
                "{}:{}:{}: not a mock-server script: {e}",
                path.display(),
                e.line(),
                e.column()
            )
        })?;
        for (n, t) in script.turns.iter().enumerate() {
            if let Some(code) = t.status {
                if !(400..=599).contains(&code) {
                    return Err(format!(
                        "{}: turn {n}: status {code} is not an HTTP error (400 to 599)",
                        path.display()
                    ));
                }
            }
            if t.fragments == Some(0) {
                return Err(format!(
                    "{}: turn {n}: fragments must be at least 1",
                    path.display()
                ));
            }
        }
        Ok(script)
    }
}

/// Which turns were played.
#[derive(Debug, Default)]
pub struct Played(Vec<bool>);

impl Played {
    /// Takes the first turn not played yet that the request `asked` matches; returns its
    /// number.
    pub fn take(&mut self, script: &Script, asked: Asked<'_>) -> Option<usize> {
        if self.0.len() < script.turns.len() {
            self.0.resize(script.turns.len(), false);
        }
        let n = script
            .turns
            .iter()
            .enumerate()
            .position(|(i, t)| !self.0[i] && t.when.matches(asked))?;
        self.0[n] = true;
        Some(n)
    }
}

/// `s` in `n` pieces (fewer when it has fewer characters), on character boundaries.
pub fn fragments(s: &str, n: usize) -> Vec<&str> {
    let n = n.max(1);
    let mut out = Vec::with_capacity(n);
    let mut start = 0;
    for i in 1..=n {
        let mut end = s.len() * i / n;
        while !s.is_char_boundary(end) {
            end += 1;
        }
        if end > start {
            out.push(&s[start..end]);
            start = end;
        }
    }
    if out.is_empty() {
        out.push("");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(json: &str) -> Script {
        serde_json::from_str(json).expect("script")
    }

    #[test]
    fn turns_play_in_order_unless_a_when_picks_the_request() {
        let s = script(
            r#"{"turns": [
                {"when": {"task": "B"}, "text": "for B"},
                {"text": "first"},
                {"when": {"round": 2, "agent": "critic"}, "text": "critic of round 2"},
                {"text": "second"}
            ]}"#,
        );
        let mut played = Played::default();
        let text = |n: Option<usize>| n.map(|n| s.turns[n].text.as_str());
        let ask = |task, agent| Asked {
            task,
            agent,
            body: "",
        };
        assert_eq!(text(played.take(&s, ask("A", "x"))), Some("first"));
        assert_eq!(
            text(played.take(&s, ask("r2.critic", "critic"))),
            Some("critic of round 2")
        );
        assert_eq!(text(played.take(&s, ask("B", "x"))), Some("for B"));
        assert_eq!(
            text(played.take(&s, ask("r12.critic", "critic"))),
            Some("second")
        );
        assert_eq!(
            played.take(&s, ask("A", "x")),
            None,
            "the script is used up"
        );
    }

    #[test]
    fn a_turn_that_must_read_a_text_waits_for_a_request_that_carries_it() {
        let s = script(
            r#"{"turns": [
                {"when": {"contains": "ZEBRA-7"}, "text": "I read it"},
                {"text": "other"}
            ]}"#,
        );
        let mut played = Played::default();
        let ask = |body| Asked {
            task: "T",
            agent: "a",
            body,
        };
        assert_eq!(played.take(&s, ask("{\"messages\": []}")), Some(1));
        assert_eq!(played.take(&s, ask("nothing here")), None);
        assert_eq!(played.take(&s, ask("... ZEBRA-7 ...")), Some(0));
    }

    #[test]
    fn arguments_are_sent_raw_when_given_so_and_split_in_the_pieces_asked() {
        let s = script(
            r#"{"turns": [{"tool_calls": [
                {"name": "file_search", "arguments": {"query": "ä b"}},
                {"id": "mine", "name": "nope", "raw_arguments": "{\"query\": \"cut"}
            ]}]}"#,
        );
        let calls = s.turns[0].calls(0);
        assert_eq!(calls[0].id, "call_0_0");
        assert_eq!(calls[0].arguments, r#"{"query":"ä b"}"#);
        assert_eq!(calls[1].arguments, r#"{"query": "cut"#);
        let parts = fragments(&calls[0].arguments, 5);
        assert_eq!(parts.len(), 5);
        assert_eq!(parts.concat(), calls[0].arguments);
        assert_eq!(fragments("", 3), vec![""]);
    }

    #[test]
    fn a_bad_script_is_refused_with_where() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("s.json");
        std::fs::write(&p, "{\"turns\": [\n {\"txt\": \"typo\"}]}").expect("write");
        let e = Script::load(&p).expect_err("unknown field");
        assert!(e.contains("s.json:2:") && e.contains("txt"), "{e}");
        std::fs::write(&p, r#"{"turns": [{"status": 200}]}"#).expect("write");
        let e = Script::load(&p).expect_err("not an error status");
        assert!(e.contains("turn 0") && e.contains("200"), "{e}");
    }
}
