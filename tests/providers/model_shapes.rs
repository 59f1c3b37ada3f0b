//! What real models and servers send, from a server written here: reasoning before the
//! answer (`<think>` with braces in it, a streamed `reasoning_content`), content as an
//! array of parts, numbers written as strings, an answer cut by `finish_reason: length`,
//! an error the model reports in its own answer (retried by its code), an empty atom
//! list (E003, retried), a stream that repeats itself (stopped as E009 and retried at a
//! lower temperature), `max_tokens` from the agent's budget, a slow first token (within
//! and past `first_token_timeout_s`), a profile's `timeout_s` over the plan's; and in a
//! tool loop: arguments as an object, malformed arguments, calls without ids or reusing
//! them, a legacy `function_call`, and five calls in one reply held to the window
//! together.

use std::time::Duration;

use serde_json::{json, Value};

use super::structured_output::{answer, config, profile, run};
use crate::common::wire::{serve, Reply};
use crate::common::{run_plan_with, Ran};
use plexus::base::config::providers::StructuredOutput;
use plexus::base::protocol::ErrorCode;
use plexus::data::provider::{HttpProvider, ProviderKind, ProviderProfile};
use plexus::model::event::{EngineEvent, RunStatus};

fn codes(r: &Ran) -> Vec<Vec<ErrorCode>> {
    r.of(|e| match e {
        EngineEvent::InvocationFinished(f) => Some(f),
        _ => None,
    })
    .into_iter()
    .map(|(_, f)| f.errors.clone())
    .collect()
}

fn messages(r: &Ran) -> Vec<String> {
    r.of(|e| match e {
        EngineEvent::InvocationFinished(f) => Some(f),
        _ => None,
    })
    .into_iter()
    .map(|(_, f)| f.error_message.clone().unwrap_or_default())
    .collect()
}

fn openai(url: &str, stream: bool) -> ProviderProfile {
    profile(ProviderKind::Openai, url, StructuredOutput::Auto, stream)
}

#[tokio::test]
async fn reasoning_before_the_answer_is_thinking_and_never_parsed_as_the_answer() {
    // Braces in the reasoning: a parser that looks for the first `{` fails on it.
    let think = "<think>The user wants {atoms}; maybe {\"x\": 1} first? No: the formula.</think>\n";
    let (url, _) = serve(move |_, _| Reply::openai_text(&format!("{think}{}", answer())));
    let r = run(openai(&url, false)).await;
    assert_eq!(r.outcome.status, RunStatus::Succeeded, "{:?}", messages(&r));
    assert_eq!(codes(&r), [Vec::<ErrorCode>::new()]);

    let text = answer().to_string();
    let (url, _) = serve(move |_, _| {
        Reply::openai_stream(
            &[
                json!({"role": "assistant", "reasoning_content": "Let me think {about} it."}),
                json!({"reasoning_content": " The atoms {are} clear."}),
                json!({"content": text}),
            ],
            "stop",
            Duration::ZERO,
        )
    });
    let r = run(openai(&url, true)).await;
    assert_eq!(r.outcome.status, RunStatus::Succeeded, "{:?}", messages(&r));
    assert_eq!(codes(&r).len(), 1);
}

#[tokio::test]
async fn content_as_an_array_of_parts_is_joined() {
    let text = answer().to_string();
    let (a, b) = text.split_at(40);
    let parts = json!([{"type": "text", "text": a}, {"type": "text", "text": b}]);
    let (url, _) = serve(move |_, _| {
        Reply::openai_message(json!({"role": "assistant", "content": parts}), "stop")
    });
    let r = run(openai(&url, false)).await;
    assert_eq!(r.outcome.status, RunStatus::Succeeded, "{:?}", messages(&r));
}

#[tokio::test]
async fn numbers_written_as_strings_are_read() {
    let mut a = answer();
    a["output"]["atoms"][0]["confidence"] = json!("0.9");
    let (url, _) = serve(move |_, _| Reply::openai_text(&a.to_string()));
    let r = run(openai(&url, false)).await;
    assert_eq!(r.outcome.status, RunStatus::Succeeded, "{:?}", messages(&r));
    assert_eq!(codes(&r).len(), 1);
}

#[tokio::test]
async fn an_answer_cut_by_length_says_so() {
    let text = answer().to_string();
    let cut = text[..text.len() / 2].to_string();
    let (url, _) = serve(move |_, n| {
        if n == 0 {
            Reply::openai_message(json!({"role": "assistant", "content": cut}), "length")
        } else {
            Reply::openai_text(&text)
        }
    });
    let r = run(openai(&url, false)).await;
    assert_eq!(r.outcome.status, RunStatus::Succeeded, "{:?}", messages(&r));
    assert!(
        messages(&r)[0].contains("finish_reason `length`"),
        "{:?}",
        messages(&r)
    );
}

