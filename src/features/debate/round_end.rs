//! The end of a round: the positions compared (by embedding, or by keywords when that
//! fails), the host's rules applied, its output and decision logged.

use std::sync::Arc;
use std::time::Instant;

use serde_json::{json, Value};

use super::check::changes;
use super::host::{decide, Decision, HostInput};
use super::shared::{Memory, Session};
use super::similarity::{keyword_similarity, position_text, PositionComparer};
use super::speak::Spoken;
use crate::base::protocol::debate::{
    AgentRole, ComparePositionsData, CriticMetadata, Critique, HostAction, PositionSummary,
};
use crate::base::protocol::debate_turn::{task_id, RoundDigest};
use crate::data::store::{StoreError, WriteOp};
use crate::model::event::debate::{DebateErrorLogged, HostDecided, PositionsCompared};
use crate::model::event::{EngineEvent, TaskStatus};
use crate::run::engine::emit::Scope;

/// Compares the round's positions, applies the host's rules, logs the decision.
pub(super) async fn host_turn(
    s: &Session,
    comparer: &PositionComparer,
    m: &mut Memory,
    round: u32,
    spoken: &[(AgentRole, Spoken)],
) -> Result<Decision, StoreError> {
    let task: Arc<str> = task_id(round, &AgentRole::Host).into();
    let agent: Arc<str> = "host".into();
    s.emitter.write(WriteOp::AddTask {
        run_id: s.emitter.run_id().clone(),
        task_id: task.clone(),
        agent: agent.clone(),
    })?;
    let scope = Scope {
        task_id: Some(task.clone()),
        invocation_id: None,
        agent: Some(agent),
    };
    let positions: Vec<(AgentRole, PositionSummary)> = spoken
        .iter()
        .filter_map(|(a, sp)| sp.position.clone().map(|p| (a.clone(), p)))
        .collect();
    let mut analysis = json!({
        "consensus_level": null,
        "similarity_matrix": [],
        "most_different_pair": [0, 0],
        "stubborn_agents": []
    });
    // A round where nobody said anything new (every turn failed, earlier outputs stand)
    // is not compared: the same positions again would look like a stable consensus.
    let fresh = spoken.iter().any(|(_, sp)| sp.fresh);
    let mut mean = None;
    if positions.len() >= 2 && fresh {
        let data = compare(s, comparer, m, round, &scope, &positions).await?;
        m.trend.push(data.mean_similarity);
        mean = Some(data.mean_similarity);
        analysis["consensus_level"] = json!(data.mean_similarity);
        analysis["similarity_matrix"] = json!(data.similarity_matrix);
        analysis["most_different_pair"] = json!(data.most_different_pair);
    }
    let critique = critic_critique(m);
    let decision = decide(&HostInput {
        round,
        max_rounds: s.spec.max_rounds,
        thresholds: &s.spec.thresholds,
        mean,
        trend: &m.trend,
        self_similarity: &m.self_similarity,
        positions: &positions,
        critique: critique.as_ref(),
    });
    analysis["stubborn_agents"] = json!(decision.stubborn);
    let output = host_output(comparer, m, round, &decision, mean, analysis);
    s.emitter.emit(
        &scope,
        EngineEvent::HostDecided(HostDecided {
            round,
            output,
            directive: decision.directive.clone(),
        }),
    )?;
    log_done(s, m, task, round, mean, &decision, &positions)?;
    Ok(decision)
}

/// Logs the host's task as done and keeps the round's digest for the reporter.
fn log_done(
    s: &Session,
    m: &mut Memory,
    task: Arc<str>,
    round: u32,
    mean: Option<f64>,
    decision: &Decision,
    positions: &[(AgentRole, PositionSummary)],
) -> Result<(), StoreError> {
    s.emitter.write(WriteOp::TaskState {
        run_id: s.emitter.run_id().clone(),
        task_id: task,
        status: "success",
        attempts: 1,
        atoms: 0,
        error_code: None,
        final_invocation_id: None,
    })?;
    *m.tasks.entry(TaskStatus::Success).or_default() += 1;
    m.digests.push(RoundDigest {
        round,
        consensus: mean,
        action: decision.action.as_str().to_string(),
        reason: decision.reason.clone(),
        conclusions: positions
            .iter()
            .map(|(a, p)| (a.clone(), p.conclusion.clone()))
            .collect(),
    });
    Ok(())
}

