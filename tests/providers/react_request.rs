//! A tool-using request is sent the way each API expects: the tools, the assistant's
//! tool calls and the tool results, after the first user message.

use serde_json::json;

use plexus::base::protocol::messages::{
    ContentBlock, Message, MessageType, ReactTurns, ToolDefinition,
};
use plexus::base::protocol::AgentRequest;
use plexus::data::provider::http::{anthropic, openai};
use plexus::data::provider::profile::ProviderProfile;
use plexus::data::provider::ProviderKind;

fn request() -> AgentRequest {
    let mut r = AgentRequest {
        invocation_id: "INV_1".into(),
        agent: "Scholar".into(),
        task_id: "T".into(),
        plan_id: "P".into(),
        system_prompt: "sys".into(),
        user_prompt: Default::default(),
        constraints: Default::default(),
        extra: Default::default(),
        response_schema: None,
    };
    r.set_react(&ReactTurns {
        tools: vec![ToolDefinition {
            name: "get_now".into(),
            description: "the time".into(),
            input_schema: json!({"type": "object", "properties": {"timezone": {"type": "string"}}}),
        }],
        turns: vec![
            Message {
                role: MessageType::Assistant,
                content: vec![
                    ContentBlock::thinking("private"),
                    ContentBlock::text("I need the time."),
                    ContentBlock::tool_use("call_1", "get_now", json!({"timezone": "UTC"})),
                ],
            },
            Message {
                role: MessageType::User,
                content: vec![ContentBlock::tool_result(
                    "call_1",
                    "2026-11-26T10:00:00Z",
                    false,
                )],
            },
        ],
        step: 0,
    });
    r
}

fn profile(kind: ProviderKind) -> ProviderProfile {
    let mut p = ProviderProfile::simulated();
    p.kind = kind;
    p.model = "m".into();
    p.base_url = "http://127.0.0.1:1/v1".into();
    p
}

#[test]
fn openai_gets_function_tools_tool_calls_and_tool_messages() {
    let body = openai::body(&request(), "USER", &profile(ProviderKind::Openai));
    assert_eq!(body["tools"][0]["type"], "function");
    assert_eq!(body["tools"][0]["function"]["name"], "get_now");
    assert_eq!(
        body["tools"][0]["function"]["parameters"]["properties"]["timezone"]["type"],
        "string"
    );
    let m = body["messages"].as_array().expect("messages");
    assert_eq!(m.len(), 4, "{m:#?}");
    assert_eq!(m[1]["content"], "USER");
    assert_eq!(m[2]["role"], "assistant");
    assert_eq!(m[2]["content"], "I need the time.");
    assert_eq!(m[2]["tool_calls"][0]["id"], "call_1");
    assert_eq!(m[2]["tool_calls"][0]["function"]["name"], "get_now");
    assert_eq!(
        m[2]["tool_calls"][0]["function"]["arguments"],
        r#"{"timezone":"UTC"}"#
    );
    assert_eq!(m[3]["role"], "tool");
    assert_eq!(m[3]["tool_call_id"], "call_1");
    assert_eq!(m[3]["content"], "2026-11-26T10:00:00Z");
    assert!(
        !body.to_string().contains("private"),
        "thinking is not sent"
    );
}

#[test]
fn anthropic_gets_tools_with_input_schema_and_content_blocks() {
    let body = anthropic::body(&request(), "USER", &profile(ProviderKind::Anthropic));
    assert_eq!(body["tools"][0]["name"], "get_now");
    assert_eq!(body["tools"][0]["input_schema"]["type"], "object");
    let m = body["messages"].as_array().expect("messages");
    assert_eq!(m.len(), 3, "{m:#?}");
    assert_eq!(m[1]["role"], "assistant");
    assert_eq!(m[1]["content"][0]["type"], "text");
    assert_eq!(m[1]["content"][1]["type"], "tool_use");
    assert_eq!(m[1]["content"][1]["input"]["timezone"], "UTC");
    assert_eq!(m[2]["role"], "user");
    assert_eq!(m[2]["content"][0]["type"], "tool_result");
    assert_eq!(m[2]["content"][0]["tool_use_id"], "call_1");
    assert_eq!(m[2]["content"][0]["is_error"], false);
    assert_eq!(m[2]["content"][0]["content"], "2026-11-26T10:00:00Z");
    assert!(
        !body.to_string().contains("private"),
        "thinking is not sent"
    );
}

#[test]
fn a_plain_request_has_no_tools_and_one_user_message() {
    let mut r = request();
    r.extra.clear();
    assert!(r.react().is_none());
    let o = openai::body(&r, "USER", &profile(ProviderKind::Openai));
    assert!(o.get("tools").is_none());
    assert_eq!(o["messages"].as_array().map(Vec::len), Some(2));
    let a = anthropic::body(&r, "USER", &profile(ProviderKind::Anthropic));
    assert!(a.get("tools").is_none());
    assert_eq!(a["messages"].as_array().map(Vec::len), Some(1));
}

