//! Everything `plexus eval FILE` checks before anything runs: the spec, the dataset and
//! the filters, the plan and its output task, every placeholder of every sample; then the
//! eval's rows and the plan of its copies.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use color_eyre::eyre::Result;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::cli::args::EvalRunArgs;
use crate::data::exit::InvalidOptions;
use crate::features::eval::dataset::{self, Sample};
use crate::features::eval::epochs::Reducer;
use crate::features::eval::expand::{expand_copies_text, ExpandError, PlanCopy};
use crate::features::eval::finish::copy_prefix;
use crate::features::eval::record::{file_ids, new_eval_id, EvalRow, SampleRow};
use crate::features::eval::spec::{load_spec, EvalSpec, Scoring};

/// A spec made ready to run.
pub struct Prepared {
    /// The spec (with the command line's epochs, reducer and gates).
    pub spec: EvalSpec,
    /// The samples chosen, in dataset order.
    pub samples: Vec<Sample>,
    /// The plan file as JSON.
    pub plan: Value,
    /// The plan's task ids, in order.
    pub plan_tasks: Vec<String>,
    /// The plan's task whose answer the checks read.
    pub output_task: String,
    /// The eval's row (status `running`, no run yet).
    pub row: EvalRow,
    /// Its samples' rows.
    pub sample_rows: Vec<SampleRow>,
}

fn invalid(message: String) -> color_eyre::Report {
    InvalidOptions(message).into()
}

/// The plan's task ids and the task the checks read: the spec's `output_task`, else the
/// plan's last task that no other task depends on.
pub fn plan_tasks(plan: &Value, named: Option<&str>, file: &Path) -> Result<(Vec<String>, String)> {
    let tasks = plan
        .get("tasks")
        .and_then(Value::as_array)
        .ok_or_else(|| invalid(format!("{}: the plan has no `tasks` array", file.display())))?;
    let ids: Vec<String> = tasks
        .iter()
        .filter_map(|t| t.get("task_id").and_then(Value::as_str).map(str::to_string))
        .collect();
    let depended: HashSet<&str> = tasks
        .iter()
        .filter_map(|t| t.get("depends_on").and_then(Value::as_array))
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let output = match named {
        Some(n) if ids.iter().any(|i| i == n) => n.to_string(),
        Some(n) => {
            return Err(invalid(format!(
                "the spec's output_task `{n}` is not a task of {} (its tasks: {})",
                file.display(),
                ids.join(", ")
            )))
        }
        None => ids
            .iter()
            .rev()
            .find(|i| !depended.contains(i.as_str()))
            .cloned()
            .ok_or_else(|| invalid(format!("{}: the plan has no task", file.display())))?,
    };
    Ok((ids, output))
}

/// Applies `--sample-id`, `--where` and `--limit` to `samples`.
pub fn choose(
    samples: Vec<Sample>,
    ids: &[String],
    filters: &[String],
    limit: Option<&str>,
) -> Result<Vec<Sample>> {
    let mut wanted: Vec<(String, String)> = Vec::new();
    for f in filters {
        let (k, v) = f
            .split_once('=')
            .ok_or_else(|| invalid(format!("--where {f}: expected meta.K=V")))?;
        let key = k
            .strip_prefix("meta.")
            .or_else(|| k.strip_prefix("metadata."))
            .ok_or_else(|| invalid(format!("--where {f}: the field must start with meta.")))?;
        wanted.push((key.to_string(), v.to_string()));
    }
    let known: HashSet<&str> = samples.iter().map(|s| s.id.as_str()).collect();
    if let Some(missing) = ids.iter().find(|i| !known.contains(i.as_str())) {
        return Err(invalid(format!(
            "--sample-id {missing}: no sample of the dataset has this id"
        )));
    }
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let mut kept: Vec<Sample> = samples
        .into_iter()
        .filter(|s| ids.is_empty() || ids.contains(&s.id))
        .filter(|s| {
            wanted
                .iter()
                .all(|(k, v)| s.metadata.get(k).map(text).as_deref() == Some(v.as_str()))
        })
        .collect();
    if let Some(l) = limit {
        let (from, to) = match l.split_once('-') {
            Some((a, b)) => (a.trim().parse::<usize>(), b.trim().parse::<usize>()),
            None => (Ok(1), l.trim().parse::<usize>()),
        };
        match (from, to) {
            (Ok(a), Ok(b)) if a >= 1 && b >= a => {
                kept = kept.into_iter().skip(a - 1).take(b - a + 1).collect();
            }
            _ => {
                return Err(invalid(format!(
                    "--limit {l}: expected a count N or a range A-B (from 1, A ≤ B)"
                )))
            }
        }
    }
    if kept.is_empty() {
        return Err(invalid("no sample is left after the filters".into()));
    }
    Ok(kept)
}

