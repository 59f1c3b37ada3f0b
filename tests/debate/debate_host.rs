//! The host's rules driven end to end with scripted agents: each branch (converge,
//! continue, force opposition, stubborn agent, early stop, max rounds, agent timeout,
//! tool failure, invalid output, stop) runs a real session into a database, and the
//! session folded from the stored log is checked against the protocol's session shape.
//!
//! Similarity is scripted too: a position's conclusion reads `pos X Y`, and the test
//! embedder turns it into the vector (X, Y), so two positions are exactly as similar as
//! the test says.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use plexus::base::protocol::debate::{AgentStatus, HostAction, SessionStatus};
use plexus::base::protocol::debate_spec::DebateSpec;
use plexus::base::protocol::debate_turn::DebateTurn;
use plexus::base::protocol::AgentRequest;
use plexus::cli::launch::debate::start_debate;
use plexus::data::provider::http::redact::TextRedactor;
use plexus::data::provider::{ChunkSink, Provider, ProviderError, ProviderFuture, ProviderOutput};
use plexus::data::store::Store;
use plexus::features::debate::replay::load_events;
use plexus::features::debate::similarity::{EmbedError, EmbedFuture, Embedder, PositionComparer};
use plexus::model::event::{EngineEvent, Envelope, RunStatus};
use plexus::model::state::debate::DebateState;
use plexus::run::engine::Control;
use serde_json::{json, Value};

/// One scripted answer.
#[derive(Clone)]
enum Say {
    Text(String),
    /// Never answers (the agent's timeout cuts it).
    Hang,
    /// A transient provider failure (a 503 that asks for a 10 ms wait).
    Busy,
    /// A permanent provider failure (a 400).
    Refused,
}

/// Answers each task's tries from a script; records every request.
#[derive(Default)]
struct Scripted {
    script: HashMap<String, Vec<Say>>,
    /// Time each answer takes.
    delay: Duration,
    seen: Mutex<Vec<AgentRequest>>,
    /// The key it lends to whoever decodes its answers (as an HTTP provider does).
    secret: Option<TextRedactor>,
}

impl Scripted {
    fn turn(&self, task: &str) -> Option<DebateTurn> {
        let seen = self.seen.lock().expect("test step");
        seen.iter()
            .rev()
            .find(|r| r.task_id == task)
            .and_then(DebateTurn::of)
    }
}

impl Provider for Scripted {
    fn name(&self) -> String {
        "scripted".into()
    }

    fn secret_redactor(&self) -> Option<&TextRedactor> {
        self.secret.as_ref()
    }

    fn invoke<'a>(
        &'a self,
        request: Arc<AgentRequest>,
        attempt: u32,
        sink: &'a mut dyn ChunkSink,
    ) -> ProviderFuture<'a> {
        self.seen
            .lock()
            .expect("test step")
            .push((*request).clone());
        let say = self
            .script
            .get(&request.task_id)
            .and_then(|v| v.get(attempt as usize - 1).or(v.last()))
            .cloned();
        let delay = self.delay;
        Box::pin(async move {
            tokio::time::sleep(delay).await;
            match say {
                Some(Say::Text(t)) => {
                    sink.chunk(&t);
                    Ok(ProviderOutput::default())
                }
                Some(Say::Busy) => Err(ProviderError::Transient {
                    message: "HTTP 503 (scripted)".into(),
                    retry_after_ms: Some(10),
                }),
                Some(Say::Refused) => Err(ProviderError::Permanent(
                    "HTTP 400 Bad Request (scripted): the request does not fit the model".into(),
                )),
                Some(Say::Hang) => {
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                    Ok(ProviderOutput::default())
                }
                None => Err(ProviderError::Permanent(format!(
                    "no script for {}",
                    request.task_id
                ))),
            }
        })
    }
}

/// Embeds `pos X Y Z` (the first line) as (X, Y, Z).
struct VectorEmbedder {
    fail: bool,
}

impl Embedder for VectorEmbedder {
    fn name(&self) -> String {
        "scripted-vectors".into()
    }

    fn embed<'a>(&'a self, texts: &'a [String]) -> EmbedFuture<'a> {
        let out = if self.fail {
            Err(EmbedError("embedding endpoint answered 500".into()))
        } else {
            Ok(texts
                .iter()
                .map(|t| {
                    let w: Vec<f32> = t
                        .lines()
                        .next()
                        .unwrap_or_default()
                        .split_whitespace()
                        .skip(1)
                        .filter_map(|x| x.parse().ok())
                        .collect();
                    (0..3).map(|i| w.get(i).copied().unwrap_or(0.0)).collect()
                })
                .collect())
        };
        Box::pin(std::future::ready(out))
    }
}

/// A position whose cosine to (1, 0, 0) is `c`, turned by `phi` degrees around that
/// axis (so an agent can move without changing how close it is to the planner).
fn at_turned(c: f64, phi: f64) -> String {
    let s = (1.0 - c * c).max(0.0).sqrt();
    let phi = phi.to_radians();
    format!("pos {c:.6} {:.6} {:.6}", s * phi.cos(), s * phi.sin())
}

