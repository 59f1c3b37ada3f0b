//! The Init→Execute context (seed 002 handoff 1): the person's requirement and the
//! paths of the design files, written with the paths relative to the file's folder
//! and its size checked against the protocol's 200–300 tokens; and read back, each
//! design file found or not, loaded (size, tokens, text) only when it is opened.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::base::protocol::handoff::{HandoffType, InitToExecuteContext};
use crate::base::tokens::TokenCounter;

use super::doc::{load_text, Doc, LoadOptions};
use super::layout;
use super::size::{SizeCheck, SizeVerdict};
use super::write::{write_json_atomic, WriteError};

/// The file name offered for an Init→Execute context.
pub const INIT_CONTEXT_FILE: &str = "init_to_execute_context.json";
/// The protocol's estimate of such a context's size: about 200–300 tokens.
pub const INIT_EXPECTED_MAX_TOKENS: u64 = 300;

/// What an Init→Execute context is made of.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct InitSpec {
    /// `user_requirement`: the person's requirement, as typed.
    pub user_requirement: String,
    /// `design_artifacts`: each role (e.g. `business_rules_path`) and its file.
    pub design_artifacts: Vec<(String, PathBuf)>,
    /// `design_rationale`, when given.
    pub design_rationale: Option<String>,
    /// `known_constraints` (left out when empty).
    pub known_constraints: Vec<String>,
    /// `timestamp` (RFC 3339); now when empty.
    pub timestamp: String,
}

/// Why an Init→Execute context cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    /// No requirement (blank).
    #[error("the requirement is empty: say what the Execute agent is to do")]
    NoRequirement,
    /// No design file.
    #[error("no design file: give each as ROLE=PATH (e.g. business_rules_path=BusinessRules.md)")]
    NoDesign,
    /// A role is blank or given twice.
    #[error("design role `{0}` is blank or given twice")]
    BadRole(String),
    /// A design file is not there.
    #[error("{}: design file `{role}` is not a file here", .path.display())]
    DesignMissing {
        /// Its role.
        role: String,
        /// The path given.
        path: PathBuf,
    },
    /// Writing failed.
    #[error(transparent)]
    Write(#[from] WriteError),
}

/// The context of `spec` for a file to be written at `context_path`: every design file
/// must exist; its path is written relative to the context file's folder.
pub fn build_init_context(
    spec: &InitSpec,
    context_path: &Path,
) -> Result<InitToExecuteContext, InitError> {
    let requirement = spec.user_requirement.trim();
    if requirement.is_empty() {
        return Err(InitError::NoRequirement);
    }
    if spec.design_artifacts.is_empty() {
        return Err(InitError::NoDesign);
    }
    let from = context_path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut artifacts = BTreeMap::new();
    for (role, path) in &spec.design_artifacts {
        let role = role.trim();
        if role.is_empty() || artifacts.contains_key(role) {
            return Err(InitError::BadRole(role.to_string()));
        }
        if !path.is_file() {
            return Err(InitError::DesignMissing {
                role: role.to_string(),
                path: path.clone(),
            });
        }
        let rel = layout::slash(&layout::relative_to(from, path));
        artifacts.insert(role.to_string(), rel);
    }
    let timestamp = if spec.timestamp.is_empty() {
        chrono::Local::now().format("%Y-%m-%dT%H:%M:%S").to_string()
    } else {
        spec.timestamp.clone()
    };
    Ok(InitToExecuteContext {
        version: "2.0".into(),
        handoff_type: HandoffType::InitToExecute,
        timestamp,
        metadata: Default::default(),
        user_requirement: requirement.to_string(),
        design_artifacts: artifacts,
        design_rationale: spec
            .design_rationale
            .as_deref()
            .map(str::trim)
            .filter(|r| !r.is_empty())
            .map(str::to_string),
        design_iterations: None,
        known_constraints: (!spec.known_constraints.is_empty())
            .then(|| spec.known_constraints.clone()),
        extra: Default::default(),
    })
}

/// How the size of an Init→Execute context compares with the protocol's ~300 tokens.
pub fn check_init_size(tokens: u64) -> SizeCheck {
    let over = tokens > INIT_EXPECTED_MAX_TOKENS;
    SizeCheck {
        tokens,
        verdict: if over {
            SizeVerdict::Over
        } else {
            SizeVerdict::Ok
        },
        warning: over.then(|| {
            format!(
                "the context is {tokens} tokens, over the 200–{INIT_EXPECTED_MAX_TOKENS} the protocol expects: keep the requirement short and let the design files carry the detail"
            )
        }),
    }
}

