//! The host's rules: from a round's comparison (and the rounds before) to a decision.
//! Pure: the same inputs give the same decision, so tests can script every branch.
//!
//! In order: a mean similarity above the converge threshold converges; no significant
//! change of the mean over the last rounds ends the discussion early (it converges on
//! what there is); the last round forces a summary of the disagreements; an agent whose
//! position stayed the same for consecutive rounds gets an update command; otherwise a
//! mean above the continue threshold continues with points to address, and a lower one
//! forces a devil's advocate.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::base::protocol::debate::{AgentRole, Critique, HostAction, PositionSummary};
use crate::base::protocol::debate_spec::Thresholds;
use crate::base::protocol::debate_turn::HostInstruction;

/// How the discussion goes on after a decision.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// Another round; each agent with its instruction.
    Round(BTreeMap<AgentRole, HostInstruction>),
    /// The reporter writes the final report.
    Report {
        /// Why the discussion ended: `converged`, `early_stop` (stable agreement),
        /// `max_rounds_reached`.
        ending: &'static str,
    },
}

/// A decision.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// Action.
    pub action: HostAction,
    /// Why, in words.
    pub reason: String,
    /// The rule's directive document.
    pub directive: Value,
    /// Points the next round must address.
    pub must_address: Vec<String>,
    /// What the next round must avoid.
    pub avoid: Vec<String>,
    /// Agents speaking next.
    pub next_agents: Vec<AgentRole>,
    /// Agents found stubborn.
    pub stubborn: Vec<AgentRole>,
    /// What happens next.
    pub next: Next,
}

/// What the host decides from.
#[derive(Debug, Clone)]
pub struct HostInput<'a> {
    /// Round just held.
    pub round: u32,
    /// Most rounds.
    pub max_rounds: u32,
    /// Thresholds.
    pub thresholds: &'a Thresholds,
    /// Mean similarity of this round's positions (`None` when fewer than two could be
    /// compared).
    pub mean: Option<f64>,
    /// Consensus after each compared round, this one last.
    pub trend: &'a [f64],
    /// Each agent's self-similarity by round (`(round, value)`, oldest first).
    pub self_similarity: &'a BTreeMap<AgentRole, Vec<(u32, f64)>>,
    /// This round's positions.
    pub positions: &'a [(AgentRole, PositionSummary)],
    /// The critic's latest critique.
    pub critique: Option<&'a Critique>,
}

/// The speakers of every round.
pub const SPEAKERS: [AgentRole; 2] = [AgentRole::Planner, AgentRole::Critic];

fn fmt2(x: f64) -> String {
    format!("{x:.2}")
}

/// Points the next round must address: the critic's suggestions (high priority first),
/// then its risks, at most 3.
fn focus_points(critique: Option<&Critique>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    if let Some(c) = critique {
        let mut s: Vec<_> = c.suggestions.iter().collect();
        s.sort_by_key(|s| s.priority);
        out.extend(s.iter().map(|s| s.issue.clone()));
        let mut r: Vec<_> = c.risks.iter().collect();
        r.sort_by_key(|r| r.severity);
        out.extend(r.iter().map(|r| r.risk.clone()));
    }
    let mut seen = Vec::new();
    out.retain(|x| {
        let k = x.trim().to_string();
        !k.is_empty() && !seen.contains(&k) && {
            seen.push(k);
            true
        }
    });
    out.truncate(3);
    out
}

/// Agents stubborn after `round`: their last `stubborn_rounds` self-similarities are
/// for consecutive rounds ending at `round` and all above the threshold.
pub fn stubborn_agents(
    self_similarity: &BTreeMap<AgentRole, Vec<(u32, f64)>>,
    round: u32,
    t: &Thresholds,
) -> Vec<AgentRole> {
    let n = t.stubborn_rounds as usize;
    self_similarity
        .iter()
        .filter(|(_, v)| {
            v.len() >= n
                && v[v.len() - n..].iter().enumerate().all(|(k, (r, s))| {
                    *r + (n - 1 - k) as u32 == round && *s > t.stubborn_self_similarity
                })
        })
        .map(|(a, _)| a.clone())
        .collect()
}

