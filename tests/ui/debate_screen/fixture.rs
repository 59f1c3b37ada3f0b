//! Debate sessions built by hand, event by event: a converged three-round session in
//! Chinese and English (with its closing answers), one still in progress, one whose
//! critic is streaming its answer, and one stopped while the critic answered.

use std::sync::Arc;

use plexus::base::protocol::debate::{AgentRole, SessionStatus};
use plexus::base::protocol::debate_spec::DebateSpec;
use plexus::model::event::debate::{
    DebateErrorLogged, DebateFinished, DebateOutput, DebateStarted, DebateTurnStarted, HostDecided,
    PositionsCompared, TurnOutcome,
};
use plexus::model::event::{EngineEvent, Envelope, RunFinished, RunStarted, RunStatus};
use plexus::model::state::{reduce, RunState};
use serde_json::{json, Value};

/// Events of a session, numbered as they are pushed.
#[derive(Default)]
pub struct Log {
    /// The envelopes.
    pub events: Vec<Envelope>,
}

impl Log {
    /// Appends an event.
    pub fn push(&mut self, ev: EngineEvent) {
        let seq = self.events.len() as u64 + 1;
        self.events.push(Envelope {
            run_id: Arc::from("R20250301-debate"),
            seq,
            ts: 1_740_000_000_000 + seq as i64 * 1500,
            task_id: None,
            invocation_id: None,
            agent: None,
            event: ev,
        });
    }

    /// Appends an event of `agent`'s turn (a streamed chunk names its agent).
    pub fn push_as(&mut self, agent: &str, ev: EngineEvent) {
        self.push(ev);
        if let Some(e) = self.events.last_mut() {
            e.agent = Some(Arc::from(agent));
        }
    }

    /// The run state after the first `n` events.
    pub fn state_at(&self, n: usize) -> RunState {
        let mut st = RunState::new();
        for e in self.events.iter().take(n) {
            reduce(&mut st, e);
        }
        st
    }

    /// The run state after every event.
    pub fn state(&self) -> RunState {
        self.state_at(self.events.len())
    }
}

/// A position summary.
pub fn position(
    conclusion: &str,
    reasons: &[&str],
    assumptions: &[&str],
    conf: f64,
    changes: Option<(bool, &[&str], f64)>,
) -> Value {
    let mut p = json!({
        "conclusion": conclusion,
        "key_reasons": reasons,
        "assumptions": assumptions,
        "confidence": conf,
    });
    if let Some((changed, added, d)) = changes {
        p["changes_from_last_round"] = json!({
            "conclusion_changed": changed, "reasons_added": added, "confidence_delta": d
        });
    }
    p
}

fn plan() -> Value {
    json!({
        "title": "数据库迁移计划",
        "goal": "Move the orders database to PostgreSQL 16 without downtime",
        "phases": [
            {"phase_name": "准备 Preparation", "duration": "2 weeks", "tasks": [
                {"title": "盘点存储过程 Inventory stored procedures", "estimated_hours": 16.0, "deadline": "2025-03-14"},
                {"title": "Set up logical replication", "estimated_hours": 24.0}
            ]},
            {"phase_name": "切换 Cutover", "duration": "1 week", "tasks": [
                {"title": "Dual writes behind a flag", "estimated_hours": 20.0}
            ]}
        ],
        "total_estimated_hours": 60.0
    })
}

/// A planner or critic output.
pub fn speaker(agent: &str, round: u32, content: &str, pos: Value) -> Value {
    let metadata = if agent == "planner" {
        json!({"position": pos, "plan": plan()})
    } else {
        json!({"position": pos, "critique": {
            "target_agent": "planner", "target_round": round,
            "risks": [{"risk": "复制延迟 replication lag", "severity": "high", "impact": "stale reads"}],
            "suggestions": [{"issue": "rollback", "solution": "keep the old primary warm", "priority": "medium"}],
            "validity_check": {"feasible": true, "realistic": round > 1, "complete": round > 2}
        }})
    };
    json!({
        "agent_id": agent, "round": round,
        "output_type": if agent == "planner" { "plan" } else { "critique" },
        "content": content, "metadata": metadata,
        "timestamp": "2025-03-01T10:00:00Z"
    })
}