#[tokio::test]
async fn an_error_the_model_reports_is_honoured_by_its_code_and_an_empty_list_gets_e003() {
    // The protocol's own example of an errors array.
    let reported = json!({"output": {"atoms": [], "summary": "Could not read the source."},
        "errors": [{"error_code": "E001", "error_type": "source_not_found",
                    "message": "cannot reach the GitHub repository", "recoverable": true,
                    "suggested_action": "check the URL"}]});
    let empty = json!({"output": {"atoms": [], "summary": "Nothing."}});
    let (url, seen) = serve(move |_, n| match n {
        0 => Reply::openai_text(&reported.to_string()),
        1 => Reply::openai_text(&empty.to_string()),
        _ => Reply::openai_text(&answer().to_string()),
    });
    let r = run(openai(&url, false)).await;
    assert_eq!(r.outcome.status, RunStatus::Succeeded, "{:?}", messages(&r));
    let c = codes(&r);
    assert_eq!(c.len(), 3, "{c:?}");
    assert!(c[0].contains(&ErrorCode::E001), "{c:?} {:?}", messages(&r));
    assert!(messages(&r)[0].contains("cannot reach the GitHub repository"));
    assert_eq!(c[1], [ErrorCode::E003], "{:?}", messages(&r));
    assert_eq!(seen.lock().expect("seen").len(), 3);
}

#[tokio::test]
async fn a_stream_repeating_itself_is_stopped_as_e009_and_retried_cooler() {
    let text = answer().to_string();
    let (url, seen) = serve(move |_, n| {
        if n == 0 {
            let mut deltas =
                vec![json!({"role": "assistant", "content": "{\"output\": {\"atoms\": ["})];
            let atom = r#"{"asset_id":"MATH_01","content":{"mathematical_expression":"x"}},"#;
            deltas.extend((0..3000).map(|_| json!({"content": atom})));
            Reply::openai_stream(&deltas, "stop", Duration::from_micros(200))
        } else {
            Reply::openai_stream(&[json!({"content": text})], "stop", Duration::ZERO)
        }
    });
    let r = run(openai(&url, true)).await;
    assert_eq!(r.outcome.status, RunStatus::Succeeded, "{:?}", messages(&r));
    assert_eq!(codes(&r)[0], [ErrorCode::E009], "{:?}", messages(&r));
    assert!(
        messages(&r)[0].contains("repeated itself"),
        "{:?}",
        messages(&r)
    );
    // Stopped early: after a few windows of the 3,000 pieces (about 195,000 characters).
    let stopped_after: usize = messages(&r)[0]
        .split("stopped after ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{:?}", messages(&r)));
    assert!(stopped_after < 20_000, "{:?}", messages(&r));
    let seen = seen.lock().expect("seen").clone();
    let t = |i: usize| seen[i].body["temperature"].as_f64().unwrap_or(1.0);
    assert!(t(1) < t(0), "retry temperature {} vs {}", t(1), t(0));
    // The answer's budget is sent.
    assert!(
        seen[0].body["max_tokens"].as_u64().is_some_and(|m| m > 0),
        "{}",
        seen[0].body
    );
}

#[tokio::test]
async fn a_slow_first_token_waits_for_first_token_timeout_and_no_longer() {
    let text = answer().to_string();
    // Thinking 0.6 s before the head, over the 0.2 s idle timeout: within the 3 s first
    // token timeout, it succeeds at once.
    let t = text.clone();
    let (url, _) = serve(move |_, _| {
        Reply::openai_stream(&[json!({"content": t})], "stop", Duration::ZERO)
            .after(Duration::from_millis(600))
    });
    let mut p = openai(&url, true);
    p.idle_timeout_s = 0.2;
    p.first_token_timeout_s = Some(3.0);
    let r = run(p).await;
    assert_eq!(r.outcome.status, RunStatus::Succeeded, "{:?}", messages(&r));
    assert_eq!(codes(&r).len(), 1, "{:?}", messages(&r));

    // Past it: E004, retried.
    let (url, _) = serve(move |_, n| {
        let r = Reply::openai_stream(&[json!({"content": text})], "stop", Duration::ZERO);
        if n == 0 {
            r.after(Duration::from_secs(3))
        } else {
            r
        }
    });
    let mut p = openai(&url, true);
    p.idle_timeout_s = 0.2;
    p.first_token_timeout_s = Some(0.5);
    let r = run(p).await;
    assert_eq!(r.outcome.status, RunStatus::Succeeded, "{:?}", messages(&r));
    assert_eq!(codes(&r)[0], [ErrorCode::E004], "{:?}", messages(&r));
}

