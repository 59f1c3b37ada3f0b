//! A debate session from start to end: rounds of the planner and the critic (the first
//! in parallel), the comparison of their positions, the host's decision, and the
//! reporter's report; every step logged as events of the session's run.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::{mpsc, watch};

use super::host::{Next, SPEAKERS};
use super::shared::{Memory, Session};
use super::similarity::{keyword_similarity, position_text, PositionComparer};
use super::speak::{speak, Spoken};
use crate::base::protocol::debate::{AgentRole, SessionStatus};
use crate::base::protocol::debate_spec::DebateSpec;
use crate::base::protocol::debate_turn::{DebateTurn, HostInstruction, CLOSING_REQUEST};
use crate::base::tokens::TokenCounter;
use crate::data::provider::Provider;
use crate::data::store::{StoreError, WriteOp, Writer};
use crate::model::event::debate::{DebateFinished, DebateStarted, TurnOutcome};
use crate::model::event::{EngineEvent, RunFinished, RunStarted, RunStatus, TaskStatus};
use crate::run::engine::emit::{Emitter, Scope};
use crate::run::engine::{Control, EngineError, RunHandle, RunOutcome};
use crate::run::review::ReviewError;

/// What a session runs with.
pub struct SessionSpec {
    /// Run id (the session id).
    pub run_id: String,
    /// Settings.
    pub spec: DebateSpec,
    /// The model.
    pub provider: Arc<dyn Provider>,
    /// `compare_positions`.
    pub comparer: Arc<PositionComparer>,
    /// The moderation endpoint of the content check, when the profile names one.
    pub moderator: Option<Arc<super::moderation::HttpModerator>>,
    /// The `get_now` data the agents plan from.
    pub now: Value,
    /// The store writer (the run row is written already).
    pub writer: Writer,
}

/// Starts a session; the handle's control channel takes `Cancel` and `Interrupt` (both
/// stop the session, which ends `cancelled`).
pub fn start_session(s: SessionSpec) -> RunHandle {
    let (control_tx, mut control_rx) = mpsc::unbounded_channel::<Control>();
    let (cancel_tx, cancel_rx) = watch::channel(false);
    let run_for_review = s.run_id.clone();
    tokio::spawn(async move {
        while let Some(c) = control_rx.recv().await {
            match c {
                Control::Cancel(_) | Control::Interrupt => {
                    let _ = cancel_tx.send(true);
                }
                Control::Review(r) => r.reply.send(Err(ReviewError::NoSuchTask {
                    run_id: run_for_review.to_string(),
                    task: r.task.clone(),
                })),
                Control::Pause | Control::Resume | Control::Retry(_) => {}
            }
        }
    });
    let run_id: Arc<str> = s.run_id.clone().into();
    let session = Arc::new(Session {
        spec: s.spec,
        provider: s.provider,
        emitter: Emitter::new(run_id, 1, s.writer),
        counter: TokenCounter::default(),
        now: s.now,
        moderator: s.moderator,
        cancel: cancel_rx,
        ids: Default::default(),
    });
    let comparer = s.comparer;
    let join = tokio::spawn(async move { run(session, comparer).await });
    RunHandle {
        control: control_tx,
        join,
    }
}

/// Why a first round gave nothing to argue from: neither speaker has a valid output after
/// all its tries (each one's reason, as its `debate_error` said). `None` when one has.
fn nothing_valid(spoken: &[(AgentRole, Spoken)]) -> Option<String> {
    if spoken
        .iter()
        .any(|(_, sp)| sp.outcome == TurnOutcome::Valid)
    {
        return None;
    }
    let why: Vec<String> = spoken
        .iter()
        .map(|(role, sp)| {
            sp.problem
                .clone()
                .unwrap_or_else(|| format!("{role} gave no valid output"))
        })
        .collect();
    Some(format!(
        "no valid position after round 1 (neither the planner nor the critic gave a valid output): {}",
        why.join("; ")
    ))
}