/// A host output.
pub fn host(
    round: u32,
    action: &str,
    reason: &str,
    consensus: f64,
    must: &[&str],
    stubborn: &[&str],
) -> Value {
    json!({
        "agent_id": "host", "round": round, "output_type": "control",
        "content": reason,
        "metadata": {
            "decision": {"action": action, "reason": reason, "next_agents": ["planner", "critic"],
                         "constraints": {"must_address": must}},
            "analysis": {"consensus_level": consensus,
                         "similarity_matrix": [[1.0, consensus], [consensus, 1.0]],
                         "most_different_pair": [0, 1], "stubborn_agents": stubborn}
        },
        "timestamp": "2025-03-01T10:00:00Z"
    })
}

fn started(log: &mut Log, question: &str) {
    log.push(EngineEvent::RunStarted(RunStarted {
        plan_id: "debate".into(),
        execution_mode: "debate".into(),
        provider: "simulated".into(),
        seed: 7,
        concurrency: 2,
        agents: vec![],
        tasks: vec![],
    }));
    let mut spec = DebateSpec::new(question);
    spec.max_rounds = 5;
    log.push(EngineEvent::DebateStarted(DebateStarted {
        spec,
        embedder: "builtin".into(),
        now: json!({"now": "2025-03-01T10:00:00+08:00"}),
    }));
}

/// A turn: started, then its output.
pub fn turn(
    log: &mut Log,
    round: u32,
    agent: AgentRole,
    outcome: TurnOutcome,
    output: Option<Value>,
    reused: bool,
) {
    log.push(EngineEvent::DebateTurnStarted(DebateTurnStarted {
        round,
        agent: agent.clone(),
        attempt: 1,
        closing: false,
    }));
    log.push(EngineEvent::DebateOutput(DebateOutput {
        round,
        agent,
        outcome,
        attempts: if outcome == TurnOutcome::Valid { 1 } else { 3 },
        closing: false,
        output,
        reused,
        output_tokens: 420,
        duration_ms: 2300,
    }));
}

/// The round's comparison.
pub fn compared(log: &mut Log, round: u32, sim: f64, self_sim: &[(&str, f64)]) {
    log.push(EngineEvent::PositionsCompared(PositionsCompared {
        round,
        agents: vec![AgentRole::Planner, AgentRole::Critic],
        similarity_matrix: vec![vec![1.0, sim], vec![sim, 1.0]],
        mean_similarity: sim,
        most_different_pair: [0, 1],
        most_different_similarity: sim,
        self_similarity: self_sim.iter().map(|(a, v)| (a.to_string(), *v)).collect(),
        method: "embedding".into(),
        embedder: "builtin".into(),
        embedded: 2,
        cached: 0,
        duration_us: 850,
    }));
}

const QUESTION: &str = "我们应该如何在三个月内把订单数据库迁移到 PostgreSQL？";

fn round_one(log: &mut Log) {
    let p = position(
        "分三个阶段迁移：先复制，再双写，最后切换。",
        &["风险可控 low risk", "可以随时回滚"],
        &["团队有两名 DBA"],
        0.75,
        None,
    );
    turn(
        log,
        1,
        AgentRole::Planner,
        TurnOutcome::Valid,
        Some(speaker("planner", 1, "三阶段计划 / a three-phase plan", p)),
        false,
    );
    let c = position(
        "The plan underestimates replication lag on peak days.",
        &["峰值写入 12k/s", "no load test yet"],
        &["traffic stays flat"],
        0.6,
        None,
    );
    turn(
        log,
        1,
        AgentRole::Critic,
        TurnOutcome::Valid,
        Some(speaker("critic", 1, "Risks first.", c)),
        false,
    );
    compared(log, 1, 0.78, &[]);
    log.push(EngineEvent::HostDecided(HostDecided {
        round: 1,
        output: host(1, "continue", "立场接近但仍有分歧：复制延迟没有量化。", 0.78, &["量化复制延迟 quantify replication lag"], &[]),
        directive: json!({"action": "continue", "instructions": {"to_agents": ["planner", "critic"], "focus_on": ["lag"], "rounds_remaining": 4}}),
    }));
}

