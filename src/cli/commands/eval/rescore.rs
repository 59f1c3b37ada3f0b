//! `plexus eval rescore`: an eval's recorded outputs scored again with other checks, as
//! a new eval on the same run, without a model call; and the rows a rerun's child
//! inherits from its parent.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::process::ExitCode;

use color_eyre::eyre::Result;
use rusqlite::params;
use serde_json::Value;

use crate::cli::launch::Globals;
use crate::data::exit::InvalidOptions;
use crate::data::store::Store;
use crate::features::eval::checks::Check;
use crate::features::eval::finish::{copy_tasks, write_end, SampleFiles, ToolsByRun};
use crate::features::eval::observe::{observe, tool_calls};
use crate::features::eval::read::{self, find_eval};
use crate::features::eval::record::{self, new_eval_id, AttemptRow, EvalRow, SampleRow};
use crate::features::eval::score::{check_marks, sample_verdict, score_attempt};
use crate::features::eval::spec::Scoring;

use super::judging::JudgeSet;
use super::live::GATE_MISSED;
use super::prepare::next_iteration;
use super::report::print_results;

/// Stores child eval `row` with `samples`, and copies into it the attempts and check
/// results of the samples it inherits from eval `parent`, in one transaction.
pub fn copy_inherited(db: &Path, parent: &str, row: &EvalRow, samples: &[SampleRow]) -> Result<()> {
    let conn = crate::data::store::open_connection(db)?;
    let tx = conn.unchecked_transaction()?;
    record::insert_eval(&tx, row, samples)?;
    for (table, cols) in [
        (
            "eval_attempts",
            "sample_id, epoch, run_id, status, score, tokens, latency_ms, cost_usd, error,
             judge_tokens, judge_cost_usd",
        ),
        (
            "eval_checks",
            "sample_id, epoch, check_name, passed, score, result",
        ),
    ] {
        tx.execute(
            &format!(
                "INSERT INTO {table} (eval_id, {cols}) SELECT ?1, {cols} FROM {table}
                 WHERE eval_id = ?2 AND sample_id IN
                   (SELECT sample_id FROM eval_samples WHERE eval_id = ?1 AND inherited_from IS NOT NULL)"
            ),
            params![row.eval_id, parent],
        )?;
    }
    tx.commit()?;
    Ok(())
}

/// Pass-rate gates by check.
type Gates = std::collections::BTreeMap<String, f64>;

/// The checks of `file`: an eval spec (its `checks` and `fail_under`) or a JSON array of
/// checks.
fn read_checks(file: &Path) -> Result<(Vec<Check>, Option<Gates>)> {
    let text = crate::base::text::utf8::read_text(file)
        .map_err(|e| InvalidOptions(format!("{}: {e}", file.display())))?;
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| InvalidOptions(format!("{}: {e}", file.display())))?;
    if v.is_object() {
        let spec = crate::features::eval::spec::load_spec(file)
            .map_err(|e| InvalidOptions(e.to_string()))?;
        return Ok((spec.checks, Some(spec.fail_under)));
    }
    let checks: Vec<Check> = serde_json::from_value(v)
        .map_err(|e| InvalidOptions(format!("{}: not an array of checks: {e}", file.display())))?;
    let mut names = HashSet::new();
    for c in &checks {
        if !names.insert(c.name.as_str()) {
            return Err(InvalidOptions(format!(
                "{}: two checks are named `{}`",
                file.display(),
                c.name
            ))
            .into());
        }
    }
    if checks.is_empty() {
        return Err(InvalidOptions(format!("{}: no check", file.display())).into());
    }
    let mut checks = checks;
    let dir = file.parent().unwrap_or(Path::new(""));
    if let Err((field, why)) = crate::features::eval::spec::resolve_judges(&mut checks, dir) {
        return Err(InvalidOptions(format!("{}: {field}: {why}", file.display())).into());
    }
    Ok((checks, None))
}