/// A position whose cosine to (1, 0, 0) is `c`.
fn at(c: f64) -> String {
    at_turned(c, 0.0)
}

fn position(conclusion: &str, reason: &str, confidence: f64) -> Value {
    json!({"conclusion": conclusion, "key_reasons": [reason], "assumptions": ["scripted"], "confidence": confidence})
}

fn planner(round: u32, conclusion: &str) -> Say {
    Say::Text(
        json!({
            "agent_id": "planner", "round": round, "output_type": "plan",
            "content": format!("plan of round {round}"),
            "metadata": {
                "position": position(conclusion, &format!("planner reason {round}"), 0.8),
                "plan": {"title": "T", "goal": "G", "phases": [{"phase_name": "P1", "duration": "1 week",
                          "tasks": [{"title": "t", "estimated_hours": 3, "deadline": "2026-12-01", "tags": []}]}],
                         "total_estimated_hours": 3}
            },
            "timestamp": "2026-11-27T10:00:00Z"
        })
        .to_string(),
    )
}

fn critic(round: u32, conclusion: &str) -> Say {
    Say::Text(
        json!({
            "agent_id": "critic", "round": round, "output_type": "critique",
            "content": format!("critique of round {round}"),
            "metadata": {
                "position": position(conclusion, &format!("critic reason {round}"), 0.7),
                "critique": {
                    "target_agent": "planner", "target_round": round,
                    "risks": [{"risk": "writing lags", "severity": "high", "impact": "below 6.5"}],
                    "suggestions": [{"issue": "too little writing", "solution": "two timed essays a week", "priority": "high"},
                                    {"issue": "mock tests too rare", "solution": "one a week", "priority": "medium"}],
                    "validity_check": {"feasible": true, "realistic": true, "complete": false}
                }
            },
            "timestamp": "2026-11-27T10:01:00Z"
        })
        .to_string(),
    )
}

fn reporter(round: u32) -> Say {
    Say::Text(
        json!({
            "agent_id": "reporter", "round": round, "output_type": "report",
            "content": "# Final plan",
            "metadata": {
                "position": position("final", "agreed", 0.9),
                "final_plan": {"title": "T", "goal": "G", "consensus_level": "high",
                               "participating_agents": ["planner", "critic"], "rounds": round,
                               "plan": {"phases": [], "total_estimated_hours": 0}},
                "summary": {"key_agreements": ["a"], "resolved_concerns": [], "remaining_uncertainties": []}
            },
            "timestamp": "2026-11-27T10:02:00Z"
        })
        .to_string(),
    )
}

/// A script: per round (planner conclusion, critic conclusion); the reporter after
/// `report_round`.
fn script(rounds: &[(String, String)], report_round: u32) -> HashMap<String, Vec<Say>> {
    let mut m = HashMap::new();
    for (i, (p, c)) in rounds.iter().enumerate() {
        let r = i as u32 + 1;
        m.insert(format!("r{r}.planner"), vec![planner(r, p)]);
        m.insert(format!("r{r}.critic"), vec![critic(r, c)]);
    }
    m.insert(
        format!("r{report_round}.reporter"),
        vec![reporter(report_round)],
    );
    m
}

struct Outcome {
    state: DebateState,
    events: Vec<Envelope>,
    status: RunStatus,
    provider: Arc<Scripted>,
}

async fn run_with(
    script: HashMap<String, Vec<Say>>,
    spec: DebateSpec,
    fail_embedding: bool,
    cancel_after: Option<Duration>,
) -> Outcome {
    run_slow(script, spec, fail_embedding, cancel_after, Duration::ZERO).await
}

async fn run_slow(
    script: HashMap<String, Vec<Say>>,
    spec: DebateSpec,
    fail_embedding: bool,
    cancel_after: Option<Duration>,
    delay: Duration,
) -> Outcome {
    let provider = Scripted {
        script,
        delay,
        ..Scripted::default()
    };
    run_on(provider, spec, fail_embedding, cancel_after).await
}

async fn run_on(
    provider: Scripted,
    spec: DebateSpec,
    fail_embedding: bool,
    cancel_after: Option<Duration>,
) -> Outcome {
    let dir = tempfile::tempdir().expect("test step");
    let db = dir.path().join("d.db");
    drop(plexus::data::store::open_connection(&db).expect("test step"));
    let provider = Arc::new(provider);
    let comparer = Arc::new(PositionComparer::new(Arc::new(VectorEmbedder {
        fail: fail_embedding,
    })));
    let now = json!({"now": "2026-11-27T10:00:00", "timezone": "UTC", "weekday": "Friday",
                     "date": "2026-11-27", "datetime": "2026-11-27T10:00:00+00:00"});
    let started = start_debate(&db, spec, provider.clone(), comparer, None, now).expect("starts");
    let run_id = started.run_id.clone();
    if let Some(after) = cancel_after {
        let control = started.handle.control.clone();
        tokio::spawn(async move {
            tokio::time::sleep(after).await;
            let _ = control.send(Control::Cancel("test stop".into()));
        });
    }
    let status = started.finish().await.expect("the session ends");
    let store = Store::open(&db).expect("test step");
    let events = load_events(&store, &run_id).expect("test step");
    let stored = store.run(&run_id).expect("test step");
    assert_eq!(
        stored.status,
        status.as_str(),
        "the run row has the final status"
    );
    Outcome {
        state: DebateState::from_events(&events),
        events,
        status,
        provider,
    }
}

