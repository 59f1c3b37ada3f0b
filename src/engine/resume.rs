//! Reopening a resumed run: the facts that open it again (a lease taken over, a crash
//! detected, `run_resumed`), the tasks' state as the run left it, the tasks a review
//! freed meanwhile, and the finished tasks applied to their dependents.

use std::collections::HashMap;

use super::emit::Scope;
use super::graph::{block, fallback_allows, resumed, Node};
use super::run_ctx::{write_run_status, RunCtx};
use super::run_spec::ResumeState;
use super::EngineError;
use crate::event::{CrashDetected, EngineEvent, RunStatus};

/// Reopens the run `r` describes on the fresh graph `nodes`; `index` maps task ids to
/// plan indexes.
pub(super) fn restore(
    ctx: &RunCtx,
    nodes: &mut [Node],
    r: &ResumeState,
    index: &HashMap<&str, usize>,
) -> Result<(), EngineError> {
    let run_scope = Scope::default();
    if let Some(t) = &r.taken_over {
        ctx.emitter
            .emit(&run_scope, EngineEvent::LeaseTakenOver(t.clone()))?;
    }
    if r.previous_status == Some(RunStatus::Running) || r.previous_status == Some(RunStatus::Paused)
    {
        ctx.emitter.emit(
            &run_scope,
            EngineEvent::CrashDetected(CrashDetected {
                last_seq: r.last_event.0,
                last_ts: r.last_event.1,
                interrupted_tasks: r.interrupted.clone(),
            }),
        )?;
    }
    for (tid, (status, attempts, atoms)) in &r.finished {
        if let Some(&i) = index.get(tid.as_str()) {
            nodes[i].status = *status;
            nodes[i].attempts = *attempts;
            nodes[i].atoms = *atoms;
        }
    }
    for (tid, a) in &r.attempts {
        if let Some(&i) = index.get(tid.as_str()) {
            nodes[i].attempts = *a;
        }
    }
    ctx.emitter.emit(
        &run_scope,
        resumed(nodes, r.previous_status.unwrap_or(RunStatus::Interrupted)),
    )?;
    write_run_status(ctx, RunStatus::Running)?;
    for i in r.unblocked.iter().filter_map(|t| index.get(t.as_str())) {
        super::reopen::reset_task(ctx, nodes, *i, "unblocked: a review upstream was accepted")?;
    }
    reapply_finished(ctx, nodes)
}

/// On resume: applies the tasks that had already finished to their dependents, in
/// dependency order — counting them as done, or blocking the dependents.
fn reapply_finished(ctx: &RunCtx, nodes: &mut [Node]) -> Result<(), EngineError> {
    let order: Vec<usize> = ctx.plan.layers().into_iter().flatten().collect();
    for &i in &order {
        let st = nodes[i].status;
        if st.is_final() {
            let deps = nodes[i].dependents.clone();
            for d in deps {
                if nodes[d].status.is_final() {
                    continue;
                }
                if st.satisfies_dependents() || fallback_allows(&ctx.plan, d) {
                    nodes[d].remaining = nodes[d].remaining.saturating_sub(1);
                } else {
                    block(ctx, nodes, d, i, None)?;
                }
            }
        }
    }
    Ok(())
}
