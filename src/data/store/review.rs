//! The review queue: the tasks a hallucination (E007) stopped for a person's review,
//! each with its evidence — the invocation, the references to assets that do not exist,
//! the atoms as parsed, the quality issues — and the decision once one is made.
//!
//! A task is in the queue while it ended failed with E007, and stays there with its
//! decision once decided (an accepted task is `success` or `partial` from then on). A
//! task that is retried and ends otherwise leaves it. The queue is one indexed read of
//! `tasks`, `invocations` and `reviews`; the log is not scanned.

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
}

const ITEM_SQL: &str = "SELECT t.run_id, t.task_id, t.agent, t.status, t.final_invocation_id, i.attempt, i.response_json,
        r.decision, r.reviewer, r.note, r.decided_at, r.seq
 FROM tasks t
 LEFT JOIN invocations i ON i.run_id = t.run_id AND i.invocation_id = t.final_invocation_id
 LEFT JOIN reviews r ON r.run_id = t.run_id AND r.invocation_id = t.final_invocation_id
 WHERE t.error_code = 'E007' AND t.final_invocation_id IS NOT NULL
   AND (t.status = 'failed' OR r.decision IS NOT NULL)";

impl Store {
    /// The review queue of run `run_id` (an exact id), or of every run, ordered by run
    /// and task.
    pub fn review_queue(&self, run_id: Option<&str>) -> Result<Vec<ReviewItem>, StoreError> {
        let rows = match run_id {
            Some(run) => {
                let mut st = self
                    .conn()
                    .prepare(&format!("{ITEM_SQL} AND t.run_id = ?1 ORDER BY t.task_id"))?;
                let v = st.query_map([run], item)?.collect::<Result<Vec<_>, _>>()?;
                v
            }
            None => {
                let mut st = self
                    .conn()
                    .prepare(&format!("{ITEM_SQL} ORDER BY t.run_id, t.task_id"))?;
                let v = st.query_map([], item)?.collect::<Result<Vec<_>, _>>()?;
                v
            }
        };
        Ok(rows)
    }

    /// The review item of one task, `None` when the task is not (and was not) stopped
    /// for review.
    pub fn review_item(
        &self,
        run_id: &str,
        task_id: &str,
    ) -> Result<Option<ReviewItem>, StoreError> {
        Ok(self
            .conn()
            .query_row(
                &format!("{ITEM_SQL} AND t.run_id = ?1 AND t.task_id = ?2"),
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
    })
}