fn spec(max_rounds: u32) -> DebateSpec {
    let mut s = DebateSpec::new("帮我制定IELTS备考计划");
    s.max_rounds = max_rounds;
    s.agent_timeout_ms = 400;
    // Retries of transient failures without their real waits.
    s.retry_delay_div = 1000;
    s
}

fn actions(s: &DebateState) -> Vec<HostAction> {
    s.rounds
        .iter()
        .filter_map(|r| r.decision.as_ref().map(|d| d.action.clone()))
        .collect()
}

fn debate_errors(events: &[Envelope]) -> Vec<Value> {
    events
        .iter()
        .filter_map(|e| match &e.event {
            EngineEvent::DebateError(d) => Some(d.error.clone()),
            _ => None,
        })
        .collect()
}

/// The stored session has every field of the protocol's session state, consistent with
/// what happened.
fn check_session_shape(o: &Outcome, status: SessionStatus, rounds: u32) {
    let s = o.state.session_state();
    let v = serde_json::to_value(&s).expect("test step");
    for key in [
        "session_id",
        "user_query",
        "mode",
        "status",
        "current_round",
        "max_rounds",
        "agents",
        "history",
        "consensus_trend",
        "created_at",
        "updated_at",
    ] {
        assert!(v.get(key).is_some(), "session state lacks {key}: {v}");
    }
    assert_eq!(s.mode, "multi_agent");
    assert_eq!(s.user_query, "帮我制定IELTS备考计划");
    assert_eq!(s.status, status);
    assert_eq!(s.current_round, rounds);
    assert_eq!(s.history.len() as u32, rounds);
    assert_eq!(
        s.consensus_trend.len() as u32,
        rounds,
        "one consensus per round"
    );
    for agent in ["planner", "critic", "host", "reporter"] {
        assert!(s.agents.contains_key(agent), "{agent} missing: {v}");
    }
    assert!(chrono::DateTime::parse_from_rfc3339(&s.created_at).is_ok());
    assert!(chrono::DateTime::parse_from_rfc3339(&s.updated_at).is_ok());
    for r in &s.history {
        let agents: Vec<&str> = r.outputs.iter().map(|o| o.agent_id.as_str()).collect();
        assert!(
            agents.contains(&"host"),
            "round {} has the host's output: {agents:?}",
            r.round
        );
        for out in &r.outputs {
            let p = out
                .metadata
                .get("position")
                .expect("every output has a position");
            assert!(p.get("conclusion").is_some() && p.get("confidence").is_some());
            if out.agent_id.as_str() != "reporter" {
                assert!(
                    p.get("changes_from_last_round").is_some(),
                    "{}'s position says what changed: {p}",
                    out.agent_id
                );
            }
        }
    }
}

#[tokio::test]
async fn high_similarity_converges_and_the_reporter_reports() {
    let o = run_with(script(&[(at(1.0), at(0.95))], 1), spec(5), false, None).await;
    assert_eq!(actions(&o.state), vec![HostAction::Converge]);
    assert_eq!(o.state.consensus_trend, vec![0.95]);
    assert_eq!(o.status, RunStatus::Succeeded);
    assert!(o.state.report.is_some(), "the reporter reported");
    let s = o.state.session_state();
    assert_eq!(s.agents["reporter"].status, AgentStatus::Completed);
    let rep = o
        .provider
        .turn("r1.reporter")
        .expect("the reporter was asked");
    assert_eq!(rep.ending.as_deref(), Some("converged"));
    assert_eq!(rep.history.len(), 1);
    check_session_shape(&o, SessionStatus::Converged, 1);
}

#[tokio::test]
async fn round_one_runs_planner_and_critic_in_parallel() {
    let o = run_slow(
        script(&[(at(1.0), at(0.95))], 1),
        spec(5),
        false,
        None,
        Duration::from_millis(100),
    )
    .await;
    let starts: Vec<(u64, String)> = o
        .events
        .iter()
        .filter(|e| matches!(e.event, EngineEvent::DebateTurnStarted(_)))
        .map(|e| (e.seq, e.task_id.as_deref().unwrap_or_default().to_string()))
        .collect();
    let first_output = o
        .events
        .iter()
        .find(|e| matches!(e.event, EngineEvent::DebateOutput(_)))
        .map(|e| e.seq)
        .expect("test step");
    // Both round-one turns started before either ended.
    assert!(
        starts
            .iter()
            .filter(|(seq, t)| t.starts_with("r1.") && *seq < first_output)
            .count()
            == 2,
        "{starts:?}"
    );
}

