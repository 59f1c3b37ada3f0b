//! A folded session as the front end shows it ([`MultiAgentMessage`]): served by
//! `plexus serve` at `GET /api/sessions/ID` and printed by `plexus show RUN --json`.

use serde_json::Value;

use super::debate::DebateState;
use crate::base::protocol::debate::{
    FrontDecision, FrontOutput, FrontReport, FrontRound, MultiAgentMessage, Plan, FRONT_END_TYPE,
};

impl DebateState {
    /// The session in the front end's shape; `session_id` is its run id.
    pub fn front_end(&self, session_id: &str) -> MultiAgentMessage {
        let last = self.rounds.last().map(|r| r.round);
        let rounds = self
            .rounds
            .iter()
            .map(|r| FrontRound {
                round: r.round,
                // The closing answers (uncertainties, worst cases) end the last round.
                outputs: r
                    .turns
                    .iter()
                    .chain(self.closing.iter().filter(|_| Some(r.round) == last))
                    .filter(|t| t.output.is_some())
                    .map(|t| FrontOutput {
                        agent: t.agent.clone(),
                        content: t.content.clone(),
                        position: t.position.clone(),
                    })
                    .collect(),
                host_decision: r.decision.as_ref().map(|d| FrontDecision {
                    action: d.action.clone(),
                    reason: d.reason.clone(),
                    consensus_level: d.consensus,
                }),
            })
            .collect();
        let final_report = self
            .report
            .as_ref()
            .filter(|t| t.outcome == crate::model::event::debate::TurnOutcome::Valid)
            .and_then(|t| {
                let out = t.output.as_ref()?;
                let meta = out.get("metadata");
                Some(FrontReport {
                    content: t.content.clone(),
                    plan: meta
                        .and_then(|m| m.pointer("/final_plan/plan"))
                        .and_then(|p| serde_json::from_value::<Plan>(p.clone()).ok()),
                    todo: meta
                        .and_then(|m| m.get("todo"))
                        .filter(|v| !v.is_null())
                        .cloned(),
                })
            });
        MultiAgentMessage {
            kind: FRONT_END_TYPE.into(),
            session_id: session_id.to_string(),
            status: self.status.clone(),
            rounds,
            final_report,
        }
    }
}

/// [`DebateState::front_end`] as JSON.
pub fn front_end_json(state: &DebateState, session_id: &str) -> Value {
    serde_json::to_value(state.front_end(session_id)).unwrap_or(Value::Null)
}
