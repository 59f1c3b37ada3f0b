//! The tool-using loop of one invocation (Thought → Action → Observation): the model is
//! called with the tools offered and the turns so far; while it asks for tools, each
//! call is run and its observation handed back; its first answer without a tool call
//! is the final answer, parsed and graded like any other. Bounded by the task's step
//! limit and token budget; every step is an event, so the TUI, replay and rerun show
//! and reproduce it.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use serde_json::Value;

use super::context::prompt::thousands;
use super::emit::Scope;
use super::run_ctx::RunCtx;
use super::sink::StreamSink;
use crate::base::conversation::count::message_tokens;
use crate::base::conversation::{ContextManager, Conversation, Pinned};
pub use crate::base::loop_events::RecordedStep;
use crate::base::protocol::messages::{
    ContentBlock, Message, MessageType, ReactTurns, ToolDefinition,
};
use crate::base::protocol::AgentRequest;
use crate::data::provider::{ProviderError, ToolCall};
use crate::model::event::{ContextCompressed, EngineEvent, LoopFinished, ToolAnswered, ToolCalled};
use crate::model::plan::react::ReactSetup;

/// What a tool call gave: the events to log before its answer (skill activations and
/// refusals), and the answer itself (the observation the model sees).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutcome {
    /// Events that come first.
    pub events: Vec<EngineEvent>,
    /// The observation and the call's metrics.
    pub answered: ToolAnswered,
}

/// A boxed future of a tool call.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = ToolOutcome> + Send + 'a>>;

/// The tools (and skills) of one task's loop.
pub trait Toolbox: Send + Sync {
    /// The tools offered to the model.
    fn definitions(&self) -> Vec<ToolDefinition>;

    /// Runs one call of step `step`; `context_usage` is how full the conversation is
    /// (0–1), which decides the output level above 80%.
    fn call<'a>(&'a self, step: u32, call: &'a ToolCall, context_usage: f64) -> ToolFuture<'a>;
}

/// What the loop ended with.
pub struct LoopResult {
    /// The final call's result, shaped as a single call's (a step that ran out of time
    /// is an elapsed timeout, as for a single call).
    pub result: crate::data::provider::call::Outcome,
    /// Every step, for the recording (the totals are in the `loop_finished` event).
    pub steps: Vec<RecordedStep>,
    /// What the provider reported over every step, summed (`None` when no step
    /// reported usage).
    pub usage: Option<crate::data::provider::Usage>,
    /// The loop stopped before a step because the run's money budget was spent.
    pub budget_stopped: bool,
}

/// What a loop's steps have cost so far, charged step by step (so the run's budget sees
/// each step) and readable by the worker even when the loop is stopped halfway.
#[derive(Debug, Default)]
pub struct LoopMeter {
    cost: std::sync::Mutex<Option<f64>>,
}

impl LoopMeter {
    /// Charges one step to the run and adds its cost (`None`: the model has no price).
    fn charge(
        &self,
        ctx: &RunCtx,
        reported: Option<crate::data::provider::Usage>,
        counted: crate::base::cost::CallTokens,
    ) {
        if let Some(c) = ctx.money.charge(reported, counted) {
            if let Ok(mut m) = self.cost.lock() {
                *m = Some(m.unwrap_or(0.0) + c);
            }
        }
    }

    /// The steps' cost so far (`None` without a price).
    pub fn cost(&self) -> Option<f64> {
        self.cost.lock().map_or(None, |c| *c)
    }
}

/// Adds one step's reported usage to the loop's.
fn add_usage(
    sum: &mut Option<crate::data::provider::Usage>,
    step: Option<crate::data::provider::Usage>,
) {
    if let Some(u) = step {
        let s = sum.get_or_insert_with(Default::default);
        s.prompt_tokens = s.prompt_tokens.saturating_add(u.prompt_tokens);
        s.completion_tokens = s.completion_tokens.saturating_add(u.completion_tokens);
        s.cached_prompt_tokens = s
            .cached_prompt_tokens
            .saturating_add(u.cached_prompt_tokens);
    }
}

