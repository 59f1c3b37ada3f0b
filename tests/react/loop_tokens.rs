//! Token counts are true in every view: a tool-using loop of five steps counts every
//! step's prompt and text in its invocation's row (so `show --json`'s totals per agent),
//! in the Run screen's agent table, and in the OpenTelemetry chat span; a loop whose last
//! step the provider failed says so.

use std::path::Path;

use serde_json::{json, Value};

use super::scripted_levels::final_answer;
use super::scripted_run::run_scripted;
use crate::common::bin::{output, plexus};
use plexus::dev::mock_server::script::Script;
use plexus::model::event::{EngineEvent, Envelope};

fn workspace(dir: &Path) {
    std::fs::create_dir_all(dir.join("notes")).expect("notes");
    for i in 0..4 {
        std::fs::write(
            dir.join(format!("notes/n{i}.md")),
            format!(
                "# Note {i}\n\n{}",
                "The planner denoises whole trajectories.\n".repeat(40)
            ),
        )
        .expect("note");
    }
    let plan = json!({"plan_id": "TOKENS", "execution_mode": "Quick_Assessment",
        "agents": {"Researcher": {"tools": ["file_reader"]}},
        "tasks": [{"task_id": "T", "agent": "Researcher", "instruction": "Read the four notes and say what they claim.",
            "output_requirements": {"atom_type": "Note", "quality_threshold": "C", "max_atoms": 1}}]});
    std::fs::write(dir.join("plan.json"), plan.to_string()).expect("plan");
}

/// Four steps that each read a note, then the answer: five requests.
fn five_steps() -> Script {
    let mut turns: Vec<Value> = (0..4)
        .map(|i| json!({"text": format!("I read note {i}."),
            "tool_calls": [{"name": "file_reader", "arguments": {"path": format!("notes/n{i}.md")}}]}))
        .collect();
    turns.push(json!({"text": final_answer()}));
    serde_json::from_value(json!({"turns": turns})).expect("script")
}

/// The run's `loop_finished` event.
fn loop_finished(events: &[EngineEvent]) -> plexus::base::loop_events::LoopFinished {
    events
        .iter()
        .find_map(|e| match e {
            EngineEvent::LoopFinished(f) => Some(f.clone()),
            _ => None,
        })
        .expect("loop_finished")
}

#[test]
fn a_five_step_loop_counts_every_step_in_show_the_agent_table_and_the_span() {
    let ran = run_scripted(&five_steps(), "openai", false, workspace);
    assert_eq!(ran.server.seen().len(), 5, "five requests sent");
    let finished = loop_finished(&ran.events);
    assert_eq!((finished.steps, finished.stop.as_str()), (5, "answer"));
    let started = ran
        .events
        .iter()
        .find_map(|e| match e {
            EngineEvent::InvocationStarted(s) => Some(s.prompt_tokens),
            _ => None,
        })
        .expect("invocation_started");
    // Each step resends the conversation: five prompts are far more than the first.
    assert!(
        finished.input_tokens > 4 * started,
        "{} vs {started}",
        finished.input_tokens
    );

    // `show --json`: the agent's totals are every step's.
    let dir = ran.dir.path();
    let show = output(plexus(dir).args(["--db", "s.db", "show", "latest", "--json"]));
    assert_eq!(show.code, Some(0), "{}", show.stderr);
    let v: Value = serde_json::from_str(&show.stdout).expect("show --json");
    let agent = v["tokens_per_agent"]
        .as_array()
        .expect("tokens_per_agent")
        .iter()
        .find(|a| a["agent"] == "Researcher")
        .cloned()
        .expect("the agent's row");
    assert_eq!(agent["prompt_tokens"], finished.input_tokens, "{agent}");
    assert_eq!(agent["output_tokens"], finished.output_tokens, "{agent}");

    // The Run screen's agent table, folded from the same log.
    let store = plexus::data::store::Store::open(&dir.join("s.db")).expect("db");
    let run = store.run("latest").expect("run").run_id;
    let envelopes: Vec<Envelope> =
        plexus::data::replay::log::ReplayLog::open(&dir.join("s.db"), &run)
            .expect("the log")
            .events(1, u64::MAX)
            .expect("events");
    let mut st = plexus::model::state::RunState::new();
    for env in &envelopes {
        plexus::model::state::reduce(&mut st, env);
    }
    let a = st
        .agents
        .iter()
        .find(|a| &*a.name == "Researcher")
        .expect("the agent in the table");
    assert_eq!(a.tokens_in, finished.input_tokens);
    assert_eq!(a.tokens_out, finished.output_tokens);

    // The chat span of the invocation.
    let spans = plexus::features::otel::spans_of(&run, &envelopes, Default::default());
    let input = spans
        .iter()
        .flat_map(|s| &s.attributes)
        .find(|a| a.key == "gen_ai.usage.input_tokens")
        .and_then(|a| a.value.as_ref()?.value.clone())
        .expect("a chat span with its input tokens");
    // The provider's own count when it reported one (summed over the steps), else ours.
    let reported = ran.events.iter().find_map(|e| match e {
        EngineEvent::InvocationFinished(f) => Some(f.provider_usage.map(|u| u.prompt_tokens)),
        _ => None,
    });
    let want = reported.flatten().unwrap_or(finished.input_tokens);
    assert!(
        want > 4 * started,
        "{want}: every step's prompt, not the first's"
    );
    assert_eq!(
        input,
        opentelemetry_proto::tonic::common::v1::any_value::Value::IntValue(want as i64)
    );
}

#[test]
fn a_loop_whose_last_step_failed_says_so() {
    // The second step's reply is refused by the server (HTTP 400: not retried).
    let script: Script = serde_json::from_value(json!({"turns": [
        {"text": "I read note 0.", "tool_calls": [{"name": "file_reader", "arguments": {"path": "notes/n0.md"}}]},
        {"status": 400, "text": "{\"error\": {\"message\": \"refused\"}}"}
    ]}))
    .expect("script");
    let ran = super::scripted_run::run_scripted_to(&script, "openai", false, workspace, 3);
    let finished = loop_finished(&ran.events);
    assert_eq!(finished.stop, "step_failed", "{finished:?}");
    assert_eq!(finished.steps, 2);
}
