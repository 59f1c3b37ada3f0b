//! `plexus eval rerun`: a child eval of the parent's copies of the chosen samples (the
//! failed ones, the errors, those that failed a check, or those listed in a file such
//! as the Eval screen's marks), inheriting the parent's other results.

use std::collections::HashSet;
use std::path::Path;
use std::process::ExitCode;

use color_eyre::eyre::{eyre, Result};
use serde_json::Value;

use super::live::{run_eval, Launch};
use super::prepare::next_iteration;
use super::rescore;
use super::with_globals;
use crate::cli::launch::Globals;
use crate::data::exit::InvalidOptions;
use crate::data::store::Store;
use crate::features::eval::read::{self, find_eval};
use crate::features::eval::record::{new_eval_id, EvalRow, SampleRow};
use crate::features::eval::spec::Scoring;
use crate::model::plan::Plan;

/// Which samples `plexus eval rerun` runs again.
pub struct RerunChoice {
    /// The samples that failed.
    pub failing: bool,
    /// The samples that could not be scored.
    pub errors: bool,
    /// The samples that failed these checks.
    pub checks: Vec<String>,
    /// The samples listed in this file.
    pub samples: Option<std::path::PathBuf>,
}

/// The ids listed in `file`, one a line (blank lines and `#` comments skipped), each
/// checked against the parent's samples.
fn listed_ids(file: &Path, parent: &[SampleRow]) -> Result<std::collections::HashSet<String>> {
    let text = crate::base::text::utf8::read_text(file)
        .map_err(|e| InvalidOptions(format!("--samples {}: {e}", file.display())))?;
    let known: std::collections::HashSet<&str> =
        parent.iter().map(|s| s.sample_id.as_str()).collect();
    let mut out = std::collections::HashSet::new();
    for (line, id) in crate::features::eval::marks::parse_marks(&text) {
        if !known.contains(id.as_str()) {
            return Err(InvalidOptions(format!(
                "--samples {}:{line}: the eval has no sample `{id}`",
                file.display(),
            ))
            .into());
        }
        out.insert(id);
    }
    Ok(out)
}

/// `plexus eval rerun`: a child eval of the chosen samples, inheriting the others.
pub async fn rerun(g: &Globals, eval: &str, choice: RerunChoice, json: bool) -> Result<ExitCode> {
    let RerunChoice {
        failing,
        errors,
        checks,
        samples: listed,
    } = choice;
    let checks = checks.as_slice();
    if !failing && !errors && checks.is_empty() && listed.is_none() {
        return Err(InvalidOptions(
            "say which samples to run again: --failing, --errors, --check NAME or --samples FILE"
                .into(),
        )
        .into());
    }
    let store = Store::open(&g.db)?;
    let parent = find_eval(store.conn(), eval)?;
    if parent.status != "finished" {
        return Err(InvalidOptions(format!(
            "eval {} has not finished: resume it first (`plexus eval resume {}`)",
            parent.eval_id, parent.eval_id
        ))
        .into());
    }
    let scoring = read::scoring_of(&parent)?;
    check_checks(&scoring, checks, &parent.eval_id)?;
    let failed_check: HashSet<String> = read::check_results(store.conn(), &parent.eval_id)?
        .into_iter()
        .filter(|c| c.passed == Some(false) && checks.contains(&c.check))
        .map(|c| c.sample_id)
        .collect();
    let parent_samples = read::samples(store.conn(), &parent.eval_id)?;
    let chosen = Chosen {
        failing,
        errors,
        failed_check,
        listed: match &listed {
            Some(file) => listed_ids(file, &parent_samples)?,
            None => Default::default(),
        },
    };
    let n = parent_samples.iter().filter(|s| chosen.has(s)).count();
    if n == 0 {
        crate::outln!("eval {}: no sample to run again", parent.eval_id);
        return Ok(ExitCode::SUCCESS);
    }
    let run = parent
        .run_id
        .clone()
        .ok_or_else(|| eyre!("eval {} has no run", parent.eval_id))?;
    let (_, plan_json, config_json) = store.run_plan(&run)?;
    let mut config: crate::cli::launch::RunConfig = serde_json::from_str(&config_json)
        .map_err(|e| eyre!("run {run}: its stored config does not decode: {e}"))?;
    let plan = child_plan(&plan_json, &scoring, &parent_samples, &chosen, &parent)?;
    with_globals(g, &mut config);
    let samples = child_samples(parent_samples, &chosen, &parent.eval_id);
    let row = child_row(&parent, n);
    rescore::copy_inherited(&g.db, &parent.eval_id, &row, &samples)?;
    crate::errln!(
        "eval {}: running {n} sample(s) of eval {} again; the others are inherited",
        row.eval_id,
        parent.eval_id
    );
    run_eval(
        g,
        Launch {
            row,
            samples,
            new_eval: false,
            json,
        },
        plan,
        config,
        None,
    )
    .await
}

