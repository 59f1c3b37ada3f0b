//! Whether a reply is a valid output of its agent: one JSON object in the agent's shape,
//! with its position summary, for the right round, within the token limit. Problems
//! are listed in words, so a retry can tell the model and the log can tell a person.

use serde_json::Value;

use crate::base::protocol::debate::{
    AgentOutput, AgentRole, CriticMetadata, OutputType, PlannerMetadata, PositionChanges,
    PositionSummary, ReporterMetadata,
};

use crate::base::protocol::debate_turn::output_type_of;

/// A reply that passed: the output as stored, and its position.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    /// The output (unknown fields kept).
    pub output: Value,
    /// Its position summary.
    pub position: PositionSummary,
}

/// The JSON object in a reply: the whole text, or a fenced block, or the span from the
/// first `{` to the last `}` — after any reasoning (`<think>…</think>`), which is never
/// read as the answer.
fn json_of(text: &str) -> Option<Value> {
    let t = crate::base::text::reasoning::answer(text).trim();
    if let Ok(v) = serde_json::from_str::<Value>(t) {
        return Some(v);
    }
    let (start, end) = (t.find('{')?, t.rfind('}')?);
    (start < end)
        .then(|| serde_json::from_str::<Value>(&t[start..=end]).ok())
        .flatten()
}

/// The position of a report that states none: its final plan's title (else the
/// content's first line) as the conclusion, the agreements as reasons, the open
/// uncertainties as assumptions, and a confidence from the consensus level it reports.
fn reporter_position(m: &ReporterMetadata, content: &str) -> PositionSummary {
    use crate::base::protocol::debate::Level;
    let title = m.final_plan.title.trim();
    let conclusion = if title.is_empty() {
        content
            .lines()
            .map(|l| l.trim_start_matches('#').trim())
            .find(|l| !l.is_empty())
            .unwrap_or_default()
            .to_string()
    } else {
        title.to_string()
    };
    PositionSummary {
        conclusion,
        key_reasons: m.summary.key_agreements.clone(),
        assumptions: m.summary.remaining_uncertainties.clone(),
        confidence: match m.final_plan.consensus_level {
            Level::High => 0.85,
            Level::Medium => 0.6,
            Level::Low => 0.35,
        },
        changes_from_last_round: None,
        extra: Default::default(),
    }
}

/// A reply quoted in a problem: cut at a word to 160 characters.
fn cut(s: &str) -> String {
    crate::base::text::cut::cut_chars(s, 160).into_owned()
}

/// What the checks read of an output in its agent's shape: agent, round, output type,
/// content, position.
type Fields = (AgentRole, u32, OutputType, String, PositionSummary);

/// Checks a reply of `role` for `round`. `tokens` is the reply's token count;
/// `default_timestamp` fills a missing `timestamp`.
pub fn check(
    role: &AgentRole,
    round: u32,
    text: &str,
    tokens: u64,
    max_tokens: u64,
    default_timestamp: &str,
) -> Result<Checked, Vec<String>> {
    let mut problems = Vec::new();
    if tokens > max_tokens {
        problems.push(format!(
            "the output has {tokens} tokens; at most {max_tokens} are allowed"
        ));
    }
    let read = parsed(text, default_timestamp).and_then(|v| typed(role, &v).map(|f| (v, f)));
    let (v, (agent_id, got_round, output_type, content, position)) = match read {
        Ok(r) => r,
        Err(p) => {
            problems.push(p);
            return Err(problems);
        }
    };
    if agent_id != *role {
        problems.push(format!("agent_id is `{agent_id}`, expected `{role}`"));
    }
    if got_round != round {
        problems.push(format!("round is {got_round}, expected {round}"));
    }
    if output_type.as_str() != output_type_of(role) {
        problems.push(format!(
            "output_type is `{output_type}`, expected `{}`",
            output_type_of(role)
        ));
    }
    if content.trim().is_empty() {
        problems.push("content is empty".into());
    }
    position_problems(&position, &mut problems);
    if problems.is_empty() {
        Ok(Checked {
            output: v,
            position,
        })
    } else {
        Err(problems)
    }
}