/// Scores eval `eval`'s recorded outputs again with the checks of `checks_file`. Its
/// `judge` checks answer from the judges' cache alone (an answer not there leaves the
/// check unscored): no model is called.
pub fn rescore(
    g: &Globals,
    eval: &str,
    checks_file: &Path,
    out: Option<&Path>,
    json: bool,
) -> Result<ExitCode> {
    let db = g.db.as_path();
    let store = Store::open(db)?;
    let parent = find_eval(store.conn(), eval)?;
    let old = read::scoring_of(&parent)?;
    let (checks, gates) = read_checks(checks_file)?;
    let scoring = Scoring {
        checks,
        fail_under: gates.unwrap_or_default(),
        ..old
    };
    let out_dir = out
        .map(|p| p.display().to_string())
        .or(parent.out_dir.clone())
        .unwrap_or_else(|| "evals".into());
    let row = rescore_row(&parent, checks_file, &scoring, &out_dir)?;
    let attempts = read::attempts(store.conn(), &parent.eval_id, None)?;
    let mut samples = read::samples(store.conn(), &parent.eval_id)?;
    let tools = tools_by_run(&store, &attempts)?;
    let Some(run) = parent.run_id.as_deref() else {
        return Err(color_eyre::eyre::eyre!(
            "eval {} has no run",
            parent.eval_id
        ));
    };
    let provider = super::judging::run_provider(&store, run)?;
    let judges = JudgeSet::for_scoring(
        g,
        &scoring,
        &provider,
        true,
        &crate::run::engine::retry::RetryPolicy::default(),
    )?;
    let rescored = Rescorer {
        store: &store,
        scoring: &scoring,
        tools: &tools,
        judges: judges.as_deref(),
    }
    .score(&attempts, &samples)?;
    set_verdicts(&mut samples, &scoring, &rescored);
    let rows = rescored.rows;
    let finished_at = crate::base::clock::now_rfc3339();
    let row = EvalRow {
        finished_at: Some(finished_at.clone()),
        ..row
    };
    store_rescore(db, &row, &samples, &rows)?;
    crate::errln!(
        "eval {}: eval {}'s {} attempt(s) scored again without a model call",
        row.eval_id,
        parent.eval_id,
        rows.len()
    );
    finish(db, row, Path::new(&out_dir), &finished_at, json)
}

/// The row of the rescore of `parent` with the checks of `checks_file` (`scoring`), its
/// tree in `out_dir`: running until its tree is written.
fn rescore_row(
    parent: &EvalRow,
    checks_file: &Path,
    scoring: &Scoring,
    out_dir: &str,
) -> Result<EvalRow> {
    Ok(EvalRow {
        eval_id: new_eval_id(),
        eval_key: format!("rescore:{}", parent.eval_id),
        kind: "rescore".into(),
        parent_id: Some(parent.eval_id.clone()),
        iteration: next_iteration(Path::new(out_dir)),
        spec_path: checks_file.display().to_string(),
        spec_json: serde_json::to_string(scoring)?,
        out_dir: Some(out_dir.to_string()),
        // Finished once its tree is written (a kill before leaves it for `eval resume`).
        status: "running".into(),
        created_at: crate::base::clock::now_rfc3339(),
        finished_at: None,
        ..parent.clone()
    })
}

/// The tool calls of each run the `attempts` were made in.
fn tools_by_run(store: &Store, attempts: &[AttemptRow]) -> Result<ToolsByRun> {
    let mut tools = ToolsByRun::new();
    let runs: HashSet<&str> = attempts.iter().map(|a| a.run_id.as_str()).collect();
    for r in runs {
        tools.insert(r.to_string(), tool_calls(store, r)?.0);
    }
    Ok(tools)
}

/// The attempts scored again, and the places of each sample's among them.
struct Rescored {
    rows: Vec<AttemptRow>,
    per_sample: HashMap<String, Vec<usize>>,
}

/// What scoring a recorded attempt again reads.
struct Rescorer<'a> {
    store: &'a Store,
    scoring: &'a Scoring,
    tools: &'a ToolsByRun,
    /// The judges (from their cache), when a check is judged.
    judges: Option<&'a JudgeSet>,
}

