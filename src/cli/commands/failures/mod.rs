//! `plexus failures --json` and `plexus export-failures`: failure trees listed as JSON
//! for scripts (a tree or context file, or the database's failed invocations — the
//! Failures screen's rows), plexus's own runs written as a tree. The screens themselves
//! open from [`screen`]; `plexus init-context` writes from [`init`].

pub mod init;
pub mod screen;

pub use init::init_context;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use color_eyre::eyre::{eyre, Result};
use serde::Serialize;

use crate::data::exit;
use crate::data::failures::{self, Tree};
use crate::data::store::Store;

/// What `plexus failures TARGET` points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// An output tree or an `ExecuteToInitContext` file (a path that exists).
    Path(PathBuf),
    /// A run of the database (an id, a prefix or `latest`).
    Run(String),
    /// Nothing given: every run of the database.
    AllRuns,
}

impl Target {
    /// A path that exists is a tree; anything else a run id.
    pub fn parse(arg: Option<&str>) -> Target {
        match arg {
            None => Target::AllRuns,
            Some(a) if Path::new(a).exists() => Target::Path(PathBuf::from(a)),
            Some(a) => Target::Run(a.to_string()),
        }
    }
}

/// One sample of a tree as `--json` prints it.
#[derive(Debug, Serialize)]
struct SampleJson<'a> {
    sample_id: &'a str,
    iteration: u32,
    failure_type: Option<&'a str>,
    priority: Option<crate::base::protocol::handoff::FailurePriority>,
    checkers_failed: Vec<&'a str>,
    conversation_turns: Option<u32>,
    sample_path: Option<String>,
    trace_path: Option<String>,
    evaluation_path: Option<String>,
    attribution_path: Option<String>,
}

/// A tree as `--json` prints it.
#[derive(Debug, Serialize)]
struct TreeJson<'a> {
    root: String,
    iterations: Vec<IterationJson>,
    warnings: &'a [String],
    samples: Vec<SampleJson<'a>>,
    /// An Init→Execute context: its requirement and design files.
    #[serde(skip_serializing_if = "Option::is_none")]
    init_context: Option<InitJson<'a>>,
}

#[derive(Debug, Serialize)]
struct InitJson<'a> {
    user_requirement: Option<&'a str>,
    design_rationale: Option<&'a str>,
    known_constraints: &'a [String],
    design_files: Vec<DesignJson<'a>>,
}

#[derive(Debug, Serialize)]
struct DesignJson<'a> {
    role: &'a str,
    path: &'a str,
    found: Option<String>,
}

#[derive(Debug, Serialize)]
struct IterationJson {
    number: u32,
    dir: String,
    loaded: bool,
    index: Option<&'static str>,
    total_samples: Option<u32>,
    failed_samples: Option<u32>,
}

fn tree_json(tree: &Tree) -> TreeJson<'_> {
    let path = |s: &failures::Sample, k| tree.doc_path(s, k).map(|p| failures::layout::slash(&p));
    TreeJson {
        root: failures::layout::slash(&tree.root),
        iterations: tree
            .iterations
            .iter()
            .map(|i| IterationJson {
                number: i.number,
                dir: failures::layout::slash(&i.dir),
                loaded: i.loaded,
                index: i.source.as_ref().map(|s| s.label()),
                total_samples: i.total_samples,
                failed_samples: i.failed_samples,
            })
            .collect(),
        warnings: &tree.warnings,
        samples: tree
            .samples
            .iter()
            .map(|s| SampleJson {
                sample_id: &s.id,
                iteration: s.iteration,
                failure_type: s.failure_type.as_deref(),
                priority: s.priority,
                checkers_failed: s.checkers_failed.iter().map(|c| &**c).collect(),
                conversation_turns: s.conversation_turns,
                sample_path: path(s, failures::DocKind::Sample),
                trace_path: path(s, failures::DocKind::Trace),
                evaluation_path: path(s, failures::DocKind::Evaluation),
                attribution_path: path(s, failures::DocKind::Attribution),
            })
            .collect(),
        init_context: tree.init.as_ref().map(|c| InitJson {
            user_requirement: c.user_requirement.as_deref(),
            design_rationale: c.design_rationale.as_deref(),
            known_constraints: &c.known_constraints,
            design_files: c
                .design
                .iter()
                .map(|d| DesignJson {
                    role: &d.role,
                    path: &d.written,
                    found: d.found.as_deref().map(failures::layout::slash),
                })
                .collect(),
        }),
    }
}

/// `plexus failures [TARGET] --json [--all-iterations]`: a tree's index, or the failed
/// invocations of a run (every run without a target) as the Failures screen lists them,
/// under `{"run_id": …, "failures": [...]}`. Without `json` it returns an error: the
/// screens open from [`screen`].
pub fn run(db: &Path, target: Option<&str>, json: bool, all_iterations: bool) -> Result<ExitCode> {
    if !json {
        return Err(eyre!(
            "`plexus failures` prints JSON only with --json; without it the Failures screen opens (it needs a terminal)"
        ));
    }
    let target = Target::parse(target);
    match &target {
        Target::Path(p) => {
            let selection = if all_iterations {
                failures::Selection::All
            } else {
                failures::Selection::Newest
            };
            let tree = failures::open_with(p, selection, failures::LoadOptions::default())?;
            crate::rawln!("{}", serde_json::to_string_pretty(&tree_json(&tree))?);
        }
        Target::Run(r) => {
            let store = Store::open(db)?;
            let run_id = store.run(r)?.run_id;
            let rows = store.failed_invocations(Some(&run_id))?;
            let out = serde_json::json!({ "run_id": run_id, "failures": rows });
            crate::rawln!("{}", serde_json::to_string_pretty(&out)?);
        }
        Target::AllRuns => {
            let rows = Store::open(db)?.failed_invocations(None)?;
            let out = serde_json::json!({ "run_id": null, "failures": rows });
            crate::rawln!("{}", serde_json::to_string_pretty(&out)?);
        }
    }
    Ok(ExitCode::from(exit::OK))
}

/// `plexus export-failures RUN DIR`.
pub fn export(db: &Path, run: &str, dir: &Path) -> Result<ExitCode> {
    let r = failures::from_run::export_run(db, run, dir)?;
    crate::outln!(
        "{}: {} sample(s), one per invocation that failed, timed out, ended partial or was retried ({} invocations in all); {} problem(s) in the report",
        r.run_id,
        r.samples,
        r.invocations,
        r.problems
    );
    for n in &r.notes {
        crate::errln!("note: {n}");
    }
    crate::outln!("written to {}", r.dir.display());
    Ok(ExitCode::from(exit::OK))
}
