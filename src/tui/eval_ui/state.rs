//! The Eval screen's state and keys: which pane has the focus, the filters of the
//! sample list, the marks for a rerun, the sample opened. Keys arrive as the same
//! actions as everywhere else (a rebound key works here too) and are read in this
//! screen's sense: `f` cycles the status shown, `t` the check whose misses are shown,
//! `d` flips against the parent, `/` searches ids or filters `meta.K=V`, `x` clears,
//! `r` marks a sample for rerun, `E` (or `h`) writes the handoff, tab moves the focus.

use std::collections::BTreeSet;

use super::detail::Detail;
use super::model::{EvalModel, Flip, Status};
use crate::tui::app::Action;

/// Which samples the list shows by status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Show {
    /// Every sample.
    #[default]
    All,
    /// Failed ones.
    Failed,
    /// Ones that could not be scored.
    Errors,
    /// Passed ones.
    Passed,
    /// Not scored yet.
    Pending,
}

impl Show {
    fn next(self) -> Show {
        match self {
            Show::All => Show::Failed,
            Show::Failed => Show::Errors,
            Show::Errors => Show::Passed,
            Show::Passed => Show::Pending,
            Show::Pending => Show::All,
        }
    }

    /// Its name in the filter line.
    pub fn name(self) -> &'static str {
        match self {
            Show::All => "all",
            Show::Failed => "failed",
            Show::Errors => "errors",
            Show::Passed => "passed",
            Show::Pending => "pending",
        }
    }
}

/// The sample list's filters.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    /// By status.
    pub show: Show,
    /// Only samples that did not pass this check (by its index).
    pub check: Option<usize>,
    /// Only samples whose verdict or some check flipped against the parent.
    pub flips: bool,
    /// Only samples whose metadata field has this value: `(key, value)`.
    pub meta: Option<(String, String)>,
    /// Only ids containing this text.
    pub search: String,
}

/// The pane with the focus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    /// The check table.
    Checks,
    /// The sample list.
    Samples,
}

/// What the person asked for that the terminal loop does (it needs the database).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// Open the selected sample.
    Open(usize),
    /// Read metadata field `.0` to filter on value `.1`.
    Meta(String, String),
    /// Write the handoff.
    Handoff,
    /// Write the marks for a rerun.
    SaveMarks,
}

/// The Eval screen.
pub struct EvalScreen {
    /// What is shown.
    pub model: EvalModel,
    /// The list's filters.
    pub filter: Filter,
    /// Rows shown: indices into `model.samples`.
    pub rows: Vec<u32>,
    /// Selected position in `rows`.
    pub selected: usize,
    /// First row shown.
    pub top: usize,
    /// Selected check in the table.
    pub check: usize,
    /// First check shown.
    pub check_top: usize,
    /// The pane with the focus.
    pub focus: Focus,
    /// Samples marked for a rerun, by id.
    pub marked: BTreeSet<String>,
    /// The sample opened.
    pub detail: Option<Detail>,
    /// The text typed after `/`.
    pub input: Option<String>,
    /// Status-line message (text, warning).
    pub flash: Option<(String, bool)>,
    /// Help shown.
    pub help: bool,
    /// Rows of the list at the last frame (for paging).
    pub page: usize,
    /// Set when the person quits.
    pub quitting: bool,
    /// Samples scored per second, measured between readings of a running eval.
    pub rate: Option<f64>,
    /// Metadata values of the field filtered on, by sample (see `Request::Meta`).
    pub meta_values: Option<(String, Vec<Option<String>>)>,
    /// What the terminal loop is asked to do.
    pub request: Option<Request>,
    /// Set while a process running this eval is alive (the screen reads the eval again
    /// while it is, whatever its stored status says: a resumed eval is `interrupted`
    /// until its run starts).
    pub follow: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// The followed process's latest status line while its model calls are in flight
    /// (calls, tokens streamed, the slowest call); empty when none is.
    pub calls: Option<std::sync::Arc<std::sync::Mutex<String>>>,
    /// Set while a reading of the eval has been going on for a while (shown in the
    /// head; keys are answered meanwhile).
    pub reading: bool,
}

impl EvalScreen {
    /// The screen over `model`, with every sample shown.
    pub fn new(model: EvalModel) -> EvalScreen {
        let mut s = EvalScreen {
            model,
            filter: Filter::default(),
            rows: Vec::new(),
            selected: 0,
            top: 0,
            check: 0,
            check_top: 0,
            focus: Focus::Samples,
            marked: BTreeSet::new(),
            detail: None,
            input: None,
            flash: None,
            help: false,
            page: 10,
            quitting: false,
            rate: None,
            meta_values: None,
            request: None,
            follow: None,
            calls: None,
            reading: false,
        };
        s.refresh();
        s
    }

