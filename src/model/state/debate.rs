//! `DebateState`: a debate session folded from its events, purely (time comes from the
//! envelopes). The Debate screen draws it; [`DebateState::session_state`] gives the
//! protocol's session document.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::base::protocol::debate::{
    AgentOutput, AgentRole, AgentStatus, HostAction, PositionSummary, SessionStatus,
};
use crate::base::protocol::debate_spec::DebateSpec;
use crate::model::event::debate::{
    DebateFinished, DebateOutput, DebateTurnStarted, HostDecided, PositionsCompared, TurnOutcome,
};
use crate::model::event::{Chunk, EngineEvent, Envelope, RunFinished, RunStatus};

/// The four agents, in the order the screen lists them.
pub const AGENTS: [AgentRole; 4] = [
    AgentRole::Planner,
    AgentRole::Critic,
    AgentRole::Host,
    AgentRole::Reporter,
];

/// One agent's entry.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AgentView {
    /// Its status.
    pub status: AgentStatus,
    /// Its last output.
    pub last_output: Option<Value>,
    /// The try under way, while it answers.
    pub attempt: Option<u32>,
    /// Output tokens over the session.
    pub tokens: u64,
    /// The text of the try under way, as it streams (empty between turns).
    pub stream: String,
    /// Tokens of `stream`.
    pub stream_tokens: u64,
    /// When the turn under way started (ms), while it answers.
    pub started_ms: Option<i64>,
    /// The turn under way is a closing turn.
    pub closing: bool,
}

impl Default for AgentView {
    fn default() -> Self {
        AgentView {
            status: AgentStatus::Idle,
            last_output: None,
            attempt: None,
            tokens: 0,
            stream: String::new(),
            stream_tokens: 0,
            started_ms: None,
            closing: false,
        }
    }
}

impl AgentView {
    /// Forgets the turn under way (it ended, or the session did).
    fn end_turn(&mut self) {
        self.attempt = None;
        self.started_ms = None;
        self.stream.clear();
        self.stream_tokens = 0;
    }
}

/// One agent's turn in a round.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TurnView {
    /// Agent.
    pub agent: AgentRole,
    /// How it ended.
    pub outcome: TurnOutcome,
    /// Tries made.
    pub attempts: u32,
    /// The output is an earlier round's.
    pub reused: bool,
    /// The output, as stored.
    pub output: Option<Value>,
    /// Its position summary.
    pub position: Option<PositionSummary>,
    /// Its `content`.
    pub content: String,
    /// Tokens of the reply.
    pub output_tokens: u64,
    /// Wall time of the turn.
    pub duration_ms: u64,
}

/// The host's decision of a round.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DecisionView {
    /// Action.
    pub action: HostAction,
    /// Why.
    pub reason: String,
    /// Consensus it was based on.
    pub consensus: Option<f64>,
    /// Points the next round must address.
    pub must_address: Vec<String>,
    /// Agents speaking next.
    pub next_agents: Vec<AgentRole>,
    /// Stubborn agents named.
    pub stubborn: Vec<AgentRole>,
    /// The host's output.
    pub output: Value,
    /// The rule's directive.
    pub directive: Value,
}

/// One round.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct RoundView {
    /// Round number.
    pub round: u32,
    /// Turns in speaking order (the reporter's turn is kept apart).
    pub turns: Vec<TurnView>,
    /// The comparison of the positions.
    pub comparison: Option<PositionsCompared>,
    /// The host's decision.
    pub decision: Option<DecisionView>,
}

/// An error handled by a fallback.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ErrorView {
    /// Round.
    pub round: u32,
    /// `agent_timeout`, `tool_execution_failed`, `invalid_output`.
    pub kind: String,
    /// In words.
    pub message: String,
}

