//! `plexus eval`: running a spec over a dataset ([`live`], [`scorer`], [`tree_writer`]),
//! and the commands on evals already made: resume, rerun, rescore ([`rescore`]),
//! compare, show, list, export-tree, and the Eval screen ([`open`]).

pub mod estimate;
pub mod estimate_count;
pub mod judging;
pub mod live;
pub mod open;
pub mod prepare;
pub mod report;
pub mod rerun;
pub mod rescore;
pub mod scorer;
pub mod screen;
pub mod tree_writer;

use std::path::Path;
use std::process::ExitCode;

use color_eyre::eyre::{eyre, Result};
use serde_json::Value;

use crate::cli::args::{EvalArgs, EvalCommand, EvalRunArgs};
use crate::cli::launch::config::{engine_config, run_config, sim_config};
use crate::cli::launch::{prepare_resume, Globals};
use crate::data::exit::InvalidOptions;
use crate::data::store::Store;
use crate::features::eval::compare::{compare, SampleResult};
use crate::features::eval::finish::{results, write_end, SampleFiles};
use crate::features::eval::read::{self, find_eval};
use crate::features::eval::record::{EvalRow, SampleRow};
use crate::run::engine::EngineConfig;

use self::live::{run_eval, Launch, GATE_MISSED};
use self::prepare::{copies_text, prepare};
use self::rerun::{rerun, RerunChoice};

/// Runs `plexus eval …`.
pub async fn eval(
    g: &Globals,
    args: EvalArgs,
    tui: Option<crate::cli::open::UiSetup>,
) -> Result<ExitCode> {
    match args.command {
        None => match tui {
            // On a terminal: the eval in a child process, the Eval screen on it.
            Some(setup) => tokio::task::block_in_place(|| screen::run_with_screen(g, setup)),
            None => run_spec(g, args.run).await,
        },
        Some(EvalCommand::Resume { eval, json, .. }) => {
            let row = find_eval(Store::open(&g.db)?.conn(), &eval)?;
            resume(g, row, json).await
        }
        Some(EvalCommand::Rerun {
            eval,
            failing,
            errors,
            check,
            samples,
            json,
            ..
        }) => {
            let choice = RerunChoice {
                failing,
                errors,
                checks: check,
                samples,
            };
            rerun(g, &eval, choice, json).await
        }
        Some(EvalCommand::Open { eval }) => open::open(&g.db, &eval, tui).await,
        Some(EvalCommand::Rescore {
            eval,
            checks,
            out,
            json,
        }) => tokio::task::block_in_place(|| {
            rescore::rescore(g, &eval, &checks, out.as_deref(), json)
        }),
        Some(EvalCommand::Compare {
            a,
            b,
            by,
            gate,
            json,
        }) => compare_evals(&g.db, &a, &b, by.as_deref(), &gate, json),
        Some(EvalCommand::Show { eval, sample, json }) => {
            show(&g.db, &eval, sample.as_deref(), json)
        }
        Some(EvalCommand::List { json }) => list(&g.db, json),
        Some(EvalCommand::ExportTree { eval, dir }) => export_tree(&g.db, &eval, &dir),
    }
}