#[tokio::test]
async fn medium_similarity_continues_with_the_points_to_address() {
    let o = run_with(
        script(&[(at(1.0), at(0.8)), (at(1.0), at(0.95))], 2),
        spec(5),
        false,
        None,
    )
    .await;
    assert_eq!(
        actions(&o.state),
        vec![HostAction::Continue, HostAction::Converge]
    );
    let d = o.state.rounds[0].decision.as_ref().expect("test step");
    assert_eq!(
        d.must_address,
        vec!["too little writing", "mock tests too rare", "writing lags"]
    );
    let host = o
        .provider
        .turn("r2.planner")
        .expect("test step")
        .host
        .expect("instructions");
    assert_eq!(host.action, "continue");
    assert_eq!(host.must_address, d.must_address);
    assert_eq!(d.directive["instructions"]["rounds_remaining"], 4);
    // The critic of round 2 reads the planner's round-2 plan.
    let critic = o.provider.turn("r2.critic").expect("test step");
    assert_eq!(critic.others[0]["round"], 2);
    check_session_shape(&o, SessionStatus::Converged, 2);
}

#[tokio::test]
async fn low_similarity_forces_a_devils_advocate() {
    let o = run_with(
        script(&[(at(1.0), at(0.5)), (at(1.0), at(0.95))], 2),
        spec(5),
        false,
        None,
    )
    .await;
    assert_eq!(
        actions(&o.state),
        vec![HostAction::ForceOpposition, HostAction::Converge]
    );
    let critic = o
        .provider
        .turn("r2.critic")
        .expect("test step")
        .host
        .expect("test step");
    assert_eq!(critic.action, "force_opposition");
    assert_eq!(critic.role.as_deref(), Some("devils_advocate"));
    assert_eq!(critic.target.as_ref().map(|t| t.as_str()), Some("planner"));
    let d = &o.state.rounds[0]
        .decision
        .as_ref()
        .expect("test step")
        .directive;
    assert_eq!(d["instructions"]["role"], "devils_advocate");
    // Exactly at the threshold also forces opposition.
    let o = run_with(
        script(&[(at(1.0), at(0.7)), (at(1.0), at(0.95))], 2),
        spec(5),
        false,
        None,
    )
    .await;
    assert_eq!(actions(&o.state)[0], HostAction::ForceOpposition);
    check_session_shape(&o, SessionStatus::Converged, 2);
}

#[tokio::test]
async fn an_agent_that_does_not_move_for_two_rounds_gets_an_update_command() {
    // The planner repeats itself; the critic moves, so the trend keeps changing.
    let o = run_with(
        script(
            &[
                (at(1.0), at_turned(0.75, 0.0)),
                (at(1.0), at_turned(0.80, 90.0)),
                (at(1.0), at_turned(0.86, 180.0)),
                (at(1.0), at_turned(0.95, 270.0)),
            ],
            4,
        ),
        spec(5),
        false,
        None,
    )
    .await;
    assert_eq!(
        actions(&o.state),
        vec![
            HostAction::Continue,
            HostAction::Continue,
            HostAction::UpdateCommand,
            HostAction::Converge
        ]
    );
    let d = o.state.rounds[2].decision.as_ref().expect("test step");
    assert_eq!(
        d.stubborn.iter().map(|a| a.as_str()).collect::<Vec<_>>(),
        vec!["planner"]
    );
    assert_eq!(d.directive["target_agent"], "planner");
    let cmp = o.state.rounds[2].comparison.as_ref().expect("test step");
    assert_eq!(cmp.self_similarity.get("planner"), Some(&1.0));
    let planner = o
        .provider
        .turn("r4.planner")
        .expect("test step")
        .host
        .expect("test step");
    assert_eq!(planner.action, "update_command");
    assert!(planner
        .requirement
        .expect("test step")
        .contains("assumption"));
    let critic = o
        .provider
        .turn("r4.critic")
        .expect("test step")
        .host
        .expect("test step");
    assert_eq!(
        critic.action, "continue",
        "only the stubborn agent is commanded"
    );
    check_session_shape(&o, SessionStatus::Converged, 4);
}