#[tokio::test]
async fn reasoning_streamed_past_the_first_token_time_is_an_answer_coming_not_a_timeout() {
    // Ten reasoning deltas 0.1 s apart (1 s of thinking, past the 0.4 s first-token time,
    // each within the 0.3 s idle timeout), then the answer: the server was answering.
    let text = answer().to_string();
    let (url, seen) = serve(move |_, _| {
        let mut deltas: Vec<Value> = (0..10)
            .map(|i| json!({"reasoning_content": format!("step {i} of my thinking. ")}))
            .collect();
        deltas.push(json!({"content": text}));
        Reply::openai_stream(&deltas, "stop", Duration::from_millis(100))
    });
    let mut p = openai(&url, true);
    p.idle_timeout_s = 0.3;
    p.first_token_timeout_s = Some(0.4);
    let r = run(p).await;
    assert_eq!(r.outcome.status, RunStatus::Succeeded, "{:?}", messages(&r));
    assert_eq!(
        codes(&r),
        vec![Vec::<ErrorCode>::new()],
        "{:?}",
        messages(&r)
    );
    assert_eq!(seen.lock().expect("seen").len(), 1, "one call, no retry");
}

#[tokio::test]
async fn a_profile_timeout_replaces_the_plans() {
    // The plan's 120 s at the tests' time scale (×0.05) is 6 s; the profile's 2 s is
    // 0.1 s.
    let text = answer().to_string();
    let (url, _) = serve(move |_, _| {
        Reply::openai_stream(
            &[
                json!({"content": &text[..20]}),
                json!({"content": &text[20..]}),
            ],
            "stop",
            Duration::from_millis(200),
        )
    });
    let mut p = openai(&url, true);
    p.timeout_s = Some(2.0);
    let r = run(p).await;
    // A whole call of 0.1 s cannot take a 0.4 s answer: the profile's time holds.
    assert_eq!(codes(&r)[0], [ErrorCode::E004], "{:?}", messages(&r));
    assert!(
        messages(&r)[0].contains("within 0.10s"),
        "{:?}",
        messages(&r)
    );
}

/// A one-task plan whose agent may call `get_now` and `calculate_date`, with an agent
/// window of `window` tokens.
fn tool_plan(window: u64) -> String {
    json!({
        "plan_id": "TOOLS",
        "execution_mode": "Quick_Assessment",
        "agents": {"Researcher": {"tools": ["get_now", "file_reader"], "max_input_tokens": window}},
        "tasks": [{
            "task_id": "T1", "agent": "Researcher",
            "instruction": "Say what time it is in Paris.",
            "output_requirements": {"atom_type": "Note", "quality_threshold": "C", "max_atoms": 1}
        }]
    })
    .to_string()
}

fn note_answer() -> String {
    json!({"output": {"atoms": [{
        "asset_id": "NOTE_TIME_01", "atom_type": "Note", "confidence": 0.8,
        "content": {"note": "It is the afternoon in Paris."},
        "provenance": {"paper_location": "get_now"}}],
        "summary": "The time."}})
    .to_string()
}

fn tool_reply(calls: Value) -> Reply {
    Reply::openai_message(
        json!({"role": "assistant", "content": null, "tool_calls": calls}),
        "tool_calls",
    )
}

async fn run_tools(url: &str, window: u64, workspace: Option<&std::path::Path>) -> Ran {
    let mut c = config();
    if let Some(w) = workspace {
        c.workspace = w.to_path_buf();
    }
    let provider = std::sync::Arc::new(HttpProvider::new(openai(url, false)).expect("provider"));
    run_plan_with(&tool_plan(window), provider, c).await
}

fn answered(r: &Ran) -> Vec<plexus::model::event::ToolAnswered> {
    r.of(|e| match e {
        EngineEvent::ToolAnswered(a) => Some(a),
        _ => None,
    })
    .into_iter()
    .map(|(_, a)| a.clone())
    .collect()
}

