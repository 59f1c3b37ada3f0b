//! The context a run's coordinator shares with its workers: the plan, the provider, the
//! settings, the emitter, the outputs of finished tasks and the per-agent caches — plus
//! the small helpers that scope and record a run's facts.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

use super::emit::{Emitter, Scope};
use super::request::{constraints_for, prompt_hash};
use super::run_spec::RunSpec;
use super::{EngineConfig, EngineError};
use crate::event::RunStatus;
use crate::plan::Plan;
use crate::protocol::{Constraints, ResponseOutput};
use crate::provider::Provider;
use crate::store::WriteOp;

/// Shared, read-mostly context of a run's workers.
pub struct RunCtx {
    /// Run id.
    pub(super) run_id: Arc<str>,
    /// The validated plan.
    pub(super) plan: Arc<Plan>,
    /// Provider.
    pub(super) provider: Arc<dyn Provider>,
    /// Settings.
    pub(super) config: EngineConfig,
    /// Numbers, stores and streams the run's events.
    pub(super) emitter: Emitter,
    /// Asset ids that exist in the store.
    pub(super) known_assets: RwLock<rustc_hash::FxHashSet<String>>,
    /// Outputs of finished tasks still needed downstream, by plan index.
    pub(super) outputs: RwLock<rustc_hash::FxHashMap<usize, Arc<ResponseOutput>>>,
    /// Each task's constraints before adjustments, by plan index.
    pub(super) base_constraints: Vec<Constraints>,
    /// The database file `db_query` references read.
    pub(super) db: Option<std::path::PathBuf>,
    /// The workspace's skills (loaded once per run, as activations ask for them).
    pub(super) skills: Arc<crate::skills::SkillLibrary>,
    /// Answers of idempotent tool calls, shared by the run's loops.
    pub(super) tool_cache: Arc<crate::tools::ToolCache>,
    agents: rustc_hash::FxHashMap<String, AgentCache>,
    inv_seq: Mutex<rustc_hash::FxHashMap<String, u32>>,
    /// Whether the run was resumed with retries to carry over (the history below is
    /// not looked at otherwise).
    resumed_retries: bool,
    /// Retry history of resumed tasks, by plan index, taken by each task's first run.
    retry_history: Mutex<rustc_hash::FxHashMap<usize, Vec<crate::event::RetryScheduled>>>,
}

struct AgentCache {
    name: Arc<str>,
    prompt: Arc<str>,
    prompt_hash: String,
    prompt_tokens: u64,
}

impl RunCtx {
    /// The context of the run `spec` describes; `index` maps task ids to plan indexes.
    pub(super) fn new(spec: RunSpec, index: &HashMap<&str, usize>) -> RunCtx {
        let plan = spec.plan.clone();
        let resume = spec.resume.as_ref();
        let first_seq = resume.map(|r| r.next_seq).unwrap_or(1);
        let run_id: Arc<str> = Arc::from(spec.run_id.as_str());
        let emitter = Emitter::new(run_id.clone(), first_seq, spec.writer.clone());
        let agents = plan
            .agents
            .iter()
            .map(|(name, def)| {
                (
                    name.clone(),
                    AgentCache {
                        name: Arc::from(name.as_str()),
                        prompt: Arc::from(def.system_prompt.as_str()),
                        prompt_hash: prompt_hash(&def.system_prompt),
                        prompt_tokens: spec.config.tokens.count(&def.system_prompt),
                    },
                )
            })
            .collect();
        let base_constraints = plan
            .tasks
            .iter()
            .map(|t| {
                constraints_for(
                    &plan.agents[&t.agent],
                    plan.execution_mode,
                    &t.constraints,
                    spec.config.min_temperature,
                )
            })
            .collect();
        let mut outputs = HashMap::new();
        if let Some(r) = resume {
            for (tid, v) in &r.outputs {
                if let Some(&i) = index.get(tid.as_str()) {
                    outputs.insert(i, Arc::new(v.clone()));
                }
            }
        }
        RunCtx {
            run_id,
            plan: plan.clone(),
            provider: spec.provider.clone(),
            config: spec.config.clone(),
            emitter,
            known_assets: RwLock::new(spec.known_assets.into_iter().collect()),
            outputs: RwLock::new(outputs.into_iter().collect()),
            base_constraints,
            db: spec.db.clone(),
            skills: Arc::new(crate::skills::SkillLibrary::new(
                &spec.config.workspace,
                spec.config.tokens,
            )),
            tool_cache: Arc::new(crate::tools::ToolCache::new(1024)),
            agents,
            inv_seq: Mutex::new(
                resume
                    .map(|r| r.invocations_per_agent.clone().into_iter().collect())
                    .unwrap_or_default(),
            ),
            resumed_retries: resume.is_some_and(|r| !r.retries.is_empty()),
            retry_history: Mutex::new(
                resume
                    .map(|r| {
                        r.retries
                            .iter()
                            .filter_map(|(t, h)| Some((*index.get(t.as_str())?, h.clone())))
                            .collect()
                    })
                    .unwrap_or_default(),
            ),
        }
    }