#[tokio::test]
async fn no_significant_change_for_two_rounds_stops_early() {
    // Stable agreement: converges early.
    let o = run_with(
        script(
            &[
                (at(1.0), at_turned(0.80, 0.0)),
                (at(1.0), at_turned(0.81, 90.0)),
                (at(1.0), at_turned(0.815, 180.0)),
            ],
            3,
        ),
        spec(5),
        false,
        None,
    )
    .await;
    assert_eq!(
        actions(&o.state),
        vec![
            HostAction::Continue,
            HostAction::Continue,
            HostAction::Converge
        ]
    );
    let last = o.state.rounds[2].decision.as_ref().expect("test step");
    assert!(
        last.reason.contains("no significant change"),
        "{}",
        last.reason
    );
    assert_eq!(
        o.provider
            .turn("r3.reporter")
            .expect("test step")
            .ending
            .as_deref(),
        Some("early_stop")
    );
    check_session_shape(&o, SessionStatus::Converged, 3);
    // Stable disagreement converges early too (more rounds would not move it), and the
    // host says the positions stay apart.
    let o = run_with(
        script(
            &[
                (at(1.0), at_turned(0.50, 0.0)),
                (at(1.0), at_turned(0.505, 90.0)),
                (at(1.0), at_turned(0.51, 180.0)),
            ],
            3,
        ),
        spec(5),
        false,
        None,
    )
    .await;
    assert_eq!(actions(&o.state)[2], HostAction::Converge);
    let last = o
        .state
        .rounds
        .last()
        .and_then(|r| r.decision.as_ref())
        .expect("a decision");
    assert!(last.reason.contains("without agreement"), "{}", last.reason);
    assert_eq!(
        o.provider
            .turn("r3.reporter")
            .expect("test step")
            .ending
            .as_deref(),
        Some("early_stop")
    );
    check_session_shape(&o, SessionStatus::Converged, 3);
}

#[tokio::test]
async fn the_last_round_forces_a_summary_of_the_disagreements() {
    let o = run_with(
        script(
            &[
                (at(1.0), at_turned(0.75, 0.0)),
                (at(1.0), at_turned(0.85, 90.0)),
            ],
            2,
        ),
        spec(2),
        false,
        None,
    )
    .await;
    assert_eq!(
        actions(&o.state),
        vec![HostAction::Continue, HostAction::Terminate]
    );
    let d = o.state.rounds[1].decision.as_ref().expect("test step");
    assert_eq!(d.directive["status"], "max_rounds_reached");
    assert_eq!(d.directive["action"], "force_summary");
    let rep = o.provider.turn("r2.reporter").expect("test step");
    assert_eq!(rep.ending.as_deref(), Some("max_rounds_reached"));
    assert_eq!(rep.history.len(), 2, "the reporter reads every round");
    check_session_shape(&o, SessionStatus::MaxRoundsReached, 2);
}

#[tokio::test]
async fn a_timed_out_agent_is_skipped_and_its_last_output_reused() {
    let mut s = script(&[(at(1.0), at(0.8)), (at(1.0), at(0.95))], 2);
    s.insert("r2.planner".into(), vec![Say::Hang]);
    let o = run_with(s, spec(5), false, None).await;
    let r2 = &o.state.rounds[1];
    let planner = r2
        .turns
        .iter()
        .find(|t| t.agent.as_str() == "planner")
        .expect("test step");
    assert_eq!(
        planner.outcome,
        plexus::model::event::debate::TurnOutcome::TimedOut
    );
    assert!(planner.reused);
    assert_eq!(
        planner.output.as_ref().expect("test step")["round"],
        1,
        "round 1's output stands"
    );
    assert_eq!(planner.attempts, 1, "a timeout is not retried");
    let errors = debate_errors(&o.events);
    assert_eq!(errors[0]["error"], "agent_timeout");
    assert_eq!(errors[0]["agent"], "planner");
    assert_eq!(errors[0]["round"], 2);
    assert_eq!(errors[0]["action"], "skip_agent");
    // The round was still compared (with the reused position) and decided.
    assert_eq!(
        actions(&o.state),
        vec![HostAction::Continue, HostAction::Converge]
    );
    assert_eq!(o.state.consensus_trend, vec![0.8, 0.95]);
    check_session_shape(&o, SessionStatus::Converged, 2);
}

#[tokio::test]
async fn a_failed_similarity_tool_falls_back_to_keywords() {
    let o = run_with(script(&[(at(1.0), at(1.0))], 1), spec(1), true, None).await;
    let errors = debate_errors(&o.events);
    assert_eq!(errors[0]["error"], "tool_execution_failed");
    assert_eq!(errors[0]["tool"], "compare_positions");
    let cmp = o.state.rounds[0].comparison.as_ref().expect("test step");
    assert_eq!(cmp.method, "keyword");
    assert!(
        cmp.mean_similarity > 0.0 && cmp.mean_similarity < 1.0,
        "{}",
        cmp.mean_similarity
    );
    assert_eq!(o.state.errors[0].kind, "tool_execution_failed");
    assert!(o.state.finished.is_some());
}

