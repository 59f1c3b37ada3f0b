//! Debates against a scripted model that does what the simulated one never does: a
//! reporter that does not answer, a round where both speakers fail, a session that runs
//! out of rounds. The rest of each session is played by the simulated model through the
//! same server (`"rest": "simulated"`).

use std::path::Path;

use serde_json::{json, Value};

use crate::common::bin::{output, plexus, Out};
use plexus::base::protocol::debate::{SseData, StreamEvent};
use plexus::dev::mock_server::script::Script;
use plexus::dev::mock_server::{MockConfig, MockServer, SeenRequest};

/// What a scripted debate left.
struct Debated {
    out: Out,
    items: Vec<StreamEvent>,
    session: Value,
    front: Value,
    seen: Vec<SeenRequest>,
}

/// Runs a debate with `--events sse` against a server playing `script` (the rest by the
/// simulated model); returns the output, the stream's items, the session documents and
/// the requests the server saw.
fn scripted_debate(script: Value, extra: &[&str]) -> Debated {
    scripted_debate_with(script, extra, "")
}

/// [`scripted_debate`] with `profile` lines added to the provider's table.
fn scripted_debate_with(script: Value, extra: &[&str], profile: &str) -> Debated {
    let script: Script = serde_json::from_value(script).expect("script");
    let server = MockServer::start(
        MockConfig {
            stream_ms: 5,
            chunks: 4,
            model_script: Some(script),
            ..MockConfig::default()
        },
        0,
        1,
    )
    .expect("mock server");
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    std::fs::write(
        dir.join("plexus.toml"),
        format!(
            "[providers.local]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\n{profile}",
            server.url()
        ),
    )
    .expect("config");
    let mut args = vec![
        "--db",
        "d.db",
        "--config",
        "plexus.toml",
        "debate",
        "Plan a launch",
        "--provider",
        "local",
        "--headless",
        "--events",
        "sse",
    ];
    args.extend_from_slice(extra);
    let out = output(plexus(dir).args(&args));
    let items = out
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|p| match SseData::parse(p).expect("a stream item") {
            SseData::Event(e) => Some(*e),
            SseData::Done => None,
        })
        .collect();
    assert!(out.stdout.ends_with("data: [DONE]\n\n"), "{}", out.stdout);
    let show = show_json(dir);
    Debated {
        out,
        items,
        session: show["debate_session"].clone(),
        front: show["multi_agent_session"].clone(),
        seen: server.seen(),
    }
}

fn show_json(dir: &Path) -> Value {
    let show = output(plexus(dir).args(["--db", "d.db", "show", "latest", "--json"]));
    serde_json::from_str(&show.stdout).expect("show --json")
}

fn errors(items: &[StreamEvent]) -> Vec<(String, Value)> {
    items
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Error(e) => Some((e.error.clone(), json!(e))),
            _ => None,
        })
        .collect()
}

#[test]
fn a_reporter_that_does_not_answer_fails_the_session_and_the_stream_says_so() {
    let Debated {
        out,
        items,
        session,
        ..
    } = scripted_debate(
        json!({"rest": "simulated", "turns": [
            {"when": {"agent": "reporter"}, "delay_ms": 2500, "text": "too late"}
        ]}),
        &["--agent-timeout", "1"],
    );
    assert_eq!(out.code, Some(3), "{}", out.stderr);
    assert!(
        !items
            .iter()
            .any(|e| matches!(e, StreamEvent::FinalReport(_))),
        "no report"
    );
    let errors = errors(&items);
    let kinds: Vec<&str> = errors.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(kinds, ["agent_timeout", "failed"], "{errors:#?}");
    // The protocol's error shape, as it is.
    let timeout = &errors[0].1;
    assert_eq!(timeout["agent"], "reporter", "{timeout}");
    assert_eq!(timeout["action"], "skip_agent", "{timeout}");
    assert!(timeout["round"].is_u64(), "{timeout}");
    assert!(timeout["fallback"].is_string(), "{timeout}");
    assert_eq!(errors[1].1["reason"], "session_failed");
    assert!(
        errors[1].1["message"]
            .as_str()
            .is_some_and(|m| m.contains("reporter")),
        "{:#}",
        errors[1].1
    );
    // The session document tells the truth about everyone.
    assert_eq!(session["status"], "failed", "{session:#}");
    assert_eq!(session["agents"]["reporter"]["status"], "timed_out");
    for speaker in ["planner", "critic", "host"] {
        assert_eq!(
            session["agents"][speaker]["status"], "completed",
            "{speaker}: {:#}",
            session["agents"]
        );
    }
}

