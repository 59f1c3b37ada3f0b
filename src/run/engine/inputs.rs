//! What a task is handed besides its instruction. At dispatch (seed 000 §3.1: files and
//! queries at scheduling, task outputs once their task is done — in a DAG that is before
//! dispatch too) every data reference is resolved; failures follow the task's
//! `fallback_config` or the defaults of §3.2 and are logged as `reference_failed`; the
//! resolved data is then fitted with the rest of the prompt into the agent's context
//! budget (see [`super::budget`]).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::budget::Gathered;
use super::context::plan::Input;
use super::context::select::DataType;
use super::emit::Scope;
use super::run_ctx::RunCtx;
use crate::base::protocol::refs::{RefErrorCode, ResolutionFailure};
use crate::base::protocol::{DataReference, FallbackConfig, FallbackStrategy, ResponseOutput};
use crate::data::resolve::{resolve_task_output, RefFailure};
use crate::model::event::{EngineEvent, ReferenceFailed};

/// What to do after a failure, by the §3.2 table when the task configures nothing.
fn default_strategy(code: RefErrorCode, has_default: bool) -> &'static str {
    match code {
        RefErrorCode::RefNotFound if has_default => "use_default",
        RefErrorCode::RefNotFound => "skip",
        RefErrorCode::RefTimeout => "retry",
        RefErrorCode::RefPermissionDenied => "abort",
        RefErrorCode::RefFormatError => "abort",
        RefErrorCode::RefPathInvalid => "return_full",
        RefErrorCode::RefFilterError => "ignore_filter",
    }
}

fn strategy_name(s: FallbackStrategy) -> &'static str {
    match s {
        FallbackStrategy::UseDefault => "use_default",
        FallbackStrategy::Retry => "retry",
        FallbackStrategy::Skip => "skip",
        FallbackStrategy::Abort => "abort",
    }
}

fn ref_name(r: &DataReference) -> String {
    match r {
        DataReference::TaskOutput(t) => format!("task_output:{}", t.task_id),
        DataReference::File(f) => format!("file:{}", f.path),
        DataReference::DbQuery(q) => format!("db_query:{}", q.table),
        DataReference::Sample(r) => format!("sample:{}", r.path),
    }
}

fn data_type_of(r: &DataReference, data: &Value) -> DataType {
    match r {
        DataReference::TaskOutput(_) => DataType::Atoms,
        DataReference::File(f) => match (f.format.as_deref(), data["format"].as_str()) {
            (Some("json"), _) | (_, Some("json")) => DataType::Metadata,
            (_, Some("code")) => DataType::Code,
            (_, Some("tex")) => DataType::Formula,
            _ if f.path.ends_with(".json") => DataType::Metadata,
            _ => DataType::Text,
        },
        DataReference::Sample(_) if data.is_string() => DataType::Text,
        DataReference::Sample(_) => DataType::Metadata,
        DataReference::DbQuery(q) => match q.table.as_str() {
            "relations" => DataType::Relations,
            "knowledge_atoms" => DataType::Atoms,
            "papers" => DataType::Metadata,
            _ if data.is_null() => DataType::Metadata,
            _ => DataType::Table,
        },
    }
}

