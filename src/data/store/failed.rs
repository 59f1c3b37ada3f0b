//! Failed invocations across runs: the rows of the Failures screen, of
//! `plexus failures --json` and of `plexus export-failures`. One row per invocation that
//! failed, timed out or ended partial (a retried attempt is always one of those: only
//! such an attempt is retried), newest first.

use rusqlite::{params, OptionalExtension};
use serde::Serialize;

use super::{Store, StoreError};

/// Most rows one query returns (the screen says when there were more).
pub const MAX_FAILURE_ROWS: usize = 1_000_000;

/// One failed, timed-out or partial invocation (retried or not).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FailedInvocation {
    /// Run.
    pub run_id: String,
    /// Task.
    pub task_id: String,
    /// Attempt (from 1).
    pub attempt: u32,
    /// Attempts the task made in all.
    pub attempts: u32,
    /// Agent.
    pub agent: String,
    /// `failed`, `timeout`, `partial`, or `lost` (in flight when its process died).
    pub status: String,
    /// Error codes, e.g. `["E002"]`; the first is the cause ([`Self::error_code`]).
    pub error_codes: Vec<String>,
    /// The first error's message, when there was one.
    pub message: Option<String>,
    /// Mean atom score of the attempt, when it was graded.
    pub score: Option<f64>,
    /// Grade of that mean score (default thresholds), not the worst atom's grade.
    pub grade: Option<String>,
    /// When the attempt started (RFC 3339, UTC).
    pub started_at: String,
    /// Wall time, when it ended.
    pub execution_time_ms: Option<i64>,
    /// Invocation id.
    pub invocation_id: String,
    /// Whether a later attempt of the task followed.
    pub retried: bool,
}

impl FailedInvocation {
    /// The first error code (e.g. `E005`), which names the cause; `None` without codes.
    pub fn error_code(&self) -> Option<&str> {
        self.error_codes.first().map(String::as_str)
    }
}

/// Where an invocation belongs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvocationMeta {
    /// Run.
    pub run_id: String,
    /// Task.
    pub task_id: String,
    /// Attempt.
    pub attempt: u32,
    /// Status (`None` while in flight).
    pub status: Option<String>,
}

impl Store {
    /// Every failed, timed-out or partial invocation of `run` (every run when `None`),
    /// retried or not, newest first (by start time, then invocation id); at most
    /// [`MAX_FAILURE_ROWS`].
    pub fn failed_invocations(
        &self,
        run: Option<&str>,
    ) -> Result<Vec<FailedInvocation>, StoreError> {
        // Tasks that made more than one attempt (few): how many each made.
        let mut attempts: std::collections::HashMap<
            String,
            std::collections::HashMap<String, i64>,
        > = Default::default();
        {
            let mut st = self.conn().prepare_cached(
                "SELECT run_id, task_id, attempts FROM tasks
                 WHERE attempts > 1 AND (?1 IS NULL OR run_id = ?1)",
            )?;
            let rows = st.query_map(params![run], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get(2)?))
            })?;
            for row in rows {
                let (run, task, n) = row?;
                attempts.entry(run).or_default().insert(task, n);
            }
        }
        // One backward read of the `invocations_failed` index, which holds every column
        // shown.
        let mut st = self.conn().prepare_cached(
            "SELECT i.run_id, i.task_id, i.attempt, i.agent,
                    i.status, i.error_codes, i.error_message, i.avg_score, i.started_at,
                    i.execution_time_ms, i.invocation_id
             FROM invocations i
             WHERE i.status IN ('failed', 'timeout', 'partial', 'lost')
               AND (?1 IS NULL OR i.run_id = ?1)
             ORDER BY i.started_at DESC, i.invocation_id DESC
             LIMIT ?2",
        )?;
        let grader = crate::model::gate::quality::QualityConfig::default();
        let rows = st.query_map(params![run, MAX_FAILURE_ROWS as i64], |r| {
            let run_id: String = r.get(0)?;
            let task_id: String = r.get(1)?;
            let attempt: i64 = r.get(2)?;
            let last = attempts
                .get(&run_id)
                .and_then(|t| t.get(&task_id))
                .copied()
                .unwrap_or(attempt)
                .max(attempt);
            let codes: Option<String> = r.get(5)?;
            let score: Option<f64> = r.get(7)?;
            Ok(FailedInvocation {
                run_id,
                task_id,
                attempt: u32::try_from(attempt).unwrap_or(0),
                attempts: u32::try_from(last).unwrap_or(0),
                agent: r.get(3)?,
                status: r.get(4)?,
                error_codes: codes
                    .unwrap_or_default()
                    .split(',')
                    .map(str::trim)
                    .filter(|c| !c.is_empty())
                    .map(str::to_string)
                    .collect(),
                message: r.get(6)?,
                score,
                grade: score.map(|s| grader.grade(s).as_str().to_string()),
                started_at: r.get(8)?,
                execution_time_ms: r.get(9)?,
                invocation_id: r.get(10)?,
                retried: attempt < last,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The run, task, attempt and status of an invocation; `None` when unknown.
    pub fn invocation_meta(
        &self,
        invocation_id: &str,
    ) -> Result<Option<InvocationMeta>, StoreError> {
        Ok(self
            .conn()
            .query_row(
                "SELECT run_id, task_id, attempt, status FROM invocations WHERE invocation_id = ?1",
                [invocation_id],
                |r| {
                    Ok(InvocationMeta {
                        run_id: r.get(0)?,
                        task_id: r.get(1)?,
                        attempt: u32::try_from(r.get::<_, i64>(2)?).unwrap_or(0),
                        status: r.get(3)?,
                    })
                },
            )
            .optional()?)
    }
}