/// The `tool` messages a request sends back: (tool_call_id, content).
fn tool_results(body: &Value) -> Vec<(String, String)> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap_or_default().to_string(),
                m["content"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn arguments_as_an_object_are_read_and_malformed_ones_are_said_exactly() {
    let (url, seen) = serve(|_, n| match n {
        // Arguments as a JSON object, not a string.
        0 => tool_reply(json!([{"id": "c1", "type": "function",
            "function": {"name": "get_now", "arguments": {"timezone": "Europe/Paris"}}}])),
        // Arguments that are not JSON.
        1 => tool_reply(json!([{"id": "c2", "type": "function",
            "function": {"name": "get_now", "arguments": "{timezone: Paris"}}])),
        _ => Reply::openai_text(&note_answer()),
    });
    let r = run_tools(&url, 32_000, None).await;
    assert_eq!(r.outcome.status, RunStatus::Succeeded, "{:?}", messages(&r));
    let a = answered(&r);
    assert_eq!(a.len(), 2, "{a:?}");
    assert!(!a[0].is_error, "{}", a[0].observation);
    assert!(
        a[0].observation.contains("Europe/Paris"),
        "{}",
        a[0].observation
    );
    assert!(a[1].is_error);
    assert!(
        a[1].observation.contains("not valid JSON")
            && a[1].observation.contains("{timezone: Paris"),
        "{}",
        a[1].observation
    );
    // The model was told so in the next request.
    let seen = seen.lock().expect("seen").clone();
    let back = tool_results(&seen[2].body);
    assert!(
        back.iter().any(|(_, c)| c.contains("not valid JSON")),
        "{back:?}"
    );
}

#[tokio::test]
async fn calls_without_ids_or_reusing_them_go_back_under_ids_of_their_own() {
    let (url, seen) = serve(|_, n| match n {
        // Two calls without ids in one reply.
        0 => tool_reply(json!([
            {"type": "function", "function": {"name": "get_now", "arguments": "{}"}},
            {"id": "", "type": "function", "function": {"name": "get_now", "arguments": "{\"timezone\": \"UTC\"}"}}])),
        // A server that numbers each reply's calls from 0 again.
        1 => tool_reply(json!([{"id": "call_0", "type": "function",
            "function": {"name": "get_now", "arguments": "{}"}}])),
        2 => tool_reply(json!([{"id": "call_0", "type": "function",
            "function": {"name": "get_now", "arguments": "{}"}}])),
        _ => Reply::openai_text(&note_answer()),
    });
    let r = run_tools(&url, 32_000, None).await;
    assert_eq!(r.outcome.status, RunStatus::Succeeded, "{:?}", messages(&r));
    let seen = seen.lock().expect("seen").clone();
    let last = &seen[seen.len() - 1].body;
    let ids: Vec<String> = tool_results(last).into_iter().map(|(id, _)| id).collect();
    assert_eq!(ids.len(), 4, "{last}");
    assert!(ids.iter().all(|i| !i.is_empty()), "{ids:?}");
    let distinct: std::collections::HashSet<&String> = ids.iter().collect();
    assert_eq!(distinct.len(), 4, "{ids:?}");
    // Each result answers a call the assistant message made under the same id.
    let called: Vec<String> = last["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["tool_calls"].as_array())
        .flatten()
        .filter_map(|c| c["id"].as_str().map(str::to_string))
        .collect();
    assert_eq!(called, ids);
}

#[tokio::test]
async fn a_legacy_function_call_is_read() {
    let (url, _) = serve(|_, n| match n {
        0 => Reply::openai_message(
            json!({"role": "assistant", "content": null,
                   "function_call": {"name": "get_now", "arguments": "{\"timezone\": \"Asia/Tokyo\"}"}}),
            "function_call",
        ),
        _ => Reply::openai_text(&note_answer()),
    });
    let r = run_tools(&url, 32_000, None).await;
    assert_eq!(r.outcome.status, RunStatus::Succeeded, "{:?}", messages(&r));
    let a = answered(&r);
    assert_eq!(a.len(), 1, "{a:?}");
    assert!(
        a[0].observation.contains("Asia/Tokyo"),
        "{}",
        a[0].observation
    );
}

#[tokio::test]
async fn five_reads_in_one_reply_are_held_to_the_window_together() {
    let ws = tempfile::tempdir().expect("workspace");
    // A file whose standard read is large against a 6,000-token window.
    let body: String = (0..600)
        .map(|i| {
            format!(
                "line {i}: the planner denoises trajectory {} again\n",
                i * 7
            )
        })
        .collect();
    std::fs::write(ws.path().join("big.txt"), body).expect("file");
    let (url, seen) = serve(|_, n| match n {
        0 => tool_reply(Value::Array(
            (0..5)
                .map(|i| {
                    json!({"id": format!("r{i}"), "type": "function",
                    "function": {"name": "file_reader", "arguments": "{\"path\": \"big.txt\"}"}})
                })
                .collect(),
        )),
        _ => Reply::openai_text(&note_answer()),
    });
    let r = run_tools(&url, 6_000, Some(ws.path())).await;
    let a = answered(&r);
    assert_eq!(a.len(), 5, "{:?}", messages(&r));
    let levels: Vec<_> = a.iter().map(|x| x.output_level).collect();
    assert!(
        levels.contains(&plexus::base::protocol::messages::OutputLevel::Brief),
        "the later reads are brief once the earlier ones fill the window: {levels:?}"
    );
    // Their sum fits the window: the next request was made, and the task did not end
    // on the window (E008).
    assert_eq!(r.outcome.status, RunStatus::Succeeded, "{:?}", messages(&r));
    assert_eq!(seen.lock().expect("seen").len(), 2);
}
