//! The session as the front end's event stream: `data: {json}` lines, each followed by
//! a blank line, ending with `data: [DONE]`. Agents' outputs become `agent_output`,
//! the host's decisions `host_decision`, the reporter's report `final_report`.

use serde_json::{json, Value};

use crate::event::{EngineEvent, Envelope};
use crate::protocol::debate::{
    AgentOutputEvent, AgentRole, FinalReportEvent, HostAction, HostDecisionEvent, Plan, SseData,
    StreamEvent,
};

/// The stream items of one event (none for most events).
pub fn items(env: &Envelope) -> Vec<SseData> {
    let event = match &env.event {
        EngineEvent::DebateOutput(o) => {
            let Some(out) = &o.output else {
                return Vec::new();
            };
            let content = out
                .get("content")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            if o.agent == AgentRole::Reporter {
                let plan = out
                    .pointer("/metadata/final_plan/plan")
                    .cloned()
                    .and_then(|p| serde_json::from_value::<Plan>(p).ok());
                let Some(plan) = plan else {
                    return Vec::new();
                };
                let mut e = FinalReportEvent {
                    agent: AgentRole::Reporter,
                    content,
                    plan,
                    extra: Default::default(),
                };
                if let Some(s) = out.pointer("/metadata/summary") {
                    e.extra.insert("summary".into(), s.clone());
                }
                StreamEvent::FinalReport(e)
            } else {
                let mut e = AgentOutputEvent {
                    agent: o.agent.clone(),
                    round: o.round,
                    content,
                    extra: Default::default(),
                };
                if let Some(p) = out.pointer("/metadata/position") {
                    e.extra.insert("position".into(), p.clone());
                }
                if o.reused {
                    e.extra.insert("reused".into(), json!(true));
                }
                StreamEvent::AgentOutput(e)
            }
        }
        EngineEvent::HostDecided(h) => {
            let text = |p: &str| {
                h.output
                    .pointer(p)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            let mut e = HostDecisionEvent {
                action: HostAction::from(text("/metadata/decision/action")),
                reason: text("/metadata/decision/reason"),
                extra: Default::default(),
            };
            e.extra.insert("round".into(), json!(h.round));
            if let Some(c) = h.output.pointer("/metadata/analysis/consensus_level") {
                e.extra.insert("consensus_level".into(), c.clone());
            }
            StreamEvent::HostDecision(e)
        }
        _ => return Vec::new(),
    };
    vec![SseData::Event(Box::new(event))]
}

/// The text of one stream item: `data: PAYLOAD` and a blank line.
pub fn frame(item: &SseData) -> String {
    let payload = item
        .to_payload()
        .unwrap_or_else(|_| "{\"type\":\"error\"}".into());
    format!("data: {payload}\n\n")
}

/// The stream's last item.
pub fn done() -> String {
    frame(&SseData::Done)
}
