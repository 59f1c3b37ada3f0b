//! Structured output against servers written here, the way each kind of server takes it:
//! every dialect is sent in its own form with the task's schema and its answer read
//! (a forced `answer` tool whole or streamed, OpenAI's and Anthropic's); a server that
//! refuses a form — as llama-cpp-python refuses `json_schema` with a 500 — gets the next
//! one once, and one that refuses every form gets the prompt alone, the task
//! succeeding each time with no retry spent on the refusals; a 400 for another reason is
//! not taken for a refusal.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::wire::{form_of, schema_of, serve, Reply, Request};
use common::{one_task_plan, run_plan_with, test_config, Ran};
use plexus::base::config::providers::StructuredOutput;
use plexus::data::provider::{HttpProvider, ProviderKind, ProviderProfile};
use plexus::model::event::{EngineEvent, RunStatus};
use plexus::run::engine::EngineConfig;
use serde_json::{json, Value};

/// A valid answer of the one-task plan's task A.
pub fn answer() -> Value {
    json!({"output": {"atoms": [{
        "asset_id": "MATH_DDPM_01", "atom_type": "Math_Atom", "confidence": 0.9,
        "content": {"mathematical_expression": "x_t = sqrt(a_t) x_0 + sqrt(1 - a_t) eps"},
        "provenance": {"paper_location": "Section 3.2, Eq. 4"}}],
        "summary": "The forward noising step in closed form."}})
}

/// A profile of `kind` on the server at `url` asking in `setting`.
pub fn profile(
    kind: ProviderKind,
    url: &str,
    setting: StructuredOutput,
    stream: bool,
) -> ProviderProfile {
    let mut p = ProviderProfile::simulated();
    p.name = "wire".into();
    p.kind = kind;
    p.base_url = match kind {
        ProviderKind::Openai => format!("{url}/v1"),
        _ => url.to_string(),
    };
    p.model = "m".into();
    p.stream = stream;
    p.idle_timeout_s = 5.0;
    p.structured_output = setting;
    p
}

/// Engine settings: millisecond retries.
pub fn config() -> EngineConfig {
    EngineConfig {
        timeout_scale: 0.05,
        ..test_config()
    }
}

/// Runs the one-task plan on `p`.
pub async fn run(p: ProviderProfile) -> Ran {
    let provider = Arc::new(HttpProvider::new(p).expect("provider"));
    run_plan_with(&one_task_plan(""), provider, config()).await
}

fn finished(
    r: &Ran,
) -> Vec<(
    Option<plexus::base::protocol::InvocationStatus>,
    Vec<plexus::base::protocol::ErrorCode>,
)> {
    r.of(|e| match e {
        EngineEvent::InvocationFinished(f) => Some(f),
        _ => None,
    })
    .into_iter()
    .map(|(_, f)| (f.status, f.errors.clone()))
    .collect()
}

fn succeeded(r: &Ran) -> bool {
    r.outcome.status == RunStatus::Succeeded
}

/// The schema a request sent holds the task's atom type and its limits.
fn assert_task_schema(req: &Request) {
    let s = schema_of(&req.body).unwrap_or_else(|| panic!("no schema in {}", req.body));
    let atoms = &s["properties"]["output"]["properties"]["atoms"];
    assert_eq!(atoms["maxItems"], 3, "{s}");
    assert_eq!(atoms["minItems"], 1, "{s}");
    assert_eq!(
        atoms["items"]["properties"]["atom_type"]["enum"],
        json!(["Math_Atom"]),
        "{s}"
    );
}

/// An OpenAI answer in `form`: a forced tool gets a tool call whose arguments are the
/// answer; every other form the answer as the message's content.
fn openai_answer(form: &str, stream: bool) -> Reply {
    let text = answer().to_string();
    match (form, stream) {
        ("tool", false) => Reply::openai_message(
            json!({"role": "assistant", "content": null, "tool_calls": [{
                "id": "call_1", "type": "function",
                "function": {"name": "answer", "arguments": text}}]}),
            "tool_calls",
        ),
        ("tool", true) => {
            let (a, b) = text.split_at(text.len() / 2);
            Reply::openai_stream(
                &[
                    json!({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                           "function": {"name": "answer", "arguments": ""}}]}),
                    json!({"tool_calls": [{"index": 0, "function": {"arguments": a}}]}),
                    json!({"tool_calls": [{"index": 0, "function": {"arguments": b}}]}),
                ],
                "tool_calls",
                Duration::ZERO,
            )
        }
        (_, false) => Reply::openai_text(&text),
        (_, true) => {
            let (a, b) = text.split_at(text.len() / 2);
            Reply::openai_stream(
                &[
                    json!({"role": "assistant", "content": a}),
                    json!({"content": b}),
                ],
                "stop",
                Duration::ZERO,
            )
        }
    }
}