/// Writes `ctx` to `path` atomically (pretty JSON) and returns its size check.
pub fn write_init_context(
    path: &Path,
    ctx: &InitToExecuteContext,
    counter: &TokenCounter,
) -> Result<SizeCheck, InitError> {
    write_json_atomic(path, ctx)?;
    let text = serde_json::to_string_pretty(ctx).unwrap_or_default();
    Ok(check_init_size(counter.count(&text)))
}

/// One design file of a context read back.
#[derive(Debug, Clone, PartialEq)]
pub struct DesignFile {
    /// Its role (`design_artifacts` key).
    pub role: String,
    /// Its path as written.
    pub written: String,
    /// Where it was found (`None`: not found).
    pub found: Option<PathBuf>,
}

impl DesignFile {
    /// Loads the file (a missing one is a document with status missing).
    pub fn load(&self, o: &LoadOptions) -> Doc {
        match &self.found {
            Some(p) => load_text(p, o),
            None => Doc::unread(
                None,
                PathBuf::from(&self.written),
                super::DocStatus::Missing,
            ),
        }
    }
}

/// An Init→Execute context as read.
#[derive(Debug, Clone, PartialEq)]
pub struct InitContext {
    /// The file.
    pub path: PathBuf,
    /// `user_requirement` (`None` when absent).
    pub user_requirement: Option<String>,
    /// `design_rationale`.
    pub design_rationale: Option<String>,
    /// `known_constraints`.
    pub known_constraints: Vec<String>,
    /// `timestamp`.
    pub timestamp: Option<String>,
    /// The design files, in role order.
    pub design: Vec<DesignFile>,
    /// What was odd (a field missing, a design file not found).
    pub warnings: Vec<String>,
}

/// Whether `v` is an Init→Execute context.
pub fn is_init_context(v: &Value) -> bool {
    match v.get("handoff_type").and_then(Value::as_str) {
        Some(t) => t == "init_to_execute",
        None => v.get("user_requirement").is_some() && v.get("design_artifacts").is_some(),
    }
}

/// Reads the context `v` of the file at `path`: each design path is looked for as
/// written when absolute, else from the file's folder, then each folder above it, then
/// the current directory (a context at a project's root names `scenarios/…`).
pub fn read_init_context(path: &Path, v: &Value) -> InitContext {
    let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    let mut warnings = Vec::new();
    let user_requirement = text("user_requirement");
    if user_requirement.is_none() {
        warnings.push("the context has no user_requirement".to_string());
    }
    let file_dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut design = Vec::new();
    match v.get("design_artifacts") {
        Some(Value::Object(m)) => {
            for (role, p) in m {
                let Some(written) = p.as_str() else {
                    warnings.push(format!("design_artifacts.{role} is not a path"));
                    continue;
                };
                let found = resolve_file(file_dir, written);
                if found.is_none() {
                    warnings.push(format!("design file `{written}` ({role}) was not found"));
                }
                design.push(DesignFile {
                    role: role.clone(),
                    written: written.to_string(),
                    found,
                });
            }
        }
        _ => warnings.push("the context's design_artifacts is not a map of paths".to_string()),
    }
    InitContext {
        path: path.to_path_buf(),
        user_requirement,
        design_rationale: text("design_rationale"),
        known_constraints: v
            .get("known_constraints")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|c| c.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default(),
        timestamp: text("timestamp"),
        design,
        warnings,
    }
}

fn resolve_file(file_dir: &Path, written: &str) -> Option<PathBuf> {
    if written.trim().is_empty() {
        return None;
    }
    let w = Path::new(written);
    if w.is_absolute() {
        return w.is_file().then(|| w.to_path_buf());
    }
    let base = std::fs::canonicalize(file_dir).unwrap_or_else(|_| file_dir.to_path_buf());
    base.ancestors()
        .map(|a| a.join(w))
        .chain(std::env::current_dir().ok().map(|d| d.join(w)))
        .find(|p| p.is_file())
        .map(|p| std::fs::canonicalize(&p).unwrap_or(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_over_the_estimate_warn() {
        assert_eq!(check_init_size(300).verdict, SizeVerdict::Ok);
        assert!(check_init_size(300).warning.is_none());
        assert_eq!(check_init_size(301).verdict, SizeVerdict::Over);
    }

    #[test]
    fn a_context_without_a_map_of_paths_is_read_with_warnings() {
        let v = serde_json::json!({"handoff_type": "init_to_execute", "design_artifacts": 3});
        assert!(is_init_context(&v));
        let c = read_init_context(Path::new("ctx.json"), &v);
        assert!(c.design.is_empty());
        assert_eq!(c.warnings.len(), 2, "{:?}", c.warnings);
        assert!(!is_init_context(
            &serde_json::json!({"handoff_type": "execute_to_init"})
        ));
    }
}