#[tokio::test]
async fn invalid_output_is_retried_then_recorded() {
    // The critic's first try is not JSON, its second is the wrong round: the third
    // passes, and the retry told the model what was wrong.
    let mut s = script(&[(at(1.0), at(0.95))], 1);
    s.insert(
        "r1.critic".into(),
        vec![
            Say::Text("Sure! Here is my critique.".into()),
            critic(7, &at(0.95)),
            critic(1, &at(0.95)),
        ],
    );
    let o = run_with(s, spec(5), false, None).await;
    let critic_turn = o.state.rounds[0]
        .turns
        .iter()
        .find(|t| t.agent.as_str() == "critic")
        .expect("test step");
    assert_eq!(critic_turn.attempts, 3);
    assert_eq!(
        critic_turn.outcome,
        plexus::model::event::debate::TurnOutcome::Valid
    );
    let third = {
        let seen = o.provider.seen.lock().expect("test step");
        seen.iter()
            .filter(|r| r.task_id == "r1.critic")
            .nth(2)
            .cloned()
            .expect("a third try")
    };
    let problems = DebateTurn::of(&third).expect("test step").problems;
    assert!(
        problems.iter().any(|p| p.contains("round is 7")),
        "{problems:?}"
    );
    // Three refusals: recorded as received, logged, and the session goes on.
    let mut s = script(&[(at(1.0), at(0.95)), (at(1.0), at(0.95))], 2);
    s.insert(
        "r1.planner".into(),
        vec![Say::Text("{\"agent_id\": \"planner\"}".into())],
    );
    let o = run_with(s, spec(5), false, None).await;
    let p = o.state.rounds[0]
        .turns
        .iter()
        .find(|t| t.agent.as_str() == "planner")
        .expect("test step");
    assert_eq!(
        p.outcome,
        plexus::model::event::debate::TurnOutcome::Invalid
    );
    assert!(p.output.is_none(), "nothing earlier to stand for it");
    let replies: Vec<_> = o
        .events
        .iter()
        .filter_map(|e| match &e.event {
            EngineEvent::DebateReply(r) if r.round == 1 && r.agent.as_str() == "planner" => Some(r),
            _ => None,
        })
        .collect();
    assert_eq!(replies.len(), 3);
    assert!(replies
        .iter()
        .all(|r| !r.problems.is_empty() && r.text.contains("planner")));
    assert_eq!(debate_errors(&o.events)[0]["error"], "invalid_output");
    // With one position there is nothing to compare: another round follows.
    assert!(o.state.rounds[0].comparison.is_none());
    assert_eq!(
        actions(&o.state),
        vec![HostAction::Continue, HostAction::Converge]
    );
}

#[tokio::test]
async fn a_stopped_session_ends_cancelled() {
    let mut s = script(&[(at(1.0), at(0.8))], 1);
    s.insert("r1.planner".into(), vec![Say::Hang]);
    let mut sp = spec(5);
    sp.agent_timeout_ms = 60_000;
    let o = run_with(s, sp, false, Some(Duration::from_millis(300))).await;
    assert_eq!(o.status, RunStatus::Cancelled);
    assert_eq!(o.state.status, Some(SessionStatus::Cancelled));
    assert!(o.state.report.is_none(), "no report for a stopped session");
    assert_eq!(o.state.session_state().status, SessionStatus::Cancelled);
    // The turn under way reads cancelled on the screen, not unreadable.
    let r1 = o.state.round(1);
    let live = plexus::tui::ui::debate::positions::Live {
        tick: 0,
        now_ms: 0,
        rows: 5,
    };
    let theme = plexus::tui::ui::theme::Theme::dark();
    let shown: String = plexus::tui::ui::debate::positions::lines(60, &o.state, r1, &live, &theme)
        .out
        .iter()
        .map(|l| l.iter().map(|(t, _)| t.as_str()).collect::<String>() + "\n")
        .collect();
    assert!(shown.contains("planner – cancelled"), "{shown}");
    assert!(!shown.contains("unreadable"), "{shown}");
}

#[tokio::test]
async fn streamed_text_that_fails_the_content_check_is_not_logged() {
    let mut s = script(&[(at(1.0), at(0.95))], 1);
    let leak = "the key is AKIAABCDEFGHIJKLMNOP, use it";
    s.insert(
        "r1.planner".into(),
        vec![Say::Text(format!("{{\"content\": \"{leak}\"}}"))],
    );
    let o = run_with(s, spec(5), false, None).await;
    let chunks = |agent: &str| -> String {
        o.events
            .iter()
            .filter(|e| e.agent.as_deref() == Some(agent))
            .filter_map(|e| match &e.event {
                EngineEvent::Chunk(c) => Some(c.text.as_str()),
                _ => None,
            })
            .collect()
    };
    assert!(!chunks("planner").contains("AKIA"), "{}", chunks("planner"));
    assert!(!chunks("critic").is_empty(), "the others stream still");
}