/// The outputs of finished tasks that are no longer held in memory (a resumed run, a
/// task run again), read back from the store once the writer has committed what it was
/// given; tasks without an output (failed, or no database to read) are left out.
async fn read_back(ctx: &RunCtx, tasks: Vec<usize>) -> HashMap<usize, Arc<ResponseOutput>> {
    let Some(db) = ctx.db.clone().filter(|_| !tasks.is_empty()) else {
        return HashMap::new();
    };
    let writer = ctx.emitter.writer().clone();
    let run_id = ctx.run_id.to_string();
    let ids: Vec<(usize, String)> = tasks
        .into_iter()
        .map(|j| (j, ctx.plan.tasks[j].task_id.clone()))
        .collect();
    let read = tokio::task::spawn_blocking(move || {
        writer.flush()?;
        let store = crate::data::store::Store::open(&db)?;
        let mut found = HashMap::new();
        for (j, id) in ids {
            let Some(text) = store.task_output(&run_id, &id)? else {
                continue;
            };
            match serde_json::from_str::<ResponseOutput>(&text) {
                Ok(out) => {
                    found.insert(j, Arc::new(out));
                }
                Err(e) => tracing::warn!("the stored output of `{id}` does not decode: {e}"),
            }
        }
        Ok::<_, crate::data::store::StoreError>(found)
    })
    .await;
    match read {
        Ok(Ok(found)) => found,
        Ok(Err(e)) => {
            tracing::warn!("cannot read upstream outputs back from the store: {e}");
            HashMap::new()
        }
        Err(e) => {
            tracing::warn!("reading upstream outputs back failed: {e}");
            HashMap::new()
        }
    }
}

/// Resolves one reference once.
async fn resolve_once(
    ctx: &RunCtx,
    r: &DataReference,
    outputs: &HashMap<usize, Arc<ResponseOutput>>,
) -> Result<Value, RefFailure> {
    match r {
        DataReference::TaskOutput(t) => {
            let upstream = ctx.plan.task_index(&t.task_id);
            let out = upstream.and_then(|j| outputs.get(&j).cloned());
            let atom_type =
                upstream.and_then(|j| ctx.plan.tasks[j].output_requirements.atom_type.as_deref());
            match out {
                Some(o) => match serde_json::to_value(&*o) {
                    Ok(v) => resolve_task_output(&v, t, atom_type),
                    Err(e) => Err(RefFailure {
                        code: RefErrorCode::RefFormatError,
                        message: format!("the output of `{}` does not serialise: {e}", t.task_id),
                    }),
                },
                None => Err(RefFailure {
                    code: RefErrorCode::RefNotFound,
                    message: format!("task `{}` produced no output", t.task_id),
                }),
            }
        }
        DataReference::File(f) => {
            let root = ctx.config.workspace.clone();
            let f = f.clone();
            tokio::task::spawn_blocking(move || crate::data::resolve::file::resolve_file(&root, &f))
                .await
                .unwrap_or_else(|e| {
                    Err(RefFailure {
                        code: RefErrorCode::RefFormatError,
                        message: format!("file reader failed: {e}"),
                    })
                })
        }
        DataReference::Sample(r) => r.data.clone().ok_or_else(|| RefFailure {
            code: RefErrorCode::RefNotFound,
            message: format!(
                "the `sample` reference {} has no data: only `plexus eval` fills it",
                r.path
            ),
        }),
        DataReference::DbQuery(q) => {
            let Some(db) = ctx.db.clone() else {
                return Err(RefFailure {
                    code: RefErrorCode::RefNotFound,
                    message: "no database to query".into(),
                });
            };
            let q = q.clone();
            let timeout = Duration::from_millis(ctx.config.ref_timeout_ms);
            tokio::task::spawn_blocking(move || {
                crate::data::resolve::db::resolve_db(&db, &q, timeout)
            })
            .await
            .unwrap_or_else(|e| {
                Err(RefFailure {
                    code: RefErrorCode::RefFormatError,
                    message: format!("query failed: {e}"),
                })
            })
        }
    }
}

/// The reference with its path (`return_full`) or filter (`ignore_filter`) dropped.
fn degraded(r: &DataReference, code: RefErrorCode) -> Option<DataReference> {
    match (r, code) {
        (DataReference::TaskOutput(t), RefErrorCode::RefPathInvalid) => {
            let mut t = t.clone();
            t.path = None;
            Some(DataReference::TaskOutput(t))
        }
        (DataReference::TaskOutput(t), RefErrorCode::RefFilterError) => {
            let mut t = t.clone();
            t.filter = None;
            Some(DataReference::TaskOutput(t))
        }
        _ => None,
    }
}

