//! The tree browser's state and its keys: the sample list, the problems view and a
//! sample's detail; marks and the handoff export; the token budget of what was opened.
//! Keys arrive as the same actions as everywhere else (so a rebound key works here too)
//! and are read in this view's sense: `f` failure type, `A` checker, `t` priority,
//! `m` mark, `E` export the handoff, `P` problems, `z` unfold, `1`–`4` or tab the
//! documents, `n` / `N` the next and previous sample. An Init→Execute context opens
//! on its design view instead ([`super::design`]).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use super::design::DesignView;
use super::detail::Detail;
use super::reader::{serve, TreeAnswer, TreeRequest};
use crate::base::protocol::handoff::FailurePriority;
use crate::data::failures::{
    query::SortKey, Filter, HandoffSpec, ProblemsReport, Selector, Sort, TokenBudget, Tree,
};
use crate::tui::app::Action;

/// Which screen of the browser is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// The sample list.
    List,
    /// The problems report.
    Problems,
    /// One sample's documents.
    Detail,
    /// An Init→Execute context: its requirement and design files.
    Design,
}

/// What the input line is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prompt {
    /// Search in ids, failure types and checkers.
    Search,
    /// The path the handoff is written to.
    ExportPath,
    /// Why the handoff is written (its `trigger_reason`).
    ExportReason,
}

/// The browser.
pub struct Browser {
    /// The tree opened (shared with the reader thread).
    pub tree: Arc<Tree>,
    /// Its problems report (read at open; it is small).
    pub report: Option<ProblemsReport>,
    /// Filters and search.
    pub filter: Filter,
    /// Sort.
    pub sort: Sort,
    selector: Selector,
    /// Rows shown (indices into `tree.samples`).
    pub rows: Vec<u32>,
    /// Selected position in `rows`.
    pub selected: usize,
    /// First position shown.
    pub top: usize,
    /// Samples marked for the handoff.
    pub marked: BTreeSet<u32>,
    /// Screen shown.
    pub view: View,
    /// Selected problem in the problems view.
    pub problem: usize,
    /// The sample opened.
    pub detail: Option<Detail>,
    /// Tokens of the documents opened, against the on-demand budget.
    pub budget: TokenBudget,
    /// Text being typed, and what for.
    pub input: Option<(Prompt, String)>,
    /// Status-line message (text, warning).
    pub flash: Option<(String, bool)>,
    /// Help shown.
    pub help: bool,
    /// Rows of the list area at the last frame (for paging).
    pub page: usize,
    /// Set when the person quits.
    pub quitting: bool,
    /// The design files of an Init→Execute context.
    pub design: DesignView,
    /// A handoff waiting for its reason: where it goes and what it says besides.
    pub(crate) pending_export: Option<(PathBuf, HandoffSpec)>,
    /// What the last key asked that needs the files (the driver's reader does it).
    pub request: Option<TreeRequest>,
}

impl Browser {
    /// A browser over `tree`, with an on-demand budget of `budget` tokens.
    pub fn new(tree: Tree, budget: u64) -> Browser {
        let report = tree.load_report(None);
        let mut b = Browser {
            tree: Arc::new(tree),
            report,
            filter: Filter::default(),
            sort: Sort::default(),
            selector: Selector::new(),
            rows: Vec::new(),
            selected: 0,
            top: 0,
            marked: BTreeSet::new(),
            view: View::List,
            problem: 0,
            detail: None,
            budget: TokenBudget::new(budget),
            input: None,
            flash: None,
            help: false,
            page: 10,
            quitting: false,
            design: DesignView::default(),
            pending_export: None,
            request: None,
        };
        if b.tree.init.is_some() {
            b.view = View::Design;
        }
        b.refresh();
        b
    }

    /// Recomputes the rows after a change of filter or sort.
    pub fn refresh(&mut self) {
        let keep = self.rows.get(self.selected).copied();
        self.rows = self
            .selector
            .run(&self.tree, &self.filter, self.sort)
            .to_vec();
        self.selected = keep
            .and_then(|k| self.rows.iter().position(|&r| r == k))
            .unwrap_or(0)
            .min(self.rows.len().saturating_sub(1));
    }

    /// The sample row selected in the list.
    pub fn selected_row(&self) -> Option<u32> {
        self.rows.get(self.selected).copied()
    }

    pub(crate) fn say(&mut self, text: impl Into<String>, warn: bool) {
        self.flash = Some((text.into(), warn));
    }

    /// Asks for sample `row` to be opened in the detail view.
    pub fn open_sample(&mut self, row: u32) {
        self.request = Some(TreeRequest::Open { row, tab: None });
    }

    /// Does what the last key asked at once, on this thread (for tests and tools with
    /// no driver; the driver's reader thread does it otherwise).
    pub fn serve_now(&mut self) {
        if let Some(req) = self.request.take() {
            let answer = serve(&self.tree, req);
            self.apply(answer);
        }
    }