#[test]
fn the_react_field_round_trips_through_the_stored_request() {
    let r = request();
    let text = serde_json::to_string(&r).expect("json");
    let back: AgentRequest = serde_json::from_str(&text).expect("back");
    assert_eq!(back.react(), r.react());
    let turns = back.react().expect("react").turns;
    assert_eq!(turns[1].content[0].result_text(), "2026-11-26T10:00:00Z");
}

/// Collects streamed text.
struct Text(String);

impl plexus::data::provider::ChunkSink for Text {
    fn chunk(&mut self, text: &str) {
        self.0.push_str(text);
    }
}

/// A request offering `get_now` and `file_search`, with `turns` of the loop so far.
fn offering(turns: Vec<Message>) -> std::sync::Arc<AgentRequest> {
    let mut r = request();
    let mut react = r.react().expect("react");
    react.tools.push(ToolDefinition {
        name: "file_search".into(),
        description: "search".into(),
        input_schema: json!({"type": "object"}),
    });
    react.turns = turns;
    r.set_react(&react);
    std::sync::Arc::new(r)
}

#[tokio::test]
async fn the_simulated_model_and_the_mock_server_make_the_same_tool_calls_streamed_or_whole() {
    use plexus::data::provider::{HttpProvider, Provider, SimConfig, SimulatedProvider};
    use plexus::dev::mock_server::{MockConfig, MockServer};
    let server = MockServer::start(
        MockConfig {
            stream_ms: 20,
            chunks: 4,
            ..MockConfig::default()
        },
        0,
        1,
    )
    .expect("mock server");
    let sim = SimulatedProvider::new(SimConfig {
        chunk_ms: 0,
        first_chunk_ms: 0,
        ..SimConfig::default()
    });
    // Step 1 (nothing called yet), then step 2 (get_now answered).
    let after_first = vec![
        Message {
            role: MessageType::Assistant,
            content: vec![ContentBlock::tool_use(
                "call_1_get_now",
                "get_now",
                json!({"timezone": "UTC"}),
            )],
        },
        Message {
            role: MessageType::User,
            content: vec![ContentBlock::tool_result(
                "call_1_get_now",
                "2026-11-26T10:00:00Z",
                false,
            )],
        },
    ];
    for (turns, tool, args) in [
        (vec![], "get_now", r#"{"timezone":"UTC"}"#),
        (after_first, "file_search", r#"{"pattern":"**/*.md"}"#),
    ] {
        let req = offering(turns);
        let mut text = Text(String::new());
        let out = sim
            .invoke(req.clone(), 1, &mut text)
            .await
            .expect("simulated");
        assert_eq!(out.tool_calls.len(), 1, "{out:?}");
        assert_eq!(out.tool_calls[0].name, tool);
        assert_eq!(out.tool_calls[0].arguments, args);
        assert!(text.0.starts_with("Thought:"), "{}", text.0);
        for kind in [ProviderKind::Openai, ProviderKind::Anthropic] {
            for stream in [true, false] {
                let mut p = profile(kind);
                p.name = "mock".into();
                p.base_url = match kind {
                    ProviderKind::Openai => format!("{}/v1", server.url()),
                    _ => server.url(),
                };
                p.stream = stream;
                let http = HttpProvider::new(p).expect("provider");
                let mut got = Text(String::new());
                let out = http.invoke(req.clone(), 1, &mut got).await.expect("http");
                let what = format!("{kind:?} stream={stream}");
                assert_eq!(out.tool_calls.len(), 1, "{what}: {out:?}");
                assert_eq!(out.tool_calls[0].name, tool, "{what}");
                assert_eq!(
                    out.tool_calls[0].id,
                    format!("call_{}_{tool}", if tool == "get_now" { 1 } else { 2 })
                );
                let parsed: serde_json::Value =
                    serde_json::from_str(&out.tool_calls[0].arguments).expect("arguments");
                assert_eq!(
                    parsed,
                    serde_json::from_str::<serde_json::Value>(args).expect("json"),
                    "{what}"
                );
                assert_eq!(got.0, text.0, "{what}: the same thought");
            }
        }
    }
    // Every tool called once: the answer.
    let done = offering(vec![Message {
        role: MessageType::Assistant,
        content: vec![
            ContentBlock::tool_use("a", "get_now", json!({})),
            ContentBlock::tool_use("b", "file_search", json!({})),
        ],
    }]);
    let out = sim
        .invoke(done, 1, &mut Text(String::new()))
        .await
        .expect("answer");
    assert!(out.tool_calls.is_empty());
}