/// `plexus eval FILE`: a new eval, or the unfinished one the same command made.
async fn run_spec(g: &Globals, args: EvalRunArgs) -> Result<ExitCode> {
    if !args.more.is_empty() {
        let all: Vec<String> = args
            .spec
            .iter()
            .chain(&args.more)
            .map(|p| p.display().to_string())
            .collect();
        return Err(crate::data::exit::InvalidOptions(format!(
            "`plexus eval` takes one spec file, and {} were given ({}): run `plexus eval FILE` for each",
            all.len(),
            all.join(", ")
        ))
        .into());
    }
    let provider = g
        .provider
        .clone()
        .unwrap_or_else(|| "simulated".to_string());
    // Until the run has opened, memory freed is given back at once (the dataset, the
    // plan of the copies and its text are made and dropped here).
    crate::base::allocator::opening();
    let p = prepare(&args, &provider)?;
    if args.estimate {
        return estimate::print_estimate(g, &p, &provider, args.json);
    }
    if g.db.is_file() {
        drop(crate::data::store::open_connection(&g.db)?);
        let store = Store::open(&g.db)?;
        if let Some(prev) = read::unfinished_with_key(store.conn(), &p.row.eval_key)? {
            crate::errln!(
                "eval {}: the same command made it and it did not finish; continuing it",
                prev.eval_id
            );
            if prev.run_id.is_some() {
                return resume(g, prev, args.json).await;
            }
            // Stopped before its run began: its run starts now.
            let samples = read::samples(store.conn(), &prev.eval_id)?;
            return start_spec(g, &args, p, Some((prev, samples))).await;
        }
        if let Some(done) = read::finished_with_key(store.conn(), &p.row.eval_key)? {
            return finished_already(&store, done, args.json);
        }
    }
    start_spec(g, &args, p, None).await
}

/// Where eval `row`'s tree goes.
fn eval_out(row: &EvalRow) -> std::path::PathBuf {
    std::path::PathBuf::from(row.out_dir.clone().unwrap_or_else(|| "evals".into()))
}

/// The same command of an eval that has finished: nothing is paid twice. Its report is
/// printed again; a tree that lacks its end (a build that stored `finished` first, a
/// kill, files removed since) is completed from the database. No model is called.
fn finished_already(store: &Store, row: EvalRow, json: bool) -> Result<ExitCode> {
    let out = eval_out(&row);
    let whole = crate::features::eval::finish::end_written(&row, &out);
    crate::errln!(
        "eval {}: the same command finished it already (iteration {}){}; no model is called. To run it again: the same command with --iteration {}, or `plexus eval rerun {} --errors`",
        row.eval_id,
        row.iteration,
        if whole {
            String::new()
        } else {
            format!("; its failure tree under {} is completed from the database", out.display())
        },
        row.iteration + 1,
        row.eval_id
    );
    let at = row
        .finished_at
        .clone()
        .unwrap_or_else(|| row.created_at.clone());
    let results = if whole {
        results(store.conn(), &row)?
    } else {
        write_end(
            store.conn(),
            SampleFiles::Missing(store),
            &row,
            &out,
            &at,
            false,
        )?
    };
    report::print_results(&row, &results, json)?;
    Ok(if results.gates_missed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(GATE_MISSED)
    })
}

/// Starts the run of a prepared spec: a new eval, or `existing` (an eval stored before
/// its run began) with its samples.
async fn start_spec(
    g: &Globals,
    args: &EvalRunArgs,
    p: prepare::Prepared,
    existing: Option<(EvalRow, Vec<SampleRow>)>,
) -> Result<ExitCode> {
    let refs: Vec<&crate::features::eval::dataset::Sample> = p.samples.iter().collect();
    let text = copies_text(&p.plan, &refs, p.spec.epochs)?;
    drop(refs);
    let (spec, sample_rows, row) = (p.spec, p.sample_rows, p.row);
    // The dataset is let go before the copies' text is read: the two are not held
    // together.
    drop((p.samples, p.plan));
    let plan = crate::model::plan::parse_plan_owned(
        text,
        &format!("{} (eval {})", spec.plan.display(), spec.name),
    )?;
    let new_eval = existing.is_none();
    let (row, sample_rows) = existing.unwrap_or((row, sample_rows));
    let mut engine = engine_config(
        g,
        EngineConfig {
            timeout_scale: args.timeout_scale,
            retry: crate::run::engine::retry::RetryPolicy::default().scaled(args.retry_delay_div),
            ..EngineConfig::default()
        },
    );
    engine.skills_dir = crate::run::engine::config::skills_dir_for(&spec.plan, &engine.workspace);
    let simulated = sim_config(engine.seed, &args.sim, args.faults);
    let config = run_config(g, engine, simulated);
    run_eval(
        g,
        Launch {
            row,
            samples: sample_rows,
            new_eval,
            json: args.json,
        },
        plan,
        config,
        None,
    )
    .await
}

