//! The Failures screen's list: every failed, timed-out, partial or retried invocation
//! of one run or of every run in the database, filtered, sorted and searched in memory
//! (the rows come from the loader; a view is a list of row numbers).

use std::sync::Arc;

use crate::data::store::FailedInvocation;

/// Column the list is sorted by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureSort {
    /// Start time, newest first.
    Time,
    /// Run, then task, then attempt.
    Run,
    /// Task id.
    Task,
    /// Agent.
    Agent,
    /// First error code.
    Code,
    /// Score, lowest first.
    Score,
    /// Attempt number.
    Attempt,
}

impl FailureSort {
    /// Cycle order.
    pub const ALL: [FailureSort; 7] = [
        FailureSort::Time,
        FailureSort::Run,
        FailureSort::Task,
        FailureSort::Agent,
        FailureSort::Code,
        FailureSort::Score,
        FailureSort::Attempt,
    ];

    /// Column name.
    pub fn name(self) -> &'static str {
        match self {
            FailureSort::Time => "time",
            FailureSort::Run => "run",
            FailureSort::Task => "task",
            FailureSort::Agent => "agent",
            FailureSort::Code => "code",
            FailureSort::Score => "score",
            FailureSort::Attempt => "attempt",
        }
    }
}

/// A time window the list can be limited to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// Everything.
    All,
    /// The last hour.
    Hour,
    /// The last day.
    Day,
    /// The last week.
    Week,
}

impl Window {
    /// Cycle order.
    pub const ALL: [Window; 4] = [Window::All, Window::Hour, Window::Day, Window::Week];

    /// Label.
    pub fn name(self) -> &'static str {
        match self {
            Window::All => "any time",
            Window::Hour => "last hour",
            Window::Day => "last day",
            Window::Week => "last week",
        }
    }

    /// Length in milliseconds (`None`: unbounded).
    fn millis(self) -> Option<i64> {
        match self {
            Window::All => None,
            Window::Hour => Some(3_600_000),
            Window::Day => Some(86_400_000),
            Window::Week => Some(7 * 86_400_000),
        }
    }
}

/// Filters, sort and search of the list.
#[derive(Debug, Clone, PartialEq)]
pub struct FailureQuery {
    /// Only this error code.
    pub code: Option<String>,
    /// Only this agent.
    pub agent: Option<String>,
    /// Only this status (`failed`, `timeout`, `partial`, `retried`).
    pub status: Option<String>,
    /// Only this run (when every run's failures are listed).
    pub run: Option<String>,
    /// Only rows started within this window of `now_ms`.
    pub window: Window,
    /// Search text (case-insensitive, in run, task, agent, invocation ids and messages).
    pub text: String,
    /// Sort column.
    pub sort: FailureSort,
    /// Reverse the sort.
    pub reverse: bool,
}

impl Default for FailureQuery {
    fn default() -> Self {
        FailureQuery {
            code: None,
            agent: None,
            status: None,
            run: None,
            window: Window::All,
            text: String::new(),
            sort: FailureSort::Time,
            reverse: false,
        }
    }
}

/// The Failures screen's state.
#[derive(Debug, Clone, Default)]
pub struct FailuresList {
    /// Rows, newest first; `None` until loaded.
    pub rows: Option<Arc<Vec<FailedInvocation>>>,
    /// Counts per code and per agent over the view (kept by `refilter`).
    counted: (Counts, Counts),
    /// The view: row numbers after filters and sort.
    pub view: Vec<usize>,
    /// Selected position in the view.
    pub selected: usize,
    /// First position shown.
    pub top: usize,
    /// Only the run on screen (`false`: every run in the database).
    pub this_run_only: bool,
    /// Filters, sort and search.
    pub query: FailureQuery,
    /// Load error.
    pub error: Option<String>,
    /// A load is on its way.
    pub loading: bool,
    /// New failures were logged since the last load.
    pub stale: bool,
    /// When the list was last asked for (ms).
    pub asked_ms: i64,
    /// The review queue is shown instead of the list.
    pub review: bool,
    /// The review queue: tasks stopped for review, with their evidence; `None` until loaded.
    pub queue: Option<Vec<crate::run::review::ReviewItem>>,
    /// Selected item of the queue.
    pub queue_selected: usize,
    /// An attempt of another run to find once that run is open (Enter in the overlay).
    pub find: Option<super::views::Find>,
    /// The sorts of the columns drawn at the last frame (`s` cycles through these; all
    /// when empty).
    pub sortable: Vec<FailureSort>,
}

/// A status as the list names it: a retried success counts as `retried`.
pub fn status_of(r: &FailedInvocation) -> &str {
    if r.status == "success" {
        "retried"
    } else {
        &r.status
    }
}

impl FailuresList {
    /// An empty list, of the run on screen (`this_run_only`) or of every run.
    pub fn new(this_run_only: bool) -> FailuresList {
        FailuresList {
            this_run_only,
            ..Default::default()
        }
    }

    /// Takes freshly loaded rows, keeping the selection on the same invocation when it
    /// is still there.
    pub fn set_rows(&mut self, rows: Vec<FailedInvocation>, now_ms: i64) {
        let keep = self.selected_row().map(|r| r.invocation_id.clone());
        self.rows = Some(Arc::new(rows));
        self.error = None;
        self.loading = false;
        self.refilter(now_ms);
        if let Some(inv) = keep {
            if let Some(p) = self.position_of(&inv) {
                self.selected = p;
            }
        }
    }