fn round_two(log: &mut Log) {
    let p = position(
        "Keep three phases, add a load test before dual writes.",
        &["风险可控 low risk", "load test covers peaks"],
        &["团队有两名 DBA"],
        0.8,
        Some((false, &["load test covers peaks"], 0.05)),
    );
    turn(
        log,
        2,
        AgentRole::Planner,
        TurnOutcome::Valid,
        Some(speaker("planner", 2, "Revised.", p)),
        false,
    );
    let c = position(
        "The plan underestimates replication lag on peak days.",
        &["峰值写入 12k/s", "no load test yet"],
        &["traffic stays flat"],
        0.6,
        Some((false, &[], 0.0)),
    );
    turn(
        log,
        2,
        AgentRole::Critic,
        TurnOutcome::TimedOut,
        Some(speaker("critic", 2, "Risks first.", c)),
        true,
    );
    log.push(EngineEvent::DebateError(DebateErrorLogged {
        round: 2,
        error: json!({"error": "agent_timeout", "agent": "critic", "round": 2, "action": "skip", "fallback": "reuse"}),
        message: "critic timed out after 60 s; its round-1 position stands".into(),
    }));
    compared(log, 2, 0.64, &[("critic", 0.99), ("planner", 0.86)]);
    log.push(EngineEvent::HostDecided(HostDecided {
        round: 2,
        output: host(2, "force_opposition", "Consensus fell to 0.64 and the critic repeats itself.", 0.64, &["峰值时段的回滚步骤", "cost of dual writes"], &["critic"]),
        directive: json!({"action": "force_opposition", "instructions": {"role": "devil's advocate", "requirement": "argue that a big-bang cutover is safer", "target": "critic"}}),
    }));
}

fn round_three(log: &mut Log) {
    let p = position(
        "三阶段迁移，双写前做压测，保留旧主库热备。",
        &[
            "风险可控 low risk",
            "load test covers peaks",
            "rollback in minutes",
        ],
        &["团队有两名 DBA"],
        0.88,
        Some((true, &["rollback in minutes"], 0.08)),
    );
    turn(
        log,
        3,
        AgentRole::Planner,
        TurnOutcome::Valid,
        Some(speaker("planner", 3, "最终方案。", p)),
        false,
    );
    let c = position(
        "同意三阶段方案；big-bang is not safer once the load test passes.",
        &["压测通过后风险可接受"],
        &["traffic stays flat"],
        0.85,
        Some((true, &["压测通过后风险可接受"], 0.25)),
    );
    turn(
        log,
        3,
        AgentRole::Critic,
        TurnOutcome::Valid,
        Some(speaker("critic", 3, "Agreed.", c)),
        false,
    );
    compared(log, 3, 0.93, &[("critic", 0.71), ("planner", 0.94)]);
    log.push(EngineEvent::HostDecided(HostDecided {
        round: 3,
        output: host(3, "converge", "双方结论一致（0.93 > 0.90），进入报告。", 0.93, &[], &[]),
        directive: json!({"action": "converge", "instructions": {"to_all_agents": "list uncertainties", "next_step": "report"}}),
    }));
}

/// A closing answer of `agent` after round 3: an uncertainty and a worst case.
fn closing(log: &mut Log, agent: AgentRole, uncertain: &str, worst: &str) {
    log.push(EngineEvent::DebateTurnStarted(DebateTurnStarted {
        round: 3,
        agent: agent.clone(),
        attempt: 1,
        closing: true,
    }));
    let mut out = speaker(
        agent.as_str(),
        3,
        &format!("Remaining uncertainties: {uncertain}. Worst cases: {worst}."),
        position("三阶段迁移", &["rollback in minutes"], &[], 0.88, None),
    );
    out["metadata"]["remaining_uncertainties"] = json!([uncertain]);
    out["metadata"]["worst_cases"] = json!([worst]);
    log.push(EngineEvent::DebateOutput(DebateOutput {
        round: 3,
        agent,
        outcome: TurnOutcome::Valid,
        attempts: 1,
        closing: true,
        output: Some(out),
        reused: false,
        output_tokens: 120,
        duration_ms: 900,
    }));
}

