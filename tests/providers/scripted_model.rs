//! The mock server's scripted model (`--script`), read back by plexus's own HTTP clients
//! on both APIs, streamed and whole: what real models send and the simulated one never
//! does (several calls in one message, arguments in many fragments, malformed arguments,
//! an unknown tool, errors, a stream cut short), and turns picked by task and agent.

use std::sync::Arc;

use serde_json::json;

use plexus::base::protocol::messages::{ReactTurns, ToolDefinition};
use plexus::base::protocol::AgentRequest;
use plexus::data::provider::{
    HttpProvider, Provider, ProviderError, ProviderKind, ProviderProfile,
};
use plexus::dev::mock_server::script::Script;
use plexus::dev::mock_server::{MockConfig, MockServer};

struct Text(String);

impl plexus::data::provider::ChunkSink for Text {
    fn chunk(&mut self, text: &str) {
        self.0.push_str(text);
    }
}

/// A request of `task` by `agent` offering one tool.
fn request(task: &str, agent: &str) -> Arc<AgentRequest> {
    let mut r = AgentRequest {
        invocation_id: "INV_20260101_000000_SCHOLAR_001".into(),
        agent: agent.into(),
        task_id: task.into(),
        plan_id: "P".into(),
        system_prompt: "sys".into(),
        user_prompt: Default::default(),
        constraints: Default::default(),
        extra: Default::default(),
        response_schema: None,
    };
    r.set_react(&ReactTurns {
        tools: vec![ToolDefinition {
            name: "file_search".into(),
            description: "search".into(),
            input_schema: json!({"type": "object"}),
        }],
        turns: Vec::new(),
        step: 0,
    });
    Arc::new(r)
}

fn server(script: serde_json::Value) -> MockServer {
    let script: Script = serde_json::from_value(script).expect("script");
    MockServer::start(
        MockConfig {
            stream_ms: 20,
            chunks: 4,
            model_script: Some(script),
            ..MockConfig::default()
        },
        0,
        1,
    )
    .expect("mock server")
}

fn provider(server: &MockServer, kind: ProviderKind, stream: bool) -> HttpProvider {
    let mut p = ProviderProfile::simulated();
    p.name = "mock".into();
    p.kind = kind;
    p.model = "m".into();
    p.base_url = match kind {
        ProviderKind::Openai => format!("{}/v1", server.url()),
        _ => server.url(),
    };
    p.stream = stream;
    p.idle_timeout_s = 2.0;
    p.connect_timeout_s = 5.0;
    HttpProvider::new(p).expect("provider")
}

/// Every API and mode, each with a fresh server on `script`: `(what, server, client)`.
fn each_way(script: &serde_json::Value) -> Vec<(String, MockServer, HttpProvider)> {
    let mut all = Vec::new();
    for kind in [ProviderKind::Openai, ProviderKind::Anthropic] {
        for stream in [true, false] {
            let s = server(script.clone());
            let p = provider(&s, kind, stream);
            all.push((format!("{kind:?} stream={stream}"), s, p));
        }
    }
    all
}

#[tokio::test]
async fn several_tool_calls_in_one_message_with_text_and_arguments_in_many_fragments() {
    let script = json!({"turns": [{
        "text": "Two searches at once.",
        "tool_calls": [
            {"name": "file_search", "arguments": {"query": "ä first", "output_level": "full"}},
            {"id": "second", "name": "file_search", "arguments": {"query": "b"}}
        ],
        "fragments": 7
    }]});
    for (what, _s, p) in each_way(&script) {
        {
            let mut text = Text(String::new());
            let out = p
                .invoke(request("T1", "Scholar"), 1, &mut text)
                .await
                .unwrap_or_else(|e| panic!("{what}: {e:?}"));
            assert_eq!(text.0, "Two searches at once.", "{what}");
            assert_eq!(out.tool_calls.len(), 2, "{what}: {out:?}");
            assert_eq!(out.tool_calls[0].id, "call_0_0", "{what}");
            assert_eq!(out.tool_calls[1].id, "second", "{what}");
            let args: Vec<serde_json::Value> = out
                .tool_calls
                .iter()
                .map(|c| serde_json::from_str(&c.arguments).expect("arguments"))
                .collect();
            assert_eq!(
                args,
                vec![
                    json!({"query": "ä first", "output_level": "full"}),
                    json!({"query": "b"})
                ],
                "{what}"
            );
        }
    }
}