/// Counts a turn by the task status its outcome comes to.
fn count(tasks: &mut BTreeMap<TaskStatus, u32>, outcome: TurnOutcome) {
    let st = match outcome {
        TurnOutcome::Valid => TaskStatus::Success,
        TurnOutcome::Invalid | TurnOutcome::Failed => TaskStatus::Failed,
        TurnOutcome::TimedOut => TaskStatus::Timeout,
        TurnOutcome::Cancelled => TaskStatus::Cancelled,
    };
    *tasks.entry(st).or_default() += 1;
}

/// How the rounds ended, when not by holding the last one: the ending's name and why.
type Ending = (&'static str, String);

/// The session: the rounds, the closing turns on convergence, the report, the end logged.
async fn run(s: Arc<Session>, comparer: Arc<PositionComparer>) -> Result<RunOutcome, EngineError> {
    s.reserve_ids().await?;
    announce(&s, &comparer)?;
    let mut m = Memory::default();
    let (ending, held) = rounds(&s, &comparer, &mut m).await?;
    let (mut ending, mut reason) =
        ending.unwrap_or(("max_rounds_reached", "the last round was held".into()));
    let mut report_ok = false;
    // On convergence the host asks every speaker for the remaining uncertainties and
    // the worst cases before the report; the reporter reads their answers.
    let mut closing: BTreeMap<AgentRole, Value> = BTreeMap::new();
    if matches!(ending, "converged" | "early_stop") && !s.is_cancelled() {
        closing = closing_turns(&s, &mut m, held, &reason).await?;
    }
    if ending != "cancelled" && ending != "failed" && !s.is_cancelled() {
        let r = speak(&s, report_turn(&s, &m, held, &closing, ending), None).await?;
        count(&mut m.tasks, r.outcome);
        report_ok = r.outcome == TurnOutcome::Valid;
        // A discussion without its report is not a finished debate.
        if !report_ok && r.outcome != TurnOutcome::Cancelled {
            reason = format!(
                "{reason}; then the reporter gave no report: {}",
                r.problem.as_deref().unwrap_or("no valid output")
            );
            ending = "failed";
        }
    }
    finish(&s, m, held, ending, reason, report_ok)
}

/// Logs the start of the session's run and of the debate.
fn announce(s: &Session, comparer: &PositionComparer) -> Result<(), StoreError> {
    let scope = Scope::default();
    s.emitter.emit(
        &scope,
        EngineEvent::RunStarted(RunStarted {
            plan_id: "debate".into(),
            execution_mode: "debate".into(),
            provider: s.provider.name(),
            seed: 0,
            concurrency: 2,
            agents: Vec::new(),
            tasks: Vec::new(),
        }),
    )?;
    s.emitter.emit(
        &scope,
        EngineEvent::DebateStarted(DebateStarted {
            spec: s.spec.clone(),
            embedder: comparer.embedder_name(),
            now: s.now.clone(),
        }),
    )
}

/// The rounds, until the host hands over to the reporter, the session is stopped, the
/// first round gives nothing to argue from, or the last round is held. Returns how they
/// ended (`None`: the last round was held) and the last round held.
async fn rounds(
    s: &Session,
    comparer: &PositionComparer,
    m: &mut Memory,
) -> Result<(Option<Ending>, u32), StoreError> {
    let mut instructions: BTreeMap<AgentRole, HostInstruction> = BTreeMap::new();
    let mut held = 0u32;
    for round in 1..=s.spec.max_rounds {
        held = round;
        let spoken = speak_round(s, m, &instructions, round).await?;
        remember(comparer, m, round, &spoken).await;
        if s.is_cancelled() {
            return Ok((Some(("cancelled", "stopped by the user".into())), held));
        }
        if round == 1 {
            if let Some(why) = nothing_valid(&spoken) {
                // Nothing to argue from: more rounds and a report would only spend calls.
                return Ok((Some(("failed", why)), held));
            }
        }
        let decision = super::round_end::host_turn(s, comparer, m, round, &spoken).await?;
        match decision.next {
            Next::Round(next) => instructions = next,
            Next::Report { ending: e } => return Ok((Some((e, decision.reason.clone())), held)),
        }
    }
    Ok((None, held))
}

/// The turn of `role` in `round`, seeing `others` and the host's instruction to it.
fn round_turn(
    s: &Session,
    m: &Memory,
    instructions: &BTreeMap<AgentRole, HostInstruction>,
    round: u32,
    role: AgentRole,
    others: Vec<Value>,
) -> DebateTurn {
    DebateTurn {
        role: role.clone(),
        round,
        max_rounds: s.spec.max_rounds,
        question: s.spec.question.clone(),
        now: s.now.clone(),
        own_previous: m.last.get(&role).map(|l| l.0.clone()),
        others,
        host: instructions.get(&role).cloned(),
        history: Vec::new(),
        ending: None,
        problems: Vec::new(),
        closing: false,
    }
}

/// The speakers' turns of `round`: the first at once, later ones the planner first and
/// the critic (unless the session was stopped) answering its fresh output.
async fn speak_round(
    s: &Session,
    m: &Memory,
    instructions: &BTreeMap<AgentRole, HostInstruction>,
    round: u32,
) -> Result<Vec<(AgentRole, Spoken)>, StoreError> {
    let turn =
        |role: AgentRole, others: Vec<Value>| round_turn(s, m, instructions, round, role, others);
    let mut spoken: Vec<(AgentRole, Spoken)> = Vec::new();
    if round == 1 {
        // The first round: both state their positions at once.
        let (p, c) = tokio::join!(
            speak(
                s,
                turn(AgentRole::Planner, Vec::new()),
                m.last_of(&AgentRole::Planner)
            ),
            speak(
                s,
                turn(AgentRole::Critic, Vec::new()),
                m.last_of(&AgentRole::Critic)
            ),
        );
        spoken.push((AgentRole::Planner, p?));
        spoken.push((AgentRole::Critic, c?));
        return Ok(spoken);
    }
    let others = |of: &AgentRole| -> Vec<Value> {
        m.last
            .get(of)
            .map(|l| vec![l.0.clone()])
            .unwrap_or_default()
    };
    let p = speak(
        s,
        turn(AgentRole::Planner, others(&AgentRole::Critic)),
        m.last_of(&AgentRole::Planner),
    )
    .await?;
    let mut critic_sees = others(&AgentRole::Planner);
    if let Some(o) = p.output.clone().filter(|_| p.fresh) {
        critic_sees = vec![o];
    }
    spoken.push((AgentRole::Planner, p));
    if !s.is_cancelled() {
        let c = speak(
            s,
            turn(AgentRole::Critic, critic_sees),
            m.last_of(&AgentRole::Critic),
        )
        .await?;
        spoken.push((AgentRole::Critic, c));
    }
    Ok(spoken)
}

/// Counts the round's turns and keeps each fresh output, with its similarity to the
/// agent's previous position (by keywords when the comparer fails).
async fn remember(
    comparer: &PositionComparer,
    m: &mut Memory,
    round: u32,
    spoken: &[(AgentRole, Spoken)],
) {
    for (role, sp) in spoken {
        count(&mut m.tasks, sp.outcome);
        let (true, Some(o), Some(p)) = (sp.fresh, &sp.output, &sp.position) else {
            continue;
        };
        if let Some((_, prev)) = m.last.get(role) {
            let sim = comparer
                .similarity(&position_text(prev), &position_text(p))
                .await
                .unwrap_or_else(|_| {
                    keyword_similarity(&[position_text(prev), position_text(p)]).similarity_matrix
                        [0][1]
                });
            m.self_similarity
                .entry(role.clone())
                .or_default()
                .push((round, sim));
        }
        m.last.insert(role.clone(), (o.clone(), p.clone()));
    }
}

/// The closing turns (both speakers at once) after convergence: each speaker's fresh
/// answer about the remaining uncertainties and the worst cases.
async fn closing_turns(
    s: &Session,
    m: &mut Memory,
    held: u32,
    reason: &str,
) -> Result<BTreeMap<AgentRole, Value>, StoreError> {
    let closing_turn = |role: AgentRole, m: &Memory| {
        let other = SPEAKERS.iter().find(|a| **a != role).cloned();
        DebateTurn {
            role: role.clone(),
            round: held,
            max_rounds: s.spec.max_rounds,
            question: s.spec.question.clone(),
            now: s.now.clone(),
            own_previous: m.last.get(&role).map(|l| l.0.clone()),
            others: other
                .and_then(|o| m.last.get(&o).map(|l| vec![l.0.clone()]))
                .unwrap_or_default(),
            host: Some(HostInstruction {
                action: "converge".into(),
                reason: reason.to_string(),
                requirement: Some(CLOSING_REQUEST.into()),
                ..HostInstruction::default()
            }),
            history: Vec::new(),
            ending: None,
            problems: Vec::new(),
            closing: true,
        }
    };
    let (p, c) = tokio::join!(
        speak(
            s,
            closing_turn(AgentRole::Planner, m),
            m.last_of(&AgentRole::Planner)
        ),
        speak(
            s,
            closing_turn(AgentRole::Critic, m),
            m.last_of(&AgentRole::Critic)
        ),
    );
    let mut closing: BTreeMap<AgentRole, Value> = BTreeMap::new();
    for (role, sp) in [(AgentRole::Planner, p?), (AgentRole::Critic, c?)] {
        count(&mut m.tasks, sp.outcome);
        if let (true, Some(o)) = (sp.fresh, sp.output) {
            closing.insert(role, o);
        }
    }
    Ok(closing)
}

/// The reporter's turn: it reads each speaker's closing answer (else its last output)
/// and the rounds' digests.
fn report_turn(
    s: &Session,
    m: &Memory,
    held: u32,
    closing: &BTreeMap<AgentRole, Value>,
    ending: &str,
) -> DebateTurn {
    DebateTurn {
        role: AgentRole::Reporter,
        round: held,
        max_rounds: s.spec.max_rounds,
        question: s.spec.question.clone(),
        now: s.now.clone(),
        own_previous: None,
        others: SPEAKERS
            .iter()
            .filter_map(|a| {
                closing
                    .get(a)
                    .cloned()
                    .or_else(|| m.last.get(a).map(|l| l.0.clone()))
            })
            .collect(),
        host: None,
        history: m.digests.clone(),
        ending: Some(ending.to_string()),
        problems: Vec::new(),
        closing: false,
    }
}

/// The session's status from how it ended.
fn session_status(ending: &str, cancelled: bool) -> SessionStatus {
    if cancelled {
        return SessionStatus::Cancelled;
    }
    match ending {
        "failed" => SessionStatus::Failed,
        "converged" | "early_stop" => SessionStatus::Converged,
        "max_rounds_reached" => SessionStatus::MaxRoundsReached,
        "early_stop_divergent" => SessionStatus::Terminated,
        _ => SessionStatus::Terminated,
    }
}

/// Logs the end of the debate and of its run, and the run's status.
fn finish(
    s: &Session,
    m: Memory,
    held: u32,
    ending: &str,
    reason: String,
    report_ok: bool,
) -> Result<RunOutcome, EngineError> {
    let scope = Scope::default();
    let failed = ending == "failed";
    let cancelled = ending == "cancelled" || s.is_cancelled();
    s.emitter.emit(
        &scope,
        EngineEvent::DebateFinished(DebateFinished {
            status: session_status(ending, cancelled),
            rounds: held,
            consensus_trend: m.trend.clone(),
            reason: if cancelled {
                "stopped by the user".into()
            } else {
                reason
            },
        }),
    )?;
    let run_status = if cancelled {
        RunStatus::Cancelled
    } else if failed {
        RunStatus::Failed
    } else if report_ok {
        RunStatus::Succeeded
    } else {
        RunStatus::Partial
    };
    s.emitter.emit(
        &scope,
        EngineEvent::RunFinished(RunFinished {
            status: run_status,
            tasks: m.tasks.clone(),
            atoms: 0,
            grades: Default::default(),
        }),
    )?;
    s.emitter.write(WriteOp::RunStatus {
        run_id: s.emitter.run_id().to_string(),
        status: run_status.as_str().to_string(),
        finished_at: Some(crate::base::clock::now_rfc3339()),
    })?;
    Ok(RunOutcome {
        run_id: s.emitter.run_id().to_string(),
        status: run_status,
        tasks: m.tasks,
        atoms: 0,
        grades: Default::default(),
        retained: Vec::new(),
    })
}