/// A converged three-round session with its closing answers and its report.
pub fn converged() -> Log {
    let mut log = Log::default();
    started(&mut log, QUESTION);
    round_one(&mut log);
    round_two(&mut log);
    round_three(&mut log);
    closing(
        &mut log,
        AgentRole::Planner,
        "whether two DBAs are enough",
        "the cutover slips into the peak season",
    );
    closing(
        &mut log,
        AgentRole::Critic,
        "whether traffic stays flat",
        "replication lag doubles on the first sale day",
    );
    let report = json!({
        "agent_id": "reporter", "round": 3, "output_type": "report",
        "content": "## 结论\n订单数据库分三阶段迁移到 PostgreSQL 16：先逻辑复制，压测通过后双写，最后切换并保留旧主库热备两周。\n\nThe critic's concern about replication lag is resolved by the load test gate.\n\n## Agreed\n\n- 三阶段 three phases\n- 压测作为闸门 load test as the gate",
        "metadata": {
            "final_plan": {"title": "订单库迁移 Orders migration", "goal": "Zero-downtime move to PostgreSQL 16",
                           "consensus_level": "high", "participating_agents": ["planner", "critic"], "rounds": 3, "plan": plan()},
            "summary": {"key_agreements": ["三阶段 three phases", "压测作为闸门 load test as the gate"],
                        "resolved_concerns": ["replication lag on peak days"],
                        "remaining_uncertainties": ["流量是否保持平稳 whether traffic stays flat"]}
        },
        "timestamp": "2025-03-01T10:09:00Z"
    });
    turn(
        &mut log,
        3,
        AgentRole::Reporter,
        TurnOutcome::Valid,
        Some(report),
        false,
    );
    log.push(EngineEvent::DebateFinished(DebateFinished {
        status: SessionStatus::Converged,
        rounds: 3,
        consensus_trend: vec![0.78, 0.64, 0.93],
        reason: "consensus 0.93 above 0.90".into(),
    }));
    log.push(EngineEvent::RunFinished(RunFinished {
        status: RunStatus::Succeeded,
        tasks: Default::default(),
        atoms: 0,
        grades: Default::default(),
    }));
    log
}

/// The text the critic streams in [`streaming`], in three pieces.
pub const STREAMED: [&str; 3] = [
    "{\n  \"agent_id\": \"critic\",\n  \"content\": \"The revised plan still ",
    "underestimates replication lag on peak days, and the load test ",
    "must replay a real sale day\",\n",
];

/// [`in_progress`] with the critic's answer streaming: three chunks, 3 s in.
pub fn streaming() -> Log {
    let mut log = in_progress();
    for piece in STREAMED {
        log.push_as(
            "critic",
            EngineEvent::Chunk(plexus::model::event::Chunk { text: piece.into() }),
        );
    }
    log
}

/// [`in_progress`] stopped while the critic answered.
pub fn stopped() -> Log {
    let mut log = in_progress();
    log.push(EngineEvent::DebateOutput(DebateOutput {
        round: 2,
        agent: AgentRole::Critic,
        outcome: TurnOutcome::Cancelled,
        attempts: 1,
        closing: false,
        output: None,
        reused: false,
        output_tokens: 0,
        duration_ms: 800,
    }));
    log.push(EngineEvent::DebateFinished(DebateFinished {
        status: SessionStatus::Cancelled,
        rounds: 2,
        consensus_trend: vec![0.78],
        reason: "stopped by the user".into(),
    }));
    log.push(EngineEvent::RunFinished(RunFinished {
        status: RunStatus::Cancelled,
        tasks: Default::default(),
        atoms: 0,
        grades: Default::default(),
    }));
    log
}

/// A session in its second round: the planner has answered, the critic is answering.
pub fn in_progress() -> Log {
    let mut log = Log::default();
    started(&mut log, QUESTION);
    round_one(&mut log);
    let p = position(
        "Keep three phases, add a load test before dual writes.",
        &["风险可控 low risk"],
        &[],
        0.8,
        Some((false, &["load test covers peaks"], 0.05)),
    );
    turn(
        &mut log,
        2,
        AgentRole::Planner,
        TurnOutcome::Valid,
        Some(speaker("planner", 2, "Revised.", p)),
        false,
    );
    log.push(EngineEvent::DebateTurnStarted(DebateTurnStarted {
        round: 2,
        agent: AgentRole::Critic,
        attempt: 1,
        closing: false,
    }));
    log
}

/// Round one under way: the planner has answered, with a `changes_from_last_round` it
/// had no last round for (a model's habit); the critic has not started.
pub fn round_one_planner_only() -> Log {
    let mut log = Log::default();
    started(&mut log, QUESTION);
    let p = position(
        "分三个阶段迁移：先复制，再双写，最后切换。",
        &["风险可控 low risk"],
        &[],
        0.7,
        Some((false, &[], 0.0)),
    );
    turn(
        &mut log,
        1,
        AgentRole::Planner,
        TurnOutcome::Valid,
        Some(speaker("planner", 1, "三阶段计划", p)),
        false,
    );
    log
}