/// The reply's JSON object, a missing or blank `timestamp` filled with
/// `default_timestamp`; the problem when there is none.
fn parsed(text: &str, default_timestamp: &str) -> Result<Value, String> {
    let Some(mut v) = json_of(text) else {
        return Err(if text.trim().is_empty() {
            "the reply is empty".to_string()
        } else {
            format!("the reply is not a JSON object: {}", cut(text.trim()))
        });
    };
    let Some(obj) = v.as_object_mut() else {
        return Err("the reply is JSON but not an object".into());
    };
    if obj
        .get("timestamp")
        .and_then(Value::as_str)
        .is_none_or(|s| s.trim().is_empty())
    {
        obj.insert("timestamp".into(), Value::String(default_timestamp.into()));
    }
    Ok(v)
}

/// The output `v` read in `role`'s shape; the problem when it does not have it, or when
/// `role` does not answer through a model.
fn typed(role: &AgentRole, v: &Value) -> Result<Fields, String> {
    let typed = match role {
        AgentRole::Planner => serde_json::from_value::<AgentOutput<PlannerMetadata>>(v.clone())
            .map(|o| {
                (
                    o.agent_id,
                    o.round,
                    o.output_type,
                    o.content,
                    o.metadata.position,
                )
            }),
        AgentRole::Critic => {
            serde_json::from_value::<AgentOutput<CriticMetadata>>(v.clone()).map(|o| {
                (
                    o.agent_id,
                    o.round,
                    o.output_type,
                    o.content,
                    o.metadata.position,
                )
            })
        }
        AgentRole::Reporter => reporter_fields(v),
        AgentRole::Host | AgentRole::Other(_) => {
            return Err(format!("{role} does not answer through a model"));
        }
    };
    typed.map_err(|e| format!("the output does not have the {role}'s shape: {e}"))
}

/// A report read in the reporter's shape, its position stated or made from the report.
fn reporter_fields(v: &Value) -> Result<Fields, serde_json::Error> {
    let o = serde_json::from_value::<AgentOutput<ReporterMetadata>>(v.clone())?;
    match o.metadata.extra.get("position").cloned() {
        Some(p) => serde_json::from_value::<PositionSummary>(p)
            .map(|p| (o.agent_id, o.round, o.output_type, o.content, p)),
        // The protocol's own reporter format has no position: its final plan
        // and summary say it.
        None => {
            let p = reporter_position(&o.metadata, &o.content);
            Ok((o.agent_id, o.round, o.output_type, o.content, p))
        }
    }
}

/// Adds what is missing or out of range in `position` to `problems`.
fn position_problems(position: &PositionSummary, problems: &mut Vec<String>) {
    if position.conclusion.trim().is_empty() {
        problems.push("metadata.position.conclusion is empty".into());
    }
    if position.key_reasons.iter().all(|r| r.trim().is_empty()) {
        problems.push("metadata.position.key_reasons is empty".into());
    }
    if !(0.0..=1.0).contains(&position.confidence) {
        problems.push(format!(
            "metadata.position.confidence is {}, expected 0 to 1",
            position.confidence
        ));
    }
}

/// What changed in a position since the agent's previous one.
pub fn changes(previous: Option<&PositionSummary>, now: &PositionSummary) -> PositionChanges {
    let round2 = |x: f64| (x * 100.0).round() / 100.0;
    match previous {
        None => PositionChanges {
            conclusion_changed: false,
            reasons_added: Vec::new(),
            confidence_delta: 0.0,
            extra: Default::default(),
        },
        Some(p) => PositionChanges {
            conclusion_changed: p.conclusion.trim() != now.conclusion.trim(),
            reasons_added: now
                .key_reasons
                .iter()
                .filter(|r| !p.key_reasons.iter().any(|q| q.trim() == r.trim()))
                .cloned()
                .collect(),
            confidence_delta: round2(now.confidence - p.confidence),
            extra: Default::default(),
        },
    }
}