    /// Replaces the model with a newer reading, keeping the selected sample and the
    /// filters; `seconds` since the last reading gives the rate.
    pub fn replace(&mut self, model: EvalModel, seconds: f64) {
        let done = model.done().saturating_sub(self.model.done());
        if seconds > 0.0 && (self.model.running() || self.followed()) {
            self.rate = Some(done as f64 / seconds);
        }
        let keep = self
            .selected_sample()
            .map(|i| self.model.samples[i].id.clone());
        let meta_stale = self
            .meta_values
            .as_ref()
            .is_some_and(|(_, v)| v.len() != model.samples.len());
        self.model = model;
        if meta_stale {
            if let Some((k, v)) = self.filter.meta.clone() {
                self.request = Some(Request::Meta(k, v));
            }
            self.meta_values = None;
        }
        self.refresh();
        if let Some(id) = keep {
            if let Some(p) = self
                .rows
                .iter()
                .position(|&r| self.model.samples[r as usize].id == id)
            {
                self.selected = p;
            }
        }
    }

    /// Whether a process running this eval is alive.
    pub fn followed(&self) -> bool {
        self.follow
            .as_ref()
            .is_some_and(|f| f.load(std::sync::atomic::Ordering::SeqCst))
    }

    /// The index in `model.samples` of the selected row.
    pub fn selected_sample(&self) -> Option<usize> {
        self.rows.get(self.selected).map(|&r| r as usize)
    }

    /// Recomputes the rows after a change of filter or model.
    pub fn refresh(&mut self) {
        let f = &self.filter;
        let meta = match (&f.meta, &self.meta_values) {
            (Some((k, v)), Some((key, values))) if k == key => Some((v, values)),
            _ => None,
        };
        let search = f.search.to_lowercase();
        self.rows = self
            .model
            .samples
            .iter()
            .enumerate()
            .filter(|(i, s)| {
                let status = match f.show {
                    Show::All => true,
                    Show::Failed => s.status == Status::Failed,
                    Show::Errors => s.status == Status::Error,
                    Show::Passed => s.status == Status::Passed,
                    Show::Pending => s.status == Status::Pending,
                };
                status
                    && f.check.is_none_or(|k| s.misses(k))
                    && (!f.flips || s.flip != Flip::None || s.check_flipped)
                    && meta.is_none_or(|(v, values)| values[*i].as_deref() == Some(v.as_str()))
                    && (search.is_empty() || s.id.to_lowercase().contains(&search))
            })
            .map(|(i, _)| i as u32)
            .collect();
        self.selected = self.selected.min(self.rows.len().saturating_sub(1));
    }

    /// Shows a message on the status line.
    pub fn say(&mut self, text: impl Into<String>, warn: bool) {
        self.flash = Some((text.into(), warn));
    }

    /// A typed character, backspace, enter or escape while the `/` line is open.
    pub fn input_key(&mut self, key: crate::tui::app::input::InputKey) {
        use crate::tui::app::input::InputKey;
        let Some(text) = self.input.as_mut() else {
            return;
        };
        match key {
            InputKey::Char(c) if !c.is_control() => text.push(c),
            InputKey::Char(_) => {}
            InputKey::Backspace => {
                text.pop();
            }
            InputKey::Clear => text.clear(),
            InputKey::Esc => self.input = None,
            InputKey::Tab => {}
            InputKey::Enter => {
                let text = self.input.take().unwrap_or_default();
                self.apply_search(text.trim());
            }
        }
    }

    /// `meta.K=V` filters on metadata; other text searches the ids.
    fn apply_search(&mut self, text: &str) {
        let meta = text
            .strip_prefix("meta.")
            .or_else(|| text.strip_prefix("metadata."))
            .and_then(|t| t.split_once('='));
        if let Some((k, v)) = meta {
            self.filter.meta = Some((k.to_string(), v.to_string()));
            if self.meta_values.as_ref().is_some_and(|(key, _)| key == k) {
                self.refresh();
            } else {
                self.request = Some(Request::Meta(k.to_string(), v.to_string()));
            }
        } else {
            self.filter.search = text.to_string();
            self.refresh();
        }
        self.selected = 0;
    }

