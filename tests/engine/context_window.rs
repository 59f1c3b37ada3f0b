//! The window is shared out from what the prompt really holds: an 8,000-token agent gets
//! a small file whole (the protocol's fixed 5,000 + 3,000 reserves left it nothing), and
//! data under a fifth of the window goes whole.

use crate::common;

use common::{quick_sim, run_plan, test_config, Ran};
use plexus::model::event::{ContextPlanned, EngineEvent};
use serde_json::{json, Value};

fn planned(r: &Ran, task: &str) -> ContextPlanned {
    r.of(|e| match e {
        EngineEvent::ContextPlanned(c) => Some(c),
        _ => None,
    })
    .into_iter()
    .find(|(t, _)| t.as_deref() == Some(task))
    .map(|(_, c)| c.clone())
    .expect("a context_planned event")
}

/// Runs one task of agent `Reader` (no role of the protocol's tables) with `agent`'s
/// settings over the workspace file `name`.
async fn run_reader(agent: Value, name: &str, text: &str) -> Ran {
    let w = tempfile::tempdir().expect("tempdir");
    let path = w.path().join(name);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("dirs");
    std::fs::write(&path, text).expect("file");
    let plan = json!({"plan_id": "P", "execution_mode": "Deep_Internalization",
        "agents": {"Reader": agent},
        "tasks": [{"task_id": "A", "agent": "Reader", "instruction": "Summarise the notes in three claims.",
            "data_references": [{"ref_type": "file", "path": name}],
            "output_requirements": {"quality_threshold": "C", "max_atoms": 2}}]})
    .to_string();
    let mut cfg = test_config();
    cfg.workspace = w.path().to_path_buf();
    run_plan(&plan, quick_sim(), cfg).await
}

/// Numbered notes up to about `tokens` tokens (counted as sent), so the last one shows
/// the text is whole.
fn notes(tokens: u64) -> String {
    let counter = plexus::base::tokens::TokenCounter::default();
    let one = "Note NUM: the guidance weight of the sampler was tuned by hand on the validation scenes.\n";
    let per = counter.count(&format!("{one}{one}")) / 2;
    let mut text: String = (0..tokens / per)
        .map(|i| one.replace("NUM", &i.to_string()))
        .collect();
    while counter.count(&text) > tokens {
        let cut = text.trim_end().rfind('\n').map_or(0, |i| i + 1);
        text.truncate(cut);
    }
    text
}

#[tokio::test]
async fn an_8k_agent_receives_a_633_token_file_whole() {
    let mut text = String::from("# Small\n\n");
    text.push_str(&notes(620));
    let tokens = plexus::base::tokens::TokenCounter::default().count(&text);
    assert!((600..=660).contains(&tokens), "{tokens} tokens");
    let last = text.lines().last().expect("a line").to_string();
    let r = run_reader(
        json!({"max_input_tokens": 8_000, "max_tokens": 1_000}),
        "docs/small.md",
        &text,
    )
    .await;
    let c = planned(&r, "A");
    // The reserves are what the prompt holds (tens of tokens), not 8,000.
    assert!(c.effective_data_limit > 6_000, "{}", c.effective_data_limit);
    assert_eq!(c.inputs[0].action, "keep", "{:?}", c.inputs);
    let input = r.first_input("A");
    assert_eq!(input["transfer_mode"], "full", "{input}");
    assert!(
        input.to_string().contains(&last),
        "the last note is sent: {input}"
    );
}

#[tokio::test]
async fn nineteen_percent_of_a_100k_window_goes_whole() {
    let text = notes(18_900);
    let tokens = plexus::base::tokens::TokenCounter::default().count(&text);
    assert!((18_500..20_000).contains(&tokens), "{tokens} tokens");
    let last = text.lines().last().expect("a line").to_string();
    let r = run_reader(json!({"max_input_tokens": 100_000}), "notes.txt", &text).await;
    let c = planned(&r, "A");
    let rule = serde_json::to_value(c.inputs[0].rule).expect("serialises");
    assert_eq!(rule, "window", "{:?}", c.inputs);
    let input = r.first_input("A");
    assert_eq!(input["transfer_mode"], "full", "{input}");
    assert!(input.to_string().contains(&last), "the last note is sent");
}

#[tokio::test]
async fn a_fifth_of_the_window_or_more_goes_by_the_size_bands() {
    // 25% of a 100K window: by reference, as the 10K–50K band says.
    let text = notes(25_000);
    let r = run_reader(json!({"max_input_tokens": 100_000}), "notes.txt", &text).await;
    let input = r.first_input("A");
    assert_eq!(input["transfer_mode"], "reference", "{input}");
}

#[tokio::test]
async fn the_window_keeps_room_for_the_fetch_tool_an_input_by_reference_brings() {
    use plexus::run::tools::fetch_reference::{FetchReference, Fetchable};
    use plexus::run::tools::ToolRegistry;
    use std::sync::Arc;
    // 20,000 tokens on a 40,000-token window: over a fifth of it, so by reference, and
    // the task is offered `fetch_reference` although its plan lists no tool.
    let r = run_reader(
        json!({"max_input_tokens": 40_000, "max_tokens": 1_000}),
        "docs/big.md",
        &notes(20_000),
    )
    .await;
    let c = planned(&r, "A");
    assert_eq!(c.inputs[0].name, "file:docs/big.md");
    assert_eq!(json!(c.inputs[0].mode), "reference", "{:?}", c.inputs);
    // The schema the request carries, counted as the prompt counts it.
    let mut tools = ToolRegistry::empty();
    let counter = plexus::base::tokens::TokenCounter::default();
    let sent = vec![Fetchable {
        ref_id: "file:docs/big.md".into(),
        data: Arc::new(Value::Null),
    }];
    tools.register(Arc::new(FetchReference::new(Arc::from(sent), counter)));
    let schema = counter.count(&serde_json::to_string(&tools.definitions()).expect("json"));
    assert!(schema > 100, "{schema}");
    let part = |k: &str| c.report.total_input_data[k].tokens;
    let room = 40_000 - part("system_prompt") - part("task_instructions") - schema;
    assert_eq!(
        c.effective_data_limit,
        (room as f64 * 0.9).floor() as u64,
        "the data's limit leaves the tool's {schema} tokens"
    );
}