/// Continues eval `row` on its run.
async fn resume(g: &Globals, row: EvalRow, json: bool) -> Result<ExitCode> {
    if row.status == "finished" {
        return Err(InvalidOptions(format!(
            "eval {} has finished; `plexus eval show {}` shows it, `plexus eval rerun {} --errors` runs its errors again",
            row.eval_id, row.eval_id, row.eval_id
        ))
        .into());
    }
    let Some(run) = row.run_id.clone() else {
        return Err(eyre!(
            "eval {} has no run yet (it stopped before its run began); run its command again",
            row.eval_id
        ));
    };
    let store = Store::open(&g.db)?;
    let samples = read::samples(store.conn(), &row.eval_id)?;
    // A run that ended while its scoring had not: what is left is scored without it.
    let run_status = crate::model::event::RunStatus::parse(&store.run_status(&run)?);
    drop(store);
    use crate::model::event::RunStatus as S;
    let prepared = match run_status {
        Some(S::Succeeded | S::Partial | S::Cancelled) => None,
        // A failed run resumes only when a review freed some of its tasks.
        Some(S::Failed | S::AwaitingReview) => prepare_resume(&g.db, &run).ok(),
        _ => Some(prepare_resume(&g.db, &run)?),
    };
    let Some((plan, mut config, resuming)) = prepared else {
        let launch = Launch {
            row,
            samples,
            new_eval: false,
            json,
        };
        return live::score_only(g, launch, run_status.unwrap_or(S::Succeeded)).await;
    };
    with_globals(g, &mut config);
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
        Some(resuming),
    )
    .await
}

/// A stored run config with the command line's concurrency and provider.
fn with_globals(g: &Globals, config: &mut crate::cli::launch::RunConfig) {
    config.engine = engine_config(g, config.engine.clone());
    if let Some(p) = &g.provider {
        config.provider = p.clone();
    }
}

/// `plexus eval compare A B`.
fn compare_evals(
    db: &Path,
    a: &str,
    b: &str,
    by: Option<&str>,
    gates: &[String],
    json_out: bool,
) -> Result<ExitCode> {
    let store = Store::open(db)?;
    let (ra, rb) = (find_eval(store.conn(), a)?, find_eval(store.conn(), b)?);
    let (sa, sb) = (
        read::sample_results(store.conn(), &ra)?,
        read::sample_results(store.conn(), &rb)?,
    );
    for g in gates {
        if !sa.iter().chain(&sb).any(|s| s.checks.contains_key(g)) {
            return Err(InvalidOptions(format!("--gate {g}: neither eval has this check")).into());
        }
    }
    let whole = compare(&sa, &sb);
    let mut groups = Vec::new();
    if let Some(by) = by {
        let key = by
            .strip_prefix("meta.")
            .or_else(|| by.strip_prefix("metadata."))
            .ok_or_else(|| InvalidOptions(format!("--by {by}: expected meta.K")))?;
        let meta = |row: &EvalRow| -> Result<std::collections::HashMap<String, String>> {
            Ok(read::samples(store.conn(), &row.eval_id)?
                .into_iter()
                .map(|s| {
                    let v: Value = serde_json::from_str(&s.content).unwrap_or(Value::Null);
                    let m = match &v["metadata"][key] {
                        Value::Null => "(none)".to_string(),
                        Value::String(x) => x.clone(),
                        other => other.to_string(),
                    };
                    (s.sample_id, m)
                })
                .collect())
        };
        let (ma, mb) = (meta(&ra)?, meta(&rb)?);
        // Each side split by the field's value in one pass.
        type Split = std::collections::BTreeMap<String, (Vec<SampleResult>, Vec<SampleResult>)>;
        let mut split: Split = Default::default();
        for r in &sa {
            if let Some(v) = ma.get(&r.id) {
                split.entry(v.clone()).or_default().0.push(r.clone());
            }
        }
        for r in &sb {
            if let Some(v) = mb.get(&r.id) {
                split.entry(v.clone()).or_default().1.push(r.clone());
            }
        }
        for (v, (a, b)) in split {
            groups.push((format!("{by}={v}"), compare(&a, &b)));
        }
    }
    let regressed: Vec<&str> = whole
        .checks
        .iter()
        .filter(|k| gates.contains(&k.check) && k.difference.hi < 0.0 && k.p_adjusted < 0.05)
        .map(|k| k.check.as_str())
        .collect();
    if json_out {
        crate::rawln!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "a": ra.eval_id, "b": rb.eval_id, "comparison": whole,
                "groups": groups.iter().map(|(g, c)| serde_json::json!({"group": g, "comparison": c})).collect::<Vec<_>>(),
                "gates_regressed": regressed,
            }))?
        );
    } else {
        report::print_comparison(&ra.eval_id, &rb.eval_id, &whole, None);
        for (g, c) in &groups {
            report::print_comparison(&ra.eval_id, &rb.eval_id, c, Some(g));
        }
        for r in &regressed {
            crate::outln!("gate {r}: a significant regression (p < 0.05 after adjustment)");
        }
    }
    Ok(if regressed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(GATE_MISSED)
    })
}