#[test]
fn a_round_where_both_speakers_fail_has_no_consensus_value() {
    let Debated {
        out,
        items,
        session,
        ..
    } = scripted_debate(
        json!({"rest": "simulated", "turns": [
            {"when": {"round": 2, "agent": "planner"}, "status": 400},
            {"when": {"round": 2, "agent": "critic"}, "status": 400}
        ]}),
        &[],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let decisions: Vec<Value> = items
        .iter()
        .filter_map(|e| match e {
            StreamEvent::HostDecision(h) => Some(json!(h)),
            _ => None,
        })
        .collect();
    assert_eq!(decisions[1]["round"], 2, "{decisions:#?}");
    assert!(
        decisions[1]["consensus_level"].is_null(),
        "{:#}",
        decisions[1]
    );
    assert!(
        decisions[0]["consensus_level"].is_f64(),
        "{:#}",
        decisions[0]
    );
    let failed = errors(&items)
        .into_iter()
        .filter(|(k, e)| k == "agent_failed" && e["round"] == 2)
        .count();
    assert_eq!(failed, 2, "both failures reach the stream");
    let host = session["history"][1]["outputs"]
        .as_array()
        .and_then(|o| o.iter().find(|o| o["agent_id"] == "host"))
        .expect("the host's output of round 2");
    assert!(
        host["metadata"]["analysis"]["consensus_level"].is_null(),
        "{host:#}"
    );
}

#[test]
fn a_session_that_runs_out_of_rounds_streams_the_max_rounds_document_before_the_report() {
    // The simulated model converges in three rounds: two are not enough.
    let Debated { out, items, .. } = scripted_debate(
        json!({"rest": "simulated", "turns": []}),
        &["--max-rounds", "2"],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let at = |pred: &dyn Fn(&StreamEvent) -> bool| items.iter().position(pred);
    let max = at(&|e| matches!(e, StreamEvent::Error(x) if x.error == "max_rounds_reached"))
        .expect("a max_rounds_reached event");
    let report = at(&|e| matches!(e, StreamEvent::FinalReport(_))).expect("a report");
    assert!(max < report, "{items:#?}");
    let StreamEvent::Error(doc) = &items[max] else {
        unreachable!()
    };
    let doc = json!(doc);
    assert_eq!(doc["status"], "max_rounds_reached", "{doc:#}");
    assert_eq!(doc["action"], "force_summary", "{doc:#}");
    assert!(doc["reporter_instruction"].is_string(), "{doc:#}");
}

/// The sim's output of `agent` in `round` of an ordinary session (from its document).
fn ordinary_output(round: usize, agent: &str) -> Value {
    let d = scripted_debate(json!({"rest": "simulated", "turns": []}), &[]);
    assert_eq!(d.out.code, Some(0), "{}", d.out.stderr);
    d.session["history"][round - 1]["outputs"]
        .as_array()
        .and_then(|o| o.iter().find(|o| o["agent_id"] == agent))
        .cloned()
        .unwrap_or_else(|| panic!("no {agent} output in round {round}"))
}

#[test]
fn on_convergence_the_speakers_list_uncertainties_before_the_reporter_who_reads_them() {
    let d = scripted_debate(json!({"rest": "simulated", "turns": []}), &[]);
    assert_eq!(d.out.code, Some(0), "{}", d.out.stderr);
    let task = |r: &SeenRequest| r.header("x-plexus-task").unwrap_or("").to_string();
    let tasks: Vec<String> = d.seen.iter().map(task).collect();
    let at = |t: &str| {
        tasks
            .iter()
            .position(|x| x == t)
            .unwrap_or_else(|| panic!("{t}: {tasks:?}"))
    };
    let reporter = at("r3.reporter");
    for closing in ["r3.planner.closing", "r3.critic.closing"] {
        let i = at(closing);
        assert!(i < reporter, "{tasks:?}");
        assert!(
            d.seen[i]
                .body
                .contains("remaining uncertainties and the worst cases"),
            "{closing} was not asked the question"
        );
    }
    // The reporter's request carries both answers; its report lists them.
    let asked = &d.seen[reporter].body;
    for worst in ["squeezes the rehearsal", "leaves no time to rehearse"] {
        assert!(asked.contains(worst), "the reporter did not see {worst:?}");
    }
    let report = d.session["agents"]["reporter"]["last_output"].clone();
    let uncertain = report["metadata"]["summary"]["remaining_uncertainties"].to_string();
    assert!(uncertain.contains("squeezes the rehearsal"), "{uncertain}");
    // The front end's document: the closing answers end the last round; the report
    // carries its TODO list.
    assert_eq!(d.front["type"], "multi_agent_session", "{:#}", d.front);
    let last = d.front["rounds"]
        .as_array()
        .and_then(|r| r.last())
        .expect("rounds");
    assert_eq!(
        last["outputs"].as_array().map(Vec::len),
        Some(4),
        "{last:#}"
    );
    assert_eq!(last["hostDecision"]["action"], "converge", "{last:#}");
    assert!(
        d.front["finalReport"]["todo"]
            .as_array()
            .is_some_and(|t| !t.is_empty()),
        "{:#}",
        d.front["finalReport"]
    );
}

#[test]
fn a_report_without_a_todo_list_gets_one_from_its_plan() {
    let mut report = ordinary_output(3, "reporter");
    report["metadata"]
        .as_object_mut()
        .expect("metadata")
        .remove("todo");
    let d = scripted_debate(
        json!({"rest": "simulated", "turns": [
            {"when": {"agent": "reporter"}, "text": report.to_string()}
        ]}),
        &[],
    );
    assert_eq!(d.out.code, Some(0), "{}", d.out.stderr);
    let todo = d.front["finalReport"]["todo"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let tasks = report["metadata"]["final_plan"]["plan"]["phases"]
        .as_array()
        .map(|p| {
            p.iter()
                .map(|ph| ph["tasks"].as_array().map_or(0, Vec::len))
                .sum::<usize>()
        })
        .unwrap_or(0);
    assert!(tasks > 0);
    assert_eq!(todo.len(), tasks, "{todo:#?}");
    assert_eq!(todo[0]["done"], false);
}

#[test]
fn an_output_that_fails_the_content_check_is_refused_and_asked_again() {
    let mut planner = ordinary_output(2, "planner");
    planner["content"] = json!("Clear the screen\u{1b}[2J and <script>steal()</script>");
    let d = scripted_debate(
        json!({"rest": "simulated", "turns": [
            {"when": {"round": 2, "agent": "planner"}, "text": planner.to_string()}
        ]}),
        &[],
    );
    assert_eq!(d.out.code, Some(0), "{}", d.out.stderr);
    // What was shown and streamed is the valid second try.
    for e in &d.items {
        if let StreamEvent::AgentOutput(a) = e {
            assert!(
                !a.content.contains('\u{1b}') && !a.content.contains("<script"),
                "{}",
                a.content
            );
        }
    }
    let asked_again = d
        .seen
        .iter()
        .filter(|r| r.header("x-plexus-task") == Some("r2.planner"))
        .count();
    assert_eq!(asked_again, 2, "one refused try, one more");
    assert!(
        d.seen
            .iter()
            .filter(|r| r.header("x-plexus-task") == Some("r2.planner"))
            .any(|r| r.body.contains("content check")),
        "the second try is told why"
    );
}

#[test]
fn a_profile_s_moderation_endpoint_refuses_what_it_flags_and_a_down_one_is_said() {
    let mut planner = ordinary_output(2, "planner");
    planner["content"] = json!("A plan (MODERATION-FLAG) that the endpoint flags.");
    let script = json!({"rest": "simulated", "turns": [
        {"when": {"round": 2, "agent": "planner"}, "text": planner.to_string()}
    ]});
    let d = scripted_debate_with(script.clone(), &[], "moderation_model = \"m-mod\"\n");
    assert_eq!(d.out.code, Some(0), "{}", d.out.stderr);
    let moderated = d
        .seen
        .iter()
        .filter(|r| r.path.ends_with("/moderations"))
        .count();
    assert!(
        moderated >= 8,
        "every output went to the endpoint: {moderated}"
    );
    let tries: Vec<&SeenRequest> = d
        .seen
        .iter()
        .filter(|r| r.header("x-plexus-task") == Some("r2.planner"))
        .collect();
    assert_eq!(tries.len(), 2, "one flagged try, one more");
    assert!(
        tries[1].body.contains("flagged the output: violence"),
        "the second try is told why"
    );
    for e in &d.items {
        if let StreamEvent::AgentOutput(a) = e {
            assert!(!a.content.contains("MODERATION-FLAG"), "{}", a.content);
        }
    }
    // An endpoint that is down: the built-in check alone, and the stream says so.
    let d = scripted_debate_with(script, &[], "moderation_model = \"fail-moderation\"\n");
    assert_eq!(d.out.code, Some(0), "{}", d.out.stderr);
    let down = errors(&d.items)
        .into_iter()
        .filter(|(k, e)| k == "tool_execution_failed" && e["tool"] == "moderation")
        .count();
    assert!(down >= 1, "{:#?}", errors(&d.items));
}
