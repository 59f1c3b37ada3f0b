//! The review queue: the tasks a hallucination (E007) stopped for a person's review,
//! each with its evidence — the invocation, the references to assets that do not exist,
//! the atoms as parsed, the quality issues — and the decision once one is made.
//!
//! The queue is a trail of answers, one row per invocation a hallucination flagged: the
//! task's last answer while it ended failed with E007 (waiting, or rejected), an answer
//! decided on (an accepted task is `success` or `partial` from then on), and an earlier
//! answer whose task was retried afterwards (kept as `retried`: nothing to decide on it,
//! the later attempt stands). The queue is one indexed read of `invocations`, `tasks`
//! and `reviews`; the log is not scanned.

use rusqlite::{params, OptionalExtension, Row};
use serde::Serialize;

use super::read::Store;
use super::schema::{run_events_sql, RUN_BASE_SQL};
use super::StoreError;
use crate::base::protocol::{GradeCounts, QualityIssue};
use crate::model::event::{AtomGrade, AtomsGraded};

/// Whether the atoms were accepted or rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DecisionKind {
    /// Accepted: the atoms are stored and the task's dependents may run.
    Accepted,
    /// Rejected: the task stays failed.
    Rejected,
}

/// A person's decision on a review item.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decision {
    /// Accepted or rejected.
    pub decision: DecisionKind,
    /// Who decided.
    pub reviewer: String,
    /// The note of an acceptance, the reason of a rejection.
    pub note: Option<String>,
    /// When (RFC 3339).
    pub decided_at: String,
    /// The decision's event in the run's log.
    pub seq: u64,
}

/// A reference an atom makes to an asset that does not exist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FabricatedRef {
    /// The atom that makes it.
    pub atom_id: String,
    /// The asset id it names.
    pub reference: String,
}

/// A task stopped for review, with its evidence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReviewItem {
    /// Run.
    pub run_id: String,
    /// Task.
    pub task_id: String,
    /// Agent.
    pub agent: String,
    /// The task's status now: `failed` while waiting or once rejected, `success` or
    /// `partial` once accepted.
    pub status: String,
    /// The invocation whose atoms are reviewed (the task's last).
    pub invocation_id: String,
    /// Its attempt number.
    pub attempt: i64,
    /// The hallucination's message.
    pub message: Option<String>,
    /// The references to assets that do not exist, as the quality gate found them.
    pub fabricated: Vec<FabricatedRef>,
    /// The atoms as parsed from the answer.
    pub atoms: Vec<serde_json::Value>,
    /// The answer's summary.
    pub summary: String,
    /// Mean atom score.
    pub avg_score: f64,
    /// Atoms per grade.
    pub grades: GradeCounts,
    /// Every quality issue found.
    pub issues: Vec<QualityIssue>,
    /// The decision, once made.
    pub decision: Option<Decision>,
    /// The task ran again after this answer (a person retried it): the answer is kept
    /// in the trail, but a later attempt stands and there is nothing to decide here.
    pub retried: bool,
}

impl ReviewItem {
    /// Whether the item waits for a person's decision: undecided and not retried.
    pub fn waits(&self) -> bool {
        self.decision.is_none() && !self.retried
    }
}

/// The trail's rows: the invocations that carry E007 (found in the covering index of
/// failed attempts, not by reading every invocation), each with its task and decision.
const ITEM_SQL: &str =
    "SELECT i.run_id, i.task_id, i.agent, t.status, i.invocation_id, i.attempt, i.response_json,
        r.decision, r.reviewer, r.note, r.decided_at, r.seq,
        t.final_invocation_id IS NOT i.invocation_id
 FROM invocations i
 JOIN tasks t ON t.run_id = i.run_id AND t.task_id = i.task_id
 LEFT JOIN reviews r ON r.run_id = i.run_id AND r.invocation_id = i.invocation_id
 WHERE i.rowid IN (SELECT rowid FROM invocations
                   WHERE status IN ('failed', 'timeout', 'partial', 'lost')
                     AND instr(error_codes, 'E007') > 0)
   AND (r.decision IS NOT NULL
        OR t.final_invocation_id IS NOT i.invocation_id
        OR (t.status = 'failed' AND t.error_code = 'E007'))";

impl Store {
    /// The review queue of run `run_id` (an exact id), or of every run, ordered by run
    /// and task.
    pub fn review_queue(&self, run_id: Option<&str>) -> Result<Vec<ReviewItem>, StoreError> {
        let rows = match run_id {
            Some(run) => {
                let mut st = self.conn().prepare(&format!(
                    "{ITEM_SQL} AND i.run_id = ?1 ORDER BY i.task_id, i.attempt"
                ))?;
                let v = st.query_map([run], item)?.collect::<Result<Vec<_>, _>>()?;
                v
            }
            None => {
                let mut st = self.conn().prepare(&format!(
                    "{ITEM_SQL} ORDER BY i.run_id, i.task_id, i.attempt"
                ))?;
                let v = st.query_map([], item)?.collect::<Result<Vec<_>, _>>()?;
                v
            }
        };
        Ok(rows)
    }