#[tokio::test]
async fn each_openai_dialect_is_sent_in_its_own_form_with_the_task_schema_and_read_back() {
    let settings = [
        (StructuredOutput::JsonSchema, "json_schema"),
        (StructuredOutput::JsonObject, "json_object"),
        (StructuredOutput::GuidedJson, "guided_json"),
        (StructuredOutput::OllamaFormat, "ollama_format"),
        (StructuredOutput::Tool, "tool"),
    ];
    for (setting, form) in settings {
        for stream in [false, true] {
            let (url, seen) = serve(move |req, _| openai_answer(form_of(&req.body), stream));
            let r = run(profile(ProviderKind::Openai, &url, setting, stream)).await;
            let seen = seen.lock().expect("seen").clone();
            assert_eq!(seen.len(), 1, "{form} stream={stream}: {:?}", finished(&r));
            assert_eq!(form_of(&seen[0].body), form, "{}", seen[0].body);
            assert_task_schema(&seen[0]);
            if form == "json_schema" {
                assert_eq!(
                    seen[0].body["response_format"]["json_schema"]["strict"],
                    true
                );
            }
            assert!(succeeded(&r), "{form} stream={stream}: {:?}", finished(&r));
        }
    }
}

/// An Anthropic answer through the forced `answer` tool: its input whole, or streamed as
/// `input_json_delta` fragments.
fn anthropic_tool_answer(stream: bool) -> Reply {
    let input = answer();
    if !stream {
        return Reply::json(
            200,
            json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
                   "content": [{"type": "tool_use", "id": "toolu_1", "name": "answer", "input": input}],
                   "stop_reason": "tool_use", "usage": {"input_tokens": 90, "output_tokens": 40}}),
        );
    }
    let text = input.to_string();
    let (a, b) = text.split_at(text.len() / 3);
    Reply::anthropic_sse(
        &[
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                   "model": "m", "content": [], "usage": {"input_tokens": 90, "output_tokens": 1}}}),
            json!({"type": "content_block_start", "index": 0,
                   "content_block": {"type": "tool_use", "id": "toolu_1", "name": "answer", "input": {}}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": a}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": b}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 40}}),
            json!({"type": "message_stop"}),
        ],
        Duration::ZERO,
    )
}

#[tokio::test]
async fn anthropic_is_held_to_the_schema_through_a_forced_tool_whole_or_streamed() {
    for stream in [false, true] {
        let (url, seen) = serve(move |_, _| anthropic_tool_answer(stream));
        let r = run(profile(
            ProviderKind::Anthropic,
            &url,
            StructuredOutput::Auto,
            stream,
        ))
        .await;
        let seen = seen.lock().expect("seen").clone();
        assert_eq!(seen.len(), 1, "stream={stream}: {:?}", finished(&r));
        assert_eq!(
            seen[0].body["tool_choice"],
            json!({"type": "tool", "name": "answer"})
        );
        assert_task_schema(&seen[0]);
        assert!(succeeded(&r), "stream={stream}: {:?}", finished(&r));
    }
}

#[tokio::test]
async fn a_server_refusing_each_openai_form_gets_the_next_once_and_then_the_prompt_alone() {
    // Each form refused the way a server of its kind refuses it.
    let (url, seen) = serve(|req, _| match form_of(&req.body) {
        "json_schema" => Reply::error(500, "response_format type json_schema is not supported"),
        "json_object" => Reply::error(400, "'json_object' with a schema: unsupported grammar"),
        "guided_json" => Reply::error(422, "unrecognized request argument: guided_json"),
        _ => openai_answer("none", false),
    });
    let r = run(profile(
        ProviderKind::Openai,
        &url,
        StructuredOutput::Auto,
        false,
    ))
    .await;
    let forms: Vec<&str> = seen
        .lock()
        .expect("seen")
        .iter()
        .map(|q| form_of(&q.body))
        .collect();
    assert_eq!(forms, ["json_schema", "json_object", "guided_json", "none"]);
    assert!(succeeded(&r), "{:?}", finished(&r));
    // The refusals spent no attempt and no retry: one invocation, which succeeded.
    assert_eq!(finished(&r).len(), 1, "{:?}", finished(&r));
    assert!(r
        .of(|e| match e {
            EngineEvent::RetryScheduled(x) => Some(x),
            _ => None,
        })
        .is_empty());
    // The prompt still states the shape when no form is left.
    let last = seen
        .lock()
        .expect("seen")
        .last()
        .cloned()
        .expect("a request");
    assert!(
        common::wire::last_user_text(&last.body).contains("\"example\""),
        "{}",
        last.body
    );
}