    /// The agent's name, shared.
    pub(super) fn agent_arc(&self, agent: &str) -> Arc<str> {
        self.agents
            .get(agent)
            .map(|a| a.name.clone())
            .unwrap_or_else(|| Arc::from(agent))
    }

    /// The hash and token count of the agent's system prompt.
    pub(super) fn system_prompt_info(&self, agent: &str) -> (String, u64) {
        self.agents
            .get(agent)
            .map(|a| (a.prompt_hash.clone(), a.prompt_tokens))
            .unwrap_or_default()
    }

    /// The agent's system prompt, shared.
    pub(super) fn system_prompt_arc(&self, agent: &str) -> Arc<str> {
        self.agents
            .get(agent)
            .map(|a| a.prompt.clone())
            .unwrap_or_else(|| Arc::from(""))
    }

    /// The retries a resumed task (or `batch` of it) had scheduled; each is handed out
    /// once.
    pub(super) fn take_retry_history(
        &self,
        idx: usize,
        batch: Option<u32>,
    ) -> Vec<crate::event::RetryScheduled> {
        if !self.resumed_retries {
            return Vec::new();
        }
        let mut m = match self.retry_history.lock() {
            Ok(m) => m,
            Err(p) => p.into_inner(),
        };
        let Some(all) = m.get_mut(&idx) else {
            return Vec::new();
        };
        let (mine, rest) = std::mem::take(all)
            .into_iter()
            .partition(|r| r.batch == batch);
        *all = rest;
        mine
    }

    /// The agent's next invocation number (counting on from a resumed run's).
    pub(super) fn next_invocation_seq(&self, agent: &str) -> u32 {
        let mut m = match self.inv_seq.lock() {
            Ok(m) => m,
            Err(p) => p.into_inner(),
        };
        let n = m.entry(agent.to_string()).or_insert(0);
        *n += 1;
        *n
    }
}

/// The scope of task `i`'s facts: its id and agent.
pub(super) fn task_scope(ctx: &RunCtx, i: usize) -> Scope {
    let t = &ctx.plan.tasks[i];
    Scope {
        task_id: Some(Arc::from(t.task_id.as_str())),
        invocation_id: None,
        agent: Some(ctx.agent_arc(&t.agent)),
    }
}

/// Writes the run's status row; a run that ended (not interrupted) gets its finish time.
pub(super) fn write_run_status(ctx: &RunCtx, status: RunStatus) -> Result<(), EngineError> {
    let ended = !matches!(
        status,
        RunStatus::Running | RunStatus::Paused | RunStatus::Interrupted
    );
    ctx.emitter.write(WriteOp::RunStatus {
        run_id: ctx.run_id.to_string(),
        status: status.as_str().into(),
        finished_at: ended.then(crate::clock::now_rfc3339),
    })?;
    Ok(())
}
