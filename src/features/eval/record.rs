//! An eval's record in the database: its row, its samples, each sample's attempts (one
//! per epoch) with one row per check result. Every write here runs inside a transaction
//! it is given (the store writer's, or a command's own), so an attempt and its check
//! results are stored together or, after a crash, not at all.

use rusqlite::{params, Transaction};
use serde::Serialize;

/// An eval's row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvalRow {
    /// Its id, `E{YYYYMMDD}-{HHMMSS}-{4 hex}`.
    pub eval_id: String,
    /// The spec's name.
    pub name: String,
    /// The hash of what makes re-issuing the command the same eval.
    pub eval_key: String,
    /// `run`, `rerun` or `rescore`.
    pub kind: String,
    /// The run of the plan's copies (a rescore: its parent's).
    pub run_id: Option<String>,
    /// The eval a rerun or a rescore comes from.
    pub parent_id: Option<String>,
    /// The iteration its failure tree is written as.
    pub iteration: u32,
    /// The spec file.
    pub spec_path: String,
    /// What scores it ([`super::spec::Scoring`] as JSON).
    pub spec_json: String,
    /// The dataset file.
    pub dataset_path: String,
    /// Where its failure tree goes.
    pub out_dir: Option<String>,
    /// `running`, `finished`, `interrupted` or `failed`.
    pub status: String,
    /// When it was made (RFC 3339).
    pub created_at: String,
    /// When it ended.
    pub finished_at: Option<String>,
    /// Samples in it.
    pub sample_count: u64,
}

/// A sample's status, as `eval_samples.status` stores it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SampleStatus {
    /// Not scored yet.
    Pending,
    /// Passed.
    Passed,
    /// Failed.
    Failed,
    /// Could not be scored (the model was not reached, or a judge could not judge).
    Error,
}

impl SampleStatus {
    /// The status stored as `s` (anything unknown: pending).
    pub fn parse(s: &str) -> SampleStatus {
        match s {
            "passed" => SampleStatus::Passed,
            "failed" => SampleStatus::Failed,
            "error" => SampleStatus::Error,
            _ => SampleStatus::Pending,
        }
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            SampleStatus::Pending => "pending",
            SampleStatus::Passed => "passed",
            SampleStatus::Failed => "failed",
            SampleStatus::Error => "error",
        }
    }
}

/// One sample of an eval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SampleRow {
    /// Its id in the dataset.
    pub sample_id: String,
    /// Its position in the dataset.
    pub ord: u64,
    /// Its name in the failure tree (a file name made from the id).
    pub file_id: String,
    /// SHA-256 of the row's content.
    pub hash: String,
    /// Its line in the dataset file.
    pub line: u64,
    /// Its content as JSON: `{input, expected, vars, metadata}`.
    pub content: String,
    /// `pending`, `passed`, `failed` or `error`.
    pub status: String,
    /// Its score once scored.
    pub score: Option<f64>,
    /// The eval whose attempts make its result (a rerun's inherited pass).
    pub inherited_from: Option<String>,
    /// Its result per check once scored, one letter per check of the eval's scoring in
    /// its order (see `score::check_marks`); `None` before, or in a file written before
    /// marks were kept.
    pub marks: Option<String>,
}

/// One check's result in an attempt.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckRow {
    /// The check.
    pub name: String,
    /// Whether it passed; `None` when it could not be scored.
    pub passed: Option<bool>,
    /// Its score.
    pub score: Option<f64>,
    /// What was expected and found, where and why (JSON).
    pub result: Option<String>,
}

/// One epoch of a sample, scored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AttemptRow {
    /// The sample.
    pub sample_id: String,
    /// The epoch, from 1.
    pub epoch: u32,
    /// The run its copy of the plan ran in.
    pub run_id: String,
    /// `passed`, `failed` or `error`.
    pub status: String,
    /// Its score.
    pub score: f64,
    /// Tokens it used.
    pub tokens: u64,
    /// Its wall time, ms.
    pub latency_ms: u64,
    /// Its cost, when its model has a price.
    pub cost_usd: Option<f64>,
    /// Why it could not be scored (an error).
    pub error: Option<String>,
    /// One row per check, in the spec's order.
    pub checks: Vec<CheckRow>,
    /// Tokens its LLM judges used (apart from `tokens`).
    pub judge_tokens: u64,
    /// Their cost, when known (apart from `cost_usd`).
    pub judge_cost_usd: Option<f64>,
}

fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Stores a new eval and its samples.
pub fn insert_eval(
    tx: &Transaction<'_>,
    row: &EvalRow,
    samples: &[SampleRow],
) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO evals (eval_id, name, eval_key, kind, run_id, parent_id, iteration, spec_path,
             spec_json, dataset_path, out_dir, status, created_at, finished_at, sample_count)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
        params![
            row.eval_id,
            row.name,
            row.eval_key,
            row.kind,
            row.run_id,
            row.parent_id,
            row.iteration,
            row.spec_path,
            row.spec_json,
            row.dataset_path,
            row.out_dir,
            row.status,
            row.created_at,
            row.finished_at,
            int(row.sample_count),
        ],
    )?;
    let mut st = tx.prepare_cached(
        "INSERT INTO eval_samples (eval_id, sample_id, ord, file_id, hash, line, content, status,
             score, inherited_from, marks)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    )?;
    for s in samples {
        st.execute(params![
            row.eval_id,
            s.sample_id,
            int(s.ord),
            s.file_id,
            s.hash,
            int(s.line),
            s.content,
            s.status,
            s.score,
            s.inherited_from,
            s.marks,
        ])?;
    }
    Ok(())
}

