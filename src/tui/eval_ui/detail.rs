//! One sample opened on the Eval screen: each check's expected and found values side
//! by side at the path it looked at (failures first), and the sample's four documents
//! (sample, trace, evaluation, attribution) as the failure tree has them.

use serde_json::Value;

use crate::data::store::Store;
use crate::features::eval::finish::{sample_docs, ToolsByRun};
use crate::features::eval::observe::tool_calls;
use crate::features::eval::read;
use crate::features::eval::record::EvalRow;
use crate::features::eval::spec::Scoring;
use crate::features::eval::tree::sample_doc;

/// One check's result in one epoch, as the side-by-side tab shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckSide {
    /// The check.
    pub check: String,
    /// The epoch.
    pub epoch: u64,
    /// Passed, failed, or `None` (not scored).
    pub passed: Option<bool>,
    /// Where it looked.
    pub at: String,
    /// Why it passed or not.
    pub why: String,
    /// What was expected, as indented JSON lines.
    pub expected: Vec<String>,
    /// What was found, as indented JSON lines.
    pub found: Vec<String>,
}

/// A sample opened.
#[derive(Debug, Clone, PartialEq)]
pub struct Detail {
    /// Its id.
    pub sample_id: String,
    /// Its status.
    pub status: String,
    /// The tab shown (an index into [`Detail::TABS`]).
    pub tab: usize,
    /// First line shown.
    pub scroll: usize,
    /// Each check's result, failures first.
    pub sides: Vec<CheckSide>,
    /// The four documents as indented JSON lines (sample, trace, evaluation,
    /// attribution).
    pub docs: [Vec<String>; 4],
}

impl Detail {
    /// The tabs: the checks side by side, then the four documents.
    pub const TABS: [&'static str; 5] = [
        "expected | found",
        "1 sample",
        "2 trace",
        "3 evaluation",
        "4 attribution",
    ];

    /// Shows tab `tab` from the top.
    pub fn show(&mut self, tab: usize) {
        self.tab = tab.min(Self::TABS.len() - 1);
        self.scroll = 0;
    }
}

fn lines(v: &Value) -> Vec<String> {
    match v {
        Value::Null => vec!["—".into()],
        Value::String(s) => s.lines().map(str::to_string).collect(),
        other => serde_json::to_string_pretty(other)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect(),
    }
}

/// Reads sample `sample_id` of eval `row`; the tool calls of the runs it reads are kept
/// in `tools` for the next sample.
pub fn load(
    store: &Store,
    tools: &mut ToolsByRun,
    row: &EvalRow,
    scoring: &Scoring,
    sample_id: &str,
) -> color_eyre::Result<Detail> {
    let conn = store.conn();
    let s = read::sample(conn, &row.eval_id, sample_id)?.ok_or_else(|| {
        color_eyre::eyre::eyre!("sample {sample_id} is not in eval {}", row.eval_id)
    })?;
    for a in read::attempts(conn, &row.eval_id, Some(sample_id))? {
        if !tools.contains_key(&a.run_id) {
            let (calls, _) = tool_calls(store, &a.run_id)?;
            tools.insert(a.run_id.clone(), calls);
        }
    }
    let docs = sample_docs(conn, Some(store), tools, scoring, row, &s)?;
    let mut sides = Vec::new();
    for epoch in docs.evaluation["epochs"].as_array().into_iter().flatten() {
        for c in epoch["checker_results"].as_array().into_iter().flatten() {
            let text = |k: &str| match &c[k] {
                Value::String(s) => s.clone(),
                Value::Null => String::new(),
                other => other.to_string(),
            };
            sides.push(CheckSide {
                check: text("check"),
                epoch: epoch["epoch"].as_u64().unwrap_or(1),
                passed: c["passed"].as_bool(),
                at: text("at"),
                why: text("why"),
                expected: lines(&c["expected"]),
                found: lines(&c["found"]),
            });
        }
    }
    // Failures first, then checks not scored, then passes; each in the spec's order.
    sides.sort_by_key(|c| match c.passed {
        Some(false) => 0,
        None => 1,
        Some(true) => 2,
    });
    let attribution = docs.attribution.clone().unwrap_or(Value::Null);
    Ok(Detail {
        sample_id: s.sample_id.clone(),
        status: s.status.clone(),
        tab: 0,
        scroll: 0,
        sides,
        docs: [
            lines(&sample_doc(row, &s)),
            lines(&docs.trace),
            lines(&docs.evaluation),
            if attribution.is_null() {
                vec!["no attribution: the sample passed".into()]
            } else {
                lines(&attribution)
            },
        ],
    })
}
