//! The simulated model's side of a debate: deterministic answers from the turn alone
//! (the question, the round, what the others said, the host's instruction), so the
//! simulated provider and the mock server answer alike and a session is reproducible.
//!
//! The planner proposes a three-phase plan and adopts the critic's suggestions; the
//! critic raises three concerns and drops each one the planner has addressed, so the
//! positions draw closer round by round. What they argue about follows the question
//! ([`topic_of`]: an exam, a software change, any other plan). As devil's advocate the critic argues against
//! fixed plans altogether; told to update, the planner changes an assumption and lowers
//! its confidence.

use chrono::{Days, NaiveDate};
use serde_json::{json, Value};

use super::sim_debate_topic::{topic_of, Topic};
use crate::base::protocol::debate::AgentRole;
use crate::base::protocol::debate_turn::DebateTurn;

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

fn topic(q: &str) -> String {
    let q = q.trim().trim_end_matches(['?', '？', '.', '。']);
    format!("“{}”", crate::base::text::cut::cut_chars(q, 61))
}

fn str_list(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn today(turn: &DebateTurn) -> NaiveDate {
    turn.now
        .get("date")
        .and_then(Value::as_str)
        .and_then(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").ok())
        .unwrap_or(NaiveDate::MIN)
}

fn stamp(turn: &DebateTurn) -> String {
    turn.now
        .get("datetime")
        .or_else(|| turn.now.get("now"))
        .and_then(Value::as_str)
        .unwrap_or("1970-01-01T00:00:00Z")
        .to_string()
}

fn deadline(start: NaiveDate, weeks: u64) -> String {
    start
        .checked_add_days(Days::new(weeks * 7))
        .map(|d| d.format("%Y-%m-%d").to_string())
        .unwrap_or_default()
}

fn plan(turn: &DebateTurn, extra_tasks: &[String]) -> Value {
    let t = topic(&turn.question);
    let k = topic_of(&turn.question);
    let d = today(turn);
    let mut consolidation = vec![json!({
        "title": k.tasks[1],
        "estimated_hours": 60,
        "deadline": deadline(d, 10),
        "tags": ["practice"]
    })];
    for (i, x) in extra_tasks.iter().enumerate() {
        consolidation.push(json!({
            "title": x,
            "estimated_hours": 12,
            "deadline": deadline(d, 10),
            "tags": ["revision", format!("suggestion-{}", i + 1)]
        }));
    }
    let hours = 42 + 60 + 12 * extra_tasks.len() as u64 + 40;
    json!({
        "title": format!("Three-phase plan: {t}"),
        "goal": t,
        "phases": [
            {"phase_name": "Phase 1: groundwork", "duration": "4 weeks",
             "tasks": [{"title": k.tasks[0], "estimated_hours": 42,
                        "deadline": deadline(d, 4), "tags": ["foundation"]}]},
            {"phase_name": "Phase 2: consolidation", "duration": "6 weeks",
             "tasks": consolidation},
            {"phase_name": "Phase 3: rehearsal", "duration": "2 weeks",
             "tasks": [{"title": k.tasks[2], "estimated_hours": 40,
                        "deadline": deadline(d, 12), "tags": ["rehearsal"]}]}
        ],
        "total_estimated_hours": hours
    })
}

/// The suggestions (solutions) a critic output made.
fn solutions_of(critic: &Value) -> Vec<String> {
    critic
        .pointer("/metadata/critique/suggestions")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.get("solution").and_then(Value::as_str))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn planner(turn: &DebateTurn) -> Value {
    let t = topic(&turn.question);
    let k = topic_of(&turn.question);
    let previous = turn.own_previous.as_ref();
    let mut reasons = str_list(previous.and_then(|p| p.pointer("/metadata/position/key_reasons")));
    if reasons.is_empty() {
        reasons = strings(&k.reasons);
    }
    let mut adopted = str_list(previous.and_then(|p| p.pointer("/metadata/position/adopted")));
    // Adopts the critic's suggestions, two per round.
    for critic in &turn.others {
        for s in solutions_of(critic).into_iter().take(2) {
            if !reasons.contains(&s) && reasons.len() < 6 {
                reasons.push(s.clone());
                adopted.push(s);
            }
        }
    }
    let mut assumptions = strings(&k.assumptions);
    let mut confidence = 0.8 + 0.03 * f64::from(turn.round.saturating_sub(1));
    let updated = turn
        .host
        .as_ref()
        .is_some_and(|h| h.action == "update_command");
    if updated {
        assumptions[0] = k.updated.into();
        confidence -= 0.1;
    }
    let conclusion = if adopted.is_empty() {
        format!("Adopt a three-phase plan for {t}")
    } else {
        format!("Adopt a three-phase plan for {t}, {}", k.adopted)
    };
    json!({
        "agent_id": "planner",
        "round": turn.round,
        "output_type": "plan",
        "content": format!(
            "I suggest three phases for {t}: groundwork (4 weeks), consolidation (6 weeks) and rehearsal (2 weeks).{}",
            if adopted.is_empty() { String::new() } else { format!(" Revised: {}.", adopted.join("; ")) }
        ),
        "metadata": {
            "position": {
                "conclusion": conclusion,
                "key_reasons": reasons,
                "assumptions": assumptions,
                "confidence": (confidence.min(0.95) * 100.0).round() / 100.0,
                "adopted": adopted
            },
            "plan": plan(turn, &adopted)
        },
        "timestamp": stamp(turn)
    })
}

fn critic(turn: &DebateTurn) -> Value {
    let t = topic(&turn.question);
    let k: &Topic = topic_of(&turn.question);
    let planner = turn.others.first();
    let planner_reasons =
        str_list(planner.and_then(|p| p.pointer("/metadata/position/key_reasons")));
    let open: Vec<&(&str, &str, &str)> = k
        .concerns
        .iter()
        .filter(|(_, solution, _)| !planner_reasons.iter().any(|r| r == solution))
        .collect();
    let devil = turn
        .host
        .as_ref()
        .is_some_and(|h| h.action == "force_opposition");
    let (conclusion, reasons, confidence) = if devil {
        (
            format!("Do not fix a plan for {t} now: adapt it week by week"),
            strings(&k.against),
            0.6,
        )
    } else if planner.is_none() {
        // The first round, in parallel: the critic's own view of the obvious plan.
        let mut r: Vec<String> = strings(&k.reasons);
        r.extend(k.concerns.iter().map(|c| c.0.to_string()));
        (
            format!("A three-phase plan for {t} works only with more practice and feedback"),
            r,
            0.75,
        )
    } else if open.is_empty() {
        (
            planner
                .and_then(|p| p.pointer("/metadata/position/conclusion"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            planner_reasons.clone(),
            0.88,
        )
    } else {
        let mut r: Vec<String> = planner_reasons
            .iter()
            .filter(|r| {
                k.reasons.contains(&r.as_str()) || k.concerns.iter().any(|c| c.1 == r.as_str())
            })
            .cloned()
            .collect();
        r.extend(open.iter().map(|c| c.0.to_string()));
        (
            format!("The plan for {t} is sound once the open points are fixed"),
            r,
            0.8,
        )
    };
    let concerns: Vec<&(&str, &str, &str)> = if planner.is_none() {
        k.concerns.iter().collect()
    } else {
        open
    };
    json!({
        "agent_id": "critic",
        "round": turn.round,
        "output_type": "critique",
        "content": if concerns.is_empty() {
            format!("The revised plan for {t} addresses my concerns.")
        } else {
            format!("The plan for {t} has these problems: {}.",
                concerns.iter().map(|c| c.0).collect::<Vec<_>>().join("; "))
        },
        "metadata": {
            "position": {
                "conclusion": conclusion,
                "key_reasons": reasons,
                "assumptions": k.critic_assumes,
                "confidence": confidence
            },
            "critique": {
                "target_agent": "planner",
                "target_round": if planner.is_some() { turn.round } else { 0 },
                "risks": concerns.iter().map(|c| json!({
                    "risk": c.0, "severity": c.2, "impact": "the goal may be missed"
                })).collect::<Vec<_>>(),
                "suggestions": concerns.iter().map(|c| json!({
                    "issue": c.0, "solution": c.1, "priority": c.2
                })).collect::<Vec<_>>(),
                "validity_check": {
                    "feasible": true,
                    "realistic": concerns.len() < 3,
                    "complete": concerns.is_empty()
                }
            }
        },
        "timestamp": stamp(turn)
    })
}

/// The reporter's answer: the planner's plan as the final plan, what the speakers agree on,
/// the concerns resolved and what remains uncertain.
fn reporter(turn: &DebateTurn) -> Value {
    let t = topic(&turn.question);
    let k = topic_of(&turn.question);
    let planner = output_of(turn, "planner");
    let critic = output_of(turn, "critic");
    let plan = planner
        .and_then(|p| p.pointer("/metadata/plan"))
        .cloned()
        .unwrap_or_else(|| json!({"phases": [], "total_estimated_hours": 0}));
    let consensus = turn.history.last().and_then(|d| d.consensus).unwrap_or(0.0);
    let level = level_of(consensus);
    let p_reasons = str_list(planner.and_then(|p| p.pointer("/metadata/position/key_reasons")));
    let c_reasons = str_list(critic.and_then(|p| p.pointer("/metadata/position/key_reasons")));
    let agreements: Vec<String> = p_reasons
        .iter()
        .filter(|r| c_reasons.contains(r))
        .cloned()
        .collect();
    let resolved: Vec<String> = k
        .concerns
        .iter()
        .filter(|c| p_reasons.iter().any(|r| r == c.1))
        .map(|c| format!("{} -> {}", c.0, c.1))
        .collect();
    let uncertain = uncertainties(turn, k, &c_reasons);
    let content = report_content(turn, &t, consensus, level, &plan, &agreements);
    json!({
        "agent_id": "reporter",
        "round": turn.round,
        "output_type": "report",
        "content": content,
        "metadata": {
            "position": {
                "conclusion": format!("Final plan for {t} ({level} consensus)"),
                "key_reasons": if agreements.is_empty() { p_reasons.clone() } else { agreements.clone() },
                "assumptions": ["the plan is followed as written"],
                "confidence": (consensus * 100.0).round() / 100.0
            },
            "final_plan": {
                "title": format!("Three-phase plan: {t}"),
                "goal": t,
                "consensus_level": level,
                "participating_agents": ["planner", "critic"],
                "rounds": turn.history.len(),
                "plan": plan
            },
            "summary": {
                "key_agreements": agreements,
                "resolved_concerns": resolved,
                "remaining_uncertainties": uncertain
            },
            "todo": crate::base::protocol::debate::todo_of_plan(&plan)
        },
        "timestamp": stamp(turn)
    })
}

/// The output of `agent` among those the turn reads.
fn output_of<'a>(turn: &'a DebateTurn, agent: &str) -> Option<&'a Value> {
    turn.others
        .iter()
        .find(|o| o.get("agent_id").and_then(Value::as_str) == Some(agent))
}

/// The consensus level (`high`, `medium`, `low`) of a mean similarity.
fn level_of(consensus: f64) -> &'static str {
    if consensus > 0.9 {
        "high"
    } else if consensus > 0.7 {
        "medium"
    } else {
        "low"
    }
}

/// What remains uncertain: the concerns the critic still holds, then what the speakers
/// listed in their closing answers; the planner's closing uncertainty when none is left.
fn uncertainties(turn: &DebateTurn, k: &Topic, c_reasons: &[String]) -> Vec<String> {
    let mut uncertain: Vec<String> = k
        .concerns
        .iter()
        .filter(|c| c_reasons.iter().any(|r| r == c.0))
        .map(|c| c.0.to_string())
        .collect();
    // What the speakers listed in their closing answers, worst cases included.
    let closing = turn.others.iter().flat_map(|o| {
        ["/metadata/remaining_uncertainties", "/metadata/worst_cases"]
            .into_iter()
            .flat_map(move |key| str_list(o.pointer(key)))
    });
    for u in closing {
        if !uncertain.contains(&u) {
            uncertain.push(u);
        }
    }
    if uncertain.is_empty() {
        uncertain.push(k.planner_closing.0.into());
    }
    uncertain
}

/// The report's text: the plan's phases, the diverging conclusions when the discussion
/// ended apart, the agreements.
fn report_content(
    turn: &DebateTurn,
    t: &str,
    consensus: f64,
    level: &str,
    plan: &Value,
    agreements: &[String],
) -> String {
    let divergent = matches!(
        turn.ending.as_deref(),
        Some("max_rounds_reached" | "early_stop_divergent" | "terminated")
    );
    let mut content = format!(
        "# {t}\n\nAfter {} round(s) of discussion (consensus {consensus:.2}, {level}):\n",
        turn.history.len()
    );
    for ph in plan
        .get("phases")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        content.push_str(&format!(
            "\n- {} ({})",
            ph.get("phase_name").and_then(Value::as_str).unwrap_or("?"),
            ph.get("duration").and_then(Value::as_str).unwrap_or("?")
        ));
    }
    if divergent {
        content.push_str("\n\n## Diverging conclusions\n");
        for d in turn
            .history
            .last()
            .iter()
            .flat_map(|d| d.conclusions.iter())
        {
            content.push_str(&format!("\n- {}: {}", d.0, d.1));
        }
    }
    if !agreements.is_empty() {
        content.push_str("\n\n## Agreed\n");
        for a in agreements {
            content.push_str(&format!("\n- {a}"));
        }
    }
    content
}

/// A closing answer: the position stands, and the remaining uncertainties and the worst
/// cases of the plan are listed.
fn closing(turn: &DebateTurn, v: &mut Value) {
    let k = topic_of(&turn.question);
    let (u, w) = match turn.role {
        AgentRole::Critic => k.critic_closing,
        _ => k.planner_closing,
    };
    let (uncertain, worst) = (vec![u], vec![w]);
    v["content"] = json!(format!(
        "Remaining uncertainties: {}. Worst cases: {}.",
        uncertain.join("; "),
        worst.join("; ")
    ));
    v["metadata"]["remaining_uncertainties"] = json!(uncertain);
    v["metadata"]["worst_cases"] = json!(worst);
}

/// The simulated model's answer to a debate turn (a JSON text).
pub fn answer(turn: &DebateTurn) -> String {
    let mut v = match turn.role {
        AgentRole::Planner => planner(turn),
        AgentRole::Critic => critic(turn),
        AgentRole::Reporter => reporter(turn),
        AgentRole::Host | AgentRole::Other(_) => json!({"error": "no such debate agent"}),
    };
    if turn.closing {
        closing(turn, &mut v);
    }
    serde_json::to_string_pretty(&v).unwrap_or_default()
}