/// The eval's gates: the spec's, with `--fail-under CHECK=RATE` added.
fn gates(spec: &mut EvalSpec, extra: &[String]) -> Result<()> {
    for g in extra {
        let (check, rate) = g
            .split_once('=')
            .ok_or_else(|| invalid(format!("--fail-under {g}: expected CHECK=RATE")))?;
        let rate: f64 = rate
            .trim()
            .parse()
            .ok()
            .filter(|r: &f64| (0.0..=1.0).contains(r))
            .ok_or_else(|| invalid(format!("--fail-under {g}: a rate is from 0 to 1")))?;
        if !spec.checks.iter().any(|c| c.name == check) {
            return Err(invalid(format!(
                "--fail-under {g}: the spec has no check `{check}`"
            )));
        }
        spec.fail_under.insert(check.to_string(), rate);
    }
    Ok(())
}

/// The next iteration number in `out` (1 when it has none).
pub fn next_iteration(out: &Path) -> u32 {
    let dir = out.join(crate::data::failures::layout::OUTPUTS_DIR);
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            crate::data::failures::layout::iteration_number(&e.file_name().to_string_lossy())
        })
        .max()
        .map_or(1, |n| n + 1)
}

/// Reads and checks everything `args` names; `provider` is the profile the eval runs on.
pub fn prepare(args: &EvalRunArgs, provider: &str) -> Result<Prepared> {
    let spec_path: PathBuf = args
        .spec
        .clone()
        .ok_or_else(|| invalid("an eval spec file is needed: plexus eval FILE".into()))?;
    let mut spec = load_spec(&spec_path).map_err(|e| invalid(e.to_string()))?;
    let spec_text = crate::base::text::utf8::read_text(&spec_path)
        .map_err(|e| invalid(format!("{}: {e}", spec_path.display())))?;
    apply_options(args, &mut spec)?;
    let data =
        dataset::load(&spec.dataset, spec.id_key.as_deref()).map_err(|e| invalid(e.to_string()))?;
    let samples = choose(
        data.samples,
        &args.sample_id,
        &args.filter,
        args.limit.as_deref(),
    )?;
    // The plan must be valid on its own first: its errors then name its own file. Its
    // `sample` references are filled by the copies; here they are taken as filled.
    let plan_text = crate::base::text::utf8::read_text(&spec.plan)
        .map_err(|e| invalid(format!("{}: {e}", spec.plan.display())))?;
    check_plan(&plan_text, &spec.plan.display().to_string())?;
    let plan: Value = serde_json::from_str(&plan_text)
        .map_err(|e| invalid(format!("{}: {e}", spec.plan.display())))?;
    let (plan_tasks, output_task) = plan_tasks(&plan, spec.output_task.as_deref(), &spec.plan)?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("evals").join(safe_name(&spec.name)));
    let key = eval_key(
        args,
        &spec,
        [&spec_text, &plan_text, provider],
        &out,
        &samples,
    )?;
    let scoring = Scoring {
        plan_tasks: plan_tasks.clone(),
        output_task: output_task.clone(),
        ..spec.scoring()
    };
    let sample_rows = sample_rows(&samples);
    let row = EvalRow {
        eval_id: new_eval_id(),
        name: spec.name.clone(),
        eval_key: key,
        kind: "run".into(),
        run_id: None,
        parent_id: None,
        iteration: args.iteration.unwrap_or_else(|| next_iteration(&out)),
        spec_path: spec_path.display().to_string(),
        spec_json: serde_json::to_string(&scoring)?,
        dataset_path: spec.dataset.display().to_string(),
        out_dir: Some(out.display().to_string()),
        status: "running".into(),
        created_at: crate::base::clock::now_rfc3339(),
        finished_at: None,
        sample_count: samples.len() as u64,
    };
    Ok(Prepared {
        spec,
        samples,
        plan,
        plan_tasks,
        output_task,
        row,
        sample_rows,
    })
}

/// Puts the command line's epochs, reducer, gates and dataset in `spec`; a reducer
/// that can never pass is refused.
fn apply_options(args: &EvalRunArgs, spec: &mut EvalSpec) -> Result<()> {
    if let Some(e) = args.epochs {
        spec.epochs = e;
    }
    if let Some(r) = &args.reducer {
        spec.reducer = r
            .parse::<Reducer>()
            .map_err(|e| invalid(format!("--reducer: {e}")))?;
    }
    if let Reducer::AtLeast(n) = spec.reducer {
        if n > spec.epochs {
            return Err(invalid(format!(
                "the reducer at_least:{n} can never pass with {} epoch(s)",
                spec.epochs
            )));
        }
    }
    gates(spec, &args.fail_under)?;
    if let Some(d) = &args.data {
        spec.dataset = d.clone();
    }
    Ok(())
}