impl Rescorer<'_> {
    /// Scores every attempt again from its recorded outputs.
    fn score(&self, attempts: &[AttemptRow], samples: &[SampleRow]) -> Result<Rescored> {
        // Each sample's expected value, and its input when a judge reads it.
        let content_of: HashMap<&str, (Option<Value>, Value)> = samples
            .iter()
            .filter_map(|s| {
                let mut c: Value = serde_json::from_str(&s.content).ok()?;
                let e = c.get("expected").cloned().filter(|v| !v.is_null());
                let input = match self.judges {
                    Some(_) => c.get_mut("input").map(Value::take).unwrap_or(Value::Null),
                    None => Value::Null,
                };
                Some((s.sample_id.as_str(), (e, input)))
            })
            .collect();
        let mut per_sample: HashMap<String, Vec<usize>> = HashMap::new();
        let mut rows = Vec::with_capacity(attempts.len());
        for a in attempts {
            let (expected, input) = match content_of.get(a.sample_id.as_str()) {
                Some((e, i)) => (e.as_ref(), i),
                None => (None, &Value::Null),
            };
            let new = self.attempt(a, expected, input)?;
            per_sample
                .entry(a.sample_id.clone())
                .or_default()
                .push(rows.len());
            rows.push(new);
        }
        Ok(Rescored { rows, per_sample })
    }

    /// Attempt `a` scored again, judged when there are judges and it has an output.
    fn attempt(
        &self,
        a: &AttemptRow,
        expected: Option<&Value>,
        input: &Value,
    ) -> Result<AttemptRow> {
        let copy = copy_tasks(self.scoring, &a.sample_id, a.epoch);
        let calls = self
            .tools
            .get(&a.run_id)
            .map(|t| copy.calls_from(t))
            .unwrap_or_default();
        let mut obs = observe(self.store, &a.run_id, &copy, calls)?;
        if let (Some(j), None) = (self.judges, &obs.error) {
            obs.seen.judgments = j.judge(&a.sample_id, input, expected, &obs.seen.output);
        }
        Ok(score_attempt(
            self.scoring,
            &a.sample_id,
            a.epoch,
            &a.run_id,
            &obs,
            expected,
        ))
    }
}

/// Each sample's verdict over its epochs scored again (pending when some are missing);
/// none is inherited any more.
fn set_verdicts(samples: &mut [SampleRow], scoring: &Scoring, rescored: &Rescored) {
    for s in samples {
        s.inherited_from = None;
        match rescored.per_sample.get(&s.sample_id) {
            Some(per) if per.len() as u32 >= scoring.epochs => {
                let done: Vec<&AttemptRow> = per.iter().map(|&k| &rescored.rows[k]).collect();
                let epochs: Vec<(String, f64)> =
                    done.iter().map(|a| (a.status.clone(), a.score)).collect();
                let (status, score) = sample_verdict(scoring.reducer(), &epochs);
                s.status = status.into();
                s.score = Some(score);
                s.marks = Some(check_marks(scoring, &done));
            }
            _ => {
                s.status = "pending".into();
                s.score = None;
                s.marks = None;
            }
        }
    }
}

/// Stores the rescore's row, its samples and its attempts, in one transaction.
fn store_rescore(
    db: &Path,
    row: &EvalRow,
    samples: &[SampleRow],
    rows: &[AttemptRow],
) -> Result<()> {
    let conn = crate::data::store::open_connection(db)?;
    let tx = conn.unchecked_transaction()?;
    record::insert_eval(&tx, row, samples)?;
    for a in rows {
        record::put_attempt(&tx, &row.eval_id, a)?;
    }
    tx.commit()?;
    Ok(())
}

/// The end of a rescore: its tree written whole from the database, then its status
/// `finished`, the report and the exit code.
fn finish(
    db: &Path,
    row: EvalRow,
    out_dir: &Path,
    finished_at: &str,
    json: bool,
) -> Result<ExitCode> {
    let store = Store::open(db)?;
    let results = write_end(
        store.conn(),
        SampleFiles::All(&store),
        &row,
        out_dir,
        finished_at,
        false,
    )?;
    {
        let conn = crate::data::store::open_connection(db)?;
        let tx = conn.unchecked_transaction()?;
        record::set_status(&tx, &row.eval_id, "finished", Some(finished_at))?;
        tx.commit()?;
    }
    let row = EvalRow {
        status: "finished".into(),
        ..row
    };
    print_results(&row, &results, json)?;
    Ok(if results.gates_missed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(GATE_MISSED)
    })
}
