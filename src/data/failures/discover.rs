//! Finding what a path is: a tree's `iteration_N` directories (under it, under its
//! `execution_outputs/`, or the one directory it is), an `ExecuteToInitContext` file and
//! the output directory it points at, or an `InitToExecuteContext` file.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::doc::{load_expecting, DocStatus, LoadOptions};
use super::index_read::INDEX_CAP;
use super::init_context::{is_init_context, read_init_context, InitContext};
use super::layout;
use super::sample::{ContextInfo, Iteration, OpenError};

/// What a path turned out to be.
pub(crate) enum Discovered {
    /// A tree with these iterations (ascending).
    Iterations(Vec<Iteration>),
    /// A context file and the directory it points at.
    Context {
        info: ContextInfo,
        iteration: Iteration,
        warnings: Vec<String>,
    },
    /// An Init→Execute context: a requirement and design files, no samples.
    Init(InitContext),
}

fn iteration_at(dir: PathBuf, number: u32) -> Iteration {
    Iteration {
        number,
        report_path: dir.join(layout::REPORT_FILE),
        dir,
        loaded: false,
        source: None,
        total_samples: None,
        failed_samples: None,
        context_summary: None,
    }
}

/// Finds what `path` is: see [`super::open`].
pub(crate) fn discover(path: &Path, o: &LoadOptions) -> Result<Discovered, OpenError> {
    let meta = std::fs::metadata(path).map_err(|source| OpenError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    if meta.is_dir() {
        return discover_dir(path).map(Discovered::Iterations);
    }
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if name == layout::SUMMARY_FILE || name == layout::REPORT_FILE {
        let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
        return discover_dir(parent.unwrap_or(Path::new("."))).map(Discovered::Iterations);
    }
    discover_context(path, o)
}

fn list_iterations(dir: &Path) -> Vec<Iteration> {
    let mut its: Vec<Iteration> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| {
            let n = layout::iteration_number(e.file_name().to_str()?)?;
            Some(iteration_at(e.path(), n))
        })
        .collect();
    its.sort_by_key(|i| i.number);
    its
}

fn discover_dir(dir: &Path) -> Result<Vec<Iteration>, OpenError> {
    let its = list_iterations(dir);
    if !its.is_empty() {
        return Ok(its);
    }
    let its = list_iterations(&dir.join(layout::OUTPUTS_DIR));
    if !its.is_empty() {
        return Ok(its);
    }
    let looks = [
        layout::SAMPLES_DIR,
        layout::TRACES_DIR,
        layout::EVALUATIONS_DIR,
        layout::ATTRIBUTIONS_DIR,
        layout::SUMMARY_FILE,
        layout::REPORT_FILE,
    ]
    .iter()
    .any(|n| dir.join(n).exists());
    if !looks {
        return Err(OpenError::NotATree {
            path: dir.to_path_buf(),
            why: format!(
                "no {}N directories, {}/ or {} here",
                layout::ITERATION_PREFIX,
                layout::SAMPLES_DIR,
                layout::SUMMARY_FILE
            ),
        });
    }
    let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let number = layout::iteration_number(name).unwrap_or(0);
    Ok(vec![iteration_at(dir.to_path_buf(), number)])
}

fn discover_context(path: &Path, o: &LoadOptions) -> Result<Discovered, OpenError> {
    let not = |why: String| OpenError::NotATree {
        path: path.to_path_buf(),
        why,
    };
    let doc = load_expecting(
        path,
        None,
        &[],
        &LoadOptions {
            cap: INDEX_CAP,
            ..*o
        },
    );
    let value = match (doc.status, doc.value) {
        (DocStatus::Ok, Some(v)) => v,
        (s, _) => {
            return Err(not(format!(
                "not a readable context file: {}",
                s.describe()
            )))
        }
    };
    if is_init_context(&value) {
        return Ok(Discovered::Init(read_init_context(path, &value)));
    }
    let is_context = value.get("failure_samples_index").is_some()
        || value.get("handoff_type").and_then(Value::as_str) == Some("execute_to_init");
    if !is_context {
        return Err(not(
            "neither an output tree nor a handoff context (no failure_samples_index, no design_artifacts)".into(),
        ));
    }
    let mut warnings = Vec::new();
    let written = value
        .get("execution_output_dir")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let file_dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf();
    let found = resolve_output_dir(&file_dir, &written);
    let dir_found = found.is_some();
    if !dir_found {
        warnings.push(format!(
            "execution_output_dir `{written}` was not found; documents are looked for beside the context file"
        ));
    }
    let dir = found.unwrap_or_else(|| file_dir.clone());
    let number = layout::iteration_in_path(&written).unwrap_or(0);
    let mut iteration = iteration_at(dir.clone(), number);
    if let Some(rel) = value
        .get("layer1_problems_report_path")
        .and_then(Value::as_str)
    {
        match layout::inside(&dir, rel) {
            Some(p) => iteration.report_path = p,
            None => warnings.push(format!(
                "layer1_problems_report_path `{rel}` leaves the output directory; using {}",
                layout::REPORT_FILE
            )),
        }
    }
    let info = ContextInfo {
        path: path.to_path_buf(),
        value,
        execution_output_dir: written,
        dir_found,
    };
    Ok(Discovered::Context {
        info,
        iteration,
        warnings,
    })
}

/// `written` as a directory: absolute, or relative to the context file's directory or
/// one of its ancestors (a context at a project's root names `scenarios/…`), or to the
/// current directory.
fn resolve_output_dir(file_dir: &Path, written: &str) -> Option<PathBuf> {
    if written.is_empty() {
        return None;
    }
    let w = Path::new(written);
    if w.is_absolute() {
        return w.is_dir().then(|| w.to_path_buf());
    }
    let base = std::fs::canonicalize(file_dir).unwrap_or_else(|_| file_dir.to_path_buf());
    base.ancestors()
        .map(|a| a.join(w))
        .chain(std::env::current_dir().ok().map(|d| d.join(w)))
        .find(|p| p.is_dir())
}