/// `plexus eval show`.
fn show(db: &Path, eval: &str, sample: Option<&str>, json_out: bool) -> Result<ExitCode> {
    let store = Store::open(db)?;
    let row = find_eval(store.conn(), eval)?;
    if let Some(id) = sample {
        let s = read::samples(store.conn(), &row.eval_id)?
            .into_iter()
            .find(|s| s.sample_id == id)
            .ok_or_else(|| InvalidOptions(format!("eval {} has no sample `{id}`", row.eval_id)))?;
        let attempts = read::attempts(store.conn(), &row.eval_id, Some(id))?;
        // In the spec's order, as the checks were run.
        let order = read::scoring_of(&row)?.checks;
        let mut checks = read::checks_of(store.conn(), &row.eval_id, Some(id))?;
        checks.sort_by_key(|c| {
            (
                c.epoch,
                order
                    .iter()
                    .position(|k| k.name == c.check)
                    .unwrap_or(usize::MAX),
            )
        });
        report::print_sample(&s, &attempts, &checks, json_out)?;
        return Ok(ExitCode::SUCCESS);
    }
    report::print_results(&row, &results(store.conn(), &row)?, json_out)?;
    Ok(ExitCode::SUCCESS)
}

/// `plexus eval list`.
fn list(db: &Path, json_out: bool) -> Result<ExitCode> {
    if !db.is_file() {
        report::print_list(&[], json_out)?;
        return Ok(ExitCode::SUCCESS);
    }
    let store = Store::open(db)?;
    let mut rows = Vec::new();
    for r in read::list_evals(store.conn())? {
        let c = read::counts(store.conn(), &r.eval_id)?;
        rows.push((r, c));
    }
    report::print_list(&rows, json_out)?;
    Ok(ExitCode::SUCCESS)
}

/// `plexus eval export-tree EVAL DIR`.
fn export_tree(db: &Path, eval: &str, dir: &Path) -> Result<ExitCode> {
    let store = Store::open(db)?;
    let row = find_eval(store.conn(), eval)?;
    let it = crate::features::eval::tree::iteration_dir(dir, row.iteration);
    if std::fs::read_dir(&it).is_ok_and(|mut d| d.next().is_some()) {
        return Err(InvalidOptions(format!(
            "{} already exists and is not empty; choose another directory",
            it.display()
        ))
        .into());
    }
    let at = row
        .finished_at
        .clone()
        .unwrap_or_else(|| row.created_at.clone());
    let r = write_end(
        store.conn(),
        SampleFiles::All(&store),
        &row,
        dir,
        &at,
        row.status != "finished",
    )?;
    crate::outln!(
        "eval {}: {} samples written to {}",
        row.eval_id,
        r.counts.total(),
        it.display()
    );
    Ok(ExitCode::SUCCESS)
}