/// Checks plan `plan_text` (of `file`) on its own, its `sample` references taken as
/// filled (an empty `data` where they have none).
fn check_plan(plan_text: &str, file: &str) -> Result<()> {
    let Ok(mut v) = serde_json::from_str::<Value>(plan_text) else {
        // Not JSON: the plan's reader names where.
        crate::model::plan::parse_plan_owned(plan_text.to_string(), file)?;
        return Ok(());
    };
    let tasks = v.get_mut("tasks").and_then(Value::as_array_mut);
    let refs = tasks
        .into_iter()
        .flatten()
        .filter_map(|t| t.get_mut("data_references").and_then(Value::as_array_mut))
        .flatten()
        .filter_map(Value::as_object_mut);
    for r in refs {
        if r.get("ref_type").and_then(Value::as_str) == Some("sample") && !r.contains_key("data") {
            r.insert("data".into(), Value::String(String::new()));
        }
    }
    crate::model::plan::parse_plan_owned(v.to_string(), file)?;
    Ok(())
}

/// The eval's key: a hash of the spec's and the plan's texts, the provider (`texts`),
/// the tree, the dataset, the scoring, the iteration asked for and the samples chosen.
fn eval_key(
    args: &EvalRunArgs,
    spec: &EvalSpec,
    texts: [&str; 3],
    out: &Path,
    samples: &[Sample],
) -> Result<String> {
    let [spec_text, plan_text, provider] = texts;
    let mut h = Sha256::new();
    for part in [
        spec_text.as_bytes(),
        plan_text.as_bytes(),
        provider.as_bytes(),
        out.to_string_lossy().as_bytes(),
        spec.dataset.to_string_lossy().as_bytes(),
        serde_json::to_string(&spec.scoring())?.as_bytes(),
        format!("{:?}", args.iteration).as_bytes(),
    ] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part);
    }
    for s in samples {
        h.update(s.id.as_bytes());
        h.update(s.hash.as_bytes());
    }
    Ok(format!("{:x}", h.finalize()))
}

/// The rows of the eval's samples, pending, in order, each with its file id.
fn sample_rows(samples: &[Sample]) -> Vec<SampleRow> {
    let names = file_ids(samples.iter().map(|s| s.id.as_str()));
    samples
        .iter()
        .zip(names)
        .enumerate()
        .map(|(i, (s, file_id))| SampleRow {
            sample_id: s.id.clone(),
            ord: i as u64,
            file_id,
            hash: s.hash.clone(),
            line: s.line as u64,
            content: json!({"input": s.input, "expected": s.expected, "vars": s.vars, "metadata": s.metadata})
                .to_string(),
            status: "pending".into(),
            score: None,
            inherited_from: None,
            marks: None,
        })
        .collect()
}

/// A spec name as a directory name.
fn safe_name(name: &str) -> String {
    file_ids(std::iter::once(name)).remove(0)
}

/// The plan of `samples`' copies (each sample `epochs` times), as a checked plan.
pub fn copies_plan(
    plan: &Value,
    samples: &[&Sample],
    epochs: u32,
    source: &str,
) -> Result<crate::model::plan::Plan> {
    Ok(crate::model::plan::parse_plan_owned(
        copies_text(plan, samples, epochs)?,
        source,
    )?)
}

/// The text of the plan of `samples`' copies (each sample `epochs` times), every
/// placeholder resolved: the samples are not needed to check it (so a caller can let
/// them go first).
pub fn copies_text(plan: &Value, samples: &[&Sample], epochs: u32) -> Result<String> {
    let prefixes: Vec<(String, &Sample)> = samples
        .iter()
        .flat_map(|s| (1..=epochs).map(move |e| (copy_prefix(&s.id, e, epochs), *s)))
        .collect();
    let copies: Vec<PlanCopy<'_>> = prefixes
        .iter()
        .map(|(p, s)| PlanCopy {
            prefix: p,
            sample: s,
        })
        .collect();
    expand_copies_text(plan, &copies).map_err(|e| match e {
        ExpandError::Unresolved(list) => {
            let lines: Vec<String> = list.iter().map(|u| format!("  {u}")).collect();
            invalid(format!(
                "{} placeholder(s) cannot be resolved; the eval does not start:\n{}",
                list.len(),
                lines.join("\n")
            ))
        }
        other => invalid(other.to_string()),
    })
}
