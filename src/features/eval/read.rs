//! Reading evals back: one eval by id, prefix or `latest`; the list; its samples; its
//! attempts and check results; each sample's result per check over its epochs (what
//! `eval compare` aligns).

use std::collections::BTreeMap;

use rusqlite::{params, Connection, OptionalExtension};

use super::compare::SampleResult;
use super::epochs::Reducer;
use super::record::{AttemptRow, EvalRow, SampleRow};
use super::score::check_over_epochs;
use super::spec::Scoring;

/// Why an eval could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// No eval has this id or prefix.
    #[error("no eval `{0}` in the database (`plexus eval list` lists them)")]
    NoSuchEval(String),
    /// Several evals start with this prefix.
    #[error("`{prefix}` names several evals: {}", .candidates.join(", "))]
    Ambiguous {
        /// The prefix.
        prefix: String,
        /// Some of them.
        candidates: Vec<String>,
    },
    /// The stored scoring does not read.
    #[error("eval {eval}: its stored scoring does not read: {message}")]
    Scoring {
        /// The eval.
        eval: String,
        /// Why.
        message: String,
    },
    /// SQLite failed.
    #[error(transparent)]
    Sql(#[from] rusqlite::Error),
}

const EVAL_COLUMNS: &str = "eval_id, name, eval_key, kind, run_id, parent_id, iteration, spec_path,
    spec_json, dataset_path, out_dir, status, created_at, finished_at, sample_count";

fn eval_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<EvalRow> {
    Ok(EvalRow {
        eval_id: r.get(0)?,
        name: r.get(1)?,
        eval_key: r.get(2)?,
        kind: r.get(3)?,
        run_id: r.get(4)?,
        parent_id: r.get(5)?,
        iteration: r.get(6)?,
        spec_path: r.get(7)?,
        spec_json: r.get(8)?,
        dataset_path: r.get(9)?,
        out_dir: r.get(10)?,
        status: r.get(11)?,
        created_at: r.get(12)?,
        finished_at: r.get(13)?,
        sample_count: r.get::<_, i64>(14)?.max(0) as u64,
    })
}

/// The eval named by `id`: a full id, a unique prefix, or `latest` (the newest: the
/// last one stored, as two made in the same second have the same time).
pub fn find_eval(conn: &Connection, id: &str) -> Result<EvalRow, ReadError> {
    let newest = "ORDER BY created_at DESC, rowid DESC";
    if id == "latest" {
        return conn
            .query_row(
                &format!("SELECT {EVAL_COLUMNS} FROM evals {newest} LIMIT 1"),
                [],
                eval_row,
            )
            .optional()?
            .ok_or_else(|| ReadError::NoSuchEval(id.into()));
    }
    if let Some(row) = conn
        .query_row(
            &format!("SELECT {EVAL_COLUMNS} FROM evals WHERE eval_id = ?1"),
            [id],
            eval_row,
        )
        .optional()?
    {
        return Ok(row);
    }
    let mut st = conn.prepare(&format!(
        "SELECT {EVAL_COLUMNS} FROM evals WHERE substr(eval_id, 1, length(?1)) = ?1 {newest} LIMIT 6"
    ))?;
    let mut rows: Vec<EvalRow> = st.query_map([id], eval_row)?.collect::<Result<_, _>>()?;
    match rows.len() {
        0 => Err(ReadError::NoSuchEval(id.into())),
        1 => Ok(rows.remove(0)),
        _ => Err(ReadError::Ambiguous {
            prefix: id.into(),
            candidates: rows.into_iter().map(|r| r.eval_id).collect(),
        }),
    }
}

/// Every eval, newest first.
pub fn list_evals(conn: &Connection) -> Result<Vec<EvalRow>, ReadError> {
    let mut st = conn.prepare(&format!(
        "SELECT {EVAL_COLUMNS} FROM evals ORDER BY created_at DESC, rowid DESC"
    ))?;
    let rows = st.query_map([], eval_row)?.collect::<Result<_, _>>()?;
    Ok(rows)
}