#[tokio::test]
async fn malformed_arguments_and_an_unknown_tool_reach_plexus_as_sent() {
    let raw = r#"{"query": "cut he"#;
    let script = json!({"turns": [{
        "tool_calls": [{"name": "no_such_tool", "raw_arguments": raw}],
        "fragments": 3
    }]});
    for (what, _s, p) in each_way(&script) {
        {
            let out = p
                .invoke(request("T1", "Scholar"), 1, &mut Text(String::new()))
                .await;
            let out = out.unwrap_or_else(|e| panic!("{what}: {e:?}"));
            assert_eq!(out.tool_calls.len(), 1, "{what}: {out:?}");
            assert_eq!(out.tool_calls[0].name, "no_such_tool", "{what}");
            // A whole Anthropic answer carries `input` as a JSON object: text that is not
            // JSON cannot be sent there, and the server sends `{}` (as documented).
            let want = if what == "Anthropic stream=false" {
                "{}"
            } else {
                raw
            };
            assert_eq!(out.tool_calls[0].arguments, want, "{what}");
        }
    }
}

#[tokio::test]
async fn errors_delays_and_a_cut_stream_are_played_and_a_used_up_script_says_so() {
    let script = json!({"turns": [
        {"status": 503, "retry_after": "1"},
        {"delay_ms": 150, "text": "late"},
        {"text": "never whole, this one is cut short", "cut": true}
    ]});
    for (what, _s, p) in each_way(&script) {
        {
            let r = p
                .invoke(request("T1", "A"), 1, &mut Text(String::new()))
                .await;
            assert!(
                matches!(r, Err(ProviderError::Transient { .. })),
                "{what}: a 503 is transient: {r:?}"
            );
            let started = std::time::Instant::now();
            let mut text = Text(String::new());
            p.invoke(request("T1", "A"), 1, &mut text)
                .await
                .unwrap_or_else(|e| panic!("{what}: {e:?}"));
            assert_eq!(text.0, "late", "{what}");
            assert!(started.elapsed().as_millis() >= 150, "{what}: the delay");
            let r = p
                .invoke(request("T1", "A"), 1, &mut Text(String::new()))
                .await;
            if what.ends_with("stream=true") {
                assert!(r.is_err(), "{what}: a cut stream is an error: {r:?}");
            }
            let r = p
                .invoke(request("T1", "A"), 1, &mut Text(String::new()))
                .await;
            let e = format!("{r:?}");
            assert!(
                r.is_err() && e.contains("no turn left"),
                "{what}: the script is used up: {e}"
            );
        }
    }
}

#[tokio::test]
async fn turns_are_picked_by_task_agent_and_round_whatever_order_the_requests_come_in() {
    let script = json!({"turns": [
        {"when": {"task": "B"}, "text": "for B"},
        {"when": {"round": 2, "agent": "critic"}, "text": "critic, round 2"},
        {"text": "in order"}
    ]});
    for (what, s, p) in each_way(&script) {
        {
            let mut said = Vec::new();
            for (task, agent) in [("r2.critic", "critic"), ("A", "x"), ("B", "x")] {
                let mut text = Text(String::new());
                p.invoke(request(task, agent), 1, &mut text)
                    .await
                    .unwrap_or_else(|e| panic!("{what}: {e:?}"));
                said.push(text.0);
            }
            assert_eq!(said, ["critic, round 2", "in order", "for B"], "{what}");
            let agents: Vec<String> = s
                .seen()
                .iter()
                .filter_map(|r| r.header("x-plexus-agent").map(str::to_string))
                .collect();
            assert_eq!(agents, ["critic", "x", "x"], "{what}");
        }
    }
}