    /// The selected row.
    pub fn selected_row(&self) -> Option<&FailedInvocation> {
        let rows = self.rows.as_ref()?;
        self.view.get(self.selected).and_then(|&i| rows.get(i))
    }

    fn position_of(&self, inv: &str) -> Option<usize> {
        let rows = self.rows.as_ref()?;
        self.view.iter().position(|&i| rows[i].invocation_id == inv)
    }

    /// Recomputes the view after a change of rows, filters, sort or search.
    pub fn refilter(&mut self, now_ms: i64) {
        let Some(rows) = self.rows.clone() else {
            self.view.clear();
            return;
        };
        let q = &self.query;
        let needle = q.text.to_lowercase();
        // Start times are RFC 3339 in UTC: compared as text, no parsing.
        let since = q.window.millis().and_then(|w| {
            chrono::DateTime::from_timestamp_millis(now_ms - w)
                .map(|d| d.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        });
        let mut view: Vec<usize> = (0..rows.len())
            .filter(|&i| {
                let r = &rows[i];
                q.code
                    .as_ref()
                    .is_none_or(|c| r.error_codes.iter().any(|x| x == c))
                    && q.agent.as_ref().is_none_or(|a| &r.agent == a)
                    && q.status.as_deref().is_none_or(|s| status_of(r) == s)
                    && q.run.as_ref().is_none_or(|x| &r.run_id == x)
                    && since.as_deref().is_none_or(|s| r.started_at.as_str() >= s)
                    && (needle.is_empty() || matches_text(r, &needle))
            })
            .collect();
        // The rows come newest first: that order needs no sort.
        let presorted = q.sort == FailureSort::Time;
        let key_cmp = |a: &usize, b: &usize| {
            let (x, y) = (&rows[*a], &rows[*b]);
            match q.sort {
                FailureSort::Time => y.started_at.cmp(&x.started_at),
                FailureSort::Run => {
                    (&x.run_id, &x.task_id, x.attempt).cmp(&(&y.run_id, &y.task_id, y.attempt))
                }
                FailureSort::Task => (&x.task_id, x.attempt).cmp(&(&y.task_id, y.attempt)),
                FailureSort::Agent => x.agent.cmp(&y.agent),
                FailureSort::Code => x.error_codes.first().cmp(&y.error_codes.first()),
                FailureSort::Score => x.score.unwrap_or(-1.0).total_cmp(&y.score.unwrap_or(-1.0)),
                FailureSort::Attempt => y.attempt.cmp(&x.attempt),
            }
            .then(a.cmp(b))
        };
        if !presorted {
            view.sort_by(key_cmp);
        }
        if q.reverse {
            view.reverse();
        }
        self.view = view;
        self.selected = self.selected.min(self.view.len().saturating_sub(1));
        self.counted = self.count();
    }

    /// How many runs the rows come from.
    pub fn run_count(&self) -> usize {
        self.rows.as_ref().map_or(0, |rows| {
            rows.iter()
                .map(|r| r.run_id.as_str())
                .collect::<std::collections::HashSet<_>>()
                .len()
        })
    }

    /// The sort after `cur` among the columns shown.
    pub fn next_sort(&self) -> FailureSort {
        let cycle: &[FailureSort] = if self.sortable.is_empty() {
            &FailureSort::ALL
        } else {
            &self.sortable
        };
        let i = cycle.iter().position(|&s| s == self.query.sort);
        match i {
            Some(i) => cycle[(i + 1) % cycle.len()],
            None => cycle[0],
        }
    }

    /// Distinct values of a column over all rows, sorted (for the filter cycles).
    pub fn values(&self, of: impl Fn(&FailedInvocation) -> Vec<String>) -> Vec<String> {
        let mut v: Vec<String> = self
            .rows
            .iter()
            .flat_map(|rows| rows.iter().flat_map(&of))
            .collect();
        v.sort();
        v.dedup();
        v
    }

    /// Counts per error code and per agent over the view, most frequent first.
    pub fn counts(&self) -> &(Counts, Counts) {
        &self.counted
    }

    fn count(&self) -> (Counts, Counts) {
        let mut codes: std::collections::HashMap<&str, usize> = Default::default();
        let mut agents: std::collections::HashMap<&str, usize> = Default::default();
        if let Some(rows) = &self.rows {
            for &i in &self.view {
                let r = &rows[i];
                if r.error_codes.is_empty() {
                    *codes.entry(status_of(r)).or_default() += 1;
                }
                for c in &r.error_codes {
                    *codes.entry(c).or_default() += 1;
                }
                *agents.entry(&r.agent).or_default() += 1;
            }
        }
        let sorted = |m: std::collections::HashMap<&str, usize>| {
            let mut v: Vec<(String, usize)> =
                m.into_iter().map(|(k, n)| (k.to_string(), n)).collect();
            v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            v
        };
        (sorted(codes), sorted(agents))
    }
}

/// Values with how many rows have them, most frequent first.
pub type Counts = Vec<(String, usize)>;

fn matches_text(r: &FailedInvocation, needle: &str) -> bool {
    let has = |s: &str| s.to_lowercase().contains(needle);
    has(&r.task_id)
        || has(&r.run_id)
        || has(&r.agent)
        || has(&r.invocation_id)
        || r.error_codes.iter().any(|c| has(c))
        || r.message.as_deref().is_some_and(has)
}

/// The next value of a filter cycle: none → first → … → last → none.
pub fn cycle(cur: &Option<String>, values: &[String]) -> Option<String> {
    match cur {
        None => values.first().cloned(),
        Some(c) => values
            .iter()
            .position(|v| v == c)
            .and_then(|i| values.get(i + 1).cloned()),
    }
}
