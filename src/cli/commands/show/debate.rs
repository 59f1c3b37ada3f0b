//! The debate lines of `plexus show`: the session's question, its rounds, and each
//! agent's calls and tokens.

use std::collections::BTreeMap;

use crate::model::event::{EngineEvent, Envelope};
use crate::model::state::debate::DebateState;

/// The debate lines of `plexus show`: the question, how it ended, each round's
/// consensus and decision.
pub fn summary_lines(d: &DebateState) -> Vec<String> {
    let mut out = vec![
        format!(
            "question  {}",
            d.spec.as_ref().map(|s| s.question.as_str()).unwrap_or("?")
        ),
        format!(
            "session   {} after {} round(s)",
            d.status
                .as_ref()
                .map(|s| s.as_str().to_string())
                .unwrap_or_else(|| "unknown".into()),
            d.current_round
        ),
    ];
    if let Some(f) = &d.finished {
        out.push(format!("ended     {}", f.reason));
    }
    for r in &d.rounds {
        let consensus = r
            .comparison
            .as_ref()
            .map(|c| format!("{:.2} ({})", c.mean_similarity, c.method))
            .unwrap_or_else(|| "not compared".into());
        let decision = r
            .decision
            .as_ref()
            .map(|x| format!("{}: {}", x.action, x.reason))
            .unwrap_or_else(|| "no decision".into());
        out.push(format!("round {}   {consensus} → {decision}", r.round));
    }
    out
}

/// Each agent's model calls and the tokens of their replies, from a session's
/// `debate_reply` events (agents by name).
pub fn tokens_per_agent(events: &[Envelope]) -> BTreeMap<String, (u64, u64)> {
    let mut out: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for e in events {
        if let EngineEvent::DebateReply(r) = &e.event {
            let t = out.entry(r.agent.as_str().to_string()).or_default();
            t.0 += 1;
            t.1 += r.output_tokens;
        }
    }
    out
}