/// Runs the loop for `base` (the task's request without tools), each step within
/// `step_timeout`. Thoughts stream into `sink` like any output and are taken out of its
/// text, so that only the final answer is parsed.
#[allow(clippy::too_many_arguments)]
pub(super) async fn run_loop(
    ctx: &RunCtx,
    scope: &Scope,
    setup: &ReactSetup,
    toolbox: &dyn Toolbox,
    base: &AgentRequest,
    window: u64,
    attempt: u32,
    sink: &mut StreamSink<'_>,
    step_timeout: Duration,
    meter: &LoopMeter,
) -> LoopResult {
    let mut react = ReactTurns {
        tools: toolbox.definitions(),
        turns: Vec::new(),
        step: 0,
    };
    // The conversation as the model sees it, counted exactly and compressed at 80% of
    // the agent's window: the first request is its head, always kept.
    let mut conv = Conversation::new(ctx.config.tokens, base.system_prompt.clone());
    conv.push(Message::user_text(
        serde_json::to_string(&base.user_prompt).unwrap_or_default(),
    ));
    let mut manager = ContextManager::new(window.max(1));
    let mut steps = Vec::new();
    let mut ids_used = std::collections::HashSet::new();
    let mut finished = LoopFinished {
        stop: "answer".into(),
        steps: 0,
        tool_calls: 0,
        compressions: 0,
        total_tokens: 0,
        input_tokens: 0,
        output_tokens: 0,
        answer_tokens: None,
    };
    let tools_tokens = ctx
        .config
        .tokens
        .count(&serde_json::to_string(&react.tools).unwrap_or_default());
    let emit = |e: EngineEvent| {
        if let Err(err) = ctx.emitter.emit(scope, e) {
            tracing::error!("cannot log a loop event: {err}");
        }
    };
    let end = |finished: &mut LoopFinished, stop: &str, message: String| {
        finished.stop = stop.into();
        Ok(Err(ProviderError::Permanent(message)))
    };
    manager.fixed_tokens = tools_tokens;
    let mut pins: Vec<Pinned> = Vec::new();
    let mut reported: Option<crate::data::provider::Usage> = None;
    for step in 1..=setup.max_steps {
        // No new step once the run's log cannot be written: its calls would be paid and
        // never recorded.
        if let Some(why) = ctx.emitter.writer().failure() {
            finished.stop = "log_failed".into();
            return loop_result(
                Ok(Err(ProviderError::Permanent(format!(
                    "the run's log cannot be written: {why}"
                )))),
                steps,
                reported,
            );
        }
        // No new step once the run's money budget is spent (the first was let through
        // when the invocation started): the task waits for a resume.
        if step > 1 && ctx.money.reached() {
            finished.stop = "money_budget".into();
            emit(EngineEvent::LoopFinished(finished.clone()));
            let mut r = loop_result(
                Ok(Err(ProviderError::Permanent(
                    "the run's money budget was reached".into(),
                ))),
                steps,
                reported,
            );
            r.budget_stopped = true;
            return r;
        }
        // The whole prompt (system, messages, tool schemas) is counted before each call:
        // at 80% of the window the older rounds are summarised, the pinned texts kept.
        if manager.should_compress(&conv) {
            manager.pinned.clone_from(&pins);
        }
        if let Some(c) = manager
            .compress_to_fit(&mut conv)
            .filter(|c| c.rounds_summarised > 0)
        {
            finished.compressions += 1;
            emit(EngineEvent::ContextCompressed(ContextCompressed {
                before_tokens: c.before_tokens,
                after_tokens: c.after_tokens,
                rounds_summarised: u32::try_from(c.rounds_summarised).unwrap_or(u32::MAX),
                rounds_kept: u32::try_from(c.rounds_kept).unwrap_or(u32::MAX),
            }));
        }
        let conversation = conv.total_tokens() + tools_tokens;
        if conversation > window {
            let system = conv.system_tokens();
            let message = format!(
                    "task `{}`: the prompt of step {step} for {} is {} tokens{} (system prompt {}, messages {}, tool schemas {}), over the agent's input limit of {} tokens; nothing was sent to the provider",
                    base.task_id,
                    base.agent,
                    thousands(conversation),
                    if finished.compressions > 0 { " after compression" } else { "" },
                    thousands(system),
                    thousands(conv.total_tokens().saturating_sub(system)),
                    thousands(tools_tokens),
                    thousands(window),
            );
            let result = end(&mut finished, "context_window", message);
            emit(EngineEvent::LoopFinished(finished.clone()));
            return loop_result(result, steps, reported);
        }
        if finished.total_tokens + conversation > setup.token_budget {
            let result = end(
                &mut finished,
                "token_budget",
                format!(
                    "the tool-using loop would pass its token budget of {} at step {step}",
                    setup.token_budget
                ),
            );
            emit(EngineEvent::LoopFinished(finished.clone()));
            return loop_result(result, steps, reported);
        }
        react.turns = conv.messages()[1..].to_vec();
        let mut request = base.clone();
        react.step = step;
        request.set_react(&react);
        let limits = crate::data::provider::call::Limits::for_call(
            ctx.provider.as_ref(),
            step_timeout,
            request.constraints.max_tokens,
        );
        let out = crate::data::provider::call::attempt(
            ctx.provider.as_ref(),
            std::sync::Arc::new(request),
            attempt,
            sink,
            &limits,
        )
        .await;
        finished.steps = step;
        finished.total_tokens += conversation;
        finished.input_tokens += conversation;
        let out = match out {
            Ok(Ok(out)) if !out.tool_calls.is_empty() => out,
            other => {
                // The final answer (or a failure): it stays in the sink, to be parsed.
                steps.push(RecordedStep {
                    text: sink.text.clone(),
                    ..RecordedStep::default()
                });
                let answer_tokens = ctx.config.tokens.count(&sink.text);
                let step_usage = match &other {
                    Ok(Ok(o)) => o.usage,
                    _ => None,
                };
                // A step the provider refused before answering (no usage, no text) is
                // not billed.
                let answered =
                    step_usage.is_some() || matches!(other, Ok(Ok(_))) || answer_tokens > 0;
                meter.charge(
                    ctx,
                    step_usage,
                    if answered {
                        crate::base::cost::CallTokens {
                            input: conversation,
                            cached_input: 0,
                            output: answer_tokens,
                        }
                    } else {
                        crate::base::cost::CallTokens::default()
                    },
                );
                finished.total_tokens += answer_tokens;
                finished.output_tokens += answer_tokens;
                finished.answer_tokens = Some(answer_tokens);
                emit(EngineEvent::LoopFinished(finished.clone()));
                let mut result = other;
                if let Ok(Ok(o)) = &mut result {
                    add_usage(&mut reported, o.usage);
                    o.usage = reported;
                }
                return loop_result(result, steps, reported);
            }
        };
        add_usage(&mut reported, out.usage);
        let mut out = out;
        own_ids(&mut out.tool_calls, step, &mut ids_used);
        let thought = sink.take_text();
        let thought_tokens = ctx.config.tokens.count(&thought);
        meter.charge(
            ctx,
            out.usage,
            crate::base::cost::CallTokens {
                input: conversation,
                cached_input: 0,
                output: thought_tokens,
            },
        );
        finished.total_tokens += thought_tokens;
        finished.output_tokens += thought_tokens;
        // The step's assistant message (its thought and every call), counted as the
        // conversation counts it, so the log can list the conversation's messages.
        let inputs: Vec<Value> = out
            .tool_calls
            .iter()
            .map(|c| {
                arguments_of(&c.arguments).unwrap_or_else(|_| Value::String(c.arguments.clone()))
            })
            .collect();
        let mut assistant = Vec::new();
        if !thought.is_empty() {
            assistant.push(ContentBlock::text(thought.clone()));
        }
        for (call, input) in out.tool_calls.iter().zip(&inputs) {
            assistant.push(ContentBlock::tool_use(&call.id, &call.name, input.clone()));
        }
        let assistant = Message {
            role: MessageType::Assistant,
            content: assistant,
        };
        let message_tokens = message_tokens(conv.counter(), &assistant);
        let mut results = Vec::new();
        let mut answered_tokens = 0u64;
        let mut recorded = RecordedStep {
            text: thought.clone(),
            tool_calls: out.tool_calls.clone(),
            answers: Vec::new(),
        };
        for (call, input) in out.tool_calls.iter().zip(inputs) {
            emit(EngineEvent::ToolCalled(ToolCalled {
                step,
                tool_call_id: call.id.clone(),
                tool: call.name.clone(),
                input,
                thought: thought.clone(),
                message_tokens: Some(message_tokens),
            }));
            // The reply's calls share the window: the results already answered count
            // against it for the next call (the 80 % brief rule over their sum).
            let usage = (conv.total_tokens() + tools_tokens + answered_tokens) as f64
                / window.max(1) as f64;
            let outcome = toolbox.call(step, call, usage).await;
            let mut label = format!("latest {} result", call.name);
            for e in outcome.events {
                if let EngineEvent::SkillActivated(s) = &e {
                    label = format!("active skill {}", s.skill);
                }
                emit(e);
            }
            let a = outcome.answered;
            answered_tokens += a.output_tokens;
            if a.tool != crate::data::provider::sim_react::ACTIVATE_SKILL
                || label.starts_with("active skill")
            {
                pin(&mut pins, label, &a.tool_call_id, &a.observation);
            }
            finished.tool_calls += 1;
            results.push(ContentBlock::tool_result(
                &call.id,
                &a.observation,
                a.is_error,
            ));
            recorded.answers.push(a.clone());
            emit(EngineEvent::ToolAnswered(a));
        }
        conv.push(assistant);
        conv.push(Message {
            role: MessageType::User,
            content: results,
        });
        steps.push(recorded);
    }
    let result = end(
        &mut finished,
        "step_limit",
        format!(
            "the tool-using loop used its {} steps without a final answer",
            setup.max_steps
        ),
    );
    emit(EngineEvent::LoopFinished(finished.clone()));
    loop_result(result, steps, reported)
}

