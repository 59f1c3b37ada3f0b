//! Opening a tree: where its iterations are, and the index of each — from
//! `failure_summary.json`, from a context file's `failure_samples_index`, or, when
//! neither exists, from the file names in `samples/`. No document is read here.

use std::path::{Path, PathBuf};

use crate::base::protocol::handoff::FailurePriority;

use super::discover::{discover, Discovered};
use super::doc::{load_expecting, Doc, DocKind, LoadOptions};
use super::index_read::{read_iteration, Interner};
use super::init_context::InitContext;
use super::layout;
use super::report::{parse_report, ProblemsReport};
pub use super::sample::{
    natural_cmp, ContextInfo, IndexSource, Iteration, OpenError, Sample, Selection,
};

/// An opened tree: its iterations, the samples of those loaded, and what was odd.
#[derive(Debug, Clone)]
pub struct Tree {
    /// The path opened.
    pub root: PathBuf,
    /// Iterations, ascending.
    pub iterations: Vec<Iteration>,
    /// What is loaded.
    pub selection: Selection,
    /// Samples of the loaded iterations, in index order.
    pub samples: Vec<Sample>,
    /// Non-fatal problems met while reading the index (a broken summary, entries without
    /// an id, a context whose directory is not found…).
    pub warnings: Vec<String>,
    /// How documents are loaded.
    pub options: LoadOptions,
    /// Set when a context file was opened.
    pub context: Option<ContextInfo>,
    /// Set when an Init→Execute context was opened (the tree then has no iterations).
    pub init: Option<InitContext>,
    /// Each sample's rank in natural id order (`BS_2` before `BS_10`), for sorting.
    pub(crate) id_rank: Vec<u32>,
    pub(crate) interner: Interner,
    /// Warnings of finding the tree (kept when another selection is loaded).
    open_warnings: Vec<String>,
}

/// Opens `path` (a scenario directory, `execution_outputs`, an `iteration_N`
/// directory, a summary or report file inside one, an `ExecuteToInitContext` file, or
/// an `InitToExecuteContext` file: a tree of no iterations with [`Tree::init`] set)
/// with the newest iteration loaded.
pub fn open(path: &Path) -> Result<Tree, OpenError> {
    open_with(path, Selection::Newest, LoadOptions::default())
}

/// [`open`] with a selection and load options.
pub fn open_with(
    path: &Path,
    selection: Selection,
    options: LoadOptions,
) -> Result<Tree, OpenError> {
    let mut tree = Tree {
        root: path.to_path_buf(),
        iterations: Vec::new(),
        selection,
        samples: Vec::new(),
        warnings: Vec::new(),
        options,
        context: None,
        init: None,
        id_rank: Vec::new(),
        interner: Interner::default(),
        open_warnings: Vec::new(),
    };
    match discover(path, &options)? {
        Discovered::Iterations(its) => tree.iterations = its,
        Discovered::Context {
            info,
            iteration,
            warnings,
        } => {
            tree.iterations = vec![iteration];
            tree.context = Some(info);
            tree.open_warnings = warnings;
        }
        Discovered::Init(init) => {
            tree.open_warnings = init.warnings.clone();
            tree.init = Some(init);
        }
    }
    tree.select(selection)?;
    Ok(tree)
}

impl Tree {
    /// A tree held in memory (for tests and previews): one iteration per distinct
    /// iteration number of `samples`, each with directory `dir`.
    pub fn from_samples(dir: &Path, samples: Vec<Sample>) -> Tree {
        let mut numbers: Vec<u32> = samples.iter().map(|s| s.iteration).collect();
        numbers.sort_unstable();
        numbers.dedup();
        let iterations = numbers
            .into_iter()
            .map(|number| Iteration {
                number,
                dir: dir.to_path_buf(),
                loaded: true,
                source: None,
                total_samples: None,
                failed_samples: None,
                context_summary: None,
                report_path: dir.join(layout::REPORT_FILE),
            })
            .collect();
        let id_rank = natural_ranks(&samples);
        Tree {
            root: dir.to_path_buf(),
            iterations,
            selection: Selection::All,
            samples,
            warnings: Vec::new(),
            options: LoadOptions::default(),
            context: None,
            init: None,
            id_rank,
            interner: Interner::default(),
            open_warnings: Vec::new(),
        }
    }

    /// Loads the iterations of `selection` (their index only), replacing the samples.
    pub fn select(&mut self, selection: Selection) -> Result<(), OpenError> {
        let wanted: Vec<usize> = match selection {
            Selection::All => (0..self.iterations.len()).collect(),
            Selection::Newest => self.iterations.len().checked_sub(1).into_iter().collect(),
            Selection::Number(n) => match self.iterations.iter().position(|i| i.number == n) {
                Some(i) => vec![i],
                None => {
                    return Err(OpenError::NoIteration {
                        number: n,
                        found: self.iteration_list(),
                    })
                }
            },
        };
        self.samples.clear();
        self.warnings = self.open_warnings.clone();
        for it in &mut self.iterations {
            it.loaded = false;
        }
        for i in wanted {
            let context = self.context.as_ref().map(|c| (&c.path, &c.value));
            let read = read_iteration(&mut self.iterations[i], context, &mut self.interner);
            self.iterations[i].loaded = true;
            self.samples.extend(read.samples);
            self.warnings.extend(read.warnings);
        }
        self.selection = selection;
        self.id_rank = natural_ranks(&self.samples);
        Ok(())
    }

    fn iteration_list(&self) -> String {
        let n: Vec<String> = self
            .iterations
            .iter()
            .map(|i| i.number.to_string())
            .collect();
        if n.is_empty() {
            "none".into()
        } else {
            n.join(", ")
        }
    }

