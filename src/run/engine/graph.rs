//! The coordinator's graph: one node per plan task with its status and the edges to its
//! dependents, the run's status read off it, and a finished task's moves along the
//! edges — releasing its dependents, or blocking (E006) the tasks below it when it ended
//! unusable.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use super::outcome::{StopSignal, TaskOutcome};
use super::run_ctx::{task_scope, RunCtx};
use super::EngineError;
use crate::base::protocol::{ErrorCode, FallbackStrategy, GradeCounts};
use crate::data::store::WriteOp;
use crate::model::event::{
    Empty, EngineEvent, RunResumed, RunStatus, TaskBlocked, TaskFinished, TaskStatus,
};
use crate::model::plan::Plan;

/// A task's place in the coordinator's graph.
pub(super) struct Node {
    /// Current status.
    pub(super) status: TaskStatus,
    /// Dependencies not yet finished (usable, or final for a lenient task).
    pub(super) remaining: u32,
    /// Downstream tasks (plan indexes, at their exact number: a plan's tasks fit in
    /// 32 bits).
    pub(super) dependents: Box<[u32]>,
    /// Invocations made.
    pub(super) attempts: u32,
    /// Atoms accepted.
    pub(super) atoms: u32,
    /// Failed with a hallucination (E007) and waits for a person's decision.
    pub(super) awaiting_review: bool,
}

impl Node {
    /// Its downstream tasks' plan indexes (a copy: the caller changes the nodes as it
    /// walks them).
    pub(super) fn downstream(&self) -> Vec<usize> {
        self.dependents.iter().map(|&d| d as usize).collect()
    }
}

/// The plan's tasks as pending nodes linked to their dependents; `index` maps task ids
/// to plan indexes.
pub(super) fn build(plan: &Plan) -> Vec<Node> {
    let mut dependents: Vec<Vec<u32>> = vec![Vec::new(); plan.tasks.len()];
    for (i, t) in plan.tasks.iter().enumerate() {
        for d in &t.depends_on {
            if let Some(j) = plan.task_index(d) {
                dependents[j].push(i as u32);
            }
        }
    }
    plan.tasks
        .iter()
        .zip(dependents)
        .map(|(t, dependents)| Node {
            status: TaskStatus::Pending,
            remaining: t.depends_on.len() as u32,
            dependents: dependents.into_boxed_slice(),
            attempts: 0,
            atoms: 0,
            awaiting_review: false,
        })
        .collect()
}

/// Whether task `i` runs even when a dependency ended unusable (fallback skip or
/// use_default).
pub(super) fn fallback_allows(plan: &Plan, i: usize) -> bool {
    matches!(
        plan.tasks[i]
            .options()
            .fallback_config
            .as_ref()
            .map(|f| f.strategy),
        Some(FallbackStrategy::Skip | FallbackStrategy::UseDefault)
    )
}

/// Tasks by status, and the atoms accepted.
pub(super) fn tally(nodes: &[Node]) -> (BTreeMap<TaskStatus, u32>, u32) {
    let mut tasks: BTreeMap<TaskStatus, u32> = BTreeMap::new();
    for n in nodes {
        *tasks.entry(n.status).or_insert(0) += 1;
    }
    (tasks, nodes.iter().map(|n| n.atoms).sum())
}

/// The run's status from its tasks and how it was stopped.
pub(super) fn final_status(nodes: &[Node], stopping: Option<StopSignal>) -> RunStatus {
    match stopping {
        Some(StopSignal::Cancel) => RunStatus::Cancelled,
        Some(StopSignal::Interrupt) => RunStatus::Interrupted,
        _ if nodes.iter().any(|n| !n.status.is_final()) => RunStatus::Interrupted,
        _ => status_after(nodes),
    }
}

/// The status of a run whose tasks are all final.
pub(super) fn status_after(nodes: &[Node]) -> RunStatus {
    crate::model::gate::status::run_status_of(nodes.iter().map(|n| (n.status, n.awaiting_review)))
}

/// The `run_resumed` fact for the current graph.
pub(super) fn resumed(nodes: &[Node], previous: RunStatus) -> EngineEvent {
    let finished = nodes.iter().filter(|n| n.status.is_final()).count() as u32;
    EngineEvent::RunResumed(RunResumed {
        previous_status: previous,
        finished_tasks: finished,
        remaining_tasks: nodes.len() as u32 - finished,
    })
}

/// Writes task `i`'s state row.
pub(super) fn write_task(
    ctx: &RunCtx,
    i: usize,
    n: &Node,
    error: Option<ErrorCode>,
    invocation: Option<&Arc<str>>,
) -> Result<(), EngineError> {
    let t = &ctx.plan.tasks[i];
    ctx.emitter.write(WriteOp::TaskState {
        run_id: ctx.run_id.clone(),
        task_id: Arc::from(t.task_id.as_str()),
        status: n.status.as_str(),
        attempts: n.attempts,
        atoms: n.atoms,
        error_code: error.map(|e| e.as_str()),
        final_invocation_id: invocation.cloned(),
    })?;
    Ok(())
}

