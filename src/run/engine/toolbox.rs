//! The toolbox of one task's loop: the built-in tools it is offered (run through the
//! tools executor, with the run's cache of idempotent calls), and `activate_skill` for
//! the skills it is offered and those they use (through the skill library, which
//! refuses cycles and depth over the limit).

use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::{json, Value};

use super::react_loop::{RecordedStep, ToolFuture, ToolOutcome, Toolbox};
use super::run_ctx::RunCtx;
use crate::base::agents::AgentDef;
use crate::base::protocol::messages::{
    OutputLevel, SkillActivationRequest, ToolCallMessage, ToolDefinition, ToolResultMessage,
};
use crate::base::skills::{ActivationRefused, SkillLibrary, CHAIN_ARROW};
use crate::base::tokens::TokenCounter;
use crate::data::provider::sim_react::{ACTIVATE_SKILL, READ_SKILL_FILE};
use crate::data::provider::ToolCall;
use crate::model::event::{EngineEvent, SkillActivated, SkillRefused, ToolAnswered};
use crate::model::plan::react::{ReactSetup, DEFAULT_MAX_STEPS};
use crate::model::plan::Task;
use crate::run::tools::fetch_reference::{FetchReference, Fetchable, FETCH_REFERENCE};
use crate::run::tools::{execute_cached, TokioSleeper, ToolCache, ToolContext, ToolRegistry};

/// The toolbox of `task`'s loop in this run, for attempt `attempt`. A rerun answers the
/// tools from the recording (skills, read from the same workspace, activate again).
pub(super) fn for_task(
    ctx: &RunCtx,
    task: &Task,
    setup: &ReactSetup,
    attempt: u32,
    fetchable: &[Fetchable],
) -> Box<dyn Toolbox> {
    let live = live_toolbox(ctx, task, setup, fetchable);
    match ctx.provider.recorded_steps(&task.task_id, attempt) {
        Some(steps) => Box::new(RecordedToolbox { live, steps }),
        None => Box::new(live),
    }
}

/// The loop of a task given inputs by reference (`offered`): its own, or one of the
/// default steps, with `fetch_reference` offered over them (seed 000 §4.3: fetched on
/// demand).
pub(super) fn with_fetch(
    setup: Option<ReactSetup>,
    offered: bool,
    agent: &crate::base::agents::AgentDef,
) -> Option<ReactSetup> {
    if !offered {
        return setup;
    }
    let mut setup = setup.unwrap_or_else(|| ReactSetup {
        tools: Vec::new(),
        skills: Vec::new(),
        max_steps: DEFAULT_MAX_STEPS,
        token_budget: agent
            .max_input_tokens
            .saturating_mul(u64::from(DEFAULT_MAX_STEPS)),
    });
    if !setup.tools.iter().any(|t| t == FETCH_REFERENCE) {
        setup.tools.push(FETCH_REFERENCE.to_string());
    }
    Some(setup)
}

/// Tokens of the tool schemas `task`'s prompt carries (0 for a task with no loop), as
/// the attempt's prompt counts them; with `candidates`, the inputs that may go by
/// reference, `fetch_reference` over all of them among those (the prompt will offer it
/// over those its planning sends by reference, a list no longer).
pub(super) fn schema_tokens(
    ctx: &RunCtx,
    task: &Task,
    agent: &AgentDef,
    candidates: &[Fetchable],
) -> u64 {
    let react = ctx.plan.react_for(task);
    let setup = with_fetch(react, !candidates.is_empty(), agent);
    setup.map_or(0, |setup| {
        let defs = live_toolbox(ctx, task, &setup, candidates).definitions();
        ctx.config
            .tokens
            .count(&serde_json::to_string(&defs).unwrap_or_default())
    })
}