/// A debate session as the screens show it.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct DebateState {
    /// Run id (the session id).
    pub run_id: String,
    /// Settings (after `debate_started`).
    pub spec: Option<DebateSpec>,
    /// Provider.
    pub provider: String,
    /// Embedder.
    pub embedder: String,
    /// The session's status.
    pub status: Option<SessionStatus>,
    /// The run's final status.
    pub run_status: Option<RunStatus>,
    /// Round under way (or last held).
    pub current_round: u32,
    /// Agents by role.
    pub agents: BTreeMap<AgentRole, AgentView>,
    /// Rounds held.
    pub rounds: Vec<RoundView>,
    /// Consensus after each round.
    pub consensus_trend: Vec<f64>,
    /// The closing turns (after the host converged: the remaining uncertainties and
    /// the worst cases each speaker listed before the report).
    pub closing: Vec<TurnView>,
    /// The reporter's turn.
    pub report: Option<TurnView>,
    /// Errors handled.
    pub errors: Vec<ErrorView>,
    /// How it ended.
    pub finished: Option<DebateFinished>,
    /// Time of the first event, ms.
    pub created_ms: Option<i64>,
    /// Time of the last event, ms.
    pub updated_ms: i64,
    /// Events folded.
    pub events: u64,
}

fn position_of(output: &Value) -> Option<PositionSummary> {
    serde_json::from_value(output.get("metadata")?.get("position")?.clone()).ok()
}

impl DebateState {
    /// An empty session.
    pub fn new() -> DebateState {
        let mut s = DebateState::default();
        for a in AGENTS {
            s.agents.insert(a, AgentView::default());
        }
        s
    }