/// A tool call's arguments as JSON: an object, or nothing (`""`, which some servers
/// send for a call without parameters, is `{}`); the parse error said exactly otherwise.
pub fn arguments_of(raw: &str) -> Result<Value, String> {
    if raw.trim().is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(other) => Err(format!(
            "the arguments must be a JSON object of the tool's parameters, not {}",
            crate::base::json_text::kind_of(&other)
        )),
        Err(e) => Err(format!(
            "the arguments are not valid JSON: {e}; they were {:?}",
            crate::base::text::cut::cut_chars(raw, 200)
        )),
    }
}

/// Gives every call of a reply an id of its own: a call without one, or with one used
/// before in this loop (some servers number each reply's calls from 0), gets
/// `plx_STEP_N` — the results go back under ids the server can tell apart.
fn own_ids(
    calls: &mut [crate::data::provider::ToolCall],
    step: u32,
    used: &mut std::collections::HashSet<String>,
) {
    for (n, call) in calls.iter_mut().enumerate() {
        if call.id.trim().is_empty() || used.contains(&call.id) {
            call.id = format!("plx_{step}_{n}");
        }
        used.insert(call.id.clone());
    }
}

/// The loop's result with its totals.
fn loop_result(
    result: crate::data::provider::call::Outcome,
    steps: Vec<RecordedStep>,
    usage: Option<crate::data::provider::Usage>,
) -> LoopResult {
    LoopResult {
        result,
        steps,
        usage,
        budget_stopped: false,
    }
}

/// Keeps `text` as the pinned text labelled `label` (replacing the previous one).
fn pin(pins: &mut Vec<Pinned>, label: String, call_id: &str, text: &str) {
    let p = Pinned {
        label,
        call_id: call_id.to_string(),
        text: text.to_string(),
    };
    match pins.iter_mut().find(|q| q.label == p.label) {
        Some(q) => *q = p,
        None => pins.push(p),
    }
}
