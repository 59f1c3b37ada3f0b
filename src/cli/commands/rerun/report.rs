//! What a rerun reports: the requests the recording could not answer as asked (no
//! recording, a prompt that differs), per task and attempt, and the event comparison,
//! per task — as text on stderr or as JSON on stdout.

use rusqlite::{params, OptionalExtension};
use serde::Serialize;
use serde_json::{json, Value};

use super::compare::{Comparison, Divergence};
use crate::data::provider::replay::{prompt_difference, NO_RECORDING};
use crate::data::store::{Store, StoreError};

/// Most divergent tasks listed in the text report (all are in the JSON).
const MAX_LISTED: usize = 50;

/// A request of the rerun that its recording did not answer as asked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplayProblem {
    /// Task.
    pub task_id: String,
    /// Attempt.
    pub attempt: u32,
    /// `no_recording` (the invocation failed, E008) or `prompt_differs` (answered with
    /// the recording anyway).
    pub problem: &'static str,
    /// Where the prompt differs (`prompt_differs`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub part: Option<String>,
    /// The message: the invocation's error, or both sides of the prompt difference.
    pub detail: String,
}

/// The rerun's invocations that had no recording or a prompt unlike the recorded one,
/// in the order they were stored.
pub fn replay_problems(
    old: &Store,
    old_run: &str,
    new: &Store,
    new_run: &str,
) -> Result<Vec<ReplayProblem>, StoreError> {
    let mut st = new.conn().prepare(
        "SELECT task_id, attempt, request_json, json_extract(response_json, '$.errors[0].message')
         FROM invocations WHERE run_id = ?1 AND COALESCE(status, '') != 'cancelled' ORDER BY rowid",
    )?;
    let rows = st.query_map([new_run], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, Option<String>>(3)?,
        ))
    })?;
    let mut recorded = old.conn().prepare(
        "SELECT request_json FROM invocations
         WHERE run_id = ?1 AND task_id = ?2 AND attempt = ?3
           AND response_json IS NOT NULL AND COALESCE(status, '') != 'cancelled'
         ORDER BY rowid LIMIT 1",
    )?;
    let mut out = Vec::new();
    for row in rows {
        let (task_id, attempt, request, message) = row?;
        let attempt = u32::try_from(attempt).unwrap_or(0);
        if let Some(m) = message.filter(|m| m.starts_with(NO_RECORDING)) {
            out.push(ReplayProblem {
                task_id,
                attempt,
                problem: "no_recording",
                part: None,
                detail: m,
            });
            continue;
        }
        let Some(old_request) = recorded
            .query_row(params![old_run, task_id, attempt], |r| {
                r.get::<_, String>(0)
            })
            .optional()?
        else {
            continue;
        };
        let (Ok(old_v), Ok(new_v)) = (
            serde_json::from_str::<Value>(&old_request),
            serde_json::from_str::<Value>(&request),
        ) else {
            continue;
        };
        let user = new_v.get("user_prompt").cloned().unwrap_or(Value::Null);
        let system = new_v
            .get("system_prompt_ref")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if let Some(d) = prompt_difference(&old_v, &user, system) {
            out.push(ReplayProblem {
                task_id,
                attempt,
                problem: "prompt_differs",
                detail: format!("recorded {:?}, now {:?}", d.recorded, d.now),
                part: Some(d.part),
            });
        }
    }
    Ok(out)
}

/// Everything a rerun reports.
pub struct Report<'a> {
    /// The new run.
    pub run_id: &'a str,
    /// The recorded run.
    pub source_run_id: &'a str,
    /// The new run's status.
    pub status: &'a str,
    /// The plan differs from the recorded one.
    pub plan_changed: bool,
    /// The run config differs from the recorded one.
    pub config_changed: bool,
    /// Answers were streamed at once.
    pub instant: bool,
    /// Requests not answered as asked.
    pub problems: &'a [ReplayProblem],
    /// The event comparison.
    pub comparison: &'a Comparison,
}