/// Resolves the task's references, applies fallbacks, and fits the prompt to the budget.
pub(super) async fn gather_inputs(ctx: &RunCtx, idx: usize, scope: &Scope) -> Gathered {
    let task = &ctx.plan.tasks[idx];
    let outputs = upstream_outputs(ctx, task).await;
    let assets = known_assets(ctx, task, &outputs);
    let mut inputs: Vec<Input> = Vec::new();
    for (i, r) in task.options().data_references.iter().enumerate() {
        let mut one = Resolving {
            ctx,
            scope,
            index: i,
            r,
            outputs: &outputs,
            fallback: task.options().fallback_config.as_ref(),
            used_ref: r.clone(),
            abort: None,
            unlogged: None,
        };
        let resolved = one.resolve().await;
        // A failure that cannot be logged stops the task before any call.
        if let Some(e) = one.unlogged.take() {
            one.abort = Some(format!("the run's log cannot be written: {e}"));
        }
        if let Some(a) = one.abort {
            return Gathered::aborted(a);
        }
        if let Ok(data) = resolved {
            inputs.push(input_of(task, r, &one.used_ref, data));
        }
    }
    super::budget::fit(ctx, idx, scope, inputs, assets).await
}

/// The outputs of the tasks `task` depends on or refers to: those held in memory, the
/// others read back from the store.
async fn upstream_outputs(
    ctx: &RunCtx,
    task: &crate::model::plan::Task,
) -> HashMap<usize, Arc<ResponseOutput>> {
    let needed: Vec<usize> = task
        .depends_on
        .iter()
        .map(|d| &**d)
        .chain(
            task.options()
                .data_references
                .iter()
                .filter_map(|r| match r {
                    DataReference::TaskOutput(t) => Some(t.task_id.as_str()),
                    _ => None,
                }),
        )
        .filter_map(|d| ctx.plan.task_index(d))
        .collect();
    let mut outputs: HashMap<usize, Arc<ResponseOutput>> = match ctx.outputs.read() {
        Ok(o) => needed
            .iter()
            .filter_map(|j| o.get(j).map(|v| (*j, v.clone())))
            .collect(),
        Err(_) => HashMap::new(),
    };
    let missing: Vec<usize> = needed
        .iter()
        .copied()
        .filter(|j| !outputs.contains_key(j))
        .collect();
    outputs.extend(read_back(ctx, missing).await);
    outputs
}

/// The assets the task's context lists, then those its dependencies produced (each once).
fn known_assets(
    ctx: &RunCtx,
    task: &crate::model::plan::Task,
    outputs: &HashMap<usize, Arc<ResponseOutput>>,
) -> Vec<String> {
    let mut assets: Vec<String> = task.context.existing_assets.clone().unwrap_or_default();
    // A set keeps the merge linear in a wide fan-in.
    let mut seen: rustc_hash::FxHashSet<String> = assets.iter().cloned().collect();
    for d in &task.depends_on {
        let Some(out) = ctx.plan.task_index(d).and_then(|j| outputs.get(&j)) else {
            continue;
        };
        for a in &out.atoms {
            if seen.insert(a.asset_id.clone()) {
                assets.push(a.asset_id.clone());
            }
        }
    }
    assets
}

/// The input of reference `r` (resolved as `used_ref`) holding `data`.
fn input_of(
    task: &crate::model::plan::Task,
    r: &DataReference,
    used_ref: &DataReference,
    data: Value,
) -> Input {
    let priority = match r {
        DataReference::TaskOutput(_) => 1,
        _ => 2,
    };
    Input {
        name: ref_name(r),
        data_type: data_type_of(r, &data),
        data,
        priority,
        configured: task.options().transfer_config.as_ref().and_then(|c| c.mode),
        reference: serde_json::to_value(used_ref).unwrap_or(Value::Null),
        tokens: None,
    }
}