#[tokio::test]
async fn the_form_that_worked_is_kept_for_the_next_calls() {
    let (url, seen) = serve(|req, _| match form_of(&req.body) {
        "json_schema" => Reply::error(500, "json_schema not supported"),
        form => openai_answer(form, false),
    });
    let provider = Arc::new(
        HttpProvider::new(profile(
            ProviderKind::Openai,
            &url,
            StructuredOutput::Auto,
            false,
        ))
        .expect("provider"),
    );
    let plan = one_task_plan(
        r#",{"task_id":"B","agent":"Scholar_Internalizer","instruction":"Analyse the loss.","depends_on":["A"],
          "output_requirements":{"required_fields":["content.mathematical_expression","provenance.paper_location"],"quality_threshold":"B","max_atoms":3}}"#,
    );
    let r = run_plan_with(&plan, provider, config()).await;
    assert!(succeeded(&r), "{:?}", finished(&r));
    let forms: Vec<&str> = seen
        .lock()
        .expect("seen")
        .iter()
        .map(|q| form_of(&q.body))
        .collect();
    assert_eq!(forms, ["json_schema", "json_object", "json_object"]);
}

#[tokio::test]
async fn anthropic_refusing_the_forced_tool_gets_the_prompt_alone() {
    let (url, seen) = serve(|req, _| {
        if req.body.get("tool_choice").is_some() {
            Reply::error(400, "tool_choice is not supported by this model")
        } else {
            Reply::json(
                200,
                json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
                       "content": [{"type": "text", "text": answer().to_string()}],
                       "stop_reason": "end_turn", "usage": {"input_tokens": 9, "output_tokens": 4}}),
            )
        }
    });
    let r = run(profile(
        ProviderKind::Anthropic,
        &url,
        StructuredOutput::Auto,
        false,
    ))
    .await;
    assert!(succeeded(&r), "{:?}", finished(&r));
    assert_eq!(seen.lock().expect("seen").len(), 2);
}

#[tokio::test]
async fn a_400_for_another_reason_is_not_taken_for_a_refusal_of_the_form() {
    let (url, seen) =
        serve(|_, _| Reply::error(400, "This model's maximum context length is 4096 tokens"));
    let r = run(profile(
        ProviderKind::Openai,
        &url,
        StructuredOutput::Auto,
        false,
    ))
    .await;
    assert!(!succeeded(&r));
    let forms: Vec<&str> = seen
        .lock()
        .expect("seen")
        .iter()
        .map(|q| form_of(&q.body))
        .collect();
    assert_eq!(forms, ["json_schema"], "a non-refusal 400 is final (E008)");
    assert_eq!(
        finished(&r)[0].1,
        [plexus::base::protocol::ErrorCode::E008],
        "{:?}",
        finished(&r)
    );
}

#[tokio::test]
async fn off_sends_no_form_and_the_prompt_states_the_shape() {
    let (url, seen) = serve(|_, _| openai_answer("none", false));
    let r = run(profile(
        ProviderKind::Openai,
        &url,
        StructuredOutput::Off,
        false,
    ))
    .await;
    assert!(succeeded(&r), "{:?}", finished(&r));
    let req = seen.lock().expect("seen")[0].clone();
    assert_eq!(form_of(&req.body), "none");
    assert!(schema_of(&req.body).is_none());
    assert!(common::wire::last_user_text(&req.body).contains("\"example\""));
}

#[tokio::test]
async fn schema_response_prints_the_schema_the_server_is_sent() {
    let (url, seen) = serve(|req, _| openai_answer(form_of(&req.body), false));
    let r = run(profile(
        ProviderKind::Openai,
        &url,
        StructuredOutput::JsonObject,
        false,
    ))
    .await;
    assert!(succeeded(&r), "{:?}", finished(&r));
    let sent = seen.lock().expect("seen")[0].body["response_format"]["schema"].clone();
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("plan.json"), one_task_plan("")).expect("plan");
    let o = common::bin::output(common::bin::plexus(dir.path()).args([
        "schema",
        "response",
        "--task",
        "A",
        "plan.json",
    ]));
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let printed: Value = serde_json::from_str(&o.stdout).expect("JSON");
    assert_eq!(printed, sent);
    // A task the plan does not hold is named, with the nearest one.
    let o = common::bin::output(common::bin::plexus(dir.path()).args([
        "schema",
        "response",
        "--task",
        "a",
        "plan.json",
    ]));
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(o.stderr.contains("no task `a`"), "{}", o.stderr);
}
