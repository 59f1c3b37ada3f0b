//! The context a run's coordinator shares with its workers: the plan, the provider, the
//! settings, the emitter, the outputs of finished tasks and the per-agent caches — plus
//! the small helpers that scope and record a run's facts.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

use super::emit::{Emitter, Scope};
use super::request::prompt_hash;
use super::run_spec::RunSpec;
use super::{EngineConfig, EngineError};
use crate::base::protocol::ResponseOutput;
use crate::data::provider::Provider;
use crate::data::store::WriteOp;
use crate::model::event::RunStatus;
use crate::model::plan::Plan;

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
    pub(super) known_assets: RwLock<crate::model::gate::known::AssetIds>,
    /// Outputs of finished tasks still needed by tasks to run, by plan index. Nothing
    /// else of a finished task stays in memory; an output that is not here is read back
    /// from the store (see [`super::inputs`]).
    pub(super) outputs: RwLock<rustc_hash::FxHashMap<usize, Arc<ResponseOutput>>>,
    /// Tasks whose `task_output` references read each task's output, by plan index of
    /// the task read (its direct dependents read it too: see [`super::graph::Node`]).
    pub(super) referrers: rustc_hash::FxHashMap<usize, Vec<usize>>,
    /// The database file `db_query` references read.
    pub(super) db: Option<std::path::PathBuf>,
    /// The workspace's skills (loaded once per run, as activations ask for them).
    pub(super) skills: Arc<crate::base::skills::SkillLibrary>,
    /// Answers of idempotent tool calls, shared by the run's loops.
    pub(super) tool_cache: Arc<crate::run::tools::ToolCache>,
    agents: rustc_hash::FxHashMap<String, AgentCache>,
    /// Invocation numbers reserved from the database and not used yet, by agent short
    /// name: (next, end). An async lock: a worker waits for a reservation's commit.
    id_blocks: Mutex<rustc_hash::FxHashMap<String, Arc<tokio::sync::Mutex<IdBlock>>>>,
    /// Whether the run was resumed with retries to carry over (the history below is
    /// not looked at otherwise).
    resumed_retries: bool,
    /// Retry history of resumed tasks, by plan index, taken by each task's first run.
    retry_history: Mutex<rustc_hash::FxHashMap<usize, Vec<crate::model::event::RetryScheduled>>>,
    /// When the last retry of each resumed task (and batch) was due, ms since the epoch.
    retry_due: rustc_hash::FxHashMap<(usize, Option<u32>), i64>,
    /// Successful calls of resumed tasks, by plan index and batch, each taken once.
    recorded: Mutex<rustc_hash::FxHashMap<(usize, Option<u32>), super::run_spec::RecordedSuccess>>,
    /// Whether this process retries as the run did before the resume.
    same_retry_policy: bool,
    /// What the run's calls cost, and its money budget.
    pub(super) money: super::money::Money,
    /// Model answers streaming at this moment (see [`super::sink`]).
    pub(super) streams: std::sync::atomic::AtomicUsize,
    /// The answer formats of the prompts, rendered once per shape of task.
    pub(super) answer_formats: super::answer_shape::AnswerFormats,
}

/// Numbers `next..end` reserved for one agent short name; `size` is the next block's.
struct IdBlock {
    next: u64,
    end: u64,
    size: u64,
}

/// The first block of invocation numbers a run reserves per agent; each next one is
/// twice as large, up to [`MAX_ID_BLOCK`].
const FIRST_ID_BLOCK: u64 = 16;
/// The largest block of invocation numbers reserved at once.
const MAX_ID_BLOCK: u64 = 4096;

struct AgentCache {
    name: Arc<str>,
    prompt: Arc<str>,
    prompt_hash: String,
    prompt_tokens: u64,
}