fn live_toolbox(
    ctx: &RunCtx,
    task: &Task,
    setup: &ReactSetup,
    fetchable: &[Fetchable],
) -> TaskToolbox {
    let mut registry = ToolRegistry::empty();
    let all = ToolRegistry::with_builtins();
    for name in &setup.tools {
        if let Ok(t) = all.get(name) {
            registry.register(t);
        }
    }
    if setup.tools.iter().any(|t| t == FETCH_REFERENCE) {
        registry.register(Arc::new(FetchReference::new(
            Arc::from(fetchable.to_vec()),
            ctx.config.tokens,
        )));
    }
    let workspace = ctx.config.workspace.clone();
    let mut tools = ToolContext::new(workspace.clone());
    if let Some(db) = &ctx.db {
        tools = tools
            .with_db(db.clone())
            .with_data_dir(ToolContext::run_data_dir(db, &ctx.run_id));
    }
    tools.token_counter = ctx.config.tokens;
    TaskToolbox {
        registry,
        order: setup.tools.clone(),
        skills: setup.skills.clone(),
        library: ctx.skills.clone(),
        activated: Mutex::new(Vec::new()),
        tools,
        cache: ctx.tool_cache.clone(),
        // Tool retry delays shrink with the run's time scale, as its timeouts do.
        sleeper: TokioSleeper {
            divisor: (1.0 / ctx.config.timeout_scale.clamp(1e-6, 1.0)).round() as u32,
        },
        counter: ctx.config.tokens,
        task: task.task_id.clone(),
    }
}

/// A rerun's toolbox: each tool call answered as recorded.
struct RecordedToolbox {
    live: TaskToolbox,
    steps: Vec<RecordedStep>,
}

impl Toolbox for RecordedToolbox {
    fn definitions(&self) -> Vec<ToolDefinition> {
        self.live.definitions()
    }

    fn call<'a>(&'a self, step: u32, call: &'a ToolCall, context_usage: f64) -> ToolFuture<'a> {
        let recorded = (call.name != ACTIVATE_SKILL)
            .then(|| {
                self.steps
                    .get(step.saturating_sub(1) as usize)?
                    .answers
                    .iter()
                    .find(|a| a.tool_call_id == call.id)
                    .cloned()
            })
            .flatten();
        match recorded {
            Some(answered) => Box::pin(std::future::ready(ToolOutcome {
                events: Vec::new(),
                answered,
            })),
            None => self.live.call(step, call, context_usage),
        }
    }
}

struct TaskToolbox {
    registry: ToolRegistry,
    /// The tools' order in the plan.
    order: Vec<String>,
    skills: Vec<String>,
    library: Arc<SkillLibrary>,
    /// Activations made so far in this loop, each with the skills its skill uses (the
    /// parent of a nested one is found here).
    activated: Mutex<Vec<(SkillActivationRequest, Vec<String>)>>,
    tools: ToolContext,
    cache: Arc<ToolCache>,
    sleeper: TokioSleeper,
    counter: TokenCounter,
    task: String,
}

/// The error observation of a refused skill call, in the unified error format.
fn refusal(call_id: &str, error_type: &str, code: &str, reason: String) -> String {
    ToolResultMessage {
        tool_call_id: call_id.to_string(),
        observation: String::new(),
        output_level: OutputLevel::Standard,
        data_file: None,
        data_size_bytes: 0,
        data_summary: None,
        success: false,
        error_type: Some(error_type.into()),
        error_code: Some(code.into()),
        error_message: Some(reason),
    }
    .format_error_observation()
}

impl TaskToolbox {
    /// `read_skill_file`: a file of an active skill's folder (level 3), or their list;
    /// a skill not active in this loop, or a path leaving its folder, is refused.
    fn read_skill_file(&self, step: u32, call: &ToolCall, input: &Value) -> ToolOutcome {
        let started = Instant::now();
        let skill = input["skill_name"].as_str().unwrap_or_default();
        let path = input["path"].as_str().filter(|p| !p.is_empty());
        let active = self
            .activated
            .lock()
            .map(|a| a.iter().any(|(r, _)| r.skill_name == skill))
            .unwrap_or(false);
        let answer: Result<String, String> = if !active {
            Err(format!(
                "skill `{skill}` is not active in this task; activate it first with {ACTIVATE_SKILL}"
            ))
        } else {
            match path {
                Some(p) => self
                    .library
                    .resource(skill, p)
                    .map(|r| r.text)
                    .map_err(|e| e.to_string()),
                None => self
                    .library
                    .resources(skill)
                    .map(|names| {
                        if names.is_empty() {
                            format!("Skill `{skill}` has no files besides its SKILL.md.")
                        } else {
                            format!("Files of skill `{skill}`:\n{}", names.join("\n"))
                        }
                    })
                    .map_err(|e| e.to_string()),
            }
        };
        let (observation, is_error) = match answer {
            Ok(text) => (text, false),
            Err(reason) => (
                refusal(&call.id, "validation_error", "SKILL_FILE_REFUSED", reason),
                true,
            ),
        };
        ToolOutcome {
            events: Vec::new(),
            answered: ToolAnswered {
                step,
                tool_call_id: call.id.clone(),
                tool: READ_SKILL_FILE.into(),
                output_tokens: self.counter.count(&observation),
                data_size_bytes: observation.len() as u64,
                observation,
                is_error,
                output_level: OutputLevel::Standard,
                data_file: None,
                duration_ms: started.elapsed().as_secs_f64() * 1000.0,
                input_tokens: self.counter.count(&call.arguments),
                retries: 0,
                cached: false,
            },
        }
    }