/// The newest eval made from the same command (`key`) that has not finished.
pub fn unfinished_with_key(conn: &Connection, key: &str) -> Result<Option<EvalRow>, ReadError> {
    Ok(conn
        .query_row(
            &format!(
                "SELECT {EVAL_COLUMNS} FROM evals WHERE eval_key = ?1 AND status <> 'finished'
                 ORDER BY created_at DESC, rowid DESC LIMIT 1"
            ),
            [key],
            eval_row,
        )
        .optional()?)
}

/// The last finished eval `key` names (the same spec, plan, dataset selection, provider
/// and output).
pub fn finished_with_key(conn: &Connection, key: &str) -> Result<Option<EvalRow>, ReadError> {
    Ok(conn
        .query_row(
            &format!(
                "SELECT {EVAL_COLUMNS} FROM evals WHERE eval_key = ?1 AND status = 'finished'
                 ORDER BY created_at DESC, rowid DESC LIMIT 1"
            ),
            [key],
            eval_row,
        )
        .optional()?)
}

/// How many samples of an eval have each status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Counts {
    /// Not scored yet.
    pub pending: u64,
    /// Passed.
    pub passed: u64,
    /// Failed.
    pub failed: u64,
    /// Could not be scored (the model was not reached).
    pub error: u64,
}

impl Counts {
    /// Samples scored.
    pub fn done(&self) -> u64 {
        self.passed + self.failed + self.error
    }

    /// Every sample.
    pub fn total(&self) -> u64 {
        self.done() + self.pending
    }
}

/// The counts of eval `eval_id`'s samples by status.
pub fn counts(conn: &Connection, eval_id: &str) -> Result<Counts, ReadError> {
    let mut c = Counts::default();
    let mut st = conn.prepare_cached(
        "SELECT status, COUNT(*) FROM eval_samples WHERE eval_id = ?1 GROUP BY status",
    )?;
    let mut rows = st.query([eval_id])?;
    while let Some(r) = rows.next()? {
        let n = r.get::<_, i64>(1)?.max(0) as u64;
        match r.get::<_, String>(0)?.as_str() {
            "passed" => c.passed += n,
            "failed" => c.failed += n,
            "error" => c.error += n,
            _ => c.pending += n,
        }
    }
    Ok(c)
}

const SAMPLE_COLUMNS: &str =
    "sample_id, ord, file_id, hash, line, content, status, score, inherited_from, marks";

fn sample_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<SampleRow> {
    Ok(SampleRow {
        sample_id: r.get(0)?,
        ord: r.get::<_, i64>(1)?.max(0) as u64,
        file_id: r.get(2)?,
        hash: r.get(3)?,
        line: r.get::<_, i64>(4)?.max(0) as u64,
        content: r.get(5)?,
        status: r.get(6)?,
        score: r.get(7)?,
        inherited_from: r.get(8)?,
        marks: r.get(9)?,
    })
}

/// The samples of an eval, in dataset order.
pub fn samples(conn: &Connection, eval_id: &str) -> Result<Vec<SampleRow>, ReadError> {
    let mut st = conn.prepare(&format!(
        "SELECT {SAMPLE_COLUMNS} FROM eval_samples WHERE eval_id = ?1 ORDER BY ord"
    ))?;
    let rows = st
        .query_map([eval_id], sample_row)?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}

/// One sample of an eval.
pub fn sample(
    conn: &Connection,
    eval_id: &str,
    sample_id: &str,
) -> Result<Option<SampleRow>, ReadError> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {SAMPLE_COLUMNS} FROM eval_samples WHERE eval_id = ?1 AND sample_id = ?2"
        ))?
        .query_row([eval_id, sample_id], sample_row)
        .optional()?)
}

/// Up to `limit` samples of an eval still pending, in the order of their ids, after id
/// `after` (from the first when `None`): a page of the samples to dispatch.
pub fn pending_after(
    conn: &Connection,
    eval_id: &str,
    after: Option<&str>,
    limit: usize,
) -> Result<Vec<SampleRow>, ReadError> {
    let mut st = conn.prepare_cached(&format!(
        "SELECT {SAMPLE_COLUMNS} FROM eval_samples
         WHERE eval_id = ?1 AND sample_id > ?2 AND status = 'pending'
         ORDER BY sample_id LIMIT ?3"
    ))?;
    // Every id is greater than the empty string but the empty id itself, read apart.
    let mut rows: Vec<SampleRow> = Vec::new();
    if after.is_none() {
        rows.extend(sample(conn, eval_id, "")?.filter(|s| s.status == "pending"));
    }
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    for r in st.query_map(params![eval_id, after.unwrap_or(""), limit], sample_row)? {
        rows.push(r?);
    }
    Ok(rows)
}