/// Records task `i`'s outcome, releases or blocks its dependents, and frees the
/// outputs nobody downstream still needs.
pub(super) fn finish(
    ctx: &RunCtx,
    nodes: &mut [Node],
    ready: &mut VecDeque<usize>,
    totals: &mut GradeCounts,
    i: usize,
    outcome: TaskOutcome,
) -> Result<(), EngineError> {
    nodes[i].attempts = outcome.attempts;
    nodes[i].atoms = outcome.atoms;
    nodes[i].status = outcome.status;
    nodes[i].awaiting_review =
        outcome.status == TaskStatus::Failed && outcome.error_code == Some(ErrorCode::E007);
    if outcome.status == TaskStatus::Pending || outcome.status == TaskStatus::Cancelled {
        // interrupted: back to pending, resumable; cancelled: recorded at the end
        write_task(ctx, i, &nodes[i], None, outcome.invocation_id.as_ref())?;
        if outcome.status == TaskStatus::Cancelled {
            ctx.emitter.emit(
                &task_scope(ctx, i),
                EngineEvent::TaskFinished(TaskFinished {
                    status: TaskStatus::Cancelled,
                    attempts: outcome.attempts,
                    atoms: 0,
                    error_code: None,
                    error_message: None,
                }),
            )?;
        }
        return Ok(());
    }
    totals.merge(&outcome.grades);
    write_task(
        ctx,
        i,
        &nodes[i],
        outcome.error_code,
        outcome.invocation_id.as_ref(),
    )?;
    ctx.emitter.emit(
        &task_scope(ctx, i),
        EngineEvent::TaskFinished(TaskFinished {
            status: outcome.status,
            attempts: outcome.attempts,
            atoms: outcome.atoms,
            error_code: outcome.error_code,
            error_message: outcome.error_message,
        }),
    )?;
    if let Some(out) = &outcome.output {
        if ctx.keeps_all_outputs() || output_needed(ctx, nodes, i) {
            if let Ok(mut o) = ctx.outputs.write() {
                o.insert(i, out.clone());
            }
        }
    }
    let satisfied = outcome.status.satisfies_dependents();
    for d in nodes[i].downstream() {
        if nodes[d].status != TaskStatus::Pending {
            continue;
        }
        if satisfied || fallback_allows(&ctx.plan, d) {
            nodes[d].remaining = nodes[d].remaining.saturating_sub(1);
            if nodes[d].remaining == 0 {
                nodes[d].status = TaskStatus::Ready;
                ctx.emitter
                    .emit(&task_scope(ctx, d), EngineEvent::TaskReady(Empty {}))?;
                ready.push_back(d);
            }
        } else {
            block(ctx, nodes, d, i, Some(ready))?;
        }
    }
    // Free the outputs nobody still to run needs: those this task read.
    if !ctx.keeps_all_outputs() {
        release_outputs(ctx, nodes, i);
    }
    Ok(())
}

/// Whether a task that has not ended yet reads task `j`'s output: a direct dependent,
/// or a task with a `task_output` reference to it.
pub(super) fn output_needed(ctx: &RunCtx, nodes: &[Node], j: usize) -> bool {
    let open = |k: &usize| !nodes[*k].status.is_final();
    nodes[j].dependents.iter().any(|&k| open(&(k as usize)))
        || ctx.referrers.get(&j).is_some_and(|r| r.iter().any(open))
}

/// Drops from memory the outputs task `i` read (its dependencies and the tasks its
/// references name) that no task still to run needs.
fn release_outputs(ctx: &RunCtx, nodes: &[Node], i: usize) {
    let t = &ctx.plan.tasks[i];
    let read = t
        .depends_on
        .iter()
        .map(|d| &**d)
        .chain(t.options().data_references.iter().filter_map(|r| match r {
            crate::base::protocol::DataReference::TaskOutput(o) => Some(o.task_id.as_str()),
            _ => None,
        }))
        .filter_map(|id| ctx.plan.task_index(id));
    let done: Vec<usize> = read.filter(|&j| !output_needed(ctx, nodes, j)).collect();
    if done.is_empty() {
        return;
    }
    if let Ok(mut o) = ctx.outputs.write() {
        for j in done {
            o.remove(&j);
        }
    }
}

/// Why a task is blocked by its dependency `up_id`: the review it waits for when the
/// dependency was flagged for one, else how the dependency ended.
fn blocked_message(up_id: &str, up: &Node) -> String {
    if up.awaiting_review {
        format!("dependency `{up_id}` waits for a person's review (accepted, it runs)")
    } else {
        format!("dependency `{up_id}` ended {}", up.status.as_str())
    }
}