    /// The review item of one task's last answer, `None` when that answer is not (and
    /// was not) stopped for review (an earlier one may be, in the trail, as retried).
    pub fn review_item(
        &self,
        run_id: &str,
        task_id: &str,
    ) -> Result<Option<ReviewItem>, StoreError> {
        Ok(self
            .conn()
            .query_row(
                &format!(
                    "{ITEM_SQL} AND i.run_id = ?1 AND i.task_id = ?2
                       AND i.invocation_id = t.final_invocation_id"
                ),
                params![run_id, task_id],
                item,
            )
            .optional()?)
    }

    /// The grade of each atom of an invocation, as its `atoms_graded` event logged them
    /// (`None` when the log has no such event). Reads the run's log.
    pub fn atom_grades(
        &self,
        run_id: &str,
        invocation_id: &str,
    ) -> Result<Option<Vec<AtomGrade>>, StoreError> {
        let payload: Option<String> = self
            .conn()
            .query_row(
                &format!(
                    "SELECT payload FROM execution_logs WHERE {} AND kind = 'atoms_graded'
                       AND invocation_id = ?2 ORDER BY event_id DESC LIMIT 1",
                    run_events_sql(RUN_BASE_SQL)
                ),
                params![run_id, invocation_id],
                |r| r.get(0),
            )
            .optional()?;
        let Some(payload) = payload else {
            return Ok(None);
        };
        serde_json::from_str::<AtomsGraded>(&payload)
            .map(|g| Some(g.atoms))
            .map_err(|e| StoreError::Json {
                what: format!("grades of {invocation_id}"),
                source: e,
            })
    }

    /// How many decisions of run `run_id` accepted atoms.
    pub fn accepted_reviews(&self, run_id: &str) -> Result<u32, StoreError> {
        Ok(self.conn().query_row(
            "SELECT COUNT(*) FROM reviews WHERE run_id = ?1 AND decision = 'accepted'",
            [run_id],
            |r| r.get(0),
        )?)
    }
}

/// One queue row: the evidence read from the stored response (a response that does not
/// decode leaves the evidence empty rather than the queue unreadable).
fn item(r: &Row<'_>) -> rusqlite::Result<ReviewItem> {
    let response: Option<String> = r.get(6)?;
    let response: serde_json::Value = response
        .as_deref()
        .and_then(|t| serde_json::from_str(t).ok())
        .unwrap_or(serde_json::Value::Null);
    let qc = &response["quality_check"];
    let issues: Vec<QualityIssue> =
        serde_json::from_value(qc["issues"].clone()).unwrap_or_default();
    let fabricated = issues
        .iter()
        .flat_map(|i| {
            crate::model::gate::quality::fabricated_refs(i)
                .into_iter()
                .map(|reference| FabricatedRef {
                    atom_id: i.atom_id.clone(),
                    reference,
                })
        })
        .collect();
    let message = response["errors"].as_array().and_then(|errs| {
        errs.iter()
            .find(|e| e["error_code"] == "E007")
            .and_then(|e| e["message"].as_str())
            .map(str::to_string)
    });
    let decision = match r.get::<_, Option<String>>(7)?.as_deref() {
        None => None,
        Some(d) => Some(Decision {
            decision: if d == "accepted" {
                DecisionKind::Accepted
            } else {
                DecisionKind::Rejected
            },
            reviewer: r.get(8)?,
            note: r.get(9)?,
            decided_at: r.get(10)?,
            seq: r.get::<_, i64>(11)? as u64,
        }),
    };
    Ok(ReviewItem {
        run_id: r.get(0)?,
        task_id: r.get(1)?,
        agent: r.get(2)?,
        status: r.get(3)?,
        invocation_id: r.get(4)?,
        attempt: r.get::<_, Option<i64>>(5)?.unwrap_or(0),
        message,
        fabricated,
        atoms: response["output"]["atoms"]
            .as_array()
            .cloned()
            .unwrap_or_default(),
        summary: response["output"]["summary"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        avg_score: qc["avg_quality_score"].as_f64().unwrap_or(0.0),
        grades: serde_json::from_value(qc["grades"].clone()).unwrap_or_default(),
        issues,
        decision,
        retried: r.get::<_, Option<bool>>(12)?.unwrap_or(false),
    })
}