/// Compares the round's `positions` (by embedding, by keywords when that fails, which is
/// logged) and logs the comparison.
async fn compare(
    s: &Session,
    comparer: &PositionComparer,
    m: &Memory,
    round: u32,
    scope: &Scope,
    positions: &[(AgentRole, PositionSummary)],
) -> Result<ComparePositionsData, StoreError> {
    let texts: Vec<String> = positions.iter().map(|(_, p)| position_text(p)).collect();
    let t0 = Instant::now();
    let (data, method, embedded, cached) = match comparer.compare(&texts).await {
        Ok(c) => (c.data, "embedding", c.embedded, c.cached),
        Err(e) => {
            s.emitter.emit(
                scope,
                EngineEvent::DebateError(DebateErrorLogged {
                    round,
                    error: json!({
                        "error": "tool_execution_failed",
                        "tool": "compare_positions",
                        "fallback": "keyword matching rules"
                    }),
                    message: format!(
                        "compare_positions failed in round {round} ({e}): similarity by keyword matching"
                    ),
                }),
            )?;
            (keyword_similarity(&texts), "keyword", 0, 0)
        }
    };
    let self_similarity = positions
        .iter()
        .filter_map(|(a, _)| {
            m.self_similarity
                .get(a)
                .and_then(|v| v.last())
                .filter(|(r, _)| *r == round)
                .map(|(_, x)| (a.as_str().to_string(), *x))
        })
        .collect();
    s.emitter.emit(
        scope,
        EngineEvent::PositionsCompared(PositionsCompared {
            round,
            agents: positions.iter().map(|(a, _)| a.clone()).collect(),
            similarity_matrix: data.similarity_matrix.clone(),
            mean_similarity: data.mean_similarity,
            most_different_pair: data.most_different_pair,
            most_different_similarity: data.most_different_similarity,
            self_similarity,
            method: method.into(),
            embedder: if method == "keyword" {
                "keyword".into()
            } else {
                comparer.embedder_name()
            },
            embedded,
            cached,
            duration_us: t0.elapsed().as_micros() as u64,
        }),
    )?;
    Ok(data)
}

/// The critique in the critic's last valid output, when it reads.
fn critic_critique(m: &Memory) -> Option<Critique> {
    m.last
        .get(&AgentRole::Critic)
        .and_then(|(o, _)| o.get("metadata").cloned())
        .and_then(|v| serde_json::from_value::<CriticMetadata>(v).ok())
        .map(|c| c.critique)
}

/// The host's output document of `decision`; its position is kept as the host's last.
fn host_output(
    comparer: &PositionComparer,
    m: &mut Memory,
    round: u32,
    decision: &Decision,
    mean: Option<f64>,
    analysis: Value,
) -> Value {
    let consensus = mean.unwrap_or(0.0);
    let mut position = PositionSummary {
        conclusion: format!("{}: {}", decision.action, decision.reason),
        key_reasons: vec![decision.reason.clone()],
        assumptions: vec![format!(
            "similarity measured by {}",
            if mean.is_some() {
                comparer.embedder_name()
            } else {
                "no comparison".into()
            }
        )],
        confidence: consensus,
        changes_from_last_round: None,
        extra: Default::default(),
    };
    position.changes_from_last_round = Some(changes(m.host_last.as_ref(), &position));
    m.host_last = Some(position.clone());
    json!({
        "agent_id": "host",
        "round": round,
        "output_type": "control",
        "content": host_content(decision, consensus),
        "metadata": {
            "decision": {
                "action": decision.action.as_str(),
                "reason": decision.reason,
                "next_agents": decision.next_agents,
                "constraints": {
                    "must_address": decision.must_address,
                    "avoid": decision.avoid
                }
            },
            "analysis": analysis,
            "position": position
        },
        "timestamp": crate::base::clock::now_rfc3339()
    })
}

/// What the host says of `decision`, in words.
fn host_content(decision: &Decision, consensus: f64) -> String {
    match decision.action {
        HostAction::Converge => format!("Consensus reached ({consensus:.2}): converging. {}", decision.reason),
        HostAction::Continue => format!(
            "Another round. {}{}",
            decision.reason,
            if decision.must_address.is_empty() {
                String::new()
            } else {
                format!(" Address: {}.", decision.must_address.join("; "))
            }
        ),
        HostAction::ForceOpposition => format!(
            "Positions are far apart ({consensus:.2}): the critic argues the opposite side as devil's advocate."
        ),
        HostAction::UpdateCommand => format!("Update command: {}", decision.reason),
        HostAction::Terminate => format!("Discussion ends: {}", decision.reason),
        HostAction::Other(_) => decision.reason.clone(),
    }
}