    /// Applies the reader's answer.
    pub fn apply(&mut self, a: TreeAnswer) {
        match a {
            TreeAnswer::Opened(row, Some(d), tab) => {
                self.opened(row, *d);
                if let (Some(tab), Some(d)) = (tab, self.detail.as_mut()) {
                    d.tab = tab;
                }
            }
            TreeAnswer::Opened(..) => {}
            TreeAnswer::Design(file, doc) => self.design_opened(&file, doc),
            TreeAnswer::Say(text, warn) => self.say(text, warn),
        }
    }

    /// Shows sample `row`, read, in the detail view and counts its documents in the
    /// budget.
    fn opened(&mut self, row: u32, d: Detail) {
        let before = self.budget.total();
        for doc in &d.docs {
            if doc.tokens > 0 {
                self.budget.open(doc);
            }
        }
        let added = self.budget.total() - before;
        let bad: Vec<String> = d
            .docs
            .iter()
            .filter(|x| !matches!(x.status, crate::data::failures::DocStatus::Ok))
            .map(|x| {
                format!(
                    "{} {}",
                    x.kind.map_or("document", |k| k.as_str()),
                    x.status.label()
                )
            })
            .collect();
        let over = self.budget.total() > self.budget.limit;
        let text = format!(
            "{} opened: +{} tokens, {} of {} on-demand budget{}{}",
            d.id,
            added,
            self.budget.total(),
            self.budget.limit,
            if over { " — over budget" } else { "" },
            if bad.is_empty() {
                String::new()
            } else {
                format!(" · {}", bad.join(", "))
            }
        );
        self.say(text, over || !bad.is_empty());
        if let Some(p) = self.rows.iter().position(|&r| r == row) {
            self.selected = p;
        }
        self.detail = Some(d);
        self.view = View::Detail;
    }

    /// Applies an action.
    pub fn act(&mut self, a: Action) {
        if self.help {
            if matches!(a, Action::Back | Action::Help | Action::Quit) {
                self.help = false;
            }
            return;
        }
        match a {
            Action::Quit => {
                self.quitting = true;
                return;
            }
            Action::Help => {
                self.help = true;
                return;
            }
            Action::Search => {
                self.input = Some((Prompt::Search, self.filter.search.clone()));
                return;
            }
            Action::ExportHandoff | Action::ProblemsView if self.tree.init.is_some() => {
                self.say(
                    "an Init→Execute context has no samples to hand back and no problems report",
                    true,
                );
                return;
            }
            Action::ExportHandoff => {
                let default = std::env::current_dir()
                    .unwrap_or_default()
                    .join(crate::data::failures::layout::CONTEXT_FILE);
                self.input = Some((Prompt::ExportPath, default.display().to_string()));
                return;
            }
            Action::ProblemsView => {
                self.view = if self.view == View::Problems {
                    View::List
                } else {
                    View::Problems
                };
                return;
            }
            _ => {}
        }
        match self.view {
            View::List => self.list_action(a),
            View::Problems => self.problems_action(a),
            View::Detail => self.detail_action(a),
            View::Design => self.design_action(a),
        }
    }

    fn list_action(&mut self, a: Action) {
        let n = self.rows.len();
        let last = n.saturating_sub(1);
        match a {
            Action::Up => self.selected = self.selected.saturating_sub(1),
            Action::Down => self.selected = (self.selected + 1).min(last),
            Action::PageUp => self.selected = self.selected.saturating_sub(self.page),
            Action::PageDown => self.selected = (self.selected + self.page).min(last),
            Action::Top => self.selected = 0,
            Action::Bottom => self.selected = last,
            Action::NextFailure if n > 0 => self.selected = (self.selected + 1) % n,
            Action::PrevFailure if n > 0 => self.selected = (self.selected + n - 1) % n,
            Action::Open => {
                if let Some(r) = self.selected_row() {
                    self.open_sample(r);
                }
            }
            Action::ViewContext => self.toggle_mark(),
            Action::Sort => {
                const KEYS: [SortKey; 4] = [
                    SortKey::Id,
                    SortKey::Priority,
                    SortKey::FailureType,
                    SortKey::Turns,
                ];
                let i = KEYS.iter().position(|&k| k == self.sort.key).unwrap_or(0);
                self.sort.key = KEYS[(i + 1) % KEYS.len()];
                self.refresh();
            }
            Action::SortReverse => {
                self.sort.descending = !self.sort.descending;
                self.refresh();
            }
            Action::FilterGrade => {
                let types: Vec<String> = self
                    .tree
                    .facets()
                    .failure_types
                    .into_iter()
                    .map(|(t, _)| t)
                    .filter(|t| !t.is_empty())
                    .collect();
                self.filter.failure_type =
                    crate::tui::app::failures_list::cycle(&self.filter.failure_type, &types);
                self.refresh();
            }
            Action::FilterAgent => {
                let checkers: Vec<String> = self
                    .tree
                    .facets()
                    .checkers
                    .into_iter()
                    .map(|(c, _)| c)
                    .collect();
                self.filter.checker =
                    crate::tui::app::failures_list::cycle(&self.filter.checker, &checkers);
                self.refresh();
            }
            Action::FilterType => {
                self.filter.priority = match self.filter.priority {
                    None => Some(FailurePriority::High),
                    Some(FailurePriority::High) => Some(FailurePriority::Medium),
                    Some(FailurePriority::Medium) => Some(FailurePriority::Low),
                    Some(FailurePriority::Low) => None,
                };
                self.refresh();
            }
            Action::ClearFilters => {
                self.filter = Filter::default();
                self.refresh();
            }
            Action::Back if !self.marked.is_empty() => {
                self.marked.clear();
                self.say("marks cleared", false);
            }
            _ => {}
        }
    }

