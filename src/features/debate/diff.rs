//! `plexus diff` of two debate sessions: each session reduced to what it concluded —
//! the question and settings, each round's outputs (without their times), the
//! comparison, the host's decision, the trend, the report and how it ended — and the
//! places where the two differ.

use serde::Serialize;
use serde_json::{json, Value};

use crate::base::json_diff::{differences, show, Difference};
use crate::model::state::debate::{DebateState, RoundView, TurnView};

/// Most differences listed.
pub const MAX_DIFFERENCES: usize = 50;

/// The output (`null` when none) without its `timestamp`.
fn without_time(v: &Option<Value>) -> Value {
    let mut v = v.clone().unwrap_or(Value::Null);
    if let Some(o) = v.as_object_mut() {
        o.remove("timestamp");
    }
    v
}

/// What a session concluded, as compared.
pub fn digest(s: &DebateState) -> Value {
    let rounds: Vec<Value> = s.rounds.iter().map(round_digest).collect();
    json!({
        "spec": s.spec,
        "rounds": rounds,
        "consensus_trend": s.consensus_trend,
        "report": s.report.as_ref().map(|t| json!({
            "outcome": t.outcome,
            "output": without_time(&t.output),
        })),
        "errors": s.errors.iter().map(|e| json!({"round": e.round, "kind": e.kind})).collect::<Vec<_>>(),
        "status": s.status,
        "run_status": s.run_status,
    })
}

/// One round as compared: its turns by agent, the comparison, the host's decision.
fn round_digest(r: &RoundView) -> Value {
    let turns: serde_json::Map<String, Value> = r.turns.iter().map(turn_digest).collect();
    json!({
        "round": r.round,
        "turns": turns,
        "similarity": r.comparison.as_ref().map(|c| json!({
            "agents": c.agents,
            "matrix": c.similarity_matrix,
            "mean": c.mean_similarity,
            "method": c.method,
            "self_similarity": c.self_similarity,
        })),
        "decision": r.decision.as_ref().map(|d| json!({
            "action": d.action,
            "reason": d.reason,
            "must_address": d.must_address,
            "next_agents": d.next_agents,
            "directive": d.directive,
        })),
    })
}

/// One turn as compared, under its agent's name.
fn turn_digest(t: &TurnView) -> (String, Value) {
    (
        t.agent.as_str().to_string(),
        json!({
            "outcome": t.outcome,
            "attempts": t.attempts,
            "reused": t.reused,
            "output": without_time(&t.output),
        }),
    )
}

/// The comparison of two sessions.
#[derive(Debug, Clone, Serialize)]
pub struct DebateDiff {
    /// Session A.
    pub run_a: String,
    /// Session B.
    pub run_b: String,
    /// No difference.
    pub same: bool,
    /// Where they differ, at most [`MAX_DIFFERENCES`].
    pub differences: Vec<Place>,
}

/// One place where two sessions differ.
#[derive(Debug, Clone, Serialize)]
pub struct Place {
    /// Path in the compared digest (`rounds[1].decision.action`).
    pub path: String,
    /// Session A's value (absent: nothing there).
    pub a: Option<Value>,
    /// Session B's value.
    pub b: Option<Value>,
}

impl From<Difference> for Place {
    fn from(d: Difference) -> Self {
        Place {
            path: d.path,
            a: d.recorded,
            b: d.now,
        }
    }
}

/// Compares two sessions.
pub fn compare(a: &DebateState, b: &DebateState) -> DebateDiff {
    let d = differences(&digest(a), &digest(b), MAX_DIFFERENCES);
    DebateDiff {
        run_a: a.run_id.clone(),
        run_b: b.run_id.clone(),
        same: d.is_empty(),
        differences: d.into_iter().map(Place::from).collect(),
    }
}

/// The comparison as text lines.
pub fn render(d: &DebateDiff) -> Vec<String> {
    if d.same {
        return vec!["no differences".into()];
    }
    let mut out = vec![format!(
        "debate sessions {} (A) and {} (B) differ{}:",
        d.run_a,
        d.run_b,
        if d.differences.len() >= MAX_DIFFERENCES {
            format!(" (first {MAX_DIFFERENCES} places)")
        } else {
            String::new()
        }
    )];
    for x in &d.differences {
        out.push(format!(
            "  {}",
            if x.path.is_empty() {
                "(whole session)"
            } else {
                &x.path
            }
        ));
        let one_line = |v: Option<&Value>| show(v).replace('\n', " ⏎ ");
        out.push(format!("    A: {}", one_line(x.a.as_ref())));
        out.push(format!("    B: {}", one_line(x.b.as_ref())));
    }
    out
}