#[tokio::test]
async fn a_turn_s_text_is_logged_as_it_streams_for_the_screen() {
    let o = run_with(script(&[(at(1.0), at(0.95))], 1), spec(5), false, None).await;
    let streamed: String = o
        .events
        .iter()
        .filter(|e| e.agent.as_deref() == Some("planner"))
        .filter_map(|e| match &e.event {
            EngineEvent::Chunk(c) => Some(c.text.as_str()),
            _ => None,
        })
        .collect();
    let replied = o
        .events
        .iter()
        .find_map(|e| match &e.event {
            EngineEvent::DebateReply(r) if r.agent.as_str() == "planner" && !r.closing => {
                Some(r.text.clone())
            }
            _ => None,
        })
        .expect("the planner's reply");
    assert!(
        streamed.starts_with(&replied),
        "{streamed:?} vs {replied:?}"
    );
    // Folded before the turn's output, the stream is the agent's text under way.
    let upto = o
        .events
        .iter()
        .position(
            |e| matches!(&e.event, EngineEvent::DebateOutput(d) if d.agent.as_str() == "planner"),
        )
        .expect("the planner's output");
    let mid = DebateState::from_events(&o.events[..upto]);
    let planner = &mid.agents[&plexus::base::protocol::debate::AgentRole::Planner];
    assert_eq!(planner.stream, replied);
    assert!(planner.stream_tokens > 0 && planner.started_ms.is_some());
    // After it, the stream is gone.
    assert!(o.state.agents.values().all(|a| a.stream.is_empty()));
}

#[tokio::test]
async fn a_failing_provider_is_tried_again_then_the_agent_is_skipped() {
    // The planner's first call fails, the second answers.
    let mut s = script(&[(at(1.0), at(0.8)), (at(1.0), at(0.95))], 2);
    s.insert("r1.planner".into(), vec![Say::Busy, planner(1, &at(1.0))]);
    // The critic of round 2 fails every time: skipped, its round-1 output stands.
    s.insert("r2.critic".into(), vec![Say::Busy]);
    let o = run_with(s, spec(2), false, None).await;
    let p1 = o.state.rounds[0]
        .turns
        .iter()
        .find(|t| t.agent.as_str() == "planner")
        .expect("turn");
    assert_eq!(p1.outcome, plexus::model::event::debate::TurnOutcome::Valid);
    assert_eq!(p1.attempts, 2);
    let c2 = o.state.rounds[1]
        .turns
        .iter()
        .find(|t| t.agent.as_str() == "critic")
        .expect("turn");
    assert_eq!(
        c2.outcome,
        plexus::model::event::debate::TurnOutcome::Failed
    );
    // A transient failure, retried as every model call is: five times after the first.
    assert_eq!(c2.attempts, 6);
    assert!(c2.reused);
    let first = o
        .events
        .iter()
        .find_map(|e| match &e.event {
            EngineEvent::DebateReply(r) if r.attempt == 1 && r.agent.as_str() == "planner" => {
                r.provider_error.clone()
            }
            _ => None,
        })
        .expect("the failed call is logged");
    assert_eq!(first.kind, "transient");
    assert_eq!(debate_errors(&o.events)[0]["error"], "agent_failed");
}

#[tokio::test]
async fn a_round_where_nobody_says_anything_new_is_not_counted_as_consensus() {
    let mut s = script(
        &[(at(1.0), at(0.8)), (at(1.0), at(0.8)), (at(1.0), at(0.95))],
        3,
    );
    s.insert("r2.planner".into(), vec![Say::Hang]);
    s.insert("r2.critic".into(), vec![Say::Hang]);
    let o = run_with(s, spec(5), false, None).await;
    assert!(
        o.state.rounds[1].comparison.is_none(),
        "round 2 is not compared"
    );
    assert_eq!(o.state.consensus_trend, vec![0.8, 0.95]);
    let d = o.state.rounds[1].decision.as_ref().expect("decided");
    assert_eq!(d.action, HostAction::Continue);
    assert!(d.reason.contains("no new positions"), "{}", d.reason);
    assert_eq!(actions(&o.state)[2], HostAction::Converge);
}

/// The calls the provider was asked.
fn calls(o: &Outcome) -> Vec<String> {
    let seen = o.provider.seen.lock().expect("test step");
    seen.iter().map(|r| r.task_id.clone()).collect()
}