    fn toggle_mark(&mut self) {
        let Some(r) = self.selected_row() else { return };
        if !self.marked.remove(&r) {
            self.marked.insert(r);
        }
        self.selected = (self.selected + 1).min(self.rows.len().saturating_sub(1));
        self.say(
            format!("{} marked (E writes the handoff)", self.marked.len()),
            false,
        );
    }

    fn problems_action(&mut self, a: Action) {
        let n = self.report.as_ref().map_or(0, |r| r.problems.len());
        let last = n.saturating_sub(1);
        match a {
            Action::Up => self.problem = self.problem.saturating_sub(1),
            Action::Down => self.problem = (self.problem + 1).min(last),
            Action::Top => self.problem = 0,
            Action::Bottom => self.problem = last,
            Action::Back => self.view = View::List,
            Action::Open => {
                let Some(report) = &self.report else { return };
                let sorted = report.by_severity();
                let Some(p) = sorted.get(self.problem) else {
                    return;
                };
                let case = p
                    .typical_case_id
                    .clone()
                    .or_else(|| p.affected_samples.first().cloned());
                match case
                    .as_deref()
                    .and_then(|id| self.tree.find(id).map(|r| (id.to_string(), r)))
                {
                    Some((_, row)) => self.open_sample(row as u32),
                    None => {
                        let what = case.unwrap_or_else(|| "no typical case".into());
                        self.say(format!("{what} is not among the loaded samples"), true);
                    }
                }
            }
            _ => {}
        }
    }

    fn detail_action(&mut self, a: Action) {
        let Some(d) = self.detail.as_mut() else {
            self.view = View::List;
            return;
        };
        let tab = match a {
            Action::ScreenRun => Some(0),
            Action::ScreenAtoms => Some(1),
            Action::ScreenRuns => Some(2),
            Action::ScreenFailures => Some(3),
            Action::NextScreen | Action::Right => Some((d.tab + 1) % 4),
            Action::PrevScreen | Action::Left => Some((d.tab + 3) % 4),
            _ => None,
        };
        if let Some(t) = tab {
            d.tab = t;
            d.top = 0;
            d.cursor = 0;
            return;
        }
        let lines = d.lines().len();
        let last = lines.saturating_sub(1);
        let page = self.page.max(1);
        match a {
            Action::Up => d.cursor = d.cursor.saturating_sub(1),
            Action::Down => d.cursor = (d.cursor + 1).min(last),
            Action::PageUp => d.cursor = d.cursor.saturating_sub(page),
            Action::PageDown => d.cursor = (d.cursor + page).min(last),
            Action::Top => d.cursor = 0,
            Action::Bottom => d.cursor = last,
            Action::Open if !d.unfold_at(d.cursor) => {
                self.say(
                    "enter opens a folded run of turns (┄┄); z opens everything",
                    false,
                );
            }
            Action::UnfoldAll => d.toggle_unfold_all(),
            Action::Back => self.view = View::List,
            Action::ViewContext => self.toggle_mark_detail(),
            Action::NextFailure | Action::PrevFailure => {
                let n = self.rows.len();
                if n > 0 {
                    let p = self
                        .rows
                        .iter()
                        .position(|&r| Some(r) == self.detail.as_ref().map(|d| d.sample))
                        .unwrap_or(self.selected);
                    let next = if a == Action::NextFailure {
                        (p + 1) % n
                    } else {
                        (p + n - 1) % n
                    };
                    let tab = self.detail.as_ref().map_or(1, |d| d.tab);
                    self.request = Some(TreeRequest::Open {
                        row: self.rows[next],
                        tab: Some(tab),
                    });
                }
            }
            _ => {}
        }
    }

    fn toggle_mark_detail(&mut self) {
        let Some(r) = self.detail.as_ref().map(|d| d.sample) else {
            return;
        };
        if !self.marked.remove(&r) {
            self.marked.insert(r);
        }
        self.say(
            format!("{} marked (E writes the handoff)", self.marked.len()),
            false,
        );
    }
}