/// Sets the run of an eval (known once the run is made).
pub fn set_run(tx: &Transaction<'_>, eval_id: &str, run_id: &str) -> rusqlite::Result<()> {
    tx.execute(
        "UPDATE evals SET run_id = ?2 WHERE eval_id = ?1",
        params![eval_id, run_id],
    )?;
    Ok(())
}

/// Stores one scored attempt and its check results (replacing an earlier scoring of the
/// same epoch).
pub fn put_attempt(tx: &Transaction<'_>, eval_id: &str, a: &AttemptRow) -> rusqlite::Result<()> {
    tx.prepare_cached(
        "INSERT OR REPLACE INTO eval_attempts (eval_id, sample_id, epoch, run_id, status, score,
             tokens, latency_ms, cost_usd, error, judge_tokens, judge_cost_usd)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    )?
    .execute(params![
        eval_id,
        a.sample_id,
        a.epoch,
        a.run_id,
        a.status,
        a.score,
        int(a.tokens),
        int(a.latency_ms),
        a.cost_usd,
        a.error,
        int(a.judge_tokens),
        a.judge_cost_usd,
    ])?;
    let mut st = tx.prepare_cached(
        "INSERT OR REPLACE INTO eval_checks (eval_id, sample_id, epoch, check_name, passed, score, result)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?;
    for c in &a.checks {
        st.execute(params![
            eval_id,
            a.sample_id,
            a.epoch,
            c.name,
            c.passed,
            c.score,
            c.result,
        ])?;
    }
    Ok(())
}

/// Sets a sample's verdict once all its epochs are scored: its status, score and marks
/// (its result per check).
pub fn put_verdict(
    tx: &Transaction<'_>,
    eval_id: &str,
    sample_id: &str,
    verdict: (&str, f64),
    marks: &str,
) -> rusqlite::Result<()> {
    tx.prepare_cached(
        "UPDATE eval_samples SET status = ?3, score = ?4, marks = ?5
         WHERE eval_id = ?1 AND sample_id = ?2",
    )?
    .execute(params![eval_id, sample_id, verdict.0, verdict.1, marks])?;
    Ok(())
}

/// Sets an eval's status (with its end time when it ended).
pub fn set_status(
    tx: &Transaction<'_>,
    eval_id: &str,
    status: &str,
    finished_at: Option<&str>,
) -> rusqlite::Result<()> {
    tx.execute(
        "UPDATE evals SET status = ?2, finished_at = ?3 WHERE eval_id = ?1",
        params![eval_id, status, finished_at],
    )?;
    Ok(())
}

/// A new eval id: `E{YYYYMMDD}-{HHMMSS}-{4 hex}`.
pub fn new_eval_id() -> String {
    let now = chrono::Utc::now();
    format!("E{}-{:04x}", now.format("%Y%m%d-%H%M%S"), fastrand::u16(..))
}

/// A sample id as a file name: characters other than letters, digits, `-`, `_` and `.`
/// become `_`, leading dots are dropped, and `_2`, `_3` … is added when two ids would
/// make the same name (ids are untrusted: none may name a path outside the tree).
pub fn file_ids<'a>(ids: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut next: std::collections::HashMap<String, u64> = std::collections::HashMap::new();
    ids.map(|id| {
        let mut base = crate::data::failures::layout::file_name_of(id);
        if base.is_empty() {
            base = "sample".into();
        }
        base.truncate(120);
        // Each base goes on from its last suffix: ids that all clean to the same name
        // (100,000 ids in Chinese become `___`) cost one step each, not a search.
        let lower = base.to_ascii_lowercase();
        let k = next.entry(lower.clone()).or_insert(2);
        let mut name = base.clone();
        while !seen.insert(name.to_ascii_lowercase()) {
            name = format!("{base}_{}", *k);
            *k += 1;
        }
        name
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_ids_stay_inside_the_tree_and_never_collide() {
        let ids = ["a/b", "../x", "a_b", "A_B", "..", "ok-1.2", "名前"];
        let names = file_ids(ids.iter().copied());
        assert_eq!(
            names,
            ["a_b", "_x", "a_b_2", "A_B_3", "sample", "ok-1.2", "__"]
        );
        for n in &names {
            assert!(!n.contains('/') && !n.starts_with('.'), "{n}");
        }
    }

    #[test]
    fn ids_that_all_clean_to_one_name_are_numbered_in_one_step_each() {
        // 20,000 one-character Chinese ids: each becomes `_`.
        let ids: Vec<String> = (0..20_000u32)
            .filter_map(|i| char::from_u32(0x4e00 + i).map(String::from))
            .collect();
        let names = file_ids(ids.iter().map(String::as_str));
        let unique: std::collections::HashSet<&String> = names.iter().collect();
        assert_eq!(unique.len(), ids.len());
        assert_eq!(names[0], "_");
        assert_eq!(names[ids.len() - 1], format!("__{}", ids.len()));
    }
}