/// One stored check result.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StoredCheck {
    /// The sample.
    pub sample_id: String,
    /// The epoch.
    pub epoch: u32,
    /// The check.
    pub check: String,
    /// Whether it passed (`None`: not scored).
    pub passed: Option<bool>,
    /// Its score.
    pub score: Option<f64>,
    /// Expected, found, where and why (JSON).
    pub result: Option<String>,
}

/// Every check result of an eval, by sample, epoch and check.
pub fn check_results(conn: &Connection, eval_id: &str) -> Result<Vec<StoredCheck>, ReadError> {
    checks_of(conn, eval_id, None)
}

/// The check results of one sample of an eval (all samples when `sample` is `None`), by
/// sample, epoch and check.
pub fn checks_of(
    conn: &Connection,
    eval_id: &str,
    sample: Option<&str>,
) -> Result<Vec<StoredCheck>, ReadError> {
    // Two statements: with `?2 IS NULL OR …` SQLite could not use the key for one
    // sample and read every row of the eval.
    let mut st = conn.prepare_cached(if sample.is_some() {
        "SELECT sample_id, epoch, check_name, passed, score, result FROM eval_checks
         WHERE eval_id = ?1 AND sample_id = ?2 ORDER BY epoch, check_name"
    } else {
        "SELECT sample_id, epoch, check_name, passed, score, result FROM eval_checks
         WHERE eval_id = ?1 AND ?2 IS NULL ORDER BY sample_id, epoch, check_name"
    })?;
    let rows = st
        .query_map(params![eval_id, sample], |r| {
            Ok(StoredCheck {
                sample_id: r.get(0)?,
                epoch: r.get(1)?,
                check: r.get(2)?,
                passed: r.get(3)?,
                score: r.get(4)?,
                result: r.get(5)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}

/// The attempts of one sample of an eval (all samples when `sample` is `None`), by
/// sample and epoch, without their checks.
pub fn attempts(
    conn: &Connection,
    eval_id: &str,
    sample: Option<&str>,
) -> Result<Vec<AttemptRow>, ReadError> {
    let mut st = conn.prepare_cached(if sample.is_some() {
        "SELECT sample_id, epoch, run_id, status, score, tokens, latency_ms, cost_usd, error,
             judge_tokens, judge_cost_usd
         FROM eval_attempts WHERE eval_id = ?1 AND sample_id = ?2 ORDER BY epoch"
    } else {
        "SELECT sample_id, epoch, run_id, status, score, tokens, latency_ms, cost_usd, error,
             judge_tokens, judge_cost_usd
         FROM eval_attempts WHERE eval_id = ?1 AND ?2 IS NULL ORDER BY sample_id, epoch"
    })?;
    let rows = st
        .query_map(params![eval_id, sample], |r| {
            Ok(AttemptRow {
                sample_id: r.get(0)?,
                epoch: r.get(1)?,
                run_id: r.get(2)?,
                status: r.get(3)?,
                score: r.get(4)?,
                tokens: r.get::<_, i64>(5)?.max(0) as u64,
                latency_ms: r.get::<_, i64>(6)?.max(0) as u64,
                cost_usd: r.get(7)?,
                error: r.get(8)?,
                checks: Vec::new(),
                judge_tokens: r.get::<_, i64>(9)?.max(0) as u64,
                judge_cost_usd: r.get(10)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}

/// The scoring an eval was run with.
pub fn scoring_of(row: &EvalRow) -> Result<Scoring, ReadError> {
    serde_json::from_str(&row.spec_json).map_err(|e| ReadError::Scoring {
        eval: row.eval_id.clone(),
        message: e.to_string(),
    })
}

/// A check's result in one epoch: passed (`None`: not scored) and score.
type EpochCheck = (Option<bool>, Option<f64>);

/// Each scored sample's result per check over its epochs (with the eval's reducer), in
/// the order of the sample ids; samples not scored yet are left out. Read from each
/// sample's marks (one row per sample); a file written before marks were kept is read
/// from its check rows instead.
pub fn sample_results(conn: &Connection, row: &EvalRow) -> Result<Vec<SampleResult>, ReadError> {
    let names: Vec<String> = scoring_of(row)?
        .checks
        .into_iter()
        .map(|c| c.name)
        .collect();
    let mut st = conn.prepare(
        "SELECT sample_id, hash, marks FROM eval_samples
         WHERE eval_id = ?1 AND status <> 'pending' ORDER BY sample_id",
    )?;
    let mut rows = st.query([&row.eval_id])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let Some(marks) = r
            .get_ref(2)?
            .as_str_or_null()
            .map_err(rusqlite::Error::from)?
        else {
            return results_from_checks(conn, row);
        };
        out.push(SampleResult {
            id: r.get(0)?,
            hash: r.get(1)?,
            checks: names
                .iter()
                .zip(marks.bytes())
                .map(|(name, m)| (name.clone(), mark_result(m)))
                .collect(),
        });
    }
    Ok(out)
}

/// A check's result from its letter in a sample's marks.
pub fn mark_result(mark: u8) -> Option<bool> {
    match mark {
        super::score::MARK_PASSED => Some(true),
        super::score::MARK_FAILED => Some(false),
        _ => None,
    }
}

/// [`sample_results`] from the check rows: one pass over them in their key's order (no
/// sort), for a file whose samples have no marks.
fn results_from_checks(conn: &Connection, row: &EvalRow) -> Result<Vec<SampleResult>, ReadError> {
    let reducer: Reducer = scoring_of(row)?.reducer();
    // The hash of every scored sample, then the check rows alone in key order.
    let mut hashes: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    {
        let mut st = conn.prepare(
            "SELECT sample_id, hash FROM eval_samples WHERE eval_id = ?1 AND status <> 'pending'",
        )?;
        let mut rows = st.query([&row.eval_id])?;
        while let Some(r) = rows.next()? {
            hashes.insert(r.get(0)?, r.get(1)?);
        }
    }
    let mut st = conn.prepare(
        "SELECT sample_id, check_name, passed, score FROM eval_checks
         WHERE eval_id = ?1 ORDER BY sample_id, epoch, check_name",
    )?;
    let mut rows = st.query([&row.eval_id])?;
    let mut out: Vec<SampleResult> = Vec::new();
    let mut per: BTreeMap<String, Vec<EpochCheck>> = BTreeMap::new();
    let reduce = |out: &mut Vec<SampleResult>, per: &mut BTreeMap<String, Vec<EpochCheck>>| {
        if let Some(last) = out.last_mut() {
            last.checks = std::mem::take(per)
                .into_iter()
                .map(|(check, epochs)| (check, check_over_epochs(reducer, &epochs)))
                .collect();
        }
    };
    let mut skipping: Option<String> = None;
    while let Some(r) = rows.next()? {
        let sample = r.get_ref(0)?.as_str().map_err(rusqlite::Error::from)?;
        if skipping.as_deref() == Some(sample) {
            continue;
        }
        if out.last().is_none_or(|l| l.id != sample) {
            let Some(hash) = hashes.remove(sample) else {
                // Not scored yet (a pending sample's earlier epochs).
                skipping = Some(sample.to_string());
                continue;
            };
            reduce(&mut out, &mut per);
            out.push(SampleResult {
                id: sample.to_string(),
                hash,
                checks: BTreeMap::new(),
            });
        }
        let check = r.get_ref(1)?.as_str().map_err(rusqlite::Error::from)?;
        match per.get_mut(check) {
            Some(v) => v.push((r.get(2)?, r.get(3)?)),
            None => {
                per.insert(check.to_string(), vec![(r.get(2)?, r.get(3)?)]);
            }
        }
    }
    reduce(&mut out, &mut per);
    Ok(out)
}

#[cfg(test)]
#[path = "read_tests.rs"]
mod tests;