/// The session failed after round 1, said why (`says` in the reason), and made no call
/// past round 1's tries: no round 2, no report.
fn check_failed_after_round_one(o: &Outcome, says: &[&str], tries: usize) {
    assert_eq!(o.status, RunStatus::Failed, "the run fails");
    assert_eq!(o.state.status, Some(SessionStatus::Failed));
    let finished = o.state.finished.as_ref().expect("debate_finished");
    assert_eq!(finished.rounds, 1);
    assert!(
        finished.reason.contains("no valid position after round 1"),
        "{}",
        finished.reason
    );
    for s in says {
        assert!(finished.reason.contains(s), "{s:?} in {}", finished.reason);
    }
    // An output refused, or a transient failure retried (its own budget, the retry
    // policy's): never more tries than either allows.
    let transient = plexus::data::provider::retry::RetryPolicy::default()
        .transient
        .max_retries
        + 1;
    assert!(tries <= (spec(5).output_tries).max(transient) as usize);
    let calls = calls(o);
    assert_eq!(calls.len(), 2 * tries, "round 1's tries only: {calls:?}");
    assert!(calls
        .iter()
        .all(|t| t.starts_with("r1.") && !t.ends_with("reporter")));
    assert!(o.state.report.is_none(), "no report");
    assert!(
        o.state.rounds.iter().all(|r| r.decision.is_none()),
        "no host decision"
    );
    // The session document says so too.
    let doc = o.state.session_state();
    assert_eq!(doc.status, SessionStatus::Failed);
    assert_eq!(doc.extra["end_reason"], finished.reason.as_str());
    // Exit code 3.
    assert_eq!(
        plexus::data::exit::for_status(o.status),
        plexus::data::exit::RUN_FAILED
    );
}

#[tokio::test]
async fn a_session_whose_every_reply_is_free_text_fails_after_round_one() {
    let mut s = HashMap::new();
    s.insert(
        "r1.planner".to_string(),
        vec![Say::Text("Sure! Here is a plan: study every day.".into())],
    );
    s.insert(
        "r1.critic".to_string(),
        vec![Say::Text("Looks fine to me, no notes.".into())],
    );
    let o = run_with(s, spec(5), false, None).await;
    check_failed_after_round_one(
        &o,
        &[
            "planner's output in round 1 was refused 3 time(s): the reply is not a JSON object: Sure! Here is a plan",
            "critic's output in round 1 was refused 3 time(s): the reply is not a JSON object: Looks fine",
        ],
        3,
    );
}

#[tokio::test]
async fn a_provider_that_refuses_every_call_fails_the_session_after_round_one() {
    // A transient failure is tried as every model call is (the first try and five
    // retries); a permanent one once (it would fail again).
    for (say, says, tries) in [
        (
            Say::Busy,
            "failed 6 time(s) in round 1: transient provider error: HTTP 503",
            6,
        ),
        (
            Say::Refused,
            "failed 1 time(s) in round 1: provider error: HTTP 400 Bad Request",
            1,
        ),
    ] {
        let mut s = HashMap::new();
        s.insert("r1.planner".to_string(), vec![say.clone()]);
        s.insert("r1.critic".to_string(), vec![say]);
        let o = run_with(s, spec(5), false, None).await;
        let says = [format!("planner {says}"), format!("critic {says}")];
        check_failed_after_round_one(&o, &[&says[0], &says[1]], tries);
    }
}

#[tokio::test]
async fn one_valid_position_in_round_one_is_enough_to_go_on() {
    // The planner says nothing valid; the critic does: the session goes on (and the
    // planner's later rounds are what the script says).
    let mut s = script(&[(at(1.0), at(0.95)), (at(1.0), at(0.95))], 2);
    s.insert("r1.planner".into(), vec![Say::Refused]);
    let o = run_with(s, spec(5), false, None).await;
    assert_ne!(o.status, RunStatus::Failed);
    assert_ne!(o.state.status, Some(SessionStatus::Failed));
    assert!(o.state.rounds.len() >= 2, "a second round was held");
}

#[tokio::test]
async fn a_key_the_model_escaped_in_its_output_is_not_kept() {
    // The model writes the provider's key with JSON escapes in its conclusion and its
    // content: the reply's text holds no key, the output decoded from it would.
    const KEY: &str = "sk-debate-secret-0123456789";
    let escaped: String = KEY.encode_utf16().map(|u| format!("\\u{u:04x}")).collect();
    let mut s = script(&[(at(1.0), at(0.95))], 1);
    let Say::Text(text) = planner(1, &format!("{} KEY_HERE", at(1.0))) else {
        panic!("a text");
    };
    let text = text
        .replace("plan of round 1", "plan KEY_HERE")
        .replace("KEY_HERE", &escaped);
    assert!(!text.contains(KEY) && text.contains(&escaped));
    s.insert("r1.planner".into(), vec![Say::Text(text)]);
    let provider = Scripted {
        script: s,
        secret: Some(TextRedactor::new(Some(KEY))),
        ..Scripted::default()
    };
    let o = run_on(provider, spec(5), false, None).await;
    let planner = o.state.rounds[0]
        .turns
        .iter()
        .find(|t| t.agent.as_str() == "planner")
        .expect("turn");
    assert_eq!(
        planner.outcome,
        plexus::model::event::debate::TurnOutcome::Valid
    );
    let out = planner.output.as_ref().expect("output");
    assert_eq!(out["content"], "plan [redacted]");
    let conclusion = out["metadata"]["position"]["conclusion"]
        .as_str()
        .unwrap_or_default();
    assert!(conclusion.ends_with(" [redacted]"), "{conclusion}");
    let all = serde_json::to_string(&o.events).expect("events");
    assert!(!all.contains(KEY), "the key is in an event");
}