/// One data reference being resolved, with its fallbacks.
struct Resolving<'a> {
    ctx: &'a RunCtx,
    scope: &'a Scope,
    /// Its index among the task's references.
    index: usize,
    r: &'a DataReference,
    outputs: &'a HashMap<usize, Arc<ResponseOutput>>,
    fallback: Option<&'a FallbackConfig>,
    /// The reference as finally resolved (a degraded one after `return_full` or
    /// `ignore_filter`).
    used_ref: DataReference,
    /// Why the task stops before any call.
    abort: Option<String>,
    /// Why a failure could not be logged (the first time).
    unlogged: Option<String>,
}

impl Resolving<'_> {
    /// Logs a failure of the reference as `reference_failed`.
    fn report(&mut self, f: &RefFailure, strategy: &str, value: Value) {
        let failure = ResolutionFailure {
            ref_type: self.r.ref_type().into(),
            task_id: match self.r {
                DataReference::TaskOutput(t) => Some(t.task_id.clone()),
                _ => None,
            },
            error_code: f.code,
            error_message: f.message.clone(),
            fallback_strategy: strategy.into(),
            fallback_value: value,
            timestamp: crate::base::clock::now_rfc3339(),
            extra: Default::default(),
        };
        let event = EngineEvent::ReferenceFailed(ReferenceFailed {
            index: self.index,
            failure,
        });
        if let Err(e) = self.ctx.emitter.emit(self.scope, event) {
            self.unlogged.get_or_insert(e.to_string());
        }
    }

    /// Resolves the reference, and on failure follows its fallback (the task's, else
    /// the §3.2 default of the failure's code).
    async fn resolve(&mut self) -> Result<Value, RefFailure> {
        let resolved = resolve_once(self.ctx, self.r, self.outputs).await;
        let Err(f) = &resolved else {
            return resolved;
        };
        let f = f.clone();
        let default_value = self
            .fallback
            .map(|c| c.default_value.clone())
            .unwrap_or(Value::Null);
        let strategy = match self.fallback {
            Some(c) => strategy_name(c.strategy),
            None => default_strategy(f.code, !default_value.is_null()),
        };
        match strategy {
            "retry" => return self.retry(f, default_value).await,
            "return_full" | "ignore_filter" => {
                self.report(&f, strategy, Value::Null);
                if let Some(d) = degraded(self.r, f.code) {
                    let again = resolve_once(self.ctx, &d, self.outputs).await;
                    self.used_ref = d;
                    return again;
                }
            }
            "use_default" => {
                self.report(&f, strategy, default_value.clone());
                if !default_value.is_null() {
                    return Ok(default_value);
                }
            }
            "abort" => {
                self.report(&f, strategy, Value::Null);
                self.abort = Some(format!(
                    "{}: {} {}",
                    ref_name(self.r),
                    f.code.as_str(),
                    f.message
                ));
            }
            _ => self.report(&f, strategy, Value::Null),
        }
        resolved
    }

    /// The `retry` fallback after failure `f`: the retries, each logged, then the final
    /// strategy once they are used up.
    async fn retry(&mut self, f: RefFailure, default_value: Value) -> Result<Value, RefFailure> {
        let (count, delay, last) = match self.fallback {
            Some(c) => (
                c.retry_count,
                c.retry_delay_ms,
                c.on_final_failure.unwrap_or(FallbackStrategy::Skip),
            ),
            None => (3, 1_000, FallbackStrategy::Skip),
        };
        let mut last_err = f;
        for _ in 0..count {
            self.report(&last_err, "retry", Value::Null);
            tokio::time::sleep(Duration::from_millis(delay)).await;
            match resolve_once(self.ctx, self.r, self.outputs).await {
                Ok(v) => return Ok(v),
                Err(e) => last_err = e,
            }
        }
        let final_strategy = strategy_name(last);
        self.report(&last_err, final_strategy, default_value.clone());
        match last {
            FallbackStrategy::Abort => {
                self.abort = Some(format!(
                    "{}: {} {}",
                    ref_name(self.r),
                    last_err.code.as_str(),
                    last_err.message
                ))
            }
            FallbackStrategy::UseDefault if !default_value.is_null() => return Ok(default_value),
            _ => {}
        }
        Err(last_err)
    }
}