    /// The answer to a call whose arguments cannot be read: what is wrong with them,
    /// exactly, so the model can call again.
    fn bad_arguments(&self, step: u32, call: &ToolCall, why: String) -> ToolOutcome {
        let observation = refusal(
            &call.id,
            "validation_error",
            "INVALID_ARGUMENTS",
            format!("{}: {why}", call.name),
        );
        ToolOutcome {
            events: Vec::new(),
            answered: ToolAnswered {
                step,
                tool_call_id: call.id.clone(),
                tool: call.name.clone(),
                output_tokens: self.counter.count(&observation),
                data_size_bytes: observation.len() as u64,
                observation,
                is_error: true,
                output_level: OutputLevel::Standard,
                data_file: None,
                duration_ms: 0.0,
                input_tokens: self.counter.count(&call.arguments),
                retries: 0,
                cached: false,
            },
        }
    }

    /// Where an activation of `name` hangs, decided by the engine whatever the model
    /// says: under the latest active skill that uses it (the model's `from_skill` when
    /// that one does), else at the root when the task offers it; else it is refused.
    /// So the chain, cycles and the depth limit hold without the model's word.
    fn parent_of(
        &self,
        name: &str,
        from: Option<&str>,
    ) -> Result<Option<SkillActivationRequest>, ActivationRefused> {
        let active = self.activated.lock().unwrap_or_else(|p| p.into_inner());
        let users: Vec<&SkillActivationRequest> = active
            .iter()
            .filter(|(_, uses)| uses.iter().any(|u| u == name))
            .map(|(r, _)| r)
            .collect();
        let named = from.and_then(|f| users.iter().rev().find(|r| r.skill_name == f));
        if let Some(r) = named.or(users.last()) {
            return Ok(Some((*r).clone()));
        }
        if self.skills.iter().any(|s| s == name) {
            return Ok(None);
        }
        Err(ActivationRefused::NotOffered {
            skill: name.to_string(),
            offered: if self.skills.is_empty() {
                "none".to_string()
            } else {
                self.skills.join(", ")
            },
            chain: name.to_string(),
        })
    }

    /// `activate_skill`: the skill's whole text and what it uses, or the refusal.
    fn activate(&self, step: u32, call: &ToolCall, input: &Value) -> ToolOutcome {
        let started = Instant::now();
        let name = input["skill_name"].as_str().unwrap_or_default().to_string();
        let from = input.get("from_skill").and_then(Value::as_str);
        let placed = self.parent_of(&name, from);
        let activated = placed.and_then(|parent| self.library.activate(&name, parent.as_ref()));
        let (observation, is_error, event) = match activated {
            Ok(act) => {
                let uses = &act.skill.front.uses;
                let text = format!(
                    "{}\n\nUses: {}",
                    act.skill.body(),
                    if uses.is_empty() {
                        "none".to_string()
                    } else {
                        uses.join(", ")
                    }
                );
                let mut chain = act.request.activation_chain.clone();
                chain.push(name.clone());
                if let Ok(mut a) = self.activated.lock() {
                    a.push((act.request.clone(), uses.clone()));
                }
                let tokens = self.counter.count(&text);
                let e = EngineEvent::SkillActivated(SkillActivated {
                    skill: name.clone(),
                    chain,
                    tokens,
                });
                (text, false, e)
            }
            Err(refused) => {
                let reason = refused.to_string();
                let chain = refused
                    .chain()
                    .split(CHAIN_ARROW)
                    .map(str::to_string)
                    .collect();
                let e = EngineEvent::SkillRefused(SkillRefused {
                    skill: name.clone(),
                    chain,
                    reason: reason.clone(),
                });
                let error_type = match refused {
                    ActivationRefused::Cycle { .. } => "skill_cycle",
                    ActivationRefused::TooDeep { .. } => "skill_depth",
                    ActivationRefused::NotOffered { .. } => "skill_not_offered",
                    _ => "skill_error",
                };
                (
                    refusal(&call.id, error_type, "SKILL_REFUSED", reason),
                    true,
                    e,
                )
            }
        };
        let answered = ToolAnswered {
            step,
            tool_call_id: call.id.clone(),
            tool: ACTIVATE_SKILL.into(),
            output_tokens: self.counter.count(&observation),
            observation,
            is_error,
            output_level: OutputLevel::Standard,
            data_file: None,
            data_size_bytes: 0,
            duration_ms: started.elapsed().as_secs_f64() * 1000.0,
            input_tokens: self.counter.count(&call.arguments),
            retries: 0,
            cached: false,
        };
        ToolOutcome {
            events: vec![event],
            answered,
        }
    }
}