impl Report<'_> {
    /// Whether the rerun differs from its recording at all.
    pub fn diverged(&self) -> bool {
        self.comparison.mismatches > 0 || !self.problems.is_empty()
    }

    /// Whether the plan or the config was changed (divergence is then expected).
    pub fn changed(&self) -> bool {
        self.plan_changed || self.config_changed
    }

    /// The report as JSON.
    pub fn to_json(&self) -> Value {
        let divergences: Vec<Value> = self
            .comparison
            .divergences
            .iter()
            .map(|d| {
                let listed: Vec<Value> = d
                    .mismatches
                    .iter()
                    .map(|m| {
                        json!({
                            "recorded_seq": m.recorded_seq,
                            "new_seq": m.new_seq,
                            "kind": m.kind,
                            "field": m.difference.path,
                            "recorded": m.difference.recorded,
                            "now": m.difference.now,
                        })
                    })
                    .collect();
                json!({
                    "task_id": d.first().and_then(|m| m.task_id.clone()),
                    "count": d.count,
                    "mismatches": listed,
                })
            })
            .collect();
        json!({
            "run_id": self.run_id,
            "source_run_id": self.source_run_id,
            "status": self.status,
            "plan_changed": self.plan_changed,
            "config_changed": self.config_changed,
            "instant": self.instant,
            "diverged": self.diverged(),
            "events_compared": self.comparison.compared,
            "mismatches": self.comparison.mismatches,
            "replay_problems": self.problems,
            "divergences": divergences,
        })
    }

    /// The report for a person (sanitised when printed).
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        for p in self.problems {
            match p.part.as_deref() {
                None => s.push_str(&format!(
                    "task {} attempt {}: {} — the invocation failed (E008); nothing was made up\n",
                    p.task_id, p.attempt, p.detail
                )),
                Some(part) => s.push_str(&format!(
                    "task {} attempt {}: the prompt differs from the recording at `{part}`: {}; answered with the recording\n",
                    p.task_id, p.attempt, p.detail
                )),
            }
        }
        let word = if self.changed() {
            "divergence"
        } else {
            "nondeterminism"
        };
        let list = &self.comparison.divergences;
        for d in list.iter().take(MAX_LISTED) {
            s.push_str(&format!("{word} {}\n", describe(d)));
        }
        if list.len() > MAX_LISTED {
            s.push_str(&format!(
                "… and {} more tasks (--json lists them all)\n",
                list.len() - MAX_LISTED
            ));
        }
        let (run, src) = (self.run_id, self.source_run_id);
        if !self.diverged() {
            s.push_str(&format!(
                "rerun {run} matches {src}: {} events compared, no difference\n",
                self.comparison.compared
            ));
            return s;
        }
        let tasks = list
            .iter()
            .filter(|d| d.first().is_some_and(|m| m.task_id.is_some()))
            .count();
        s.push_str(&format!(
            "rerun {run} diverged from {src}: {} mismatches in {tasks} tasks{}, {} requests not answered as asked\n",
            self.comparison.mismatches,
            if list
                .iter()
                .any(|d| d.first().is_some_and(|m| m.task_id.is_none()))
            {
                " and the run's own events"
            } else {
                ""
            },
            self.problems.len()
        ));
        if self.changed() {
            let what = match (self.plan_changed, self.config_changed) {
                (true, true) => "the plan and the run config differ",
                (true, false) => "the plan differs",
                _ => "the run config differs",
            };
            s.push_str(&format!(
                "{what} from the recording's: divergence is expected and reported as information\n"
            ));
        }
        s
    }
}

/// `at event 57 (task T, invocation_finished): field `errors[0]`: recorded E002, now
/// E005 (+3 more in this task)`.
fn describe(d: &Divergence) -> String {
    let Some(m) = d.first() else {
        return String::new();
    };
    let at = match (m.recorded_seq, m.new_seq) {
        (Some(s), _) => format!("at event {s}"),
        (None, Some(n)) => format!("at new event {n}"),
        (None, None) => "at an event".into(),
    };
    let whose = match &m.task_id {
        Some(t) => format!("task {t}"),
        None => "the run".into(),
    };
    let (recorded, now) = m.difference.shown();
    let more = match d.count {
        0 | 1 => String::new(),
        n => format!(
            " (+{} more in this {})",
            n - 1,
            if m.task_id.is_some() { "task" } else { "run" }
        ),
    };
    let what = if m.difference.path == "event" {
        "event".to_string()
    } else {
        format!("field `{}`", m.difference.path)
    };
    format!(
        "{at} ({whose}, {}): {what}: recorded {recorded}, now {now}{more}",
        m.kind
    )
}
