//! Names and paths of the on-disk layout: the four document directories, their file
//! name conventions, the index files, `iteration_N` directories, and the check that a
//! path taken from an index stays inside its output directory.

use std::path::{Component, Path, PathBuf};

/// Directory of the sample documents.
pub const SAMPLES_DIR: &str = "samples";
/// Directory of the execution traces.
pub const TRACES_DIR: &str = "execution_traces";
/// Directory of the evaluation results.
pub const EVALUATIONS_DIR: &str = "evaluation_results";
/// Directory of the attribution analyses.
pub const ATTRIBUTIONS_DIR: &str = "attribution_analysis";
/// The index of failed samples with counts (format: [`crate::data::failures::summary`]).
pub const SUMMARY_FILE: &str = "failure_summary.json";
/// The problems report.
pub const REPORT_FILE: &str = "layer1_problems_report.json";
/// Directory holding the `iteration_N` directories.
pub const OUTPUTS_DIR: &str = "execution_outputs";
/// Prefix of an iteration directory's name.
pub const ITERATION_PREFIX: &str = "iteration_";

/// `text` as a file name: characters other than ASCII letters, digits, `-`, `_` and `.`
/// become `_`, and leading dots are dropped (ids are untrusted: none may name a path
/// outside the tree, or a hidden file).
pub fn file_name_of(text: &str) -> String {
    let clean: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    clean.trim_start_matches('.').to_string()
}

/// `samples/<id>.json`.
pub fn sample_path(id: &str) -> String {
    format!("{SAMPLES_DIR}/{id}.json")
}

/// `execution_traces/<id>_trace.json`.
pub fn trace_path(id: &str) -> String {
    format!("{TRACES_DIR}/{id}_trace.json")
}

/// `evaluation_results/<id>_eval.json`.
pub fn evaluation_path(id: &str) -> String {
    format!("{EVALUATIONS_DIR}/{id}_eval.json")
}

/// `attribution_analysis/<id>_attribution.json`.
pub fn attribution_path(id: &str) -> String {
    format!("{ATTRIBUTIONS_DIR}/{id}_attribution.json")
}

/// The number of an `iteration_N` directory name.
pub fn iteration_number(name: &str) -> Option<u32> {
    name.strip_prefix(ITERATION_PREFIX)?.parse().ok()
}

/// The number of the last `iteration_N` component of `path`, if any.
pub fn iteration_in_path(path: &str) -> Option<u32> {
    path.split(['/', '\\']).rev().find_map(iteration_number)
}

/// `rel` joined to `base` when it is a plain relative path that stays inside `base` (no
/// root, no `..`, no drive prefix); `None` otherwise. Paths in an index are untrusted.
pub fn inside(base: &Path, rel: &str) -> Option<PathBuf> {
    let p = Path::new(rel);
    let mut out = base.to_path_buf();
    let mut any = false;
    for c in p.components() {
        match c {
            Component::Normal(part) => {
                out.push(part);
                any = true;
            }
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    any.then_some(out)
}

/// A path from `from_dir` to `to`, both made absolute against the current directory;
/// relative when they share a root, else `to` absolute. Used to write a context file's
/// `execution_output_dir` so that it resolves from where the file is.
pub fn relative_to(from_dir: &Path, to: &Path) -> PathBuf {
    let abs = |p: &Path| {
        std::fs::canonicalize(p).unwrap_or_else(|_| {
            std::env::current_dir()
                .map(|d| d.join(p))
                .unwrap_or_else(|_| p.to_path_buf())
        })
    };
    let (from, to) = (abs(from_dir), abs(to));
    let a: Vec<Component> = from.components().collect();
    let b: Vec<Component> = to.components().collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    if common == 0 {
        return to;
    }
    let mut out = PathBuf::new();
    for _ in common..a.len() {
        out.push("..");
    }
    for c in &b[common..] {
        out.push(c.as_os_str());
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// The text of a path with `/` separators (for the JSON documents).
pub fn slash(p: &Path) -> String {
    p.to_string_lossy().replace('\\', "/")
}

/// Name of the context file written beside `execution_outputs/`.
pub const CONTEXT_FILE: &str = "execute_to_init_context.json";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_paths_may_not_leave_the_directory() {
        let base = Path::new("/t/it");
        assert_eq!(
            inside(base, "samples/A.json"),
            Some(PathBuf::from("/t/it/samples/A.json"))
        );
        assert_eq!(
            inside(base, "./samples/A.json"),
            Some(PathBuf::from("/t/it/samples/A.json"))
        );
        assert_eq!(inside(base, "../x.json"), None);
        assert_eq!(inside(base, "samples/../../x.json"), None);
        assert_eq!(inside(base, "/etc/passwd"), None);
        assert_eq!(inside(base, ""), None);
    }

    #[test]
    fn iteration_numbers() {
        assert_eq!(iteration_number("iteration_12"), Some(12));
        assert_eq!(iteration_number("iteration_x"), None);
        assert_eq!(
            iteration_in_path("scenarios/a/execution_outputs/iteration_3"),
            Some(3)
        );
        assert_eq!(iteration_in_path("iteration_4/samples/A.json"), Some(4));
    }

    #[test]
    fn relative_paths_between_directories() {
        assert_eq!(
            relative_to(Path::new("/a/b"), Path::new("/a/c/d")),
            PathBuf::from("../c/d")
        );
        assert_eq!(
            relative_to(Path::new("/a/b"), Path::new("/a/b")),
            PathBuf::from(".")
        );
    }
}
