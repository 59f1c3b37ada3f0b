//! An eval's results as a whole, from the database: the pass rate of each check (errors
//! in every denominator), the gates missed, and the end of its failure tree (summary,
//! problems report, handoff). The same reading writes the tree live and again with
//! `eval export-tree`.

use std::path::Path;

use rusqlite::Connection;
use serde::Serialize;

use super::observe::{observe, tool_calls, CopyTasks};
use super::problems::{self, Failed};
use super::read::{self, Counts, ReadError, StoredCheck};
use super::record::{EvalRow, SampleRow};
use super::spec::Scoring;
use super::tree::{self, EpochDoc};
use crate::base::protocol::handoff::FailureSampleIndexEntry;
use crate::data::failures::layout;
use crate::data::failures::write::{write_json_atomic, WriteError};
use crate::data::store::{Store, StoreError};
use crate::features::eval::expand::copy_id;

/// Why an eval's results could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum FinishError {
    /// Reading the eval failed.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// Reading the run failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Writing the tree failed.
    #[error(transparent)]
    Write(#[from] WriteError),
}

/// One check's pass rate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckRate {
    /// The check.
    pub check: String,
    /// Samples that passed it.
    pub passed: u64,
    /// Samples scored (errors included: a sample that could not be scored did not pass).
    pub of: u64,
    /// Samples that could not be scored.
    pub errors: u64,
    /// `passed / of`.
    pub rate: f64,
    /// Its gate, when it has one.
    pub gate: Option<f64>,
}

/// An eval's results.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Results {
    /// The samples by status.
    pub counts: Counts,
    /// Each check's pass rate, in the spec's order.
    pub checks: Vec<CheckRate>,
    /// The gates missed: `(check, rate, gate)`.
    pub gates_missed: Vec<(String, f64, f64)>,
    /// Tokens of every attempt.
    pub tokens: u64,
    /// Cost of every attempt, when every one is known.
    pub cost_usd: Option<f64>,
    /// Tokens the LLM judges used (apart from `tokens`).
    pub judge_tokens: u64,
    /// Their cost, when every judged attempt's is known.
    pub judge_cost_usd: Option<f64>,
}

/// The prefix of the task ids of epoch `epoch` of sample `id`.
pub fn copy_prefix(id: &str, epoch: u32, epochs: u32) -> String {
    if epochs <= 1 {
        id.to_string()
    } else {
        format!("{id}#{epoch}")
    }
}

/// The tasks of epoch `epoch` of sample `id`, by the scoring's plan tasks.
pub fn copy_tasks(scoring: &Scoring, id: &str, epoch: u32) -> CopyTasks {
    let prefix = copy_prefix(id, epoch, scoring.epochs);
    CopyTasks {
        tasks: scoring
            .plan_tasks
            .iter()
            .map(|t| copy_id(&prefix, t))
            .collect(),
        output_task: copy_id(&prefix, &scoring.output_task),
    }
}

