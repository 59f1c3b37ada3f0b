//! The protocol's session document of a folded debate ([`DebateState::session_state`]):
//! the agents with their last outputs, the rounds' outputs (the closing answers and the
//! report end the last one), the consensus trend and why the session ended.

use serde_json::Value;

use super::debate::DebateState;
use crate::base::protocol::debate::{
    AgentOutput, AgentSlot, RoundRecord, SessionState, SessionStatus,
};

impl DebateState {
    /// The session document of the protocol (`session_id`, `user_query`, `mode`,
    /// `status`, `current_round`, `max_rounds`, `agents`, `history`, `consensus_trend`,
    /// `created_at`, `updated_at`).
    pub fn session_state(&self) -> SessionState {
        let rfc = |ms: i64| {
            chrono::DateTime::from_timestamp_millis(ms)
                .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
                .unwrap_or_default()
        };
        let agents = self
            .agents
            .iter()
            .map(|(role, a)| {
                (
                    role.as_str().to_string(),
                    AgentSlot {
                        status: a.status.clone(),
                        last_output: a
                            .last_output
                            .as_ref()
                            .and_then(|v| serde_json::from_value(v.clone()).ok()),
                        extra: Default::default(),
                    },
                )
            })
            .collect();
        let history = self
            .rounds
            .iter()
            .map(|r| {
                let mut outputs: Vec<AgentOutput> = r
                    .turns
                    .iter()
                    .filter_map(|t| t.output.as_ref())
                    .filter_map(|v| serde_json::from_value(v.clone()).ok())
                    .collect();
                if let Some(d) = &r.decision {
                    outputs.extend(serde_json::from_value(d.output.clone()).ok());
                }
                let last = self.rounds.last().map(|l| l.round) == Some(r.round);
                if last {
                    outputs.extend(
                        self.closing
                            .iter()
                            .filter_map(|t| t.output.as_ref())
                            .filter_map(|v| serde_json::from_value(v.clone()).ok()),
                    );
                }
                if let Some(rep) = self.report.as_ref().filter(|_| last) {
                    outputs.extend(
                        rep.output
                            .as_ref()
                            .and_then(|v| serde_json::from_value(v.clone()).ok()),
                    );
                }
                RoundRecord {
                    round: r.round,
                    outputs,
                    extra: Default::default(),
                }
            })
            .collect();
        SessionState {
            session_id: self.run_id.clone(),
            user_query: self
                .spec
                .as_ref()
                .map(|s| s.question.clone())
                .unwrap_or_default(),
            mode: "multi_agent".into(),
            status: self.status.clone().unwrap_or(SessionStatus::InProgress),
            current_round: self.current_round,
            max_rounds: self.spec.as_ref().map_or(0, |s| s.max_rounds),
            agents,
            history,
            consensus_trend: self.consensus_trend.clone(),
            created_at: self.created_ms.map(rfc).unwrap_or_default(),
            updated_at: rfc(self.updated_ms),
            // Why the session ended, once it has.
            extra: self
                .finished
                .iter()
                .map(|f| ("end_reason".to_string(), Value::String(f.reason.clone())))
                .collect(),
        }
    }
}