/// Marks `i` blocked (E006) because `upstream` failed, and everything below it.
///
/// A lenient dependent (fallback skip / use_default) counts the blocked task as finished;
/// when that was its last dependency it becomes ready and is queued on `ready`. Without a
/// queue (resume) the caller's walk over finished tasks does the counting.
pub(super) fn block(
    ctx: &RunCtx,
    nodes: &mut [Node],
    i: usize,
    upstream: usize,
    mut ready: Option<&mut VecDeque<usize>>,
) -> Result<(), EngineError> {
    let mut stack = vec![(i, upstream)];
    while let Some((i, up)) = stack.pop() {
        if nodes[i].status.is_final() || nodes[i].status == TaskStatus::Running {
            continue;
        }
        nodes[i].status = TaskStatus::Blocked;
        let up_id = ctx.plan.tasks[up].task_id.clone();
        let scope = task_scope(ctx, i);
        ctx.emitter.emit(
            &scope,
            EngineEvent::TaskBlocked(TaskBlocked {
                error_code: ErrorCode::E006,
                upstream: up_id.clone(),
                message: blocked_message(&up_id, &nodes[up]),
            }),
        )?;
        write_task(ctx, i, &nodes[i], Some(ErrorCode::E006), None)?;
        if !ctx.keeps_all_outputs() {
            release_outputs(ctx, nodes, i);
        }
        ctx.emitter.emit(
            &scope,
            EngineEvent::TaskFinished(TaskFinished {
                status: TaskStatus::Blocked,
                attempts: nodes[i].attempts,
                atoms: 0,
                error_code: Some(ErrorCode::E006),
                error_message: None,
            }),
        )?;
        for d in nodes[i].downstream() {
            if fallback_allows(&ctx.plan, d) {
                count_lenient(ctx, nodes, d, ready.as_deref_mut())?;
                continue;
            }
            stack.push((d, i));
        }
    }
    Ok(())
}

/// A lenient dependent `d` of a blocked task counts it as finished: a pending one whose
/// last dependency that was becomes ready and is queued on `ready`.
fn count_lenient(
    ctx: &RunCtx,
    nodes: &mut [Node],
    d: usize,
    ready: Option<&mut VecDeque<usize>>,
) -> Result<(), EngineError> {
    // On resume (no queue) the caller's walk over finished tasks counts it.
    let Some(q) = ready else {
        return Ok(());
    };
    if nodes[d].status != TaskStatus::Pending {
        return Ok(());
    }
    nodes[d].remaining = nodes[d].remaining.saturating_sub(1);
    if nodes[d].remaining == 0 {
        nodes[d].status = TaskStatus::Ready;
        ctx.emitter
            .emit(&task_scope(ctx, d), EngineEvent::TaskReady(Empty {}))?;
        q.push_back(d);
    }
    Ok(())
}

/// Emits `run_finished` and writes the run's status.
pub(super) fn report_end(
    ctx: &RunCtx,
    nodes: &[Node],
    status: RunStatus,
    totals: GradeCounts,
) -> Result<(BTreeMap<TaskStatus, u32>, u32), EngineError> {
    let (tasks, atoms) = tally(nodes);
    ctx.emitter.emit(
        &super::emit::Scope::default(),
        EngineEvent::RunFinished(crate::model::event::RunFinished {
            status,
            tasks: tasks.clone(),
            atoms,
            grades: totals,
        }),
    )?;
    super::run_ctx::write_run_status(ctx, status)?;
    Ok((tasks, atoms))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The coordinator holds one node per task for the run's whole life.
    #[test]
    fn nodes_stay_small_and_link_each_task_to_its_dependents() {
        assert!(
            std::mem::size_of::<Node>() <= 32,
            "{}",
            std::mem::size_of::<Node>()
        );
        let plan = crate::model::plan::parse_plan(
            r#"{"plan_id": "P", "execution_mode": "Quick_Assessment", "tasks": [
                {"task_id": "A", "agent": "Code_Architect", "instruction": "x"},
                {"task_id": "B", "agent": "Code_Architect", "instruction": "x", "depends_on": ["A"]},
                {"task_id": "C", "agent": "Code_Architect", "instruction": "x", "depends_on": ["A", "B"]}]}"#,
            "p.json",
        )
        .expect("valid");
        let nodes = build(&plan);
        assert_eq!(nodes[0].downstream(), vec![1, 2]);
        assert_eq!(nodes[1].downstream(), vec![2]);
        assert!(nodes[2].downstream().is_empty());
        assert_eq!(
            nodes.iter().map(|n| n.remaining).collect::<Vec<_>>(),
            [0, 1, 2]
        );
    }
}
