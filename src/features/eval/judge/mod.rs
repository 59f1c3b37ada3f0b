//! The LLM judge: a `judge` check asks one or several models to judge an output
//! against a rubric, criterion by criterion with evidence, in JSON at temperature 0,
//! each judge `votes` times; a criterion is met when more answers say so than not (a
//! tie is not met), and the check passes when the weighted share of criteria met
//! reaches the rubric's `pass_at`. A criterion no answer could judge leaves the check
//! unscored (an error, counted apart from failures and from a model not reached). The judges' tokens
//! and cost are kept apart from the sample's; each answer is cached by the rubric, the
//! judge's model, the vote and what was judged (input, expected, output), so judging
//! the same output again costs nothing.
//!
//! - [`rubric`]: the rubric file.
//! - [`request`]: what a judge is asked (and the simulated model's answer).
//! - [`answer`]: reading an answer written otherwise than asked.
//! - [`call`]: asking the judges, with the cache.

pub mod answer;
pub mod call;
pub mod request;
pub mod rubric;

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

pub use answer::Judged;
pub use rubric::{Criterion, Rubric};

/// One criterion over every answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CriterionResult {
    /// The criterion.
    pub name: String,
    /// Met (`None`: no answer judged it).
    pub met: Option<bool>,
    /// Answers that said it is met.
    pub yes: u32,
    /// Answers that said it is not.
    pub no: u32,
    /// The evidence the answers gave, on the majority's side first.
    pub evidence: Vec<String>,
}

/// A judge check's judgment of one output.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Judgment {
    /// The judges, as their providers name themselves.
    pub judges: Vec<String>,
    /// Answers asked of each judge.
    pub votes: u32,
    /// Answers asked in all (judges × votes), from the cache or a call.
    pub asked: u32,
    /// Of them, answered from the cache.
    pub cached: u32,
    /// Each criterion, in the rubric's order.
    pub criteria: Vec<CriterionResult>,
    /// The weighted share of the criteria met.
    pub share: f64,
    /// Whether it passes (`None`: some criterion was judged by no answer).
    pub passed: Option<bool>,
    /// Tokens of the calls made for it (not the cached answers'), prompt and completion.
    pub tokens: u64,
    /// Their cost, US dollars, when the judges' models have a price.
    pub cost_usd: Option<f64>,
    /// Calls that failed or answers that could not be read, with why.
    pub errors: Vec<String>,
}

/// The judgment of `rubric` from `answers` (each a reading of one answer).
pub fn combine(rubric: &Rubric, answers: &[HashMap<String, Judged>]) -> Judgment {
    let mut criteria = Vec::with_capacity(rubric.criteria.len());
    let (mut met_weight, mut all_weight) = (0.0, 0.0);
    let mut unjudged = false;
    for c in &rubric.criteria {
        let (mut yes, mut no) = (0u32, 0u32);
        let (mut for_yes, mut for_no) = (Vec::new(), Vec::new());
        for a in answers {
            if let Some(j) = a.get(&c.name) {
                if j.met {
                    yes += 1;
                    for_yes.push(j.evidence.clone());
                } else {
                    no += 1;
                    for_no.push(j.evidence.clone());
                }
            }
        }
        let met = (yes + no > 0).then_some(yes > no);
        unjudged |= met.is_none();
        all_weight += c.weight;
        if met == Some(true) {
            met_weight += c.weight;
        }
        let mut evidence = if met == Some(true) {
            [for_yes, for_no].concat()
        } else {
            [for_no, for_yes].concat()
        };
        evidence.retain(|e| !e.trim().is_empty());
        evidence.dedup();
        criteria.push(CriterionResult {
            name: c.name.clone(),
            met,
            yes,
            no,
            evidence,
        });
    }
    let share = if all_weight > 0.0 {
        met_weight / all_weight
    } else {
        0.0
    };
    Judgment {
        criteria,
        share,
        // A tiny tolerance for rounding: 2 of 3 equal weights reach a `pass_at` of
        // 2/3 computed as a float (0.6667 asks for more than two thirds).
        passed: (!unjudged).then_some(share + 1e-9 >= rubric.pass_at),
        ..Judgment::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rubric(pass_at: f64) -> Rubric {
        Rubric {
            name: "r".into(),
            task: String::new(),
            criteria: ["a", "b", "c"]
                .iter()
                .map(|n| Criterion {
                    name: n.to_string(),
                    question: "?".into(),
                    weight: 1.0,
                })
                .collect(),
            pass_at,
        }
    }

    fn said(pairs: &[(&str, bool)]) -> HashMap<String, Judged> {
        pairs
            .iter()
            .map(|(n, m)| {
                (
                    n.to_string(),
                    Judged {
                        met: *m,
                        evidence: format!("{n}:{m}"),
                    },
                )
            })
            .collect()
    }

    #[test]
    fn votes_are_a_majority_per_criterion_and_a_tie_is_not_met() {
        let answers = [
            said(&[("a", true), ("b", true), ("c", false)]),
            said(&[("a", true), ("b", false), ("c", true)]),
            said(&[("a", false), ("b", false)]),
        ];
        let j = combine(&rubric(1.0), &answers);
        let by: Vec<(Option<bool>, u32, u32)> =
            j.criteria.iter().map(|c| (c.met, c.yes, c.no)).collect();
        assert_eq!(
            by,
            [(Some(true), 2, 1), (Some(false), 1, 2), (Some(false), 1, 1)]
        );
        assert_eq!(
            j.criteria[0].evidence[0], "a:true",
            "the majority's evidence first"
        );
        assert_eq!(j.passed, Some(false));
        assert!((j.share - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(combine(&rubric(0.3), &answers).passed, Some(true));
    }

    #[test]
    fn a_criterion_no_answer_judged_leaves_the_check_unscored() {
        let j = combine(&rubric(0.1), &[said(&[("a", true), ("b", true)])]);
        assert_eq!(j.criteria[2].met, None);
        assert_eq!(j.passed, None);
        assert_eq!(combine(&rubric(0.5), &[]).passed, None);
    }

    #[test]
    fn two_of_three_pass_at_two_thirds_written_either_way() {
        let answers = [said(&[("a", true), ("b", true), ("c", false)])];
        assert_eq!(combine(&rubric(2.0 / 3.0), &answers).passed, Some(true));
        assert_eq!(combine(&rubric(0.6667), &answers).passed, Some(false));
    }
}