/// Refuses a `--check` that names no check of eval `eval_id`.
fn check_checks(scoring: &Scoring, checks: &[String], eval_id: &str) -> Result<()> {
    for c in checks {
        if !scoring.checks.iter().any(|k| &k.name == c) {
            return Err(
                InvalidOptions(format!("--check {c}: eval {eval_id} has no such check")).into(),
            );
        }
    }
    Ok(())
}

/// The samples of the parent chosen to run again.
struct Chosen {
    /// Those that failed.
    failing: bool,
    /// Those that could not be scored.
    errors: bool,
    /// Those that failed one of the checks named.
    failed_check: HashSet<String>,
    /// Those listed in the `--samples` file.
    listed: HashSet<String>,
}

impl Chosen {
    /// Whether `s` runs again.
    fn has(&self, s: &SampleRow) -> bool {
        (self.failing && s.status == "failed")
            || (self.errors && s.status == "error")
            || self.failed_check.contains(&s.sample_id)
            || self.listed.contains(&s.sample_id)
    }
}

/// The child's plan: the parent run's copies (`plan_json`) of the chosen samples.
fn child_plan(
    plan_json: &str,
    scoring: &Scoring,
    parent_samples: &[SampleRow],
    chosen: &Chosen,
    parent: &EvalRow,
) -> Result<Plan> {
    let wanted: HashSet<String> = parent_samples
        .iter()
        .filter(|s| chosen.has(s))
        .flat_map(|s| {
            (1..=scoring.epochs).flat_map(|e| {
                crate::features::eval::finish::copy_tasks(scoring, &s.sample_id, e).tasks
            })
        })
        .collect();
    let mut plan_value: Value = serde_json::from_str(plan_json)
        .map_err(|e| eyre!("the parent run's plan does not read: {e}"))?;
    if let Some(Value::Array(tasks)) = plan_value.get_mut("tasks") {
        tasks.retain(|t| t["task_id"].as_str().is_some_and(|id| wanted.contains(id)));
    }
    Ok(crate::model::plan::parse_plan(
        &serde_json::to_string(&plan_value)?,
        &format!("rerun of eval {}", parent.eval_id),
    )?)
}

/// The child's samples: the chosen ones pending again, the others inherited (from the
/// eval they were first scored in).
fn child_samples(
    parent_samples: Vec<SampleRow>,
    chosen: &Chosen,
    parent_id: &str,
) -> Vec<SampleRow> {
    parent_samples
        .into_iter()
        .map(|s| {
            if chosen.has(&s) {
                SampleRow {
                    status: "pending".into(),
                    score: None,
                    inherited_from: None,
                    marks: None,
                    ..s
                }
            } else {
                SampleRow {
                    inherited_from: Some(s.inherited_from.clone().unwrap_or(parent_id.to_string())),
                    ..s
                }
            }
        })
        .collect()
}

/// The child eval's row, of `n` samples run again, in the parent's next iteration (or
/// the tree's, when that is later).
fn child_row(parent: &EvalRow, n: usize) -> EvalRow {
    let out = parent.out_dir.clone().unwrap_or_else(|| "evals".into());
    EvalRow {
        eval_id: new_eval_id(),
        kind: "rerun".into(),
        eval_key: format!("rerun:{}:{}", parent.eval_id, n),
        run_id: None,
        parent_id: Some(parent.eval_id.clone()),
        iteration: next_iteration(Path::new(&out)).max(parent.iteration + 1),
        status: "running".into(),
        created_at: crate::base::clock::now_rfc3339(),
        finished_at: None,
        ..parent.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str) -> SampleRow {
        SampleRow {
            sample_id: id.into(),
            ord: 0,
            file_id: "f".into(),
            hash: "h".into(),
            line: 1,
            content: "{}".into(),
            status: "failed".into(),
            score: None,
            inherited_from: None,
            marks: None,
        }
    }

    /// Every id the Eval screen marks reads back from its file as it was, however it
    /// is written; a line naming no sample is refused with its line number.
    #[test]
    fn marked_ids_read_back_from_the_marks_file() {
        let ids = ["q1", "#12", " padded ", "two\nlines", "\"quoted\"", "中文"];
        let parent: Vec<SampleRow> = ids.iter().map(|i| row(i)).collect();
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("marks.txt");
        let text: String = ids
            .iter()
            .map(|i| crate::tui::eval_ui::marks::marks_line(i))
            .collect();
        std::fs::write(&file, format!("# marked by hand\n\n{text}")).expect("write");
        let read = listed_ids(&file, &parent).expect("read");
        let want: std::collections::HashSet<String> = ids.iter().map(|i| i.to_string()).collect();
        assert_eq!(read, want);
        std::fs::write(&file, "q1\nq9\n").expect("write");
        let e = listed_ids(&file, &parent).expect_err("unknown").to_string();
        assert!(e.contains("marks.txt:2") && e.contains("`q9`"), "{e}");
    }
}