/// Whether the trend shows no significant change over the last `no_change_rounds`
/// rounds (each step below `no_change_delta`).
pub fn no_significant_change(trend: &[f64], t: &Thresholds) -> bool {
    let n = t.no_change_rounds as usize;
    trend.len() > n
        && trend[trend.len() - n - 1..]
            .windows(2)
            .all(|w| (w[1] - w[0]).abs() < t.no_change_delta)
}

fn everyone(i: HostInstruction) -> BTreeMap<AgentRole, HostInstruction> {
    SPEAKERS.iter().map(|a| (a.clone(), i.clone())).collect()
}

/// The host's decision after a round.
pub fn decide(input: &HostInput<'_>) -> Decision {
    let t = input.thresholds;
    let stubborn = stubborn_agents(input.self_similarity, input.round, t);
    if let Some(d) = ending(input, &stubborn) {
        return d;
    }
    let rounds_remaining = input.max_rounds - input.round;
    if let Some(target) = stubborn.first() {
        return update_command(input, target, &stubborn);
    }
    match input.mean {
        Some(m) if m > t.continue_above => continue_on(input, m, rounds_remaining, stubborn),
        Some(m) => force_opposition(input, m, stubborn),
        None => no_comparison(rounds_remaining, stubborn),
    }
}

/// A decision that hands over to the reporter, the discussion ended by `ending`.
fn report(
    stubborn: &[AgentRole],
    action: HostAction,
    reason: String,
    directive: Value,
    ending: &'static str,
) -> Decision {
    Decision {
        action,
        reason,
        directive,
        must_address: Vec::new(),
        avoid: Vec::new(),
        next_agents: vec![AgentRole::Reporter],
        stubborn: stubborn.to_vec(),
        next: Next::Report { ending },
    }
}

/// The directive of a convergence: the closing questions, then the reporter.
fn converge_directive() -> Value {
    json!({
        "action": "converge",
        "instructions": {
            "to_all_agents": "list the remaining uncertainties and the worst cases",
            "next_step": "reporter_summary"
        }
    })
}

/// The rules that end the discussion, in order: convergence, a stall (early
/// convergence), the last round held. `None` when none applies.
fn ending(input: &HostInput<'_>, stubborn: &[AgentRole]) -> Option<Decision> {
    let t = input.thresholds;
    if let Some(m) = input.mean.filter(|m| *m > t.converge_above) {
        let reason = format!(
            "similarity {} is above {}: converge",
            fmt2(m),
            fmt2(t.converge_above)
        );
        let directive = converge_directive();
        return Some(report(
            stubborn,
            HostAction::Converge,
            reason,
            directive,
            "converged",
        ));
    }
    if no_significant_change(input.trend, t) {
        let last = input.trend.last().copied().unwrap_or_default();
        let reason = format!(
            "no significant change in {} rounds (similarity {}, steps under {})",
            t.no_change_rounds,
            fmt2(last),
            fmt2(t.no_change_delta)
        );
        // A stall converges early whatever its level: more rounds would not move it.
        // The reporter is told how far apart the positions still are.
        let reason = if last > t.continue_above {
            format!("{reason}: early convergence")
        } else {
            format!("{reason}: early convergence without agreement (the positions stay apart)")
        };
        let directive = converge_directive();
        return Some(report(
            stubborn,
            HostAction::Converge,
            reason,
            directive,
            "early_stop",
        ));
    }
    if input.round < input.max_rounds {
        return None;
    }
    let reason = format!(
        "round {} of {} held{}: forced summary of the disagreements",
        input.round,
        input.max_rounds,
        input
            .mean
            .map(|m| format!(" at similarity {}", fmt2(m)))
            .unwrap_or_default()
    );
    let directive = json!({
        "status": "max_rounds_reached",
        "action": "force_summary",
        "reporter_instruction": "report the diverging conclusions"
    });
    Some(report(
        stubborn,
        HostAction::Terminate,
        reason,
        directive,
        "max_rounds_reached",
    ))
}

