//! What a task is handed besides its instruction: resolved `task_output` references,
//! references passed on in reference mode, and the asset ids of its upstream tasks.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{json, Value};

use super::emit::Scope;
use super::refs::resolve_task_output;
use super::run::RunCtx;
use crate::event::{EngineEvent, ReferenceFailed};
use crate::protocol::refs::{RefErrorCode, ResolutionFailure};
use crate::protocol::{DataReference, FallbackStrategy, ResponseOutput};

/// Resolves the task's references and the upstream asset ids.
pub(super) fn gather_inputs(ctx: &RunCtx, idx: usize, scope: &Scope) -> (Vec<String>, Vec<Value>) {
    let task = &ctx.plan.tasks[idx];
    let mut assets: Vec<String> = task.context.existing_assets.clone().unwrap_or_default();
    let needed: Vec<usize> = task
        .depends_on
        .iter()
        .chain(task.data_references.iter().filter_map(|r| match r {
            DataReference::TaskOutput(t) => Some(&t.task_id),
            _ => None,
        }))
        .filter_map(|d| ctx.plan.task_index(d))
        .collect();
    let outputs: HashMap<usize, Arc<ResponseOutput>> = match ctx.outputs.read() {
        Ok(o) => needed
            .iter()
            .filter_map(|j| o.get(j).map(|v| (*j, v.clone())))
            .collect(),
        Err(_) => HashMap::new(),
    };
    for d in &task.depends_on {
        if let Some(out) = ctx.plan.task_index(d).and_then(|j| outputs.get(&j)) {
            for a in &out.atoms {
                if !assets.contains(&a.asset_id) {
                    assets.push(a.asset_id.clone());
                }
            }
        }
    }
    let mut inputs = Vec::new();
    for (i, r) in task.data_references.iter().enumerate() {
        match r {
            DataReference::TaskOutput(t) => {
                let out = ctx.plan.task_index(&t.task_id).and_then(|j| outputs.get(&j).cloned());
                let res = match out {
                    Some(o) => match serde_json::to_value(&*o) {
                        Ok(v) => resolve_task_output(&v, t),
                        Err(e) => Err(super::refs::RefFailure {
                            code: RefErrorCode::RefFormatError,
                            message: format!("the output of `{}` does not serialise: {e}", t.task_id),
                        }),
                    },
                    None => Err(super::refs::RefFailure {
                        code: RefErrorCode::RefNotFound,
                        message: format!("task `{}` produced no output", t.task_id),
                    }),
                };
                match res {
                    Ok(data) => inputs.push(json!({
                        "source": format!("task_output:{}{}", t.task_id, t.path.as_deref().map(|p| format!(" {p}")).unwrap_or_default()),
                        "transfer_mode": "full",
                        "data": data
                    })),
                    Err(f) => {
                        let (strategy, value) = match &task.fallback_config {
                            Some(fc) if fc.strategy == FallbackStrategy::UseDefault => ("use_default", fc.default_value.clone()),
                            _ => match f.code {
                                RefErrorCode::RefPathInvalid => ("return_full", Value::Null),
                                RefErrorCode::RefFilterError => ("ignore_filter", Value::Null),
                                _ => ("skip", Value::Null),
                            },
                        };
                        let failure = ResolutionFailure {
                            ref_type: "task_output".into(),
                            task_id: Some(t.task_id.clone()),
                            error_code: f.code,
                            error_message: f.message,
                            fallback_strategy: strategy.into(),
                            fallback_value: value.clone(),
                            timestamp: crate::store::writer::now_rfc3339(),
                            extra: Default::default(),
                        };
                        let _ = ctx.emitter.emit(scope, EngineEvent::ReferenceFailed(ReferenceFailed { index: i, failure }));
                        if !value.is_null() {
                            inputs.push(json!({"source": format!("task_output:{}", t.task_id), "transfer_mode": "full", "data": value}));
                        }
                    }
                }
            }
            other => inputs.push(json!({"source": other.ref_type(), "transfer_mode": "reference", "reference": other})),
        }
    }
    (assets, inputs)
}