impl RunCtx {
    /// The context of the run `spec` describes; `index` maps task ids to plan indexes.
    pub(super) fn new(spec: RunSpec) -> RunCtx {
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
        let mut referrers: rustc_hash::FxHashMap<usize, Vec<usize>> = Default::default();
        for (k, t) in plan.tasks.iter().enumerate() {
            for r in &t.options().data_references {
                if let crate::base::protocol::DataReference::TaskOutput(o) = r {
                    if let Some(j) = plan.task_index(&o.task_id) {
                        referrers.entry(j).or_default().push(k);
                    }
                }
            }
        }
        let mut outputs = HashMap::new();
        // With a database, a resumed task reads its inputs back from it when it starts.
        if let Some(r) = resume.filter(|_| spec.db.is_none()) {
            for (tid, v) in &r.outputs {
                if let Some(i) = plan.task_index(tid) {
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
            known_assets: RwLock::new(spec.known_assets),
            outputs: RwLock::new(outputs.into_iter().collect()),
            referrers,
            db: spec.db.clone(),
            skills: Arc::new(crate::base::skills::SkillLibrary::in_dir(
                spec.config
                    .skills_dir
                    .clone()
                    .unwrap_or_else(|| spec.config.workspace.join("skills")),
                spec.config.tokens,
            )),
            tool_cache: Arc::new(crate::run::tools::ToolCache::new(1024)),
            agents,
            streams: Default::default(),
            answer_formats: super::answer_shape::AnswerFormats::new(spec.config.tokens),
            money: super::money::Money::new(
                spec.config.price,
                spec.config.max_cost_usd,
                resume.map_or(0.0, |r| r.spent_usd),
            ),
            same_retry_policy: resume
                .and_then(|r| r.recorded_retry.as_ref())
                .is_none_or(|p| *p == spec.config.retry),
            id_blocks: Default::default(),
            retry_due: resume
                .map(|r| {
                    r.retry_due
                        .iter()
                        .filter_map(|((t, b), due)| Some(((plan.task_index(t)?, *b), *due)))
                        .collect()
                })
                .unwrap_or_default(),
            recorded: Mutex::new(
                resume
                    .map(|r| {
                        r.recorded
                            .iter()
                            .filter_map(|((t, b), c)| Some(((plan.task_index(t)?, *b), c.clone())))
                            .collect()
                    })
                    .unwrap_or_default(),
            ),
            resumed_retries: resume.is_some_and(|r| !r.retries.is_empty()),
            retry_history: Mutex::new(
                resume
                    .map(|r| {
                        r.retries
                            .iter()
                            .filter_map(|(t, h)| Some((plan.task_index(t)?, h.clone())))
                            .collect()
                    })
                    .unwrap_or_default(),
            ),
        }
    }

    /// How many outputs of finished tasks are held in memory.
    pub(super) fn outputs_held(&self) -> usize {
        match self.outputs.read() {
            Ok(o) => o.len(),
            Err(p) => p.into_inner().len(),
        }
    }

    /// Whether every output is kept for the run's whole life: a run held open for
    /// retries with no database to read outputs back from.
    pub(super) fn keeps_all_outputs(&self) -> bool {
        self.config.hold_open && self.db.is_none()
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

    /// The successful call the log holds for resumed task `idx` (or `batch` of it), once.
    pub(super) fn take_recorded_success(
        &self,
        idx: usize,
        batch: Option<u32>,
    ) -> Option<super::run_spec::RecordedSuccess> {
        match self.recorded.lock() {
            Ok(mut m) => m.remove(&(idx, batch)),
            Err(p) => p.into_inner().remove(&(idx, batch)),
        }
    }

    /// The retries a resumed task (or `batch` of it) had scheduled; each is handed out
    /// once.
    pub(super) fn take_retry_history(
        &self,
        idx: usize,
        batch: Option<u32>,
    ) -> Vec<crate::model::event::RetryScheduled> {
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

    /// How long (ms) a resumed task (or `batch` of it) still owes the backoff of `last`,
    /// the retry it scheduled before the run stopped and never started; `nth` is that
    /// retry's number within its budget. The wait is counted from when it was set; a
    /// process that resumes with another retry policy waits at most what its own policy
    /// gives that retry.
    pub(super) fn owed_backoff_ms(
        &self,
        idx: usize,
        batch: Option<u32>,
        last: &crate::model::event::RetryScheduled,
        nth: u32,
    ) -> Option<u64> {
        let due = *self.retry_due.get(&(idx, batch))?;
        let left = u64::try_from(due.saturating_sub(super::emit::now_ms())).ok()?;
        let cap = if self.same_retry_policy {
            u64::MAX
        } else if last.is_transient() {
            self.config
                .retry
                .transient_delay(nth, None, 1.0)
                .unwrap_or(0)
        } else {
            self.config
                .retry
                .delay_for(last.error_code, nth)
                .unwrap_or(0)
        };
        Some(left.min(cap)).filter(|&ms| ms > 0)
    }

    /// The next invocation number of the agent short name `short`: unique in the
    /// database, taken from a block reserved in the writer's transaction (see
    /// [`crate::data::store::ids`]); a new block is reserved when this one is used up.
    pub(super) async fn next_invocation_seq(&self, short: &str) -> Result<u64, EngineError> {
        // One lock per agent: an agent waiting for its next block holds up no other.
        let slot = {
            let mut blocks = match self.id_blocks.lock() {
                Ok(b) => b,
                Err(p) => p.into_inner(),
            };
            blocks
                .entry(short.to_string())
                .or_insert_with(|| {
                    Arc::new(tokio::sync::Mutex::new(IdBlock {
                        next: 0,
                        end: 0,
                        size: FIRST_ID_BLOCK,
                    }))
                })
                .clone()
        };
        let mut block = slot.lock().await;
        if block.next >= block.end {
            let first = self.emitter.writer().reserve_ids(short, block.size).await?;
            block.next = first;
            block.end = first.saturating_add(block.size);
            block.size = (block.size * 2).min(MAX_ID_BLOCK);
        }
        let n = block.next;
        block.next += 1;
        Ok(n)
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
        RunStatus::Running | RunStatus::Paused | RunStatus::Interrupted | RunStatus::BudgetReached
    );
    ctx.emitter.write(WriteOp::RunStatus {
        run_id: ctx.run_id.to_string(),
        status: status.as_str().into(),
        finished_at: ended.then(crate::base::clock::now_rfc3339),
    })?;
    Ok(())
}