/// Another round where `target` (stubborn) is told to update its position.
fn update_command(input: &HostInput<'_>, target: &AgentRole, stubborn: &[AgentRole]) -> Decision {
    let t = input.thresholds;
    let requirement = "do at least one of: change a key assumption, lower the confidence, \
                       point out a flaw in the other side's logic";
    let reason = format!(
        "{target} kept its position (self-similarity above {}) for {} rounds",
        fmt2(t.stubborn_self_similarity),
        t.stubborn_rounds
    );
    let mut instructions = everyone(HostInstruction {
        action: "continue".into(),
        reason: format!("{reason}; it is told to update its position"),
        ..HostInstruction::default()
    });
    instructions.insert(
        target.clone(),
        HostInstruction {
            action: "update_command".into(),
            reason: reason.clone(),
            requirement: Some(requirement.into()),
            must_address: focus_points(input.critique),
            ..HostInstruction::default()
        },
    );
    Decision {
        action: HostAction::UpdateCommand,
        reason: reason.clone(),
        directive: json!({
            "action": "update_command",
            "target_agent": target.as_str(),
            "reason": reason,
            "requirement": requirement
        }),
        must_address: vec![requirement.to_string()],
        avoid: vec!["repeating the previous arguments".into()],
        next_agents: SPEAKERS.to_vec(),
        stubborn: stubborn.to_vec(),
        next: Next::Round(instructions),
    }
}

/// Another round on the open points, the mean `m` being above the continue threshold.
fn continue_on(
    input: &HostInput<'_>,
    m: f64,
    rounds_remaining: u32,
    stubborn: Vec<AgentRole>,
) -> Decision {
    let t = input.thresholds;
    let focus = focus_points(input.critique);
    let reason = format!(
        "similarity {} is between {} and {}: continue on the open points",
        fmt2(m),
        fmt2(t.continue_above),
        fmt2(t.converge_above)
    );
    Decision {
        action: HostAction::Continue,
        reason: reason.clone(),
        directive: json!({
            "action": "continue",
            "instructions": {
                "to_agents": ["planner", "critic"],
                "focus_on": focus,
                "rounds_remaining": rounds_remaining
            }
        }),
        must_address: focus.clone(),
        avoid: vec!["repeating the previous arguments".into()],
        next_agents: SPEAKERS.to_vec(),
        stubborn,
        next: Next::Round(everyone(HostInstruction {
            action: "continue".into(),
            reason,
            must_address: focus,
            avoid: vec!["repeating the previous arguments".into()],
            ..HostInstruction::default()
        })),
    }
}

/// Another round where the critic argues the opposite side, the mean `m` being at or
/// below the continue threshold.
fn force_opposition(input: &HostInput<'_>, m: f64, stubborn: Vec<AgentRole>) -> Decision {
    let t = input.thresholds;
    let requirement = "argue only from the opposing side, without citing earlier points";
    let reason = format!(
        "similarity {} is at or below {}: force opposition",
        fmt2(m),
        fmt2(t.continue_above)
    );
    // The others go on, told what the critic was told (not the critic's order).
    let mut instructions = everyone(HostInstruction {
        action: "continue".into(),
        reason: format!(
            "similarity {} is at or below {}: the critic now argues against your plan as devil's advocate; answer its objections",
            fmt2(m),
            fmt2(t.continue_above)
        ),
        must_address: focus_points(input.critique),
        ..HostInstruction::default()
    });
    instructions.insert(
        AgentRole::Critic,
        HostInstruction {
            action: "force_opposition".into(),
            reason: reason.clone(),
            role: Some("devils_advocate".into()),
            target: Some(AgentRole::Planner),
            requirement: Some(requirement.into()),
            ..HostInstruction::default()
        },
    );
    Decision {
        action: HostAction::ForceOpposition,
        reason,
        directive: json!({
            "action": "force_opposition",
            "instructions": {
                "role": "devils_advocate",
                "requirement": requirement,
                "target": "planner"
            }
        }),
        must_address: vec![requirement.to_string()],
        avoid: vec!["citing earlier points".into()],
        next_agents: SPEAKERS.to_vec(),
        stubborn,
        next: Next::Round(instructions),
    }
}

