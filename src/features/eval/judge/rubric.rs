//! A judge's rubric: named criteria, each a yes-or-no question about the output with a
//! weight, and the weighted share of criteria met that passes (all of them unless
//! said). Written in its own JSON file, named by a `judge` check; the spec as stored
//! carries the rubric itself, so a resume, a rerun or a report never reads the file
//! again.

use std::collections::HashSet;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One criterion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Criterion {
    /// Its name, unique in the rubric.
    pub name: String,
    /// The question the judge answers yes (met) or no about the output.
    pub question: String,
    /// Its weight in the share of criteria met.
    #[serde(default = "one")]
    pub weight: f64,
}

fn one() -> f64 {
    1.0
}

/// A rubric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rubric {
    /// Its name.
    #[serde(default)]
    pub name: String,
    /// What the judge is told the output is for (optional).
    #[serde(default)]
    pub task: String,
    /// The criteria, judged one by one.
    pub criteria: Vec<Criterion>,
    /// The weighted share of criteria met that passes, from 0 (exclusive) to 1.
    #[serde(default = "one")]
    pub pass_at: f64,
}

impl Rubric {
    /// Reads and checks a rubric: a file path (relative to `dir`) or the rubric itself.
    pub fn load(v: &Value, dir: &Path) -> Result<Rubric, String> {
        let (value, from) = match v {
            Value::String(p) => {
                let path = dir.join(p);
                let text = crate::base::text::utf8::read_text(&path)
                    .map_err(|e| format!("{}: {e}", path.display()))?;
                let v: Value =
                    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
                (v, format!("{}: ", path.display()))
            }
            other => (other.clone(), String::new()),
        };
        let r: Rubric = serde_json::from_value(value).map_err(|e| format!("{from}{e}"))?;
        r.check().map_err(|e| format!("{from}{e}"))?;
        Ok(r)
    }

    /// What is wrong with the rubric, if anything.
    pub fn check(&self) -> Result<(), String> {
        if self.criteria.is_empty() {
            return Err("a rubric needs at least one criterion".into());
        }
        let mut names = HashSet::new();
        for (i, c) in self.criteria.iter().enumerate() {
            if c.name.trim().is_empty() || c.question.trim().is_empty() {
                return Err(format!(
                    "criteria[{i}]: a criterion needs a name and a question"
                ));
            }
            // Answers name criteria in any case: names differ otherwise than by case.
            if !names.insert(c.name.to_lowercase()) {
                return Err(format!(
                    "criteria[{i}]: `{}` names another criterion too",
                    c.name
                ));
            }
            if !(c.weight.is_finite() && c.weight > 0.0) {
                return Err(format!("criteria[{i}].weight: must be a number above 0"));
            }
        }
        if !(self.pass_at > 0.0 && self.pass_at <= 1.0) {
            return Err("pass_at: a share of the criteria's weight, above 0 and at most 1".into());
        }
        Ok(())
    }
}