    /// The iteration numbered `n`.
    pub fn iteration(&self, n: u32) -> Option<&Iteration> {
        self.iterations.iter().find(|i| i.number == n)
    }

    /// The newest loaded iteration.
    pub fn current(&self) -> Option<&Iteration> {
        self.iterations.iter().rev().find(|i| i.loaded)
    }

    /// The sample with id `id` (the newest loaded iteration's when several have it).
    pub fn find(&self, id: &str) -> Option<usize> {
        self.samples.iter().rposition(|s| &*s.id == id)
    }

    /// Where one of `sample`'s documents is; `None` when its index path leaves the
    /// iteration's directory (or the iteration is unknown).
    pub fn doc_path(&self, sample: &Sample, kind: DocKind) -> Option<PathBuf> {
        let it = self.iteration(sample.iteration)?;
        layout::inside(&it.dir, &sample.rel_path(kind))
    }

    /// Loads one of `sample`'s documents (never fails: see [`super::DocStatus`]).
    pub fn load(&self, sample: &Sample, kind: DocKind) -> Doc {
        match self.doc_path(sample, kind) {
            Some(p) => load_expecting(&p, Some(kind), kind.expected(), &self.options),
            None => Doc::unread(
                Some(kind),
                PathBuf::from(sample.rel_path(kind)),
                super::DocStatus::Unreadable {
                    message: "its path leaves the output directory; not read".into(),
                },
            ),
        }
    }

    /// Loads the four documents of `sample`, in [`DocKind::ALL`] order.
    pub fn load_all(&self, sample: &Sample) -> [Doc; 4] {
        DocKind::ALL.map(|k| self.load(sample, k))
    }

    /// Loads and parses the problems report of iteration `n` (the newest loaded when
    /// `None`); a context file's `layer1_problems_report_path` is used when it has one.
    pub fn load_report(&self, n: Option<u32>) -> Option<ProblemsReport> {
        let it = match n {
            Some(n) => self.iteration(n)?,
            None => self.current()?,
        };
        Some(parse_report(super::report::load_report_doc(
            &it.report_path,
            &self.options,
        )))
    }

    /// Failure types, checkers and priorities of the loaded samples with their counts
    /// (for filter menus), each list in name order.
    pub fn facets(&self) -> Facets {
        let mut f = Facets::default();
        let mut types: std::collections::BTreeMap<&str, usize> = Default::default();
        let mut checkers: std::collections::BTreeMap<&str, usize> = Default::default();
        let mut iterations: std::collections::BTreeMap<u32, usize> = Default::default();
        for s in &self.samples {
            *types
                .entry(s.failure_type.as_deref().unwrap_or(""))
                .or_default() += 1;
            for c in s.checkers_failed.iter() {
                *checkers.entry(c).or_default() += 1;
            }
            *iterations.entry(s.iteration).or_default() += 1;
            let p = match s.priority {
                Some(FailurePriority::High) => 0,
                Some(FailurePriority::Medium) => 1,
                Some(FailurePriority::Low) => 2,
                None => 3,
            };
            f.priorities[p] += 1;
        }
        f.failure_types = types.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        f.checkers = checkers
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        f.iterations = iterations.into_iter().collect();
        f
    }
}

/// Distinct values of the loaded samples with their counts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facets {
    /// Failure types (`""`: none given).
    pub failure_types: Vec<(String, usize)>,
    /// Failed checkers.
    pub checkers: Vec<(String, usize)>,
    /// Samples per priority: high, medium, low, none.
    pub priorities: [usize; 4],
    /// Samples per iteration.
    pub iterations: Vec<(u32, usize)>,
}

/// Each sample's position in natural id order (ties by index order).
fn natural_ranks(samples: &[Sample]) -> Vec<u32> {
    let sorted = samples
        .windows(2)
        .all(|w| natural_cmp(&w[0].id, &w[1].id) != std::cmp::Ordering::Greater);
    if sorted {
        return (0..samples.len() as u32).collect();
    }
    let mut order: Vec<u32> = (0..samples.len() as u32).collect();
    order.sort_by(|&a, &b| natural_cmp(&samples[a as usize].id, &samples[b as usize].id));
    let mut rank = vec![0u32; samples.len()];
    for (r, &i) in order.iter().enumerate() {
        rank[i as usize] = r as u32;
    }
    rank
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Ordering::*;

    #[test]
    fn natural_order_of_ids() {
        assert_eq!(natural_cmp("BS_MT_2", "BS_MT_10"), Less);
        assert_eq!(natural_cmp("BS_MT_010", "BS_MT_9"), Greater);
        assert_eq!(natural_cmp("BS_MT_001", "BS_MT_001"), Equal);
        assert_eq!(natural_cmp("A", "A_1"), Less);
        assert_eq!(natural_cmp("BS_MT_01", "BS_MT_1"), Less);
    }

    #[test]
    fn conventional_paths_are_not_stored() {
        let mut s = Sample::new("BS_MT_001", 1);
        s.set_paths([
            "samples/BS_MT_001.json".into(),
            "execution_traces/BS_MT_001_trace.json".into(),
            "evaluation_results/BS_MT_001_eval.json".into(),
            "attribution_analysis/BS_MT_001_attribution.json".into(),
        ]);
        assert!(s.paths.is_none());
        s.set_paths([
            "s/a.json".into(),
            "t/a.json".into(),
            "e/a.json".into(),
            "a/a.json".into(),
        ]);
        assert_eq!(s.rel_path(DocKind::Trace), "t/a.json");
    }
}