/// Another round when the round gave no positions to compare.
fn no_comparison(rounds_remaining: u32, stubborn: Vec<AgentRole>) -> Decision {
    let reason =
        "no new positions to compare (fewer than two, or none given this round): another round"
            .to_string();
    Decision {
        action: HostAction::Continue,
        reason: reason.clone(),
        directive: json!({
            "action": "continue",
            "instructions": {
                "to_agents": ["planner", "critic"],
                "focus_on": [],
                "rounds_remaining": rounds_remaining
            }
        }),
        must_address: Vec::new(),
        avoid: Vec::new(),
        next_agents: SPEAKERS.to_vec(),
        stubborn,
        next: Next::Round(everyone(HostInstruction {
            action: "continue".into(),
            reason,
            ..HostInstruction::default()
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn on_forced_opposition_each_speaker_is_told_what_the_host_decided_for_it() {
        let t = Thresholds::default();
        let d = decide(&HostInput {
            round: 1,
            max_rounds: 3,
            thresholds: &t,
            mean: Some(0.3),
            trend: &[0.3],
            self_similarity: &BTreeMap::new(),
            positions: &[],
            critique: None,
        });
        let Next::Round(each) = d.next else {
            panic!("another round")
        };
        let planner = crate::base::protocol::debate_turn::host_said(&each[&AgentRole::Planner]);
        let critic = crate::base::protocol::debate_turn::host_said(&each[&AgentRole::Critic]);
        assert!(
            planner.starts_with("The host decided: another round."),
            "{planner}"
        );
        assert!(
            planner.contains("the critic now argues against your plan"),
            "{planner}"
        );
        assert!(!planner.contains(": force opposition"), "{planner}");
        assert!(
            critic.contains("force opposition — you argue the opposing side as devil's advocate against the planner"),
            "{critic}"
        );
        assert!(
            critic.contains("Requirement: argue only from the opposing side"),
            "{critic}"
        );
    }

    #[test]
    fn stubborn_needs_consecutive_rounds_strictly_above_the_threshold() {
        let t = Thresholds::default();
        let map = |v: Vec<(u32, f64)>| BTreeMap::from([(AgentRole::Planner, v)]);
        assert_eq!(
            stubborn_agents(&map(vec![(2, 0.99), (3, 0.99)]), 3, &t),
            vec![AgentRole::Planner]
        );
        assert!(stubborn_agents(&map(vec![(2, 0.98), (3, 0.99)]), 3, &t).is_empty());
        assert!(stubborn_agents(&map(vec![(1, 0.99), (3, 0.99)]), 3, &t).is_empty());
        assert!(stubborn_agents(&map(vec![(2, 0.99), (3, 0.99)]), 4, &t).is_empty());
        assert!(stubborn_agents(&map(vec![(3, 0.99)]), 3, &t).is_empty());
    }

    #[test]
    fn no_change_needs_two_small_steps() {
        let t = Thresholds::default();
        assert!(no_significant_change(&[0.5, 0.51, 0.52], &t));
        assert!(!no_significant_change(&[0.5, 0.53, 0.54], &t));
        assert!(
            !no_significant_change(&[0.5, 0.51], &t),
            "two rounds are one step"
        );
        assert!(no_significant_change(&[0.1, 0.5, 0.51, 0.52], &t));
    }

    #[test]
    fn focus_points_put_high_priority_first_and_keep_three() {
        let c: Critique = serde_json::from_value(serde_json::json!({
            "target_agent": "planner", "target_round": 1,
            "risks": [{"risk": "r1", "severity": "low", "impact": "i"}],
            "suggestions": [
                {"issue": "low one", "solution": "s", "priority": "low"},
                {"issue": "high one", "solution": "s", "priority": "high"},
                {"issue": "high one", "solution": "dup", "priority": "high"},
                {"issue": "medium one", "solution": "s", "priority": "medium"}
            ],
            "validity_check": {"feasible": true, "realistic": true, "complete": true}
        }))
        .expect("critique");
        assert_eq!(
            focus_points(Some(&c)),
            vec!["high one", "medium one", "low one"]
        );
        assert!(focus_points(None).is_empty());
    }
}