    /// A session folded from `events`.
    pub fn from_events<'a>(events: impl IntoIterator<Item = &'a Envelope>) -> DebateState {
        let mut s = DebateState::new();
        for e in events {
            s.apply(e);
        }
        s
    }

    /// The state of stored session events whose run reads `run_status` (see
    /// [`crate::data::store::run_read::shown_status`]): a session whose process stopped
    /// before it ended is `interrupted`, its agents stopped with it.
    pub fn from_stored<'a>(
        events: impl IntoIterator<Item = &'a Envelope>,
        run_status: &str,
    ) -> DebateState {
        let mut s = DebateState::from_events(events);
        if run_status == RunStatus::Interrupted.as_str() && !s.is_finished() {
            s.status = Some(SessionStatus::Interrupted);
            s.run_status = Some(RunStatus::Interrupted);
            for a in s.agents.values_mut() {
                a.end_turn();
                if matches!(a.status, AgentStatus::Running | AgentStatus::Waiting) {
                    a.status = AgentStatus::Cancelled;
                }
            }
        }
        s
    }

    fn round_mut(&mut self, round: u32) -> &mut RoundView {
        if let Some(i) = self.rounds.iter().position(|r| r.round == round) {
            return &mut self.rounds[i];
        }
        self.rounds.push(RoundView {
            round,
            ..RoundView::default()
        });
        self.rounds.sort_by_key(|r| r.round);
        let i = self
            .rounds
            .iter()
            .position(|r| r.round == round)
            .unwrap_or(0);
        &mut self.rounds[i]
    }

    /// The round numbered `round`.
    pub fn round(&self, round: u32) -> Option<&RoundView> {
        self.rounds.iter().find(|r| r.round == round)
    }

    /// Whether the session has ended.
    pub fn is_finished(&self) -> bool {
        self.finished.is_some() || self.run_status.is_some()
    }

    /// Folds one event.
    pub fn apply(&mut self, env: &Envelope) {
        self.events += 1;
        self.created_ms.get_or_insert(env.ts);
        self.updated_ms = self.updated_ms.max(env.ts);
        if self.run_id.is_empty() {
            self.run_id = env.run_id.to_string();
        }
        match &env.event {
            EngineEvent::RunStarted(r) => {
                self.provider = r.provider.clone();
                self.status.get_or_insert(SessionStatus::InProgress);
            }
            EngineEvent::DebateStarted(d) => {
                self.spec = Some(d.spec.clone());
                self.embedder = d.embedder.clone();
                self.status = Some(SessionStatus::InProgress);
            }
            EngineEvent::DebateTurnStarted(t) => self.turn_started(t, env.ts),
            EngineEvent::Chunk(c) => self.chunk(env, c),
            EngineEvent::DebateReply(r) => {
                self.agents.entry(r.agent.clone()).or_default().tokens += r.output_tokens;
            }
            EngineEvent::DebateOutput(o) => self.output(o),
            EngineEvent::PositionsCompared(p) => self.compared(p),
            EngineEvent::HostDecided(h) => self.host_decided(h),
            EngineEvent::DebateError(e) => self.errors.push(ErrorView {
                round: e.round,
                kind: e
                    .error
                    .get("error")
                    .and_then(Value::as_str)
                    .unwrap_or("error")
                    .to_string(),
                message: e.message.clone(),
            }),
            EngineEvent::DebateFinished(f) => self.debate_finished(f),
            EngineEvent::RunFinished(r) => self.run_finished(r),
            EngineEvent::CrashDetected(_)
            | EngineEvent::LeaseTakenOver(_)
            | EngineEvent::RunResumed(_)
            | EngineEvent::RunPaused(_)
            | EngineEvent::RunUnpaused(_)
            | EngineEvent::CancelRequested(_)
            | EngineEvent::BudgetReached(_)
            | EngineEvent::TaskReady(_)
            | EngineEvent::TaskBlocked(_)
            | EngineEvent::TaskFinished(_)
            | EngineEvent::TaskReset(_)
            | EngineEvent::InvocationStarted(_)
            | EngineEvent::InvocationFinished(_)
            | EngineEvent::InvocationLost(_)
            | EngineEvent::AtomsGraded(_)
            | EngineEvent::RetryScheduled(_)
            | EngineEvent::ReferenceFailed(_)
            | EngineEvent::ContextPlanned(_)
            | EngineEvent::ReviewAccepted(_)
            | EngineEvent::ReviewRejected(_)
            | EngineEvent::ToolCalled(_)
            | EngineEvent::ToolAnswered(_)
            | EngineEvent::SkillActivated(_)
            | EngineEvent::SkillRefused(_)
            | EngineEvent::ContextCompressed(_)
            | EngineEvent::LoopFinished(_) => {}
        }
    }

    /// A try of a turn started (at `ts`): its agent answers.
    fn turn_started(&mut self, t: &DebateTurnStarted, ts: i64) {
        if t.agent != AgentRole::Reporter {
            self.current_round = self.current_round.max(t.round);
            self.round_mut(t.round);
        }
        let a = self.agents.entry(t.agent.clone()).or_default();
        a.status = AgentStatus::Running;
        a.attempt = Some(t.attempt);
        a.closing = t.closing;
        // The turn's clock runs from its first try; each try streams anew.
        if t.attempt <= 1 || a.started_ms.is_none() {
            a.started_ms = Some(ts);
        }
        a.stream.clear();
        a.stream_tokens = 0;
    }

    /// Streamed text of the agent that answers.
    fn chunk(&mut self, env: &Envelope, c: &Chunk) {
        let role = env.agent.as_deref().map(|r| AgentRole::from(r.to_string()));
        let Some(a) = role.and_then(|r| self.agents.get_mut(&r)) else {
            return;
        };
        if a.status == AgentStatus::Running {
            a.stream.push_str(&c.text);
            a.stream_tokens += crate::base::tokens::TokenCounter::default().count(&c.text);
        }
    }

    /// A turn ended: kept in its round (or as a closing turn, or as the report).
    fn output(&mut self, o: &DebateOutput) {
        let turn = TurnView {
            agent: o.agent.clone(),
            outcome: o.outcome,
            attempts: o.attempts,
            reused: o.reused,
            position: o.output.as_ref().and_then(position_of),
            content: o
                .output
                .as_ref()
                .and_then(|v| v.get("content"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            output: o.output.clone(),
            output_tokens: o.output_tokens,
            duration_ms: o.duration_ms,
        };
        let a = self.agents.entry(o.agent.clone()).or_default();
        a.end_turn();
        a.status = match o.outcome {
            TurnOutcome::Valid => AgentStatus::Completed,
            TurnOutcome::TimedOut => AgentStatus::TimedOut,
            TurnOutcome::Cancelled => AgentStatus::Cancelled,
            TurnOutcome::Invalid | TurnOutcome::Failed => AgentStatus::Failed,
        };
        if let Some(out) = &o.output {
            a.last_output = Some(out.clone());
        }
        if o.agent == AgentRole::Reporter {
            self.report = Some(turn);
        } else if o.closing {
            self.closing.retain(|t| t.agent != o.agent);
            self.closing.push(turn);
        } else {
            let r = self.round_mut(o.round);
            r.turns.retain(|t| t.agent != o.agent);
            r.turns.push(turn);
        }
    }

    /// A round's positions compared: kept in the round and the trend.
    fn compared(&mut self, p: &PositionsCompared) {
        self.round_mut(p.round).comparison = Some(p.clone());
        if self.consensus_trend.len() < p.round as usize {
            self.consensus_trend.push(p.mean_similarity);
        } else if let Some(x) = (p.round as usize)
            .checked_sub(1)
            .and_then(|i| self.consensus_trend.get_mut(i))
        {
            *x = p.mean_similarity;
        }
    }

    /// The host decided: kept in the round; the speakers that completed wait.
    fn host_decided(&mut self, h: &HostDecided) {
        self.round_mut(h.round).decision = Some(decision_view(h));
        let host = self.agents.entry(AgentRole::Host).or_default();
        host.status = AgentStatus::Completed;
        host.last_output = Some(h.output.clone());
        for (role, a) in self.agents.iter_mut() {
            if *role != AgentRole::Host && a.status == AgentStatus::Completed {
                a.status = AgentStatus::Waiting;
            }
        }
    }

    /// The debate ended.
    fn debate_finished(&mut self, f: &DebateFinished) {
        self.status = Some(f.status.clone());
        self.finished = Some(f.clone());
        // What each agent was doing when the session ended stays true: one that
        // waited for another round had finished its part; one still answering
        // was stopped with the session.
        for a in self.agents.values_mut() {
            a.end_turn();
            match a.status {
                AgentStatus::Waiting => a.status = AgentStatus::Completed,
                AgentStatus::Running => a.status = AgentStatus::Cancelled,
                _ => {}
            }
        }
    }

    /// The session's run ended (a session without its `debate_finished` ends by it).
    fn run_finished(&mut self, r: &RunFinished) {
        self.run_status = Some(r.status);
        if self.finished.is_none() {
            self.status = Some(match r.status {
                RunStatus::Cancelled | RunStatus::Interrupted => SessionStatus::Cancelled,
                _ => SessionStatus::Terminated,
            });
        }
        for a in self.agents.values_mut() {
            a.end_turn();
            if a.status == AgentStatus::Running {
                a.status = AgentStatus::Cancelled;
            }
        }
    }
}

/// The host's decision as the screens show it (an unreadable output says so).
fn decision_view(h: &HostDecided) -> DecisionView {
    let out: Option<AgentOutput<crate::base::protocol::debate::HostMetadata>> =
        serde_json::from_value(h.output.clone()).ok();
    let Some(o) = out else {
        return DecisionView {
            action: HostAction::Other("unreadable".into()),
            reason: "the host's output does not read".into(),
            consensus: None,
            must_address: Vec::new(),
            next_agents: Vec::new(),
            stubborn: Vec::new(),
            output: h.output.clone(),
            directive: h.directive.clone(),
        };
    };
    DecisionView {
        action: o.metadata.decision.action.clone(),
        reason: o.metadata.decision.reason.clone(),
        consensus: o.metadata.analysis.consensus_level,
        must_address: o
            .metadata
            .decision
            .constraints
            .as_ref()
            .map(|c| c.must_address.clone())
            .unwrap_or_default(),
        next_agents: o.metadata.decision.next_agents.clone(),
        stubborn: o.metadata.analysis.stubborn_agents.clone(),
        output: h.output.clone(),
        directive: h.directive.clone(),
    }
}