    /// Applies an action.
    pub fn act(&mut self, a: Action) {
        if self.help {
            if matches!(a, Action::Back | Action::Help | Action::Quit) {
                self.help = false;
            }
            return;
        }
        if self.detail.is_some() {
            self.detail_action(a);
            return;
        }
        match a {
            Action::Quit => self.quitting = true,
            Action::Help => self.help = true,
            Action::Search | Action::CommandLine => {
                let now = match &self.filter.meta {
                    Some((k, v)) if self.filter.search.is_empty() => format!("meta.{k}={v}"),
                    _ => self.filter.search.clone(),
                };
                self.input = Some(now);
            }
            Action::NextScreen | Action::PrevScreen | Action::FocusNext => {
                self.focus = match self.focus {
                    Focus::Checks => Focus::Samples,
                    Focus::Samples => Focus::Checks,
                };
            }
            Action::FilterGrade => {
                self.filter.show = self.filter.show.next();
                self.refresh();
                self.selected = 0;
            }
            Action::FilterType => {
                let n = self.model.checks.len();
                self.filter.check = match self.filter.check {
                    None if n > 0 => Some(0),
                    Some(k) if k + 1 < n => Some(k + 1),
                    _ => None,
                };
                if let Some(k) = self.filter.check {
                    self.check = k;
                }
                self.refresh();
                self.selected = 0;
            }
            Action::Compare => {
                if self.model.parent.is_none() {
                    self.say("no parent iteration to compare with", true);
                    return;
                }
                self.filter.flips = !self.filter.flips;
                self.refresh();
                self.selected = 0;
            }
            Action::ClearFilters => {
                self.filter = Filter::default();
                self.refresh();
            }
            Action::Retry => self.toggle_mark(),
            Action::ExportHandoff => self.request = Some(Request::Handoff),
            _ => match self.focus {
                Focus::Checks => self.checks_action(a),
                Focus::Samples => self.list_action(a),
            },
        }
    }

    fn toggle_mark(&mut self) {
        let Some(i) = self.selected_sample() else {
            return;
        };
        let id = self.model.samples[i].id.clone();
        if !self.marked.remove(&id) {
            self.marked.insert(id);
        }
        self.request = Some(Request::SaveMarks);
        self.selected = (self.selected + 1).min(self.rows.len().saturating_sub(1));
    }

    fn checks_action(&mut self, a: Action) {
        let last = self.model.checks.len().saturating_sub(1);
        match a {
            Action::Up => self.check = self.check.saturating_sub(1),
            Action::Down => self.check = (self.check + 1).min(last),
            Action::Top => self.check = 0,
            Action::Bottom => self.check = last,
            Action::Open => {
                // The misses of this check, in the list.
                self.filter.check = Some(self.check);
                self.focus = Focus::Samples;
                self.refresh();
                self.selected = 0;
            }
            Action::Back => self.focus = Focus::Samples,
            _ => {}
        }
    }

    fn list_action(&mut self, a: Action) {
        let last = self.rows.len().saturating_sub(1);
        match a {
            Action::Up => self.selected = self.selected.saturating_sub(1),
            Action::Down => self.selected = (self.selected + 1).min(last),
            Action::PageUp => self.selected = self.selected.saturating_sub(self.page),
            Action::PageDown => self.selected = (self.selected + self.page).min(last),
            Action::Top => self.selected = 0,
            Action::Bottom => self.selected = last,
            Action::Open => {
                if let Some(i) = self.selected_sample() {
                    if self.model.samples[i].status == Status::Pending {
                        self.say("this sample is not scored yet", true);
                    } else {
                        self.request = Some(Request::Open(i));
                    }
                }
            }
            Action::Back if self.filter != Filter::default() => {
                self.filter = Filter::default();
                self.refresh();
            }
            _ => {}
        }
    }

    fn detail_action(&mut self, a: Action) {
        let Some(d) = self.detail.as_mut() else {
            return;
        };
        match a {
            Action::Back | Action::Quit => self.detail = None,
            Action::Up => d.scroll = d.scroll.saturating_sub(1),
            Action::Down => d.scroll = d.scroll.saturating_add(1),
            Action::PageUp => d.scroll = d.scroll.saturating_sub(self.page),
            Action::PageDown => d.scroll = d.scroll.saturating_add(self.page),
            Action::Top => d.scroll = 0,
            Action::Bottom => d.scroll = usize::MAX / 2,
            Action::NextScreen | Action::Right => d.tab = (d.tab + 1) % Detail::TABS.len(),
            Action::PrevScreen | Action::Left => {
                d.tab = (d.tab + Detail::TABS.len() - 1) % Detail::TABS.len()
            }
            Action::ScreenRun => d.show(1),
            Action::ScreenAtoms => d.show(2),
            Action::ScreenRuns => d.show(3),
            Action::ScreenFailures => d.show(4),
            Action::Retry => {
                let id = d.sample_id.clone();
                if !self.marked.remove(&id) {
                    self.marked.insert(id);
                }
                self.request = Some(Request::SaveMarks);
            }
            Action::NextFailure | Action::PrevFailure => {
                let last = self.rows.len().saturating_sub(1);
                self.selected = if a == Action::NextFailure {
                    (self.selected + 1).min(last)
                } else {
                    self.selected.saturating_sub(1)
                };
                if let Some(i) = self.selected_sample() {
                    self.request = Some(Request::Open(i));
                }
            }
            _ => {}
        }
    }
}