impl Toolbox for TaskToolbox {
    fn definitions(&self) -> Vec<ToolDefinition> {
        // In the order the plan lists them.
        let mut defs: Vec<ToolDefinition> = self.registry.definitions();
        defs.sort_by_key(|d| self.order.iter().position(|n| *n == d.name));
        if !self.skills.is_empty() {
            // Level 1: each offered skill's name and description.
            let catalog: Vec<String> = self
                .skills
                .iter()
                .map(|s| match self.library.meta(s) {
                    Ok(m) => m.catalog_line(),
                    Err(e) => format!("{s}: unavailable ({e})"),
                })
                .collect();
            defs.push(ToolDefinition {
                name: ACTIVATE_SKILL.into(),
                description: format!(
                    "Load a skill's full instructions. A skill's text may name others under `Uses:`; activate those with from_skill set to the skill that asked.\nSkills:\n{}",
                    catalog.join("\n")
                ),
                input_schema: json!({
                    "type": "object",
                    "properties": {
                        "skill_name": {"type": "string", "enum": self.skills},
                        "from_skill": {"type": "string"},
                    },
                    "required": ["skill_name"],
                }),
            });
            defs.push(ToolDefinition {
                name: READ_SKILL_FILE.into(),
                description: "Read one of an active skill's other files (examples, templates, data) by its path inside the skill's folder; without a path, list them.".into(),
                input_schema: json!({
                    "type": "object",
                    "properties": {
                        "skill_name": {"type": "string"},
                        "path": {"type": "string"},
                    },
                    "required": ["skill_name"],
                }),
            });
        }
        defs
    }

    fn call<'a>(&'a self, step: u32, call: &'a ToolCall, context_usage: f64) -> ToolFuture<'a> {
        Box::pin(async move {
            let input = match super::react_loop::arguments_of(&call.arguments) {
                Ok(input) => input,
                Err(why) => return self.bad_arguments(step, call, why),
            };
            if call.name == ACTIVATE_SKILL && !self.skills.is_empty() {
                return self.activate(step, call, &input);
            }
            if call.name == READ_SKILL_FILE && !self.skills.is_empty() {
                return self.read_skill_file(step, call, &input);
            }
            let parameters = match &input {
                Value::Object(m) => m.clone(),
                _ => Default::default(),
            };
            // The executor takes `output_level` out of the arguments and checks it.
            let message = ToolCallMessage {
                tool_call_id: call.id.clone(),
                tool_name: call.name.clone(),
                parameters,
                output_level: None,
            };
            let ctx = self.tools.clone().with_context_usage(context_usage);
            let run = execute_cached(
                &message,
                &ctx,
                &self.registry,
                &Default::default(),
                &self.sleeper,
                Some(&self.cache),
            )
            .await;
            let r = run.result;
            let observation = if r.success {
                r.observation.clone()
            } else {
                r.format_error_observation()
            };
            tracing::debug!("task {}: {} answered", self.task, call.name);
            ToolOutcome {
                events: Vec::new(),
                answered: ToolAnswered {
                    step,
                    tool_call_id: call.id.clone(),
                    tool: call.name.clone(),
                    observation,
                    is_error: !r.success,
                    output_level: r.output_level,
                    data_file: r.data_file.clone(),
                    data_size_bytes: r.data_size_bytes,
                    duration_ms: run.metrics.duration_ms,
                    input_tokens: run.metrics.input_tokens,
                    output_tokens: run.metrics.output_tokens,
                    retries: run.metrics.retry_count,
                    cached: run.cached,
                },
            }
        })
    }
}