/// The results of eval `row`.
pub fn results(conn: &Connection, row: &EvalRow) -> Result<Results, ReadError> {
    let scoring = read::scoring_of(row)?;
    let counts = read::counts(conn, &row.eval_id)?;
    // (passed, of, errors) per check: summed in SQL when each sample has one epoch, else
    // each sample's epochs reduced first.
    let mut tally: std::collections::HashMap<String, (u64, u64, u64)> = Default::default();
    if scoring.epochs <= 1 {
        let mut st = conn.prepare_cached(
            "SELECT check_name, SUM(passed = 1), COUNT(*), SUM(passed IS NULL) FROM eval_checks
             WHERE eval_id = ?1 GROUP BY check_name",
        )?;
        let mut rows = st.query([&row.eval_id])?;
        while let Some(r) = rows.next()? {
            let n = |i: usize| {
                r.get::<_, Option<i64>>(i)
                    .map(|x| x.unwrap_or(0).max(0) as u64)
            };
            tally.insert(r.get(0)?, (n(1)?, n(2)?, n(3)?));
        }
    } else {
        for s in read::sample_results(conn, row)? {
            for c in &scoring.checks {
                let t = tally.entry(c.name.clone()).or_default();
                t.1 += 1;
                match s.checks.get(&c.name) {
                    Some(Some(true)) => t.0 += 1,
                    Some(None) | None => t.2 += 1,
                    _ => {}
                }
            }
        }
    }
    let mut checks = Vec::new();
    for c in &scoring.checks {
        let (passed, of, errors) = tally.get(&c.name).copied().unwrap_or_default();
        checks.push(CheckRate {
            check: c.name.clone(),
            passed,
            of,
            errors,
            rate: if of == 0 {
                0.0
            } else {
                passed as f64 / of as f64
            },
            gate: scoring.fail_under.get(&c.name).copied(),
        });
    }
    let gates_missed = checks
        .iter()
        .filter_map(|c| {
            c.gate
                .filter(|g| c.rate < *g)
                .map(|g| (c.check.clone(), c.rate, g))
        })
        .collect();
    let (tokens, cost, judge_tokens, judge_cost): (i64, Option<f64>, i64, Option<f64>) = conn
        .query_row(
            "SELECT COALESCE(SUM(tokens), 0),
                    CASE WHEN COUNT(*) = COUNT(cost_usd) THEN SUM(cost_usd) END,
                    COALESCE(SUM(judge_tokens), 0),
                    CASE WHEN COUNT(*) FILTER (WHERE judge_tokens > 0)
                              = COUNT(judge_cost_usd) FILTER (WHERE judge_tokens > 0)
                         THEN SUM(judge_cost_usd) END
             FROM eval_attempts WHERE eval_id = ?1",
            [&row.eval_id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )?;
    Ok(Results {
        counts,
        checks,
        gates_missed,
        tokens: tokens.max(0) as u64,
        cost_usd: cost,
        judge_tokens: judge_tokens.max(0) as u64,
        judge_cost_usd: judge_cost,
    })
}

/// Tool calls by run, then by task (a rerun's run and its parent's share task ids).
pub type ToolsByRun = std::collections::HashMap<String, super::observe::ToolsByTask>;

/// A sample's epochs as its documents show them, from the stored attempts and checks;
/// with `store`, each epoch's output and trace are read from its run.
pub fn epoch_docs(
    store: Option<&Store>,
    tools: &ToolsByRun,
    scoring: &Scoring,
    s: &SampleRow,
    attempts: &[super::record::AttemptRow],
    checks: &[StoredCheck],
) -> Result<Vec<EpochDoc>, StoreError> {
    let mut out = Vec::with_capacity(attempts.len());
    for a in attempts {
        let (output, trace) = match store {
            Some(store) => {
                let copy = copy_tasks(scoring, &s.sample_id, a.epoch);
                let calls = tools
                    .get(&a.run_id)
                    .map(|t| copy.calls_from(t))
                    .unwrap_or_default();
                let o = observe(store, &a.run_id, &copy, calls)?;
                (o.seen.output, o.seen.trace)
            }
            None => (String::new(), serde_json::Value::Null),
        };
        let mut rows: Vec<&StoredCheck> = checks
            .iter()
            .filter(|c| c.sample_id == s.sample_id && c.epoch == a.epoch)
            .collect();
        let order = |name: &str| scoring.checks.iter().position(|c| c.name == name);
        rows.sort_by_key(|c| order(&c.check));
        out.push(EpochDoc {
            attempt: super::record::AttemptRow {
                checks: rows
                    .into_iter()
                    .map(|c| super::record::CheckRow {
                        name: c.check.clone(),
                        passed: c.passed,
                        score: c.score,
                        result: c.result.clone(),
                    })
                    .collect(),
                ..a.clone()
            },
            output,
            trace,
        });
    }
    Ok(out)
}

/// The documents of scored sample `s` of eval `row`, from its stored attempts and
/// checks (with `store`, each epoch's output and trace read from its run).
pub fn sample_docs(
    conn: &Connection,
    store: Option<&Store>,
    tools: &ToolsByRun,
    scoring: &Scoring,
    row: &EvalRow,
    s: &SampleRow,
) -> Result<tree::SampleDocs, FinishError> {
    let a = read::attempts(conn, &row.eval_id, Some(&s.sample_id))?;
    let c = read::checks_of(conn, &row.eval_id, Some(&s.sample_id))?;
    Ok(tree::documents(
        row,
        scoring,
        s,
        &epoch_docs(store, tools, scoring, s, &a, &c)?,
    ))
}

/// The summary's entries of eval `row`'s samples that failed or errored so far, by
/// dataset order (what a resumed eval's tree writer starts from).
pub fn failed_entries(
    conn: &Connection,
    row: &EvalRow,
) -> Result<std::collections::BTreeMap<u64, FailureSampleIndexEntry>, FinishError> {
    let scoring = read::scoring_of(row)?;
    let mut out = std::collections::BTreeMap::new();
    for s in read::samples(conn, &row.eval_id)? {
        if matches!(s.status.as_str(), "failed" | "error") {
            let docs = sample_docs(conn, None, &ToolsByRun::new(), &scoring, row, &s)?;
            if let Some(e) = docs.entry {
                out.insert(s.ord, e);
            }
        }
    }
    Ok(out)
}

/// Which of the samples' documents [`write_end`] writes besides the end of the tree.
#[derive(Clone, Copy)]
pub enum SampleFiles<'a> {
    /// None: they were written as the samples were scored.
    Written,
    /// Those missing (a kill before the tree writer caught up, a write that failed),
    /// read from the run in `store`.
    Missing(&'a Store),
    /// All of them, read from the run in `store` (an export, a rerun's inherited
    /// samples).
    All(&'a Store),
}

impl<'a> SampleFiles<'a> {
    fn store(self) -> Option<&'a Store> {
        match self {
            SampleFiles::Written => None,
            SampleFiles::Missing(s) | SampleFiles::All(s) => Some(s),
        }
    }
}

/// The tool calls of every run eval `row`'s attempts were made in.
fn tools_of(conn: &Connection, store: &Store, row: &EvalRow) -> Result<ToolsByRun, FinishError> {
    let runs: Vec<String> = (|| {
        conn.prepare("SELECT DISTINCT run_id FROM eval_attempts WHERE eval_id = ?1")?
            .query_map([&row.eval_id], |r| r.get(0))?
            .collect::<Result<_, _>>()
    })()
    .map_err(ReadError::from)?;
    let mut tools = ToolsByRun::new();
    for r in runs {
        let (calls, _) = tool_calls(store, &r)?;
        tools.insert(r, calls);
    }
    Ok(tools)
}

/// Whether a sample's documents are all in iteration directory `it`.
fn docs_present(it: &Path, s: &SampleRow) -> bool {
    let has = |rel: String| it.join(rel).is_file();
    has(layout::trace_path(&s.file_id))
        && has(layout::evaluation_path(&s.file_id))
        && (!matches!(s.status.as_str(), "failed" | "error")
            || has(layout::attribution_path(&s.file_id)))
}

/// Whether the end of eval `row`'s tree under `out` is there (its summary and problems
/// report): an eval whose end was cut short lacks them.
pub fn end_written(row: &EvalRow, out: &Path) -> bool {
    let it = tree::iteration_dir(out, row.iteration);
    it.join(layout::SUMMARY_FILE).is_file() && it.join(layout::REPORT_FILE).is_file()
}

/// Writes the end of eval `row`'s tree into iteration directory `it`: the summary, the
/// problems report and the handoff (beside `execution_outputs/`), dated `at`; and the
/// samples' documents `files` says. Every step can be done again: a kill or a failed
/// write leaves a tree a later call completes.
pub fn write_end(
    conn: &Connection,
    files: SampleFiles<'_>,
    row: &EvalRow,
    out: &Path,
    at: &str,
    incomplete: bool,
) -> Result<Results, FinishError> {
    let scoring = read::scoring_of(row)?;
    let it = tree::iteration_dir(out, row.iteration);
    tree::prepare(&it)?;
    if files.store().is_some() {
        // What a killed writer left half-written goes; the documents are written whole.
        for d in std::iter::once(it.clone()).chain(tree::DIRS.iter().map(|d| it.join(d))) {
            crate::data::failures::write::remove_stale_temps(&d);
        }
        crate::data::failures::write::remove_stale_temps(out);
    }
    let samples = read::samples(conn, &row.eval_id)?;
    let mut tools: Option<ToolsByRun> = None;
    let mut entries = Vec::new();
    let mut failed = Vec::new();
    for s in &samples {
        let missing = |rel: String| !it.join(rel).is_file();
        let write_sample = match files {
            SampleFiles::Written => false,
            SampleFiles::Missing(_) => missing(layout::sample_path(&s.file_id)),
            SampleFiles::All(_) => true,
        };
        if write_sample {
            tree::write_sample(&it, row, s)?;
        }
        if s.status == "pending" {
            continue;
        }
        let write_docs = match files {
            SampleFiles::Written => false,
            SampleFiles::Missing(_) => !docs_present(&it, s),
            SampleFiles::All(_) => true,
        };
        // Only the failed samples' entries are made when no document is to be written.
        if !write_docs && s.status == "passed" {
            continue;
        }
        let store = files.store().filter(|_| write_docs);
        if let (Some(store), None) = (store, &tools) {
            tools = Some(tools_of(conn, store, row)?);
        }
        let none = ToolsByRun::new();
        let docs = sample_docs(
            conn,
            store,
            tools.as_ref().unwrap_or(&none),
            &scoring,
            row,
            s,
        )?;
        if write_docs {
            tree::write_docs(&it, s, &docs)?;
        }
        if let (Some(entry), Some(attribution)) = (docs.entry, docs.attribution) {
            entries.push(entry);
            failed.push(Failed {
                file_id: s.file_id.clone(),
                status: s.status.clone(),
                attribution,
            });
        }
    }
    let results = results(conn, row)?;
    let total = results.counts.total();
    let report = problems::report(&scoring, &failed, total, row.iteration, at);
    tree::write_summary(
        &it,
        &tree::summary(row.iteration, at.to_string(), total, entries.clone()),
    )?;
    crate::base::pause_point::here("eval-end:summary");
    write_json_atomic(&it.join(layout::REPORT_FILE), &report)?;
    crate::base::pause_point::here("eval-end:report");
    let trigger = problems::trigger_reason(&report, &results.gates_missed);
    let handoff = problems::handoff(
        &report,
        &entries,
        format!(
            "{}/{}{}",
            layout::OUTPUTS_DIR,
            layout::ITERATION_PREFIX,
            row.iteration
        ),
        row.iteration,
        results.counts.passed,
        total,
        trigger,
        at,
        incomplete,
    );
    write_json_atomic(&out.join(tree::HANDOFF_FILE), &handoff)?;
    Ok(results)
}
