//! What an acceptance stores and changes: the rows of the reviewed invocation's atoms
//! (from its stored answer and the grades its log recorded), the task's output for its
//! dependents, its new status; and which blocked tasks it frees.

use std::collections::HashMap;

use rusqlite::OptionalExtension;

use super::{ReviewError, ReviewItem};
use crate::base::protocol::{
    AgentResponse, ErrorCode, FallbackStrategy, GradeCounts, InvocationStatus, ResponseOutput,
};
use crate::data::store::{AtomRow, Store, StoreError};
use crate::model::event::TaskStatus;
use crate::model::gate::quality::{fabricated_refs, QualityConfig};
use crate::model::gate::status::decide_status;
use crate::model::plan::Plan;

/// What accepting a review item stores and changes.
#[derive(Debug, Clone)]
pub struct Accepted {
    /// Rows for `knowledge_atoms`, `quality_records` and `relations`.
    pub rows: Vec<AtomRow>,
    /// The task's output, as its dependents read it.
    pub output: ResponseOutput,
    /// The task's status from now on: `success` or `partial`.
    pub status: TaskStatus,
    /// Grades of the atoms.
    pub grades: GradeCounts,
}

/// Builds what accepting `item` stores, from its invocation's stored answer and the
/// grades the run's log recorded for it (when the log lacks them, each atom gets the
/// answer's mean score).
pub fn accepted(store: &Store, item: &ReviewItem) -> Result<Accepted, ReviewError> {
    let text: Option<String> = store
        .conn()
        .query_row(
            "SELECT response_json FROM invocations WHERE run_id = ?1 AND invocation_id = ?2",
            [&item.run_id, &item.invocation_id],
            |r| r.get(0),
        )
        .optional()
        .map_err(StoreError::from)?
        .flatten();
    let nothing = || ReviewError::NothingToAccept {
        task: item.task_id.clone(),
        invocation: item.invocation_id.clone(),
    };
    let text = text.ok_or_else(nothing)?;
    let response: AgentResponse = serde_json::from_str(&text).map_err(|e| StoreError::Json {
        what: format!("response of {}", item.invocation_id),
        source: e,
    })?;
    if response.output.atoms.is_empty() {
        return Err(nothing());
    }
    let qc = &response.quality_check;
    let logged = store
        .atom_grades(&item.run_id, &item.invocation_id)?
        .filter(|g| g.len() == response.output.atoms.len());
    let fallback = QualityConfig::default().grade(qc.avg_quality_score);
    let mut grades = GradeCounts::default();
    let mut rows = Vec::with_capacity(response.output.atoms.len());
    for (k, a) in response.output.atoms.iter().enumerate() {
        let graded = logged.as_ref().map(|g| &g[k]);
        let grade = graded.map_or(fallback, |g| g.grade);
        grades.add(grade);
        let issues: Vec<_> = qc
            .issues
            .iter()
            .filter(|i| i.atom_id == a.asset_id)
            .collect();
        let fabricated: Vec<String> = issues.iter().flat_map(|i| fabricated_refs(i)).collect();
        rows.push(AtomRow {
            atom_id: a.asset_id.clone(),
            task_id: item.task_id.clone(),
            invocation_id: item.invocation_id.clone(),
            agent: item.agent.clone(),
            atom_type: graded
                .map(|g| g.atom_type.clone())
                .or_else(|| a.atom_type().map(str::to_string))
                .unwrap_or_else(|| "Atom".into()),
            category: a.category.clone(),
            data_status: a.data_status.clone(),
            paper_id: a.provenance.paper_id.clone(),
            content: json(&a.content),
            confidence: a.confidence(),
            grade: grade.as_str().to_string(),
            score: graded.map_or(qc.avg_quality_score, |g| g.score),
            provenance: json(&a.provenance),
            delta_audit: json(&a.delta_audit),
            metadata: json(&a.metadata),
            issues: serde_json::to_string(&issues).unwrap_or_else(|_| "[]".into()),
            relations: a
                .delta_audit
                .existing_assets
                .iter()
                .flatten()
                .filter(|r| !fabricated.contains(r))
                .cloned()
                .collect(),
            contradiction: a.delta_audit.contradiction_marked.unwrap_or(false),
        });
    }
    // The status the answer would have had without the flagged references.
    let others: Vec<_> = response
        .errors
        .iter()
        .filter(|e| e.error_code != ErrorCode::E007)
        .cloned()
        .collect();
    let status = match decide_status(
        response.output.atoms.len() as u32,
        qc.avg_quality_score,
        &others,
        0,
        f64::INFINITY,
    ) {
        InvocationStatus::Success => TaskStatus::Success,
        InvocationStatus::Partial | InvocationStatus::Failed | InvocationStatus::Timeout => {
            TaskStatus::Partial
        }
    };
    Ok(Accepted {
        rows,
        output: response.output,
        status,
        grades,
    })
}

/// A value as its stored JSON text.
fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".into())
}

/// The blocked tasks of `plan` that may run now, given each task's status: those whose
/// dependencies all finished usable (success or partial) or are themselves freed — a
/// task blocked below one a person accepted. In dependency order. (A task a dependency
/// still fails stays blocked.)
pub fn unblocked_tasks(plan: &Plan, status: &HashMap<String, TaskStatus>) -> Vec<String> {
    let st = |i: usize| {
        status
            .get(&plan.tasks[i].task_id)
            .copied()
            .unwrap_or(TaskStatus::Pending)
    };
    let mut freed = vec![false; plan.tasks.len()];
    let mut out = Vec::new();
    for i in plan.layers().into_iter().flatten() {
        if st(i) != TaskStatus::Blocked {
            continue;
        }
        let t = &plan.tasks[i];
        let lenient = matches!(
            t.options().fallback_config.as_ref().map(|f| f.strategy),
            Some(FallbackStrategy::Skip | FallbackStrategy::UseDefault)
        );
        let ok = t
            .depends_on
            .iter()
            .filter_map(|d| plan.task_index(d))
            .all(|j| freed[j] || st(j).satisfies_dependents() || (lenient && st(j).is_final()));
        if ok {
            freed[i] = true;
            out.push(t.task_id.clone());
        }
    }
    out
}
