//! The parts of an opened failure tree: its iterations and their samples, where an
//! index came from, a sample's context, what can go wrong opening a tree, and the
//! natural order of sample ids. The tree (`index`) and the readers of its files
//! (`index_read`) both use them.

use std::path::PathBuf;
use std::sync::Arc;

use crate::base::protocol::handoff::FailurePriority;

use super::doc::DocKind;
use super::layout;

/// Where an iteration's index came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexSource {
    /// `failure_summary.json`.
    Summary,
    /// The `failure_samples_index` of an `ExecuteToInitContext` file.
    Context(PathBuf),
    /// File names in `samples/` (no summary, or one that could not be read): every
    /// sample, without failure type, priority, checkers or turns.
    Scan,
}

impl IndexSource {
    /// A short name: `failure_summary.json`, `context file`, `file names`.
    pub fn label(&self) -> &'static str {
        match self {
            IndexSource::Summary => layout::SUMMARY_FILE,
            IndexSource::Context(_) => "context file",
            IndexSource::Scan => "file names",
        }
    }
}

/// One `iteration_N` directory (or the one directory a context file points at).
#[derive(Debug, Clone, PartialEq)]
pub struct Iteration {
    /// N (0 when the directory's name carries none and its index does not say).
    pub number: u32,
    /// The directory; documents resolve against it.
    pub dir: PathBuf,
    /// Whether its samples are in [`Tree::samples`].
    pub loaded: bool,
    /// Where its index came from (known once loaded).
    pub source: Option<IndexSource>,
    /// Samples evaluated, as its index says.
    pub total_samples: Option<u32>,
    /// Samples failed, as its index says.
    pub failed_samples: Option<u32>,
    /// The `iteration_summary` of the context file it was read from, as written (its
    /// quality and layer counts, which no file of the iteration gives).
    pub context_summary: Option<crate::base::protocol::handoff::IterationSummary>,
    /// The problems report's path (it may not exist).
    pub report_path: PathBuf,
}

/// One sample of the index.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Sample id, e.g. `BS_MT_001`.
    pub id: Box<str>,
    /// The iteration it belongs to.
    pub iteration: u32,
    /// Attributed cause, e.g. `Layer1_BusinessRule` (shared between samples).
    pub failure_type: Option<Arc<str>>,
    /// high / medium / low.
    pub priority: Option<FailurePriority>,
    /// Checkers that failed (shared names).
    pub checkers_failed: Box<[Arc<str>]>,
    /// Turns of the conversation, as the index says.
    pub conversation_turns: Option<u32>,
    /// The four documents' paths when they differ from the conventional ones.
    pub(crate) paths: Option<Box<[Box<str>; 4]>>,
}

impl Sample {
    /// A sample with the conventional document paths and nothing else known.
    pub fn new(id: &str, iteration: u32) -> Sample {
        Sample {
            id: id.into(),
            iteration,
            failure_type: None,
            priority: None,
            checkers_failed: Box::new([]),
            conversation_turns: None,
            paths: None,
        }
    }

    /// The path of one of its documents, relative to its iteration's directory.
    pub fn rel_path(&self, kind: DocKind) -> String {
        match &self.paths {
            Some(p) => p[kind.index()].to_string(),
            None => match kind {
                DocKind::Sample => layout::sample_path(&self.id),
                DocKind::Trace => layout::trace_path(&self.id),
                DocKind::Evaluation => layout::evaluation_path(&self.id),
                DocKind::Attribution => layout::attribution_path(&self.id),
            },
        }
    }

    /// Sets the four relative paths (kept only when not the conventional ones).
    pub fn set_paths(&mut self, paths: [String; 4]) {
        self.paths = None;
        let conventional = DocKind::ALL
            .iter()
            .all(|&k| self.rel_path(k) == paths[k.index()]);
        if !conventional {
            self.paths = Some(Box::new(paths.map(String::into_boxed_str)));
        }
    }

    /// Whether `checker` is among its failed checkers.
    pub fn failed_checker(&self, checker: &str) -> bool {
        self.checkers_failed.iter().any(|c| &**c == checker)
    }
}

/// Which iterations to load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Selection {
    /// The newest (highest N), the default.
    #[default]
    Newest,
    /// Every iteration.
    All,
    /// Iteration N.
    Number(u32),
}

/// Why a path could not be opened as a tree (documents never cause this).
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The path does not exist or cannot be listed.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Neither an output tree nor a context file.
    #[error("{}: {why}", .path.display())]
    NotATree {
        /// The path.
        path: PathBuf,
        /// What was looked for.
        why: String,
    },
    /// The iteration asked for is not there.
    #[error("no iteration {number} (found: {found})")]
    NoIteration {
        /// Asked for.
        number: u32,
        /// What there is.
        found: String,
    },
}

/// What a context file said beside its index.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextInfo {
    /// The file.
    pub path: PathBuf,
    /// The whole context as read (its `failure_samples_index` included).
    pub value: serde_json::Value,
    /// Its `execution_output_dir` as written.
    pub execution_output_dir: String,
    /// Whether that directory was found (else documents resolve against the file's).
    pub dir_found: bool,
}

/// Compares ids with runs of digits as numbers: `BS_MT_2` < `BS_MT_10`.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i].is_ascii_digit() && b[j].is_ascii_digit() {
            let (si, sj) = (i, j);
            while i < a.len() && a[i].is_ascii_digit() {
                i += 1;
            }
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            let (x, y) = (trim_zeros(&a[si..i]), trim_zeros(&b[sj..j]));
            let o = x.len().cmp(&y.len()).then_with(|| x.cmp(y));
            if o != Ordering::Equal {
                return o;
            }
        } else {
            if a[i] != b[j] {
                return a[i].cmp(&b[j]);
            }
            i += 1;
            j += 1;
        }
    }
    (a.len() - i).cmp(&(b.len() - j)).then_with(|| a.cmp(b))
}

fn trim_zeros(d: &[u8]) -> &[u8] {
    let n = d.iter().take_while(|&&c| c == b'0').count();
    &d[n.min(d.len().saturating_sub(1))..]
}