/// Writes `changes` into the output's position summary (the engine's account of the
/// change replaces the model's own).
pub fn set_changes(output: &mut Value, position: &mut PositionSummary, changes: PositionChanges) {
    position.changes_from_last_round = Some(changes);
    if let (Some(slot), Ok(p)) = (
        output.pointer_mut("/metadata/position"),
        serde_json::to_value(&*position),
    ) {
        *slot = p;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn planner(round: u32) -> Value {
        json!({
            "agent_id": "planner", "round": round, "output_type": "plan", "content": "three phases",
            "metadata": {
                "position": {"conclusion": "three phases", "key_reasons": ["a"], "assumptions": [], "confidence": 0.8},
                "plan": {"title": "T", "goal": "G", "phases": [], "total_estimated_hours": 1}
            }
        })
    }

    fn problems(text: &str, tokens: u64) -> Vec<String> {
        check(
            &AgentRole::Planner,
            2,
            text,
            tokens,
            2000,
            "2026-11-27T00:00:00Z",
        )
        .err()
        .unwrap_or_default()
    }

    #[test]
    fn a_valid_output_passes_and_gets_a_timestamp() {
        let c = check(
            &AgentRole::Planner,
            2,
            &planner(2).to_string(),
            50,
            2000,
            "2026-11-27T00:00:00Z",
        )
        .expect("valid");
        assert_eq!(c.output["timestamp"], "2026-11-27T00:00:00Z");
        assert_eq!(c.position.conclusion, "three phases");
    }

    #[test]
    fn json_inside_prose_or_a_fence_is_found() {
        let fenced = format!("Here it is:\n```json\n{}\n```\nDone.", planner(2));
        assert!(problems(&fenced, 50).is_empty());
    }

    #[test]
    fn each_problem_is_named() {
        assert!(problems("no json here", 5)[0].contains("not a JSON object"));
        assert!(problems("", 0)[0].contains("empty"));
        assert!(problems(&planner(3).to_string(), 50)[0].contains("round is 3, expected 2"));
        let over = problems(&planner(2).to_string(), 2001);
        assert!(over[0].contains("2001 tokens; at most 2000"), "{over:?}");
        assert!(
            problems(&planner(2).to_string(), 2000).is_empty(),
            "2000 is allowed"
        );
        let mut v = planner(2);
        v["metadata"]["position"]["confidence"] = json!(1.5);
        assert!(problems(&v.to_string(), 5)[0].contains("confidence is 1.5"));
        let mut v = planner(2);
        v["agent_id"] = json!("critic");
        assert!(problems(&v.to_string(), 5)[0].contains("agent_id is `critic`"));
        let mut v = planner(2);
        v["metadata"].as_object_mut().map(|m| m.remove("plan"));
        assert!(problems(&v.to_string(), 5)[0].contains("planner's shape"));
    }

    #[test]
    fn reasoning_before_the_json_and_numbers_as_strings_are_read() {
        let mut v = planner(2);
        v["round"] = json!("2");
        v["metadata"]["position"]["confidence"] = json!("0.8");
        let text = format!("<think>Should I say {{x}}? The plan {{is}} fine.</think>\n{v}");
        let c = check(&AgentRole::Planner, 2, &text, 50, 2000, "t").expect("valid");
        assert_eq!(c.position.confidence, 0.8);
    }

    #[test]
    fn the_protocols_own_reporter_example_is_accepted_without_a_position() {
        // The protocol's reporter format, as its example gives it (the phases filled).
        let report = json!({
            "agent_id": "reporter", "round": 3, "output_type": "report",
            "content": "# IELTS 3-month plan\n\nAfter several rounds…",
            "metadata": {
                "final_plan": {
                    "title": "IELTS 3-month plan (revised)", "goal": "overall 7.0",
                    "consensus_level": "high", "participating_agents": ["planner", "critic"],
                    "rounds": 3,
                    "plan": {"phases": [], "total_estimated_hours": 200}
                },
                "summary": {
                    "key_agreements": ["three phases", "two timed essays a week"],
                    "resolved_concerns": ["too little writing -> added"],
                    "remaining_uncertainties": ["two hours a day may not be available"]
                }
            },
            "timestamp": "2025-12-04T10:15:00Z"
        });
        let c = check(&AgentRole::Reporter, 3, &report.to_string(), 80, 2000, "t")
            .expect("the protocol's example is valid");
        assert_eq!(c.position.conclusion, "IELTS 3-month plan (revised)");
        assert_eq!(c.position.key_reasons.len(), 2);
        assert_eq!(c.position.confidence, 0.85);
    }

    #[test]
    fn changes_are_counted_from_the_previous_position() {
        let p = |c: &str, r: &[&str], conf: f64| PositionSummary {
            conclusion: c.into(),
            key_reasons: r.iter().map(|s| s.to_string()).collect(),
            assumptions: vec![],
            confidence: conf,
            changes_from_last_round: None,
            extra: Default::default(),
        };
        let before = p("A", &["x"], 0.8);
        let now = p("B", &["x", "y"], 0.85);
        let c = changes(Some(&before), &now);
        assert!(c.conclusion_changed);
        assert_eq!(c.reasons_added, vec!["y"]);
        assert_eq!(c.confidence_delta, 0.05);
        let first = changes(None, &now);
        assert!(!first.conclusion_changed && first.reasons_added.is_empty());
    }
}
