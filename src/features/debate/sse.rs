//! The session as the front end's event stream: `data: {json}` lines, each followed by
//! a blank line, ending with `data: [DONE]`. Agents' outputs become `agent_output`,
//! the host's decisions `host_decision`, the reporter's report `final_report`; every
//! error of the session (`agent_timeout`, `agent_failed`, `invalid_output`,
//! `tool_execution_failed`, `max_rounds_reached`) an `error` event carrying the
//! protocol's error document, and a session that ends failed a last `error` event
//! (`session_failed`) before the end marker.

use serde_json::{json, Value};

use crate::base::protocol::debate::{
    AgentOutputEvent, AgentRole, FinalReportEvent, HostAction, HostDecisionEvent, Plan,
    SessionStatus, SseData, StreamErrorEvent, StreamEvent,
};
use crate::model::event::{EngineEvent, Envelope};

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
                if o.closing {
                    e.extra.insert("closing".into(), json!(true));
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
        EngineEvent::DebateError(e) => StreamEvent::Error(error_event(&e.error, &e.message)),
        EngineEvent::DebateFinished(f) if f.status == SessionStatus::Failed => {
            StreamEvent::Error(StreamErrorEvent {
                error: "failed".into(),
                reason: "session_failed".into(),
                message: format!("the session ended failed without a report: {}", f.reason),
                extra: Default::default(),
            })
        }
        _ => return Vec::new(),
    };
    let mut items = vec![SseData::Event(Box::new(event))];
    // The last round was held without agreement: the protocol's max-rounds document
    // follows the host's decision, before the reporter's summary of the disagreements.
    if let EngineEvent::HostDecided(h) = &env.event {
        if h.directive.get("status").and_then(Value::as_str) == Some("max_rounds_reached") {
            let reason = h
                .output
                .pointer("/metadata/decision/reason")
                .and_then(Value::as_str)
                .unwrap_or("the last round was held");
            let mut doc = h.directive.clone();
            doc["error"] = json!("max_rounds_reached");
            items.push(SseData::Event(Box::new(StreamEvent::Error(error_event(
                &doc, reason,
            )))));
        }
    }
    items
}

/// A stream `error` event of an error document of the protocol (`{"error": KIND, …}`, or
/// the max-rounds document): its fields kept as they are, `reason` the kind, `message`
/// the words.
fn error_event(doc: &Value, message: &str) -> StreamErrorEvent {
    let kind = doc
        .get("error")
        .and_then(Value::as_str)
        .unwrap_or("error")
        .to_string();
    let mut extra = crate::base::protocol::Extra::default();
    if let Some(fields) = doc.as_object() {
        for (k, v) in fields {
            if !matches!(k.as_str(), "error" | "reason" | "message" | "type") {
                extra.insert(k.clone(), v.clone());
            }
        }
    }
    StreamErrorEvent {
        reason: kind.clone(),
        error: kind,
        message: message.to_string(),
        extra,
    }
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
